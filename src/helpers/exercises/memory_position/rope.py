"""Exercise 3 of lab 6.3-6.6: RoPE from scratch.

Contract (stated in the lab): ``my_rope(x, positions)`` takes ``x`` ``(B, H, L, E)`` and integer ``positions``
``(L,)`` (not necessarily ``0 .. L-1``) and returns ``x`` rotated, ``(B, H, L, E)``: half-split pairs (feature ``i``
with ``i + E/2``), base 10000, angle ``position * 10000^(-2i/E)``. The package and transformers are refused.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch06_memory import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import TRANSFORMERS
from ..messages import phrase
from ..reader import as_tensor, call_watched, checker, draw_int, passed_unless, reject, verdict
from .common import close, rotate, theta

__all__ = ["check_rope", "rope_half"]

TOLERANCE = 1e-4
"""Float32 angles of positions up to a few hundred are off by ~1e-5 rad — the tolerance of exercise 3."""

CASES = (("head size 8, positions up to 300", dict(shape=(2, 3, 5, 8))),
         ("head size 14", dict(shape=(1, 2, 7, 14))))


def rope_half(x: Tensor, positions: Tensor, *, exponent_step: int = 2, sign: float = 1.0) -> Tensor:
    """The rotation, in float64 (``sign=-1``: the wrong way; ``exponent_step=1``: the wrong frequencies)."""
    return rotate(x, sign * positions.double()[:, None] * theta(x.shape[-1], exponent_step))


def _interleaved(x: Tensor, positions: Tensor) -> Tensor:
    angle = positions.double()[:, None] * theta(x.shape[-1])
    cos, sin = angle.cos(), angle.sin()  # (L, E/2)
    x1, x2 = x.double()[..., 0::2], x.double()[..., 1::2]  # (..., L, E/2): neighbours (2i, 2i + 1)
    return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)


MISTAKES = (
    Mistake("ch06_memory.rope.unrotated", lambda x, p: x),
    Mistake("ch06_memory.rope.interleaved", _interleaved),
    Mistake("ch06_memory.rope.wrong_way", lambda x, p: rope_half(x, p, sign=-1.0)),
    Mistake("ch06_memory.rope.frequencies", lambda x, p: rope_half(x, p, exponent_step=1)),
)


def _offset_spread(fn: Callable[[Tensor, Tensor], Tensor], case: Case) -> float:
    """Largest relative spread of ``<f(q, m), f(k, n)>`` along the diagonals ``m - n = const`` for the reader's ``f``
    on a query and a key of ``case``; a failure raises :class:`~helpers.exercises.reader.Rejected`."""
    head_dim, count, first = 2 * draw_int(8, 32, case.generator), 48, draw_int(0, 64, case.generator)
    q, k = case.randn(2, head_dim)
    both = torch.stack((q, k))[:, None, None, :].expand(2, 1, count, head_dim).contiguous()  # (2, 1, P, E)
    out = as_tensor(call_watched(fn, both, torch.arange(first, first + count), forbidden=TRANSFORMERS),
                    phrase("ch06_memory.what.rotated"))
    if out.shape != both.shape:
        raise reject("ch06_memory.rope.output_shape", expected=tuple(both.shape), got=tuple(out.shape))
    scores = out[0, 0].detach().double() @ out[1, 0].detach().double().T  # (P, P): scores[m, n] = <R_m q, R_n k>
    spread = max((torch.diagonal(scores, d) - torch.diagonal(scores, d)[0]).abs().max().item()
                 for d in range(-40, 41, 4))
    return spread / max(1.0, scores.abs().max().item())


@checker
def check_rope(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(x, positions)``: rotary position embedding, half-split, base 10000.

    Named cases and a fresh one (positions in any order up to 300). Compared with the rotation computed in float64
    (the package's :class:`~helpers.positional.RotaryEmbedding` gives the same), and checked for the offset
    property: the score ``<f(q, m), f(k, n)>`` depends on ``m - n`` only.

    Args:
        fn: The reader's rotation.

    Returns:
        The verdict, which names the mistake, e.g. the interleaved pairing, the frequencies, the direction of the
        rotation, no rotation at all, a score that depends on more than the offset.
    """
    spreads: list[float] = []

    def one(case: Case) -> CheckResult | None:
        shape = case["shape"]
        positions = torch.randint(0, 300, (shape[2],), generator=case.generator)
        x = case.randn(*shape)
        result = call_watched(fn, x.clone(), positions.clone(), forbidden=TRANSFORMERS)
        if isinstance(result, Tensor) and result.shape == x.shape:
            spreads.append(_offset_spread(fn, case))
        out = as_tensor(result, phrase("ch06_memory.what.rotated")).detach()
        right = rope_half(x, positions)
        if close(out, right, TOLERANCE):
            return None
        if out.shape != right.shape:
            return verdict(False, "ch06_memory.rope.shape", expected=tuple(right.shape), got=tuple(out.shape))
        where = phrase("ch06_memory.rope.where", e=shape[-1], positions=positions.tolist())
        mistake = first_mistake(out, MISTAKES, x, positions, same=lambda a, b: close(a, b, TOLERANCE))
        if mistake is not None:
            return verdict(False, mistake.key, where=where)
        if spreads and spreads[-1] > 1e-4:
            return verdict(False, "ch06_memory.rope.not_offset", where=where, spread=spreads[-1])
        return verdict(False, "ch06_memory.rope.differs", where=where, diff=(out - right).abs().max().item())

    fresh = lambda gen: dict(shape=(draw_int(1, 2, gen), draw_int(1, 3, gen), draw_int(3, 8, gen),  # noqa: E731
                                    2 * draw_int(2, 12, gen)))
    failure = each_case(one, CASES, seed=6330, fresh=fresh)
    return passed_unless(failure, "ch06_memory.rope.passed", spread=max(spreads, default=0.0))
