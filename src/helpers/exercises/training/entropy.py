"""Exercise 1 of lab 6.1-6.2: the entropy of each head's attention.

Contract (stated in the lab): ``head_entropy(scores, key_mask)`` takes scores ``(B, H, L, S)`` (float32 or
float16) and a padding mask ``(B, S)`` (True = a real token) and returns ``(B, H)``: the entropy, in nats, of the
softmax over the real keys, averaged over the queries (``0 log 0 = 0``; the softmax in float32). The package,
``torch.distributions``, SciPy and scikit-learn are refused while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, each_case
from ..catalogue.ch06_training import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import DISTRIBUTIONS
from ..messages import phrase
from ..reader import allclose, as_tensor, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_head_entropy", "entropy_case"]

CASES = (("moderate scores", dict(kind="moderate", sizes=(3, 2, 4, 7))),
         ("scores of ±1000, a sequence of one real key", dict(kind="hard", sizes=(3, 3, 5, 6))),
         ("float16 scores", dict(kind="float16", sizes=(2, 2, 3, 8))))


def _entropy(weights: Tensor) -> Tensor:
    """Entropy in nats of each row, mean over the queries: ``(B, H, L, S) -> (B, H)``."""
    return -torch.special.xlogy(weights, weights).sum(-1).mean(-1)


def entropy_case(case: Case) -> tuple[Tensor, Tensor]:
    """Scores ``(B, H, L, S)`` and a padding mask ``(B, S)``: every sequence has at least one real key.

    ``"hard"``: scores reach ±1000; the first sequence has a single real key, scored -1000 (its entropy is exactly
    0; a padding score of -1000 instead of -inf would tie with it), and in every other sequence one real key scores
    +1000 in about half the rows, so that the other real keys of those rows get weight exactly 0 (``0 log 0``)."""
    gen, (batch, heads, length, keys) = case.generator, case["sizes"]
    hard = case["kind"] == "hard"
    lengths = torch.randint(2, keys, (batch,), generator=gen)  # at least one padded key per sequence
    if hard:
        lengths[0] = 1
    mask = torch.arange(keys)[None, :] < lengths[:, None]  # (B, S), True = real token
    mask = mask[:, torch.randperm(keys, generator=gen)]  # padding anywhere, not only at the end
    scores = 2 * case.randn(batch, heads, length, keys)  # (B, H, L, S)
    if hard:
        big = torch.rand(batch, heads, length, keys, generator=gen) < 0.3
        scores = torch.where(big, 1000 * case.randn(batch, heads, length, keys).sign(), scores)
        real = mask.float().argmax(-1)  # (B,): the first real key of each sequence
        scores[0, :, :, real[0]] = -1000.0
        for b in range(1, batch):
            rows = torch.rand(heads, length, generator=gen) < 0.5  # (H, L)
            rows[0, 0] = True
            scores[b, :, :, real[b]] = torch.where(rows, 1000.0, scores[b, :, :, real[b]])
    return (scores.half() if case["kind"] == "float16" else scores), mask


def _diagnosis(out: Tensor, right: Tensor, scores: Tensor, mask: Tensor, kind: str) -> CheckResult:
    batch, heads, length, keys = scores.shape
    allowed = mask[:, None, None, :]  # (B, 1, 1, S)
    if kind == "float16" and out.shape == right.shape and not torch.isnan(out).any():
        return verdict(False, "ch06_training.entropy.float16", diff=(out.double() - right.double()).abs().max().item())
    if out.shape == (batch, heads, length):
        return verdict(False, "ch06_training.entropy.per_query", shape=tuple(out.shape))
    if out.shape != right.shape:
        return verdict(False, "ch06_training.entropy.shape", expected=tuple(right.shape), got=tuple(out.shape))
    if torch.isnan(out).any():
        return verdict(False, "ch06_training.entropy.nan_hard" if kind == "hard" else "ch06_training.entropy.nan")
    if kind == "hard":
        return verdict(False, "ch06_training.entropy.hard", diff=(out - right).abs().max().item())
    weights = torch.softmax(scores.float().masked_fill(~allowed, float("-inf")), dim=-1)
    no_mask = _entropy(torch.softmax(scores, dim=-1))
    after = torch.softmax(scores, dim=-1) * allowed  # zeroed after the softmax, not renormalised
    real = mask.sum(-1).float()  # (B,)
    candidates = (
        ("no_mask", (no_mask, no_mask / math.log(2))), ("bits", (right / math.log(2),)), ("sign", (-right,)),
        ("after_softmax", (_entropy(after), _entropy(after) / math.log(2))),
        ("inverted", (_entropy(torch.softmax(scores.masked_fill(allowed, float("-inf")), dim=-1)),)),
        ("normalised", (right / math.log(keys), right / real.log()[:, None])), ("summed", (right * length,)),
        ("mean_over_keys", (right / keys, -torch.special.xlogy(weights, weights).mean(-1).mean(-1))),
    )
    for key, values in candidates:
        if any(allclose(out, value) for value in values):
            return verdict(False, f"ch06_training.entropy.{key}")
    return verdict(False, "ch06_training.entropy.differs", diff=(out.double() - right.double()).abs().max().item())


@checker
def check_head_entropy(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(scores, key_mask) -> (B, H)``: the entropy of each head's attention, in nats.

    The weights are the softmax of ``scores`` over the real keys only; the entropy ``-sum p log p`` of each query's
    row is averaged over the queries. The reference is :func:`helpers.diagnostics.attention_entropy` of the masked
    softmax. Named cases (moderate scores; scores of ±1000 with a sequence of one real key; float16 scores, whose
    softmax belongs in float32), then a fresh one.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.

    Shape:
        scores ``(B, H, L, S)``, key_mask ``(B, S)`` bool -> ``(B, H)``.
    """
    from helpers import diagnostics

    def one(case: Case) -> CheckResult | None:
        scores, mask = entropy_case(case)
        weights = torch.softmax(scores.float().masked_fill(~mask[:, None, None, :], float("-inf")), dim=-1)
        right = diagnostics.attention_entropy(weights)
        out = as_tensor(call_watched(fn, scores.clone(), mask.clone(), forbidden=DISTRIBUTIONS),
                        phrase("ch06_training.what.entropy")).detach()
        return None if allclose(out, right) else _diagnosis(out, right, scores, mask, case["kind"])

    fresh = lambda gen: dict(kind="moderate", sizes=(draw_int(2, 4, gen), draw_int(1, 4, gen), draw_int(2, 6, gen),  # noqa: E731
                                                     draw_int(4, 9, gen)))
    return passed_unless(each_case(one, CASES, seed=6100, fresh=fresh), "ch06_training.entropy.passed")
