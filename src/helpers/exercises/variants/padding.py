"""Exercise 4 of lab 5: the padding-mask bug hunt.

Contract (stated in the lab): ``fixed_padded_attention(q, k, v, lengths)`` is :func:`.buggy_padded_attention` with
the mask on the *key* axis, ``(B, 1, 1, S)``: the real queries attend to the real keys only, and a padded key gets
exactly no weight (``-inf``: a finite fill such as -30 leaks when the real scores are lower). Only the real query
rows are compared (what a padded query outputs is a convention). The package and PyTorch's attention are refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, each_case
from ..catalogue.ch05 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import phrase
from ..reader import as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .common import FILLS, low_scores, masked_attention, qkv

__all__ = ["buggy_padded_attention", "check_padding_fix"]

CASES = (("5 sequences of 7 tokens", dict(batch=5, heads=2, S=7, e=4)),
         ("4 sequences of 8 tokens, every real score about -100", dict(batch=4, heads=1, S=8, e=4, low=True)))


def buggy_padded_attention(q: Tensor, k: Tensor, v: Tensor, lengths: Tensor) -> Tensor:
    """Attention over a padded batch, with a bug: the padding mask is built on the wrong axis.

    Shape: q, k, v ``(B, H, S, E)``; lengths ``(B,)`` -> ``(B, H, S, E)``.
    """
    S = k.shape[-2]
    real = torch.arange(S)[None, :] < lengths[:, None]  # (B, S): True = real token
    mask = real[:, None, :, None]  # (B, 1, S, 1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, S, S)
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v


def _same_rows(out: Tensor, expected: Tensor, rows: Tensor) -> bool:
    """``out`` and ``expected`` agree (float tolerance) on the query rows ``rows`` ``(B, 1, S, 1)``, which are some."""
    rows = rows.expand_as(expected)
    return bool(rows.any()) and bool(torch.allclose(out[rows].double(), expected[rows].double(), atol=1e-5))


def _diagnosis(out: Tensor, q: Tensor, k: Tensor, v: Tensor, lengths: Tensor, low: bool) -> CheckResult:
    S, e = k.shape[-2], q.shape[-1]
    positions = torch.arange(S)[None, :]
    real = positions < lengths[:, None]  # (B, S)
    rows = real[:, None, :, None]  # (B, 1, S, 1): the real queries
    if _same_rows(out, buggy_padded_attention(q, k, v, lengths), rows):
        padded_rows = (~real)[:, None, :, None].expand_as(out)
        if bool(padded_rows.any()) and bool((out[padded_rows] == 0).all()):
            return verdict(False, "ch05.padding.still_the_bug")
        return verdict(False, "ch05.padding.no_mask")
    padded = rows & (lengths < S)[:, None, None, None]  # real queries of sequences that have padding
    if _same_rows(out, masked_attention(q, k, v, (~real)[:, None, None, :]), padded):
        return verdict(False, "ch05.padding.inverted")
    if _same_rows(out, masked_attention(q, k, v, (positions <= lengths[:, None])[:, None, None, :]), rows):
        return verdict(False, "ch05.padding.off_by_one")
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1) * real[:, None, None, :]
    if _same_rows(out, weights @ v, rows):
        return verdict(False, "ch05.padding.after_softmax")
    if _same_rows(out, masked_attention(q, k, v, real[:, None, None, :], scale=1.0), rows):
        return verdict(False, "ch05.padding.unscaled")
    if any(_same_rows(out, masked_attention(q, k, v, real[:, None, None, :], fill=fill), rows) for fill in FILLS):
        return verdict(False, "ch05.padding.finite_fill")
    if torch.isnan(out[rows.expand_as(out)]).any():
        return verdict(False, "ch05.padding.nan")
    if low:  # right on ordinary scores, wrong where the real ones are all far below zero: a finite fill above them
        return verdict(False, "ch05.padding.finite_fill")
    return verdict(False, "ch05.padding.differs")


def _fresh(gen: torch.Generator) -> dict[str, int]:
    return dict(batch=draw_int(3, 5, gen), heads=draw_int(1, 2, gen), S=draw_int(5, 9, gen), e=draw_int(3, 6, gen))


@checker
def check_padding_fix(fn: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check the reader's fix of :func:`.buggy_padded_attention`: padded *keys* masked, real rows right.

    Named batches (one full sequence, one padded, at times an empty one; one whose real scores are all about
    -100, where a finite fill such as -30 leaks) and a fresh one, compared on the real query rows only. Names: the
    original bug, no mask at all, the mask inverted, one padded key still visible, weights zeroed after the
    softmax, unscaled scores, a finite fill, NaN on real rows.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        batch, heads, S, e = case["batch"], case["heads"], case["S"], case["e"]
        q, k, v = low_scores(case, batch, heads, S, e) if case.params.get("low") else qkv(case, batch, heads, S, e)
        lengths = torch.randint(0, S + 1, (batch,), generator=case.generator)
        lengths[0], lengths[1] = S, draw_int(1, S - 2, case.generator)  # one full sequence, one with 2+ padded keys
        real = torch.arange(S)[None, :] < lengths[:, None]  # (B, S)
        right = masked_attention(q, k, v, real[:, None, None, :])  # keys masked
        out = as_tensor(call_watched(fn, q, k, v, lengths.clone(), forbidden=ATTENTION,
                                     allowed=(buggy_padded_attention,)), phrase("ch05.what.padded_output"))
        if out.shape != right.shape:
            return verdict(False, "ch05.padding.shape", got=tuple(out.shape), expected=tuple(right.shape))
        if _same_rows(out, right, real[:, None, :, None]):
            return None
        return _diagnosis(out, q, k, v, lengths, bool(case.params.get("low")))

    return passed_unless(each_case(one, CASES, seed=5400, fresh=_fresh), "ch05.padding.passed")
