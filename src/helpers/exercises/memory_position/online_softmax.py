"""Exercise 6 of lab 6.3-6.6: exact attention one block of keys at a time (the online softmax).

Contract (stated in the lab): ``online_attention(q, k, v, block_size)`` takes ``(B, H, L, E)``, ``(B, H, S, E)``,
``(B, H, S, Ev)`` and returns ``(B, H, L, Ev)``: softmax attention, scale ``1/√E``, no mask, computed a block of
``block_size`` keys at a time with a running max and sum, never holding the ``L x S`` scores. The package and
PyTorch's fused attention are refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ... import seeding
from .. import CheckResult
from ..cases import Case, Mistake, each_case
from ..catalogue.ch06_memory import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import phrase
from ..reader import as_tensor, call_watched, checker, draw_int, verdict
from .common import close

__all__ = ["check_online_softmax"]

CASES = (("ordinary scores, block 3 of 11 keys", dict(kind="ordinary", sizes=(2, 2, 4, 5, 3), block=3, keys=11)),
         ("scores of ±1000, block 2 of 7 keys", dict(kind="large", sizes=(1, 2, 3, 4, 2), block=2, keys=7)))


def blocked(q: Tensor, k: Tensor, v: Tensor, block: int, mistake: str | None = None) -> Tensor:
    """The online softmax in float64, right or with one named ``mistake``: ``"no_rescale"``, ``"sum_not_rescaled"``,
    ``"out_not_rescaled"``, ``"per_block_sum"``, ``"per_block_mean"`` (a softmax per block, summed or averaged),
    ``"tail"`` (the last partial block dropped), ``"scale"`` (no ``1/√E``), ``"no_max"``, ``"max_zero"`` (the running
    max starts at 0)."""
    q, k, v = q.double(), k.double(), v.double()
    q = q if mistake == "scale" else q / math.sqrt(q.shape[-1])
    stop = k.shape[-2] - k.shape[-2] % block if mistake == "tail" and k.shape[-2] % block else k.shape[-2]
    m = q.new_full((*q.shape[:-1], 1), 0.0 if mistake == "max_zero" else float("-inf"))  # (B, H, L, 1)
    total, out = q.new_zeros((*q.shape[:-1], 1)), q.new_zeros((*q.shape[:-1], v.shape[-1]))  # (B, H, L, Ev)
    blocks = 0
    for start in range(0, stop, block):
        scores = q @ k[..., start:start + block, :].transpose(-2, -1)  # (B, H, L, b)
        vb = v[..., start:start + block, :]  # (B, H, b, Ev)
        blocks += 1
        if mistake in ("per_block_sum", "per_block_mean"):
            out = out + torch.softmax(scores, dim=-1) @ vb
            continue
        new = torch.zeros_like(m) if mistake == "no_max" else torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        alpha = torch.ones_like(m) if mistake == "no_max" else torch.exp(m - new)
        p = torch.exp(scores - new)  # (B, H, L, b)
        total = (total if mistake in ("no_rescale", "sum_not_rescaled") else total * alpha) + p.sum(-1, keepdim=True)
        out = (out if mistake in ("no_rescale", "out_not_rescaled") else out * alpha) + p @ vb
        m = new
    return out / blocks if mistake == "per_block_mean" else out if mistake == "per_block_sum" else out / total


MISTAKES = tuple(Mistake(f"ch06_memory.online.{key}", lambda q, k, v, b, name=name: blocked(q, k, v, b, name))
                 for name, key in (("no_rescale", "no_rescale"), ("sum_not_rescaled", "sum_not_rescaled"),
                                   ("out_not_rescaled", "out_not_rescaled"), ("per_block_sum", "per_block"),
                                   ("per_block_mean", "per_block"), ("tail", "tail"), ("scale", "scale"),
                                   ("no_max", "no_max"), ("max_zero", "max_zero")))


def _dense(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, L, S)
    return torch.softmax(scores, dim=-1) @ v.double()  # (B, H, L, Ev)


def _inputs(case: Case) -> tuple[Tensor, Tensor, Tensor]:
    (b, h, length, e, ev), s = case["sizes"], case["keys"]
    if case["kind"] == "ordinary":
        return case.randn(b, h, length, e) * 2, case.randn(b, h, s, e), case.randn(b, h, s, ev)
    # Scores of ±1000: feature 0 sets the sign of a key, feature 1 is the same for all keys; rows of the queries
    # pick mixed (+1000 and -1000 in one row), all +1000 or all -1000. The first block is all -1000 in mixed rows:
    # the running max then jumps by 2000.
    length = 3 * max(1, length // 3)
    k = case.randn(b, h, s, e)
    sign = torch.where(torch.rand(b, h, s, generator=case.generator) < 0.5, -1.0, 1.0)
    sign[..., :case["block"]], sign[..., -1] = -1.0, 1.0
    k[..., 0], k[..., 1] = sign, 1.0
    q = case.randn(b, h, length, e)
    big = 1000.0 * math.sqrt(e)
    q[..., 0] = torch.tensor([big, 0.0, 0.0]).repeat(length // 3)
    q[..., 1] = torch.tensor([0.0, big, -big]).repeat(length // 3)
    return q, k, case.randn(b, h, s, ev)


def _fresh(gen: torch.Generator) -> dict[str, object]:
    block = draw_int(2, 5, gen)
    return dict(kind="ordinary", sizes=(draw_int(1, 2, gen), draw_int(1, 3, gen), draw_int(1, 6, gen),
                                        draw_int(2, 8, gen), draw_int(1, 6, gen)),
                block=block, keys=block * draw_int(2, 4, gen) + draw_int(1, block - 1, gen))


@checker
def check_online_softmax(fn: Callable[[Tensor, Tensor, Tensor, int], Tensor]) -> CheckResult:
    """Check ``fn(q, k, v, block_size)``: softmax attention one block of keys at a time (online softmax).

    Compared with dense attention in float64 on named cases (a block size that does not divide ``S``; scores of
    ±1000, the running max jumping by 2000) and a fresh one; then the peak memory is measured with
    :class:`helpers.memory.TensorMemoryTracker` on a longer sequence: no tensor may be as large as the ``L x S``
    scores of one head, and the live tensors together may not reach their bytes.

    Args:
        fn: The reader's blocked attention.

    Returns:
        The verdict, which names the mistake, e.g. the running sum or output not rescaled when the max changes, no
        max subtracted (overflow), a softmax per block, the last partial block dropped.
    """
    from helpers.memory import TensorMemoryTracker

    def one(case: Case) -> CheckResult | None:
        q, k, v = _inputs(case)
        block, right = case["block"], _dense(q, k, v)
        out = as_tensor(call_watched(fn, q.clone(), k.clone(), v.clone(), block, forbidden=ATTENTION),
                        phrase("ch06_memory.what.online")).detach()
        where = phrase(f"ch06_memory.online.where_{case['kind']}", q=tuple(q.shape), k=tuple(k.shape),
                       v=tuple(v.shape), block=block)
        if out.shape != right.shape:
            return verdict(False, "ch06_memory.online.shape", where=where, expected=tuple(right.shape),
                           got=tuple(out.shape))
        tol = 1e-5 if case["kind"] == "ordinary" else 1e-3  # float32 scores of 1000 are rounded to ~6e-5
        if close(out, right, tol):
            return None
        for mistake in MISTAKES:
            wrong = mistake.simulate(q, k, v, block)
            if not close(wrong, right, tol) and out.shape == wrong.shape and bool(torch.allclose(
                    out.double(), wrong, rtol=1e-3, atol=tol, equal_nan=True)):  # a mistake that shows here
                return verdict(False, mistake.key, where=where)
        if not bool(torch.isfinite(out).all()):
            return verdict(False, "ch06_memory.online.not_finite", where=where)
        return verdict(False, "ch06_memory.online.differs", where=where, diff=(out.double() - right).abs().max().item())

    failure = each_case(one, CASES, seed=6360, fresh=_fresh)
    if failure is not None:
        return failure
    # Memory: one head, many keys, few features: the L x S scores dwarf q, k, v and the running state.
    length, e, block, s = 32, 2, 16, 519
    gen = seeding.generator(6369)
    q, k, v = (torch.randn(1, 1, n, e, generator=gen) for n in (length, s, s))
    tracker = TensorMemoryTracker()
    out = as_tensor(call_watched(fn, q, k, v, block, forbidden=ATTENTION, modes=(tracker,)),
                    phrase("ch06_memory.what.online")).detach()
    where = phrase("ch06_memory.online.where_memory", q=tuple(q.shape), k=tuple(k.shape), v=tuple(v.shape),
                   block=block)
    if not close(out, _dense(q, k, v)):
        return verdict(False, "ch06_memory.online.differs", where=where, diff=(out.double() - _dense(
            q, k, v)).abs().max().item() if out.shape == (1, 1, length, e) else float("nan"))
    if tracker.max_numel >= length * s:
        return verdict(False, "ch06_memory.online.matrix", where=where, shape=tracker.max_shape, length=length, keys=s)
    if tracker.peak_bytes >= 4 * length * s:
        return verdict(False, "ch06_memory.online.peak", where=where, kib=tracker.peak_bytes / 1024,
                       matrix_kib=4 * length * s / 1024)
    return verdict(True, "ch06_memory.online.passed", kib=tracker.peak_bytes / 1024, matrix_kib=4 * length * s / 1024,
                   length=length, keys=s, block=block)
