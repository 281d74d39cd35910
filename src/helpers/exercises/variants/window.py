"""Exercise 1 of lab 5: sliding-window attention from scratch.

Contract (stated in the lab): ``window_attention(q, k, v, window)`` takes ``(B, H, L, E)`` tensors and returns
``(B, H, L, E)``: softmax attention, scores scaled by ``1/√E``, where query ``i`` sees keys ``|i - j| < window``
(``window=1``: itself only) and the others get exactly no weight (``-inf`` before the softmax: a finite fill
such as -30 is not enough when the scores are lower). The package and PyTorch's attention are refused.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch05 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import phrase
from ..reader import allclose, as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .common import FILLS, low_scores, masked_attention, qkv

__all__ = ["check_sliding_window_attention", "band"]

CASES = (
    ("window 1 (each query sees itself)", dict(n=9, window=1, shape=(2, 3, 5))),
    ("window 3", dict(n=12, window=3, shape=(1, 2, 6))),
    ("window 4, every score about -100", dict(n=10, window=4, shape=(2, 2, 4), low=True)),
)


def band(n: int, window: int, *, inclusive: bool = False, causal: bool = False) -> Tensor:
    """``(n, n)``: True where ``|i - j| < window`` (``inclusive``: ``<=``), and ``j <= i`` with ``causal``."""
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    near = (i - j).abs() <= window if inclusive else (i - j).abs() < window
    return near & (j <= i) if causal else near


def _after_softmax(q: Tensor, k: Tensor, v: Tensor, window: int) -> Tensor:
    weights = torch.softmax((q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5, dim=-1) * band(q.shape[-2], window)
    return weights @ v


MISTAKES = (
    Mistake("ch05.window.off_by_one", lambda q, k, v, w: masked_attention(q, k, v, band(q.shape[-2], w,
                                                                                        inclusive=True))),
    Mistake("ch05.window.causal", lambda q, k, v, w: masked_attention(q, k, v, band(q.shape[-2], w, causal=True))),
    Mistake("ch05.window.unscaled", lambda q, k, v, w: masked_attention(q, k, v, band(q.shape[-2], w), scale=1.0)),
    Mistake("ch05.window.after_softmax", _after_softmax),
    Mistake("ch05.window.full", lambda q, k, v, w: masked_attention(q, k, v, torch.ones(q.shape[-2], q.shape[-2],
                                                                                          dtype=torch.bool))),
) + tuple(Mistake("ch05.window.finite_fill", lambda q, k, v, w, fill=fill: masked_attention(
    q, k, v, band(q.shape[-2], w), fill=fill)) for fill in FILLS)


def _fresh(gen: torch.Generator) -> dict[str, object]:
    n = draw_int(6, 20, gen)
    return dict(n=n, window=draw_int(2, n // 2, gen), shape=(draw_int(1, 2, gen), draw_int(1, 3, gen),
                                                            draw_int(4, 8, gen)))


@checker
def check_sliding_window_attention(fn: Callable[[Tensor, Tensor, Tensor, int], Tensor]) -> CheckResult:
    """Check ``fn(q, k, v, window)``: softmax attention where query ``i`` sees keys ``|i - j| < window``.

    Named cases (``window=1``; a wider window; scores all near -100, where a finite fill such as -30 leaks), then
    a fresh one; every package function and PyTorch's attention are refused while ``fn`` runs.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        n, window = case["n"], case["window"]
        batch, heads, e = case["shape"]
        q, k, v = low_scores(case, batch, heads, n, e) if case.params.get("low") else qkv(case, batch, heads, n, e)
        right = masked_attention(q, k, v, band(n, window))
        out = as_tensor(call_watched(fn, q, k, v, window, forbidden=ATTENTION), phrase("ch05.what.window_output"))
        if allclose(out, right):
            return None
        if out.shape != right.shape:
            return verdict(False, "ch05.window.shape", got=tuple(out.shape), expected=tuple(right.shape))
        mistake = first_mistake(out, MISTAKES, q, k, v, window, same=allclose)
        if mistake is not None:
            return verdict(False, mistake.key, **mistake.fields)
        if case.params.get("low"):  # right on ordinary scores, wrong where they are all far below zero
            return verdict(False, "ch05.window.finite_fill")
        return verdict(False, "ch05.window.differs")

    return passed_unless(each_case(one, CASES, seed=5100, fresh=_fresh), "ch05.window.passed")
