"""Exercise 3 of lab 3: the softmax Jacobian ``diag(p) - p pᵀ``.

Contract (stated in the lab): ``my_jacobian(logits)`` takes logits ``(..., S)`` and returns ``J`` ``(..., S, S)``
with ``J[..., i, j] = d p_i / d z_j``, by formula: autograd (``torch.autograd``, ``torch.func``, a tensor that
requires grad) and the package are refused while it runs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import AUTOGRAD
from ..reader import call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_softmax_jacobian", "jacobian_logits"]

CASES = (("(2, 3, 5) logits", dict(shape=(2, 3, 5))), ("(1, 4, 7) logits", dict(shape=(1, 4, 7))))


def jacobian_logits(case: Case) -> Tensor:
    """Logits of ``case``'s shape ``(B1, B2, S)``: spread rows, one saturated row (entries of ±1000, at least one
    +1000), one uniform row."""
    shape, gen = case["shape"], case.generator
    logits = 3 * case.randn(*shape, dtype=torch.float64)
    signs = torch.randint(0, 2, (shape[-1],), generator=gen, dtype=torch.float64) * 2 - 1
    signs[draw_int(0, shape[-1] - 1, gen)] = 1.0
    logits[0, 0] = 1000.0 * signs  # saturated: p is (nearly) one-hot, naive exponentials overflow
    logits[-1, -1] = 0.0  # uniform
    return logits


def _fresh(gen: torch.Generator) -> dict[str, tuple[int, int, int]]:
    batch = draw_int(1, 3, gen)
    return dict(shape=(batch, draw_int(3 if batch == 1 else 2, 4, gen), draw_int(3, 9, gen)))  # a spread row always


def _outer(p: Tensor) -> Tensor:
    return p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., S, S)


MISTAKES = (
    Mistake("ch03.jacobian.sign", lambda z, p: _outer(p) - torch.diag_embed(p)),
    Mistake("ch03.jacobian.only_diag", lambda z, p: torch.diag_embed(p)),
    Mistake("ch03.jacobian.only_outer", lambda z, p: -_outer(p)),
    Mistake("ch03.jacobian.logits", lambda z, p: torch.diag_embed(z) - z.unsqueeze(-1) * z.unsqueeze(-2)),
    Mistake("ch03.jacobian.not_outer", lambda z, p: torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-1).transpose(
        -2, -1).sum(-1, keepdim=True)),
    Mistake("ch03.jacobian.only_diagonal_entries", lambda z, p: torch.diag_embed(p * (1 - p))),
    Mistake("ch03.jacobian.not_outer", lambda z, p: torch.diag_embed(p) - p.pow(2).sum(-1, keepdim=True).unsqueeze(
        -1).expand(*p.shape, p.shape[-1])),
)


def _same(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=1e-6))


@checker
def check_softmax_jacobian(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``fn(logits) -> J`` with ``J[..., i, j] = d p_i / d z_j = p_i (delta_ij - p_j)``.

    Two named cases and a fresh one, logits ``(B1, B2, S)`` with a saturated row (logits of ±1000: a naive
    ``exp`` overflows) and a uniform one; compared with the closed form ``diag(p) - p p^T`` (itself tested
    against autograd).

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (a missing ``diag(p)`` or ``p p^T``, a sign, logits used for
        probabilities, a lost batch dimension, an overflow in the saturated row).
    """
    def one(case: Case) -> CheckResult | None:
        logits = jacobian_logits(case)
        p = torch.softmax(logits, dim=-1)  # (..., S)
        expected = torch.diag_embed(p) - _outer(p)  # (..., S, S)
        result = call_watched(fn, logits.clone(), forbidden=AUTOGRAD)
        if not isinstance(result, Tensor):
            key = "ch03.jacobian.returned_none" if result is None else "ch03.jacobian.not_tensor"
            return verdict(False, key, type=type(result).__name__)
        if result.shape != expected.shape:
            return verdict(False, "ch03.jacobian.shape", shape=tuple(result.shape), logits_shape=tuple(logits.shape),
                           expected=tuple(expected.shape))
        result = result.detach().double()
        if not bool(torch.isfinite(result).all()):
            return verdict(False, "ch03.jacobian.overflow")
        if _same(result, expected):
            return None
        mistake = first_mistake(result, MISTAKES, logits, p, same=_same)
        if mistake is not None:
            return verdict(False, mistake.key)
        return verdict(False, "ch03.jacobian.differs", max_error=float((result - expected).abs().max()))

    return passed_unless(each_case(one, CASES, seed=3300, fresh=_fresh), "ch03.jacobian.passed")
