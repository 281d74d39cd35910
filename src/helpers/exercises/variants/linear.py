"""Exercise 2 of lab 5: linear attention, ``phi(Q) (phi(K)^T V)`` normalised, ``phi = elu + 1``.

Contract (stated in the lab): ``my_linear_attention(q, k, v)`` takes ``(B, H, L, E)``, ``(B, H, S, E)``,
``(B, H, S, Ev)`` and returns ``(B, H, L, Ev)``, in PyTorch (the checker counts the elements of every tensor its
PyTorch operations return: no ``L x S`` matrix, and work that grows linearly with the length). The package (its
kernel form too), NumPy, SciPy and scikit-learn are refused while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch05 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import LEAVING_TORCH, LIBRARIES, CallWatch
from ..messages import phrase
from ..reader import allclose, as_tensor, call_watched, checker, draw_int, verdict

__all__ = ["check_linear_attention"]

CASES = (("n = 56 and 224", dict(n=56, sizes=(2, 1, 4, 3))),)


def _phi(x: Tensor) -> Tensor:
    return torch.nn.functional.elu(x) + 1


def _kernel(q: Tensor, k: Tensor, v: Tensor, phi: Callable[[Tensor], Tensor] = _phi, normalise: bool = True) -> Tensor:
    weights = phi(q) @ phi(k).transpose(-2, -1)  # (B, H, L, S): the explicit kernel form
    return (weights / weights.sum(dim=-1, keepdim=True) if normalise else weights) @ v


MISTAKES = (
    Mistake("ch05.linear.no_normaliser", lambda q, k, v: _kernel(q, k, v, normalise=False)),
    Mistake("ch05.linear.elu", lambda q, k, v: _kernel(q, k, v, phi=torch.nn.functional.elu)),
    Mistake("ch05.linear.softmax", lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]),
                                                                 dim=-1) @ v),
    Mistake("ch05.linear.softmax", lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v),
)


@checker
def check_linear_attention(fn: Callable[[Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(q, k, v)``: ``phi(Q) (phi(K)^T V)`` normalised by ``phi(Q) sum_j phi(k_j)``, ``phi = elu + 1``.

    Compared with the explicit kernel form ``(phi(Q) phi(K)^T / row sums) V`` at a length ``n`` and at ``4n``, on a
    named case and a fresh one; the elements of every tensor the answer's PyTorch operations return are counted at
    both lengths: none may have ``L x S`` elements, and the count may grow about 4 times, not 16 (a loop over the
    rows that computes every ``q_i . k_j`` grows 16 times).

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    largest: list[tuple[int, tuple[int, ...]]] = []
    growths: list[tuple[int, float]] = []

    def one(case: Case) -> CheckResult | None:
        n, (batch, heads, e, ev) = case["n"], case["sizes"]
        counts = []
        for length in (n, 4 * n):
            q, k = case.randn(batch, heads, length, e, dtype=torch.float64), case.randn(batch, heads, length, e,
                                                                                        dtype=torch.float64)
            v = case.randn(batch, heads, length, ev, dtype=torch.float64)
            watch = CallWatch((*LIBRARIES, *LEAVING_TORCH), arguments=(), count_work=True)
            out = as_tensor(call_watched(fn, q, k, v, watch=watch), phrase("ch05.what.linear_output"))
            right = _kernel(q, k, v)
            if out.shape != right.shape:
                return verdict(False, "ch05.linear.shape", got=tuple(out.shape), expected=tuple(right.shape))
            if not allclose(out, right):
                mistake = first_mistake(out, MISTAKES, q, k, v, same=allclose)
                return verdict(False, mistake.key if mistake else "ch05.linear.differs")
            if watch.max_numel >= length * length:
                return verdict(False, "ch05.linear.quadratic", shape=watch.max_shape)
            counts.append(watch.elements)
            largest.append((watch.max_numel, watch.max_shape))
        growth = counts[1] / max(counts[0], 1)
        if growth > 8:
            return verdict(False, "ch05.linear.grows_quadratically", n=n, n4=4 * n, small=counts[0], large=counts[1],
                           growth=growth)
        growths.append((n, growth))
        return None

    failure = each_case(one, CASES, seed=5200, fresh=lambda gen: dict(n=draw_int(48, 80, gen), sizes=(
        draw_int(1, 2, gen), draw_int(1, 2, gen), draw_int(3, 6, gen), draw_int(2, 6, gen))))
    if failure is not None:
        return failure
    n, growth = growths[0]
    return verdict(True, "ch05.linear.passed", shape=max(largest)[1], n=n, n4=4 * n, growth=growth)
