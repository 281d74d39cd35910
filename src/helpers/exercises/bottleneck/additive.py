"""Exercise 1 of lab 1: Bahdanau's additive score ``v^T tanh(W_q s + W_k h_j)``.

Contract (stated in the lab): ``additive_scores(query, keys, w_q, w_k, v)`` takes one decoder state per
sequence ``(B, E_q)``, the encoder states ``(B, S, E_k)``, ``w_q`` ``(A, E_q)`` and ``w_k`` ``(A, E_k)`` laid out
like ``nn.Linear`` weights, ``v`` ``(A,)``, and returns the scores ``(B, S)``, before any softmax. The package is
refused while it runs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch01 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..reader import allclose, as_tensor, call_watched, checker, passed_unless, verdict

__all__ = ["check_additive_scores", "additive_inputs", "CASES"]

CASES = (  # (B, S, E_q, E_k, A): five distinct sizes, so that a transposed weight cannot multiply
    ("2 sequences of 5 states", dict(sizes=(2, 5, 3, 4, 6))),
    ("the same sizes, other values", dict(sizes=(2, 5, 3, 4, 6))),
    ("3 sequences of 4 states", dict(sizes=(3, 4, 7, 2, 5))),
)


def additive_inputs(case: Case) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """``(query, keys, w_q, w_k, v)`` of ``case``'s sizes ``(B, S, E_q, E_k, A)``, in float64."""
    batch, length, e_q, e_k, hidden = case["sizes"]
    return (case.randn(batch, e_q, dtype=torch.float64), case.randn(batch, length, e_k, dtype=torch.float64),
            case.randn(hidden, e_q, dtype=torch.float64), case.randn(hidden, e_k, dtype=torch.float64),
            case.randn(hidden, dtype=torch.float64))


def _fresh(gen: torch.Generator) -> dict[str, tuple[int, ...]]:
    return dict(sizes=tuple(int(n) for n in torch.randperm(7, generator=gen)[:5] + 2))


def _reference(query: Tensor, keys: Tensor, w_q: Tensor, w_k: Tensor, v: Tensor) -> Tensor:
    return torch.tanh((query @ w_q.T)[:, None, :] + keys @ w_k.T) @ v  # (B, 1, A) + (B, S, A) -> (B, S)


MISTAKES = (
    Mistake("ch01.additive.softmax", lambda *inputs: torch.softmax(_reference(*inputs), dim=-1)),
    Mistake("ch01.additive.sign", lambda *inputs: -_reference(*inputs)),
    Mistake("ch01.additive.no_tanh", lambda q, k, w_q, w_k, v: ((q @ w_q.T)[:, None, :] + k @ w_k.T) @ v),
    Mistake("ch01.additive.separate_tanh", lambda q, k, w_q, w_k, v: (
        torch.tanh(q @ w_q.T)[:, None, :] + torch.tanh(k @ w_k.T)) @ v),
    Mistake("ch01.additive.no_query", lambda q, k, w_q, w_k, v: torch.tanh(k @ w_k.T) @ v),
)


@checker
def check_additive_scores(fn: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(query, keys, w_q, w_k, v)``: the additive scores ``v^T tanh(W_q s + W_k h_j)``.

    Named cases (the first two of the same sizes and other values: an answer that returns the same tensor
    whatever it is given is named), then a fresh one; no function of the package may run while ``fn`` does.
    Compared with :func:`helpers.scores.additive_scores` (chapter 1).

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    previous: list[Tensor] = []

    def one(case: Case) -> CheckResult | None:
        inputs = additive_inputs(case)
        batch, length, hidden = inputs[1].shape[0], inputs[1].shape[1], inputs[4].shape[0]
        result = call_watched(fn, *(t.clone() for t in inputs), shape_hint=phrase("ch01.additive.shape_hint"))
        scores = as_tensor(result, phrase("ch01.what.scores"))
        if previous and scores.shape == previous[-1].shape and torch.equal(scores, previous[-1]):
            return verdict(False, "ch01.additive.constant")
        previous.append(scores.detach().clone())
        if scores.shape != (batch, length):
            if scores.shape == (batch, length, hidden):
                return verdict(False, "ch01.additive.stopped_at_tanh", shape=tuple(scores.shape))
            if scores.numel() == batch * length:
                return verdict(False, "ch01.additive.reshape", shape=tuple(scores.shape), expected=(batch, length))
            return verdict(False, "ch01.additive.shape", expected=(batch, length), got=tuple(scores.shape))
        if not torch.isfinite(scores).all():
            return verdict(False, "ch01.additive.not_finite")
        reference = _reference(*inputs)
        if allclose(scores, reference):
            return None
        mistake = first_mistake(scores, MISTAKES, *inputs, same=allclose)
        if mistake is not None:
            return verdict(False, mistake.key)
        return verdict(False, "ch01.additive.differs", error=float((scores.double() - reference).abs().max()))

    return passed_unless(each_case(one, CASES, seed=1100, fresh=_fresh), "ch01.additive.passed")
