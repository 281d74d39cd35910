"""Exercise 7 of lab 5: masks that are safe in any dtype.

Contract (stated in the lab): ``masked_scores(scores, mask)`` takes scores ``(B, H, L, S)`` and a boolean mask
that broadcasts to them (True = may attend, as in PyTorch) and returns the scores with the mask applied, of the
scores' shape and dtype, such that their softmax in that dtype is right in float32, float16 and bfloat16, also on
fully masked rows (uniform, as ``masked_fill`` with ``finfo.min`` gives) and when it is applied twice (two masks).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case
from ..catalogue.ch05 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..reader import Rejected, as_tensor, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_masked_scores"]

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.5e-2}
"""How far the softmax of the reader's scores, computed in their dtype, may be from the float64 reference."""

CASES = tuple((f"{str(dtype).removeprefix('torch.')}, {'two masks' if two else 'one mask'} {shape}",
               dict(dtype=dtype, two=two, shape=shape))
              for dtype, two, shape in ((torch.float32, False, "full"), (torch.float32, True, "square"),
                                        (torch.float16, False, "batch"), (torch.float16, True, "full"),
                                        (torch.bfloat16, False, "square"), (torch.bfloat16, True, "batch")))
"""Every dtype with one mask and with two; masks of the scores' shape, ``(B, 1, L, S)`` and ``(L, S)`` (which always
broadcasts: without one, indexing with the mask would pass)."""


def _fill_min(scores: Tensor, keep: Tensor) -> Tensor:
    return scores.masked_fill(~keep, torch.finfo(scores.dtype).min)


def _add_min(scores: Tensor, keep: Tensor) -> Tensor:
    low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
    return scores + torch.where(keep, torch.zeros((), dtype=scores.dtype), low)


MISTAKES = (
    Mistake("ch05.mask_dtype.minus_inf", lambda s, keep: s.masked_fill(~keep, -math.inf)),
    Mistake("ch05.mask_dtype.added_min", _add_min),
    Mistake("ch05.mask_dtype.minus_1e9", lambda s, keep: s.float().masked_fill(~keep, -1e9).to(s.dtype)),
    Mistake("ch05.mask_dtype.minus_1e9", lambda s, keep: s + torch.where(keep, 0.0, -1e9).to(s.dtype)),
    Mistake("ch05.mask_dtype.inverted", lambda s, keep: s.masked_fill(keep, torch.finfo(s.dtype).min)),
    Mistake("ch05.mask_dtype.multiplied", lambda s, keep: s * keep),
)
"""The typical ways to get it wrong, in the order they are named (the first that reproduces the answer)."""


def mask_case(case: Case) -> tuple[Tensor, list[Tensor]]:
    """Float64 scores ``(B, H, L, S)`` and one or two boolean masks that broadcast to them.

    Three query rows are fully masked (by every mask): one of negative scores (below -16, where ``score + finfo.min``
    overflows float16), one of negative scores but one positive, one of mixed scores; with two masks, a fourth row is
    fully masked by the two together, each key by one of them; every other row keeps a key."""
    gen = case.generator
    B, H, L, S = draw_int(1, 2, gen), draw_int(1, 3, gen), draw_int(5, 8, gen), draw_int(4, 8, gen)
    scores = case.randn(B, H, L, S, dtype=torch.float64) * 4  # mixed signs
    rows = torch.randperm(L, generator=gen)
    negative, one_positive = int(rows[0]), int(rows[1])
    low = -40 + 23 * torch.rand(B, H, 2, S, generator=gen, dtype=torch.float64)  # in [-40, -17]
    scores[:, :, negative], scores[:, :, one_positive] = low[:, :, 0], low[:, :, 1]
    scores[:, :, one_positive, draw_int(0, S - 1, gen)] = 1 + 7 * torch.rand(B, H, generator=gen, dtype=torch.float64)
    mask_shape = {"full": (B, H, L, S), "batch": (B, 1, L, S), "square": (L, S)}[case["shape"]]
    masks = []
    for m in range(2 if case["two"] else 1):
        keep = torch.rand(*(mask_shape if m == 0 or case["shape"] == "full" else (L, S)), generator=gen) < 0.6
        keep[..., rows[:3], :] = False
        masks.append(keep)
    if case["two"]:  # a row fully masked by the two together: the first hides some keys, the second the others
        split, together = draw_int(1, S - 1, gen), int(rows[3])
        masks[0][..., together, :] = torch.arange(S) >= split
        masks[1][..., together, :] = torch.arange(S) < split
    for r in rows[4 if case["two"] else 3:].tolist():  # every other row keeps at least one key under every mask
        j = draw_int(0, S - 1, gen)
        for keep in masks:
            keep[..., r, j] = True
    return scores, masks


def _softmax_of(scores: Tensor) -> Tensor:
    return torch.softmax(scores, dim=-1).double()  # computed in the scores' own dtype


def _same_weights(a: Tensor, b: Tensor, tol: float) -> bool:
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    if a.shape != b.shape or not bool((nan_a == nan_b).all()):
        return False
    return bool(torch.allclose(a[~nan_a], b[~nan_b], rtol=0, atol=tol))


def _apply(fn: Callable[[Tensor, Tensor], Any], scores: Tensor, masks: list[Tensor], watched: bool = True) -> Tensor:
    out: Any = scores.clone()
    for keep in masks:  # two masks: the function called twice, as a model applies a causal then a padding mask
        out = as_tensor(call_watched(fn, out, keep) if watched else fn(out, keep), phrase("ch05.what.masked_scores"))
        if out.shape != scores.shape:  # named by the caller
            break
    return out


def _mistake(fn: Callable[[Tensor, Tensor], Any], scores64: Tensor, masks: list[Tensor]) -> str | None:
    """The key of the typical mistake that reproduces the answer's weights in all three dtypes, if one does."""
    theirs = {}
    for dtype in DTYPES:
        try:
            out = _apply(fn, scores64.to(dtype), masks)
        except Rejected:
            return None
        if out.shape != scores64.shape:
            return None
        theirs[dtype] = _softmax_of(out)
    for mistake in MISTAKES:
        if all(_same_weights(theirs[d], _softmax_of(_apply(mistake.simulate, scores64.to(d), masks, watched=False)),
                             TOLERANCE[d]) for d in DTYPES):
            return mistake.key
    return None


def _fresh(gen: torch.Generator) -> dict[str, Any]:
    return dict(dtype=DTYPES[draw_int(0, 2, gen)], two=bool(draw_int(0, 1, gen)),
                shape=("full", "batch", "square")[draw_int(0, 2, gen)])


@checker
def check_masked_scores(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(scores, mask)``, the scores with the mask applied, safe to softmax in the scores' own dtype.

    The softmax of the answer, computed in its dtype, is compared with a float64 reference: the masked softmax on
    rows that keep a key, and a uniform row where every key is masked (what ``masked_fill`` with
    ``torch.finfo(dtype).min`` gives, chapter 5.2). Named cases (``CASES``) and a fresh one. Names:
    ``finfo.min`` added (NaN or one-hot in float16, NaN with two masks in every dtype), ``-1e9`` (``-inf`` in
    float16), ``-inf`` (NaN on a fully masked row), a fill that does not fit the dtype, the mask inverted, the scores
    multiplied by the mask, a mask that is not broadcast, a wrong shape or dtype, NaN.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        scores64, masks = mask_case(case)
        dtype, scores = case["dtype"], scores64.to(case["dtype"])
        where = {"dtype": str(dtype).removeprefix("torch."), "masks": len(masks),
                 "mask_shape": " & ".join(str(tuple(keep.shape)) for keep in masks), "shape": tuple(scores.shape)}
        try:
            out = _apply(fn, scores, masks)
        except Rejected as rejected:
            error = str(rejected.verdict.fields.get("error", ""))
            if rejected.verdict.key == "reader.raised" and "without overflow" in error:
                return verdict(False, "ch05.mask_dtype.fill_overflows", **where)
            if rejected.verdict.key == "reader.raised" and any(keep.shape != scores.shape for keep in masks):
                return verdict(False, "ch05.mask_dtype.broadcast", error=error, **where)
            raise
        if tuple(out.shape) != tuple(scores.shape):
            return verdict(False, "ch05.mask_dtype.shape", got=tuple(out.shape), **where)
        if out.dtype != dtype:
            return verdict(False, "ch05.mask_dtype.dtype", got=str(out.dtype).removeprefix("torch."), **where)
        keep = masks[0] if len(masks) == 1 else masks[0] & masks[1]
        reference = _softmax_of(_fill_min(scores.double(), keep.expand_as(scores)))  # uniform on a row with no key
        if _same_weights(_softmax_of(out), reference, TOLERANCE[dtype]) and not torch.isnan(out).any():
            return None
        key = _mistake(fn, scores64, masks)
        if key == "ch05.mask_dtype.added_min" and case["two"]:
            key = "ch05.mask_dtype.added_twice"
        if key is None:
            key = "ch05.mask_dtype.nan" if torch.isnan(_softmax_of(out)).any() else "ch05.mask_dtype.differs"
        return verdict(False, key, **where)

    return passed_unless(each_case(one, CASES, seed=5700, fresh=_fresh), "ch05.mask_dtype.passed")
