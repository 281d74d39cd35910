"""Exercise 6 of lab 3: find and fix the scaling bug of :func:`helpers.exercises.ch03.buggy_multihead_attention`.

Contract (stated in the lab): ``fixed_multihead_attention(x, layer)`` returns the layer's output ``(B, L, D)``
(or ``(output, weights)``, as the layer does), built from its projections: ``layer(x)`` and PyTorch's attention
are refused while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, each_case
from ..catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import phrase
from ..multihead.layer import attend, fresh_layer, merge_flat, split_flat
from ..reader import call_watched, checker, draw_int, passed_unless, verdict
from .attention_scale import told_apart

__all__ = ["check_multihead_fix"]

CASES = (("4 heads of 6 features", dict(heads=4, head_dim=6, length=5, batch=2)),
         ("3 heads of 8 features", dict(heads=3, head_dim=8, length=4, batch=1)))

BUGS = {"softmax_axis": dict(softmax_dim=-2), "split": dict(split_heads=split_flat),
        "merge": dict(merge_heads=merge_flat), "no_o_proj": dict(output=False),
        "transposed_scores": dict(keys_first=True)}
"""The head-handling bugs the checker names on top of a wrong scale, as stages of
:func:`helpers.exercises.multihead.layer.attend`."""


def _scales(embed_dim: int, num_heads: int) -> list[tuple[float, str]]:
    head_dim = embed_dim // num_heads
    return [(1 / math.sqrt(head_dim), "right"), (1 / math.sqrt(embed_dim), "model_scale"), (1.0, "unscaled"),
            (1 / head_dim, "no_sqrt"), (math.sqrt(head_dim), "multiplier"), (1 / math.sqrt(num_heads), "num_heads")]


def _fresh(gen: torch.Generator) -> dict[str, int]:
    """A fresh layout: ``head_dim`` not 1 nor ``num_heads``, ``L != head_dim``, no two scale mistakes alike."""
    while True:
        heads, head_dim, length = draw_int(2, 8, gen), draw_int(2, 12, gen), draw_int(3, 7, gen)
        if head_dim not in (heads, length) and told_apart(heads * head_dim, heads, heads):
            return dict(heads=heads, head_dim=head_dim, length=length, batch=draw_int(1, 3, gen))


def _diagnosis(result: Tensor, x: Tensor, layer: Any) -> CheckResult:
    embed_dim, num_heads = layer.embed_dim, layer.num_heads
    for bug, stages in (("right", {}), *BUGS.items()):
        for scale, scale_name in _scales(embed_dim, num_heads):
            if (bug, scale_name) == ("right", "right"):
                continue
            if torch.allclose(result, attend(x, layer, scale=scale, **stages), atol=1e-8):
                if bug == "right":
                    return verdict(False, f"ch03.fix.{scale_name}", embed_dim=embed_dim, num_heads=num_heads)
                also = phrase("ch03.fix.also_right" if scale_name == "right" else "ch03.fix.also_scale")
                return verdict(False, f"ch03.fix.{bug}", embed_dim=embed_dim, num_heads=num_heads, also=also)
    return verdict(False, "ch03.fix.differs", embed_dim=embed_dim, num_heads=num_heads,
                   max_error=float((result - layer(x)[0]).abs().max()))


@checker
def check_multihead_fix(fn: Callable[[Tensor, Any], Tensor]) -> CheckResult:
    """Check the reader's fix of :func:`helpers.exercises.ch03.buggy_multihead_attention`: ``fn(x, layer)``.

    Compared with ``layer(x)[0]`` (:class:`~helpers.multihead.MultiHeadAttention`, float64) on two named layouts
    and a fresh one; a wrong output is matched against each head-handling bug (softmax over the queries, heads
    split by a bare ``view``, merged without moving them back, no output projection, the score matrix transposed),
    each with the right or one of the usual wrong scales, and named.

    Args:
        fn: The reader's function, with the signature of ``buggy_multihead_attention``.

    Returns:
        The verdict, naming the mistake.
    """
    def one(case: Case) -> CheckResult | None:
        heads, embed_dim = case["heads"], case["heads"] * case["head_dim"]
        layer = fresh_layer(embed_dim, heads, case.generator, dtype=torch.float64)
        x = case.randn(case["batch"], case["length"], embed_dim, dtype=torch.float64)
        with torch.no_grad():
            expected, _ = layer(x)
            result = call_watched(fn, x.clone(), layer, forbidden=ATTENTION)
            if isinstance(result, tuple) and result and isinstance(result[0], Tensor):
                result = result[0]  # (output, weights), as MultiHeadAttention returns
            if not isinstance(result, Tensor):
                key = "ch03.fix.returned_none" if result is None else "ch03.fix.not_tensor"
                return verdict(False, key, type=type(result).__name__)
            if result.shape != expected.shape:
                return verdict(False, "ch03.fix.shape", expected=tuple(expected.shape), got=tuple(result.shape))
            result = result.detach().double()
            return None if torch.allclose(result, expected, atol=1e-8) else _diagnosis(result, x, layer)

    return passed_unless(each_case(one, CASES, seed=3600, fresh=_fresh), "ch03.fix.passed")
