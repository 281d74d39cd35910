"""Exercise 6 of lab 5: causal attention of ``L`` queries that are the *last* ``L`` of ``S`` positions.

Contract (stated in the lab): ``causal_attention(q, k, v)`` takes ``(B, H, L, E)``, ``(B, H, S, E)``,
``(B, H, S, Ev)`` and returns ``(B, H, L, Ev)`` in the inputs' dtype: query ``i`` is position ``i + S - L`` and sees
keys ``j <= i + S - L`` (the bottom-right aligned mask, as after a KV cache), the future keys get exactly no weight
(also in float16, where a fill of -1e4 is above scores of -2e4). The package (``causal_mask`` too), PyTorch's
attention and ``torch.nn.attention`` are refused.
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
from ..reader import Rejected, as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .common import masked_attention

__all__ = ["check_causal_attention"]

_FORBIDDEN = ATTENTION + ("torch.nn.attention",)
"""PyTorch's attention, and its ready-made causal biases (``torch.nn.attention.bias.causal_lower_right``)."""

CASES = (
    ("6 queries, 6 keys", dict(L=6, S=6, dtype=torch.float32, sizes=(2, 3, 5, 4))),
    ("3 queries, the last of 9 positions", dict(L=3, S=9, dtype=torch.float32, sizes=(1, 2, 6, 3))),
    ("one query, 7 keys", dict(L=1, S=7, dtype=torch.float32, sizes=(2, 1, 4, 5))),
    ("4 queries of 10 positions, float16", dict(L=4, S=10, dtype=torch.float16, sizes=(1, 3, 8, 2))),
    ("float16, every score about -2e4", dict(L=3, S=7, dtype=torch.float16, sizes=(2, 1, 4, 3), hard=184.0)),
)


def _allowed(L: int, S: int, shift: int = 0, *, inverted: bool = False, strict_future: bool = True) -> Tensor:
    """Key ``j`` visible to query ``i`` (position ``i + S - L``) when ``j <= i + S - L + shift``; ``inverted``: when
    ``j > i + S - L`` (``strict_future``) or ``j >= i + S - L``."""
    i = torch.arange(L)[:, None] + (S - L)
    j = torch.arange(S)[None, :]
    if inverted:
        return j > i if strict_future else j >= i
    return j <= i + shift  # (L, S)


def _rows_match(out: Tensor, q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, *, tol: float,
                scale: float | None = None, after_softmax: bool = False) -> bool:
    """``out`` is attention under ``allowed`` ``(L, S)`` on every query row that keeps a key (in float64)."""
    q, k, v = q.double(), k.double(), v.double()
    if after_softmax:
        expected = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) * allowed @ v
    else:
        expected = masked_attention(q, k, v, allowed, scale)
    rows = allowed.any(dim=-1)  # (L,)
    if not bool(rows.any()) or out.shape != expected.shape:
        return False
    return bool(torch.allclose(out[..., rows, :].double(), expected[..., rows, :], atol=tol, rtol=tol))


def _inputs(case: Case) -> tuple[Tensor, Tensor, Tensor]:
    L, S, dtype = case["L"], case["S"], case["dtype"]
    batch, heads, e, ev = case["sizes"]
    if "hard" not in case.params:
        return (case.randn(batch, heads, L, e).to(dtype), case.randn(batch, heads, S, e).to(dtype),
                case.randn(batch, heads, S, ev).to(dtype))
    a = case["hard"]  # head size 4: every score is -a^2/2 (exactly, about -2e4), below any finite fill of -1e4
    q, k = torch.zeros(batch, heads, L, 4, dtype=dtype), torch.zeros(batch, heads, S, 4, dtype=dtype)
    q[..., 0], k[..., 0] = a, -a
    return q, k, case.randn(batch, heads, S, ev).to(dtype)


def _fresh(gen: torch.Generator) -> dict[str, object]:
    S = draw_int(6, 12, gen)
    return dict(L=draw_int(2, S - 2, gen), S=S, dtype=torch.float32, sizes=(draw_int(1, 2, gen), draw_int(1, 3, gen),
                                                                         draw_int(4, 8, gen), draw_int(2, 6, gen)))


def _diagnosis(out: Tensor, q: Tensor, k: Tensor, v: Tensor, tol: float, where: dict[str, object]) -> CheckResult:
    L, S = q.shape[-2], k.shape[-2]
    allowed = _allowed(L, S)
    candidates = [
        ("ch05.causal.top_left", _allowed(L, S, -(S - L)) if L != S else None, {}),
        ("ch05.causal.diagonal", _allowed(L, S, -1), {}),
        ("ch05.causal.one_ahead", _allowed(L, S, 1), {}),
        ("ch05.causal.inverted", _allowed(L, S, inverted=True), {}),
        ("ch05.causal.inverted", _allowed(L, S, inverted=True, strict_future=False), {}),
        ("ch05.causal.no_mask", torch.ones(L, S, dtype=torch.bool), {}),
        ("ch05.causal.after_softmax", allowed, {"after_softmax": True}),
        ("ch05.causal.unscaled", allowed, {"scale": 1.0}),
    ]
    for key, mask, how in candidates:
        if mask is not None and not (mask.equal(allowed) and not how) and _rows_match(out, q, k, v, mask, tol=tol,
                                                                                     **how):
            return verdict(False, key, **where)
    return verdict(False, "ch05.causal.nan" if torch.isnan(out).any() else "ch05.causal.differs", **where)


@checker
def check_causal_attention(fn: Callable[[Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(q, k, v)``: causal attention of ``L`` queries that are the *last* ``L`` of ``S`` positions.

    Named cases: ``L == S``, ``L < S``, a single query, float16 inputs (the output keeps the input's dtype), a
    float16 case whose scores are all about ``-2e4`` (where a finite fill such as ``-1e4`` is not an exact zero);
    then a fresh one. Names: top-left alignment, the diagonal excluded, one key too many, the mask inverted, no mask,
    weights zeroed after the softmax, unscaled scores, a finite fill, a fill that does not fit in float16, a wrong
    dtype, NaN.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        q, k, v = _inputs(case)
        L, S, half = case["L"], case["S"], case["dtype"] == torch.float16
        try:
            out = as_tensor(call_watched(fn, q, k, v, forbidden=_FORBIDDEN), phrase("ch05.what.causal_output"))
        except Rejected as rejected:
            error = str(rejected.verdict.fields.get("error", ""))
            if half and rejected.verdict.key == "reader.raised" and "without overflow" in error:
                return verdict(False, "ch05.causal.fill_overflows")
            raise
        expected_shape = (*q.shape[:-1], v.shape[-1])
        if tuple(out.shape) != expected_shape:
            return verdict(False, "ch05.causal.shape", got=tuple(out.shape), expected=expected_shape, L=L, S=S)
        if out.dtype != q.dtype:
            return verdict(False, "ch05.causal.dtype", got=str(out.dtype).removeprefix("torch."),
                           expected=str(q.dtype).removeprefix("torch."))
        tol = 1e-2 if half else 1e-5
        if _rows_match(out, q, k, v, _allowed(L, S), tol=tol) and not torch.isnan(out).any():
            return None
        where = {"L": L, "S": S, "dtype": str(q.dtype).removeprefix("torch.")}
        if "hard" in case.params:
            return verdict(False, "ch05.causal.nan" if torch.isnan(out).any() else "ch05.causal.finite_fill", **where)
        return _diagnosis(out, q, k, v, tol, where)

    return passed_unless(each_case(one, CASES, seed=5600, fresh=_fresh), "ch05.causal.passed")
