"""Exercise 2 of lab 1: attention weights over padded encoder states.

Contract (stated in the lab): ``masked_weights(scores, lengths)`` takes scores ``(B, S)`` and lengths ``(B,)``
(sequence ``b`` has ``lengths[b]`` real tokens, then padding) and returns weights ``(B, S)``: a softmax over
the real positions, exactly 0 on the padding (a finite fill such as -30 is not), all zeros for a sequence of
length 0 (not NaN), right for scores of ±1000. The package is refused while it runs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, each_case
from ..catalogue.ch01 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase, quoted
from ..reader import Rejected, allclose, as_tensor, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_masked_softmax", "padded_inputs", "LARGE_SCORE", "CASES"]

LARGE_SCORE = 1000.0
"""The size of the large scores of exercise 2's hard case — ``exp(1000)`` overflows even in float64."""

CASES = (
    ("ordinary scores", dict(kind="ordinary", batch=5, width=7)),
    ("scores of ±1000", dict(kind="large", batch=6, width=8)),
    ("a sequence of length 0", dict(kind="empty", batch=4, width=6)),
)


def padded_inputs(case: Case) -> tuple[Tensor, Tensor]:
    """Scores ``(B, S)`` and lengths ``(B,)``: a full sequence, one of a single token (``"empty"``: of length 0),
    others in between, in a drawn order; ``"large"``: scores of ±1000 (``_large``)."""
    gen, batch, width = case.generator, case["batch"], case["width"]
    scores = case.randn(batch, width, dtype=torch.float64) * 2  # (B, S)
    lengths = torch.randint(2, width, (batch,), generator=gen)  # (B,): lengths[b] real tokens, then padding
    lengths[0], lengths[1] = width, 0 if case["kind"] == "empty" else 1
    order = torch.randperm(batch, generator=gen)
    scores, lengths = scores[order].contiguous(), lengths[order].contiguous()
    return (_large(scores, lengths, gen), lengths) if case["kind"] == "large" else (scores, lengths)


def _large(scores: Tensor, lengths: Tensor, gen: torch.Generator) -> Tensor:
    """Every other sequence has a real score of +1000, the others only scores far below it (-1000 and ordinary
    ones); every padded score is +1000 (the mask must come first)."""
    batch, width = scores.shape
    real = _real(scores, lengths)
    low = (torch.rand(batch, width, generator=gen) < 0.4) & real
    low[1::2, 0] = False  # the other sequences keep an ordinary score (the padding's +1000 is their largest)
    scores = scores.masked_fill(low, -LARGE_SCORE).masked_fill(~real, LARGE_SCORE)
    for b in range(0, batch, 2):  # a real +1000 in every other sequence
        scores[b, int(torch.randint(0, int(lengths[b]), (1,), generator=gen))] = LARGE_SCORE
    return scores


def _real(scores: Tensor, lengths: Tensor) -> Tensor:
    return torch.arange(scores.shape[1])[None, :] < lengths[:, None]  # (B, S): True = a real token


def _masked(scores: Tensor, allowed: Tensor) -> Tensor:
    """The reference: softmax over the allowed positions, 0 elsewhere, an all-zero row where none is allowed."""
    weights = torch.softmax(scores.double().masked_fill(~allowed, float("-inf")), dim=-1)
    return weights.nan_to_num(0.0)


def _ordinary(weights: Tensor, scores: Tensor, lengths: Tensor) -> CheckResult | None:
    real = _real(scores, lengths)
    weights = weights.double()
    if torch.isnan(weights).any():
        return verdict(False, "ch01.masked.nan")
    candidates = (
        ("ch01.masked.unmasked", torch.softmax(scores, dim=-1)),
        ("ch01.masked.inverted", _masked(scores, ~real)),
        ("ch01.masked.after_softmax", torch.softmax(scores, dim=-1) * real),
        ("ch01.masked.batch_axis", torch.softmax(scores, dim=0)),
        ("ch01.masked.batch_axis", _masked(scores.T, real.T).T),
        ("ch01.masked.off_by_one", _masked(scores, torch.arange(scores.shape[1])[None, :] <= lengths[:, None])),
    )
    for key, candidate in candidates:
        if allclose(weights, candidate):
            return verdict(False, key)
    padded_weight = float(weights[~real].abs().sum())
    if padded_weight > 1e-6:
        return verdict(False, "ch01.masked.padding_weight", weight=padded_weight)
    if not allclose(weights, _masked(scores, real)):
        return verdict(False, "ch01.masked.wrong_softmax")
    if padded_weight > 0:  # right to float tolerance, but not exactly 0: a finite fill value
        return verdict(False, "ch01.masked.finite_fill", weight=padded_weight)
    return None


def _large_verdict(weights: Tensor, scores: Tensor, lengths: Tensor) -> CheckResult | None:
    real = _real(scores, lengths)
    weights, reference = weights.double(), _masked(scores, real)
    finite = torch.isfinite(weights)
    padded_weight = float(weights.nan_to_num(0.0, 0.0, 0.0)[~real].abs().sum())
    if padded_weight > 0:
        return verdict(False, "ch01.masked.large_padding", score=LARGE_SCORE, weight=padded_weight)
    bad_rows = ~(finite & torch.isclose(weights.nan_to_num(0.0, 0.0, 0.0), reference, rtol=1e-5, atol=1e-6)).all(-1)
    if not bad_rows.any():
        return None
    real_max = scores.masked_fill(~real, float("-inf")).amax(dim=-1)  # (B,)
    unstable = (real_max >= LARGE_SCORE) | (real_max <= -LARGE_SCORE)  # exp() alone overflows or underflows
    dominated = (~real).any(dim=-1) & (real_max < LARGE_SCORE)  # a padded score (+1000) is the row's largest
    if not bool((bad_rows & ~unstable).any()):  # wrong only where exp() of the raw scores fails
        return verdict(False, "ch01.masked.overflow", score=LARGE_SCORE)
    if not bool((bad_rows & ~dominated).any()):  # wrong only where the padding holds the largest score
        return verdict(False, "ch01.masked.underflow", score=LARGE_SCORE)
    return verdict(False, "ch01.masked.large_nan" if not finite.all() else "ch01.masked.large_differs",
                   score=LARGE_SCORE)


def _empty_verdict(fn: Callable[..., Tensor], scores: Tensor, lengths: Tensor) -> CheckResult | None:
    try:
        result = call_watched(fn, scores.clone(), lengths.clone())
    except Rejected as rejected:  # the answer's own failure, put in context; the guard's verdicts as they are
        if (rejected.verdict.key or "").startswith("guard."):
            raise
        return verdict(False, "ch01.masked.empty_failed", failure=quoted(rejected.verdict))
    empty = as_tensor(result, phrase("ch01.what.weights")).double()
    if empty.shape != scores.shape or not torch.isfinite(empty).all():
        return verdict(False, "ch01.masked.empty_nan")
    if not allclose(empty, _masked(scores, _real(scores, lengths))) or bool((empty[lengths == 0] != 0).any()):
        row = empty[lengths == 0][0]
        uniform = allclose(row, torch.full_like(row, 1 / empty.shape[-1]))
        return verdict(False, "ch01.masked.empty_uniform" if uniform else "ch01.masked.empty_not_zero",
                       total=float(row.sum()))
    return None


@checker
def check_masked_softmax(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(scores, lengths)``: attention weights that ignore the padded positions.

    Named cases: ordinary scores (a full sequence and one of a single token among them), scores of ±1000 (a
    softmax without the subtraction of the maximum overflows; the padded scores are +1000, so that masking after
    the softmax underflows), a batch with a sequence of length 0; then fresh ordinary scores. The padded weights
    must be exactly 0, not merely small. Compared with :func:`helpers.attention.masked_softmax` (chapter 1; the
    empty row as chapter 0 defines it).

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        scores, lengths = padded_inputs(case)
        if case["kind"] == "empty":
            return _empty_verdict(fn, scores, lengths)
        weights = as_tensor(call_watched(fn, scores.clone(), lengths.clone()), phrase("ch01.what.weights"))
        if weights.shape != scores.shape:
            return verdict(False, "ch01.masked.shape", expected=tuple(scores.shape), got=tuple(weights.shape))
        return (_large_verdict if case["kind"] == "large" else _ordinary)(weights, scores, lengths)

    failure = each_case(one, CASES, seed=1200, fresh=lambda gen: dict(
        kind="ordinary", batch=draw_int(4, 7, gen), width=draw_int(5, 9, gen)))
    return passed_unless(failure, "ch01.masked.passed")
