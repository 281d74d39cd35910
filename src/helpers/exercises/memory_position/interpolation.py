"""Exercise 7 of lab 6.3-6.6: RoPE with position interpolation (Chen et al., 2023, section 2.3, Eq. 4).

Contract (stated in the lab): ``pi_rope(x, positions, train_len, target_len)`` takes ``x`` ``(B, H, L, E)`` and
integer ``positions`` ``(L,)`` up to ``target_len - 1`` and returns ``x`` rotated as plain RoPE (half-split, base
10000) rotates position ``m * train_len / target_len``. The package is refused except ``rotate_half`` and
``apply_rotary_pos_emb``; so is transformers.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch06_long_context import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import TRANSFORMERS
from ..messages import phrase
from ..reader import as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .common import close, rotate, theta

__all__ = ["check_position_interpolation", "pi_rotation", "pi_case", "TOLERANCE"]

TOLERANCE = 2e-3
"""Float32 angles of positions up to ~2000 are off by ~1e-4 rad — the tolerance of exercise 7."""

CASES = (("an integer factor: 64 -> 256", dict(train_len=64, target_len=256, shape=(2, 2, 6, 16))),
         ("a fractional factor: 100 -> 250", dict(train_len=100, target_len=250, shape=(1, 3, 7, 24))))


def pi_rotation(x: Tensor, positions: Tensor, train_len: int, target_len: int) -> Tensor:
    """Position interpolation in float64: position ``m`` rotated as ``m * train_len / target_len``."""
    return rotate(x, (positions.double() * train_len / target_len)[:, None] * theta(x.shape[-1]))


def _mistakes(x: Tensor, positions: Tensor, train_len: int, target_len: int) -> list[Mistake]:
    m, scale, t = positions.double(), train_len / target_len, theta(x.shape[-1])

    def at(angle_positions: Tensor) -> Callable[[], Tensor]:
        return lambda: rotate(x, angle_positions[:, None] * t)

    plain = rotate(x, m[:, None] * t)
    key = "ch06_long_context.pi."
    return [Mistake(key + "inverted", at(m / scale)), Mistake(key + "unscaled", lambda: plain),
            Mistake(key + "after_trig", lambda: plain * scale), Mistake(key + "after_trig", lambda: plain / scale),
            Mistake(key + "off_by_one", at((m + 1) * scale)), Mistake(key + "off_by_one", at((m - 1) * scale)),
            Mistake(key + "lengths", at(m * (train_len - 1) / (target_len - 1))),
            Mistake(key + "rounded", at(torch.floor(m * scale))), Mistake(key + "rounded", at(torch.round(m * scale)))]


def _scaled_pairs(out: Tensor, x: Tensor, positions: Tensor, train_len: int, target_len: int) -> tuple[int, int]:
    """How many pairs are rotated with the interpolated angle and how many with the plain one, when every pair is
    one or the other; ``(0, 0)`` otherwise."""
    half = x.shape[-1] // 2
    right = pi_rotation(x, positions, train_len, target_len)
    plain = rotate(x, positions.double()[:, None] * theta(x.shape[-1]))
    scaled = unscaled = 0
    for i in range(half):
        pick = [i, i + half]
        if close(out[..., pick], right[..., pick], TOLERANCE):
            scaled += 1
        elif close(out[..., pick], plain[..., pick], TOLERANCE):
            unscaled += 1
        else:
            return 0, 0
    return scaled, unscaled


def pi_case(case: Case) -> tuple[Tensor, Tensor]:
    """``x`` and positions in any order up to the target length, the last one and 0 always among them (every rule
    rotates 0 by nothing, an off-by-one does not, so rounding is never taken for an off-by-one)."""
    shape, gen = case["shape"], case.generator
    positions = torch.randint(0, case["target_len"], (shape[2],), generator=gen)
    last, zero = torch.randperm(shape[2], generator=gen)[:2].tolist()
    positions[last], positions[zero] = case["target_len"] - 1, 0
    return case.randn(*shape), positions


def _fresh(gen: torch.Generator) -> dict[str, object]:
    train_len = draw_int(16, 256, gen)
    return dict(train_len=train_len, target_len=train_len + draw_int(train_len // 3, 3 * train_len, gen),
                shape=(draw_int(1, 2, gen), draw_int(1, 3, gen), draw_int(4, 9, gen), 2 * draw_int(4, 16, gen)))


@checker
def check_position_interpolation(fn: Callable[[Tensor, Tensor, int, int], Tensor]) -> CheckResult:
    """Check ``fn(x, positions, train_len, target_len)``: RoPE (half-split, base 10000) with position interpolation.

    Named cases (an integer factor, a fractional one) and a fresh one. The reference is the rotation, in float64, by
    the frequencies of :func:`helpers.rope_scaling.position_interpolation` (the same numbers: tested).

    Args:
        fn: The reader's interpolated rotation.

    Returns:
        The verdict, which names the mistake, e.g. the factor inverted, only some pairs scaled, the cosines and sines
        scaled instead of the angle, a position off by one, rounded positions.
    """
    from helpers.positional import apply_rotary_pos_emb, rotate_half

    def one(case: Case) -> CheckResult | None:
        x, positions = pi_case(case)
        train_len, target_len = case["train_len"], case["target_len"]
        out = as_tensor(call_watched(fn, x.clone(), positions.clone(), train_len, target_len,
                                     allowed=(rotate_half, apply_rotary_pos_emb), forbidden=TRANSFORMERS),
                        phrase("ch06_long_context.what.rotated")).detach()
        right = pi_rotation(x, positions, train_len, target_len)
        if close(out, right, TOLERANCE):
            return None
        where = phrase("ch06_long_context.pi.where", e=x.shape[-1], train_len=train_len, target_len=target_len)
        if out.shape != right.shape:
            return verdict(False, "ch06_long_context.pi.shape", where=where, expected=tuple(right.shape),
                           got=tuple(out.shape))
        mistake = first_mistake(out, _mistakes(x, positions, train_len, target_len),
                                same=lambda a, b: close(a, b, TOLERANCE))
        if mistake is not None:
            return verdict(False, mistake.key, where=where, train_len=train_len, target_len=target_len)
        scaled, unscaled = _scaled_pairs(out, x, positions, train_len, target_len)
        if scaled and unscaled:
            return verdict(False, "ch06_long_context.pi.some_pairs", where=where, scaled=scaled,
                           pairs=scaled + unscaled)
        diff = (out.double() - right).abs().max().item()
        return verdict(False, "ch06_long_context.pi.differs", where=where, diff=diff)

    return passed_unless(each_case(one, CASES, seed=6370, fresh=_fresh), "ch06_long_context.pi.passed")
