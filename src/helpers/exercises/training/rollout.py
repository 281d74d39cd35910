"""Exercise 3 of lab 6.1-6.2: attention rollout (Abnar & Zuidema, 2020).

Contract (stated in the lab): ``rollout(attentions)`` takes a list of the weights of each layer, first layer
first, ``(B, H, L, L)`` each, and returns ``(B, L, L)``: per layer the mean over the heads, the residual as
``0.5 A + 0.5 I``, each row renormalised to sum to 1; then ``R = A'_N ... A'_1``. The package is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch06_training import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..reader import as_tensor, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_rollout"]

CASES = (("3 layers, 2 heads", dict(layers=3, sizes=(2, 2, 5))), ("2 layers, 4 heads", dict(layers=2, sizes=(1, 4, 6))))


def _rollout(layers: Sequence[Tensor], *, fusion: str = "mean", residual: str = "half", renormalise: bool = True,
             order: str = "right", keep: str = "all") -> Tensor:
    """Rollout as written, or with one of the typical mistakes."""
    eye = torch.eye(layers[0].shape[-1], dtype=torch.float64)
    layers = {"last": layers[-1:], "first": layers[:1]}.get(keep, layers)
    result = None
    for layer in layers:
        fused = layer.double().mean(1) if fusion == "mean" else layer.double().amax(1)  # (B, H, L, L) -> (B, L, L)
        fused = {"half": 0.5 * fused + 0.5 * eye, "full": fused + eye}.get(residual, fused)
        if renormalise:
            fused = fused / fused.sum(-1, keepdim=True)
        result = fused if result is None else (fused @ result if order == "right" else result @ fused)
    return result


MISTAKES = (
    Mistake("ch06_training.rollout.no_residual", lambda layers: _rollout(layers, residual="none", renormalise=False)),
    Mistake("ch06_training.rollout.not_renormalised", lambda layers: _rollout(layers, renormalise=False)),
    Mistake("ch06_training.rollout.full_identity", lambda layers: _rollout(layers, residual="full", renormalise=False)),
    Mistake("ch06_training.rollout.wrong_order", lambda layers: _rollout(layers, order="left")),
    Mistake("ch06_training.rollout.last_only", lambda layers: _rollout(layers, keep="last")),
    Mistake("ch06_training.rollout.first_only", lambda layers: _rollout(layers, keep="first")),
    Mistake("ch06_training.rollout.max_fusion", lambda layers: _rollout(layers, fusion="max")),
    Mistake("ch06_training.rollout.transposed", lambda layers: _rollout(layers).transpose(-2, -1)),
)


def _weights(case: Case) -> list[Tensor]:
    """The weights of each layer, ``(B, H, L, L)``: softmax rows, some causal layers, and one query row left fully
    masked (all zeros in every head, as a masked softmax returns it)."""
    gen, (batch, heads, length) = case.generator, case["sizes"]
    weights = []
    for _ in range(case["layers"]):
        scores = 1.5 * case.randn(batch, heads, length, length)  # (B, H, L, L)
        if bool(torch.rand((), generator=gen) < 0.5):
            scores = scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("-inf"))
        weights.append(torch.softmax(scores, dim=-1))
    weights[draw_int(0, case["layers"] - 1, gen)][0, :, draw_int(0, length - 1, gen)] = 0.0  # no key to attend to
    return weights


def _close(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=1e-4, atol=1e-5))


@checker
def check_rollout(fn: Callable[[list[Tensor]], Tensor]) -> CheckResult:
    """Check ``fn(attentions) -> (B, L, L)``: attention rollout (Abnar & Zuidema, 2020).

    The reference is :func:`helpers.diagnostics.attention_rollout`; named cases and a fresh one (2 to 4 layers,
    causal or not, one fully masked query row of zeros).

    Args:
        fn: The reader's function.

    Returns:
        The verdict.

    Shape:
        attentions: N tensors ``(B, H, L, L)`` -> ``(B, L, L)``.
    """
    from helpers import diagnostics

    def one(case: Case) -> CheckResult | None:
        layers = _weights(case)
        right = diagnostics.attention_rollout(layers)
        out = as_tensor(call_watched(fn, [w.clone() for w in layers]), phrase("ch06_training.what.rollout")).detach()
        if _close(out, right):
            return None
        batch, heads, length = layers[0].shape[:3]
        if out.shape == (batch, heads, length, length):
            return verdict(False, "ch06_training.rollout.per_head", shape=tuple(out.shape))
        if out.shape != right.shape:
            return verdict(False, "ch06_training.rollout.shape", expected=tuple(right.shape), got=tuple(out.shape))
        if not torch.isfinite(out).all():
            return verdict(False, "ch06_training.rollout.nan")
        mistake = first_mistake(out, MISTAKES, layers, same=_close)
        if mistake is not None:
            return verdict(False, mistake.key)
        return verdict(False, "ch06_training.rollout.differs", diff=(out.double() - right.double()).abs().max().item())

    fresh = lambda gen: dict(layers=draw_int(2, 4, gen), sizes=(draw_int(1, 3, gen), draw_int(2, 4, gen),  # noqa: E731
                                                                draw_int(3, 7, gen)))
    return passed_unless(each_case(one, CASES, seed=6300, fresh=fresh), "ch06_training.rollout.passed")
