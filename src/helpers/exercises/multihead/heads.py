"""Exercises 1 and 2 of lab 4: split the heads, merge them back.

Contract (stated in the lab): ``split_heads(x, num_heads)`` takes ``(B, L, D)`` and returns a tensor
``(B, H, L, E)``, ``E = D / H``, head ``h`` holding features ``h·E .. (h+1)·E − 1`` of every token;
``merge_heads(x)`` is its inverse, ``(B, H, L, E) -> (B, L, H·E)``. Every package function and
PyTorch's attention are refused while the answer runs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch04 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import phrase
from ..reader import allclose, as_tensor, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_split_heads", "check_merge_heads", "split", "merge", "SHAPES", "fresh_shape"]

SHAPES = (  # (name, sizes): E != H and L != H, so that no two mistakes give the same numbers
    ("2 heads of 3 features", dict(batch=2, length=5, heads=2, e=3)),
    ("4 heads of 2 features", dict(batch=1, length=3, heads=4, e=2)),
    ("3 heads of 5 features", dict(batch=3, length=4, heads=3, e=5)),
)


def fresh_shape(gen: torch.Generator) -> dict[str, int]:
    """A fresh ``(B, L, H, E)`` with ``H >= 2``, ``E >= 2``, ``E != H`` and ``L != H``."""
    heads, e = draw_int(2, 4, gen), draw_int(2, 5, gen)
    length = draw_int(3, 6, gen)
    return dict(batch=draw_int(1, 3, gen), length=7 if length == heads else length, heads=heads,
                e=e + 1 if e == heads else e)


def split(x: Tensor, heads: int) -> Tensor:
    """The reference split: ``(B, L, D) -> (B, H, L, E)``."""
    batch, length, d_model = x.shape
    return x.view(batch, length, heads, d_model // heads).transpose(1, 2)  # (B, H, L, E)


def merge(x: Tensor) -> Tensor:
    """The reference merge: ``(B, H, L, E) -> (B, L, H·E)``."""
    batch, heads, length, e = x.shape
    return x.transpose(1, 2).reshape(batch, length, heads * e)  # (B, L, D)


SPLIT_MISTAKES = (
    Mistake("ch04.split.no_transpose", lambda x, h: x.reshape(x.shape[0], h, x.shape[1], x.shape[2] // h)),
    Mistake("ch04.split.strided", lambda x, h: x.view(*x.shape[:2], x.shape[2] // h, h).permute(0, 3, 1, 2)),
    Mistake("ch04.split.reversed", lambda x, h: split(x, h).flip(1)),
)


@checker
def check_split_heads(fn: Callable[[Tensor, int], Tensor]) -> CheckResult:
    """Check ``fn(x, num_heads)``: ``(B, L, D)`` -> ``(B, H, L, E)``, head ``h`` = features ``hE..(h+1)E-1``.

    Three named shapes (``SHAPES``), then a fresh one; every package function is refused while ``fn`` runs.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        batch, length, heads, e = case["batch"], case["length"], case["heads"], case["e"]
        x = case.randn(batch, length, heads * e)
        out = as_tensor(call_watched(fn, x.clone(), heads, forbidden=ATTENTION), phrase("ch04.what.heads"))
        right = split(x, heads)
        if allclose(out, right):
            return None
        if out.shape == (batch, length, heads, e):
            return verdict(False, "ch04.split.not_moved", shape=tuple(out.shape))
        if out.shape != right.shape:
            return verdict(False, "ch04.split.shape", expected=tuple(right.shape), got=tuple(out.shape))
        mistake = first_mistake(out, SPLIT_MISTAKES, x, heads, same=allclose)
        return verdict(False, mistake.key if mistake else "ch04.split.misplaced")

    return passed_unless(each_case(one, SHAPES, seed=4100, fresh=fresh_shape), "ch04.split.passed")


MERGE_MISTAKES = (
    Mistake("ch04.merge.no_transpose", lambda x: x.reshape(x.shape[0], x.shape[2], -1)),
    Mistake("ch04.merge.reversed", lambda x: merge(x.flip(1))),
    Mistake("ch04.merge.interleaved", lambda x: x.permute(0, 2, 3, 1).reshape(x.shape[0], x.shape[2], -1)),
)


@checker
def check_merge_heads(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``fn(heads)``: ``(B, H, L, E)`` -> ``(B, L, H*E)``, the inverse of the split.

    Three named shapes (``SHAPES``), then a fresh one; every package function is refused while ``fn`` runs.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        x = case.randn(case["batch"], case["heads"], case["length"], case["e"])
        out = as_tensor(call_watched(fn, x.clone(), forbidden=ATTENTION), phrase("ch04.what.merged"))
        right = merge(x)
        if allclose(out, right):
            return None
        if out.shape != right.shape:
            return verdict(False, "ch04.merge.shape", expected=tuple(right.shape), got=tuple(out.shape))
        mistake = first_mistake(out, MERGE_MISTAKES, x, same=allclose)
        return verdict(False, mistake.key if mistake else "ch04.merge.misplaced")

    return passed_unless(each_case(one, SHAPES, seed=4200, fresh=fresh_shape), "ch04.merge.passed")
