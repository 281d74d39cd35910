"""RoPE beyond its training length, the rotation's frequencies rescaled (context extension).

A RoPE model trained on ``L`` tokens sees, past ``L``, rotation angles ``m * theta_i`` it never saw
for its slow (long-wavelength) pairs. The methods below change the frequencies ``theta_i`` of
:class:`helpers.positional.RotaryEmbedding` (``theta_i = base**(-2i / E)``, ``i = 0 .. E/2 - 1``) so
that a model can run on ``s * L`` tokens, usually after a short fine-tune. Each function returns the
new frequencies, ``(E/2,)``, float32; :func:`scaled_rotary_embedding` puts them in a rotary module.

=====================================  =========================================================
:func:`position_interpolation`          every frequency divided by ``s`` (Chen et al., 2023)
:func:`ntk_aware_frequencies`           the base raised to ``base * s**(E / (E - 2))`` (bloc97, 2023)
:func:`yarn_frequencies`                per-pair ramp between the two, and a temperature (Peng et al., 2023)
:func:`llama3_frequencies`              Llama 3.1's per-pair rule (Meta's ``apply_scaling``)
:func:`scaled_rotary_embedding`         a rotary module with such frequencies (and YaRN's factor on q, k)
=====================================  =========================================================

Shape legend: ``E`` head size (even), ``E/2`` rotated pairs. Explained in chapter 6.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .checks import check_positive_int
from .positional import RotaryEmbedding

__all__ = [
    "rope_frequencies",
    "position_interpolation",
    "ntk_aware_frequencies",
    "yarn_frequencies",
    "yarn_temperature",
    "llama3_frequencies",
    "ScaledRotaryEmbedding",
    "scaled_rotary_embedding",
]


def _check(head_dim: int, factor: float, base: float) -> None:
    check_positive_int("head_dim", head_dim)
    if head_dim % 2 or head_dim < 4:
        raise ValueError(f"head_dim must be even and at least 4 (pairs are rotated), got {head_dim}")
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not factor >= 1:
        raise ValueError(f"factor must be a number >= 1 (the context's growth, L'/L), got {factor!r}")
    if not isinstance(base, (int, float)) or isinstance(base, bool) or not base > 1:
        raise ValueError(f"base must be a number > 1, got {base!r}")


def rope_frequencies(head_dim: int, base: float = 10000.0) -> Tensor:
    """RoPE's own frequencies, ``theta_i = base**(-2i / E)``, as :class:`~helpers.positional.RotaryEmbedding` has them.

    Shape:
        ``(E/2,)``.
    """
    _check(head_dim, 1.0, base)
    return 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)  # (E/2,)


def position_interpolation(head_dim: int, factor: float, base: float = 10000.0) -> Tensor:
    """Position interpolation rotates position ``m`` as RoPE rotates ``m / s`` (every frequency divided by ``s``).

    Chen et al. (2023), "Extending Context Window of Large Language Models via Positional
    Interpolation", section 2.3, Eq. 4: ``f'(x, m) = f(x, m L / L')``. Every angle of the longer
    context stays inside the trained range; neighbouring positions get ``s`` times closer.

    Args:
        head_dim: ``E``.
        factor: ``s = L' / L``.
        base: RoPE's base.

    Shape:
        ``(E/2,)``.
    """
    _check(head_dim, factor, base)
    return rope_frequencies(head_dim, base) / factor  # (E/2,)


def ntk_aware_frequencies(head_dim: int, factor: float, base: float = 10000.0) -> Tensor:
    """"NTK-aware" scaling, RoPE with the base ``base * s**(E / (E - 2))`` and positions unchanged.

    bloc97 (2023, a forum post; the formula as YaRN's section 3.1 and appendix A.1 give it). The new
    base divides the slowest frequency (``i = E/2 - 1``) by exactly ``s``, as interpolation does,
    and leaves the fastest (``i = 0``) untouched: local order stays sharp, and long wavelengths
    are stretched.

    Shape:
        ``(E/2,)``.
    """
    _check(head_dim, factor, base)
    return rope_frequencies(head_dim, base * factor ** (head_dim / (head_dim - 2)))  # (E/2,)


def yarn_frequencies(head_dim: int, factor: float, original_length: int, base: float = 10000.0, *,
                     alpha: float = 1.0, beta: float = 32.0) -> Tensor:
    """YaRN's frequencies interpolate the pairs whose wavelength is long and keep the short ones.

    Peng et al. (2023), "YaRN: Efficient Context Window Extension of Large Language Models",
    section 3.2 ("NTK-by-parts"): with ``r_i = L / lambda_i`` the number of turns pair ``i`` makes in
    the original context (``lambda_i = 2 pi / theta_i``), the ramp ``gamma = 0`` for ``r < alpha``,
    ``1`` for ``r > beta``, linear in ``r`` between, and ``theta_i' = (1 - gamma) theta_i / s +
    gamma theta_i``. Llama's values: ``alpha = 1``, ``beta = 32``. Pair with
    :func:`yarn_temperature`. (Hugging Face ramps linearly over the pair index between the same
    two pairs, rounded to whole pairs: the same at both ends, slightly different between.)

    Args:
        head_dim: ``E``.
        factor: ``s``.
        original_length: ``L``, the context the model was trained on.
        base: RoPE's base.
        alpha: Below ``alpha`` turns in ``L``, a pair is fully interpolated.
        beta: Above ``beta`` turns, a pair is left as it is.

    Shape:
        ``(E/2,)``.
    """
    _check(head_dim, factor, base)
    check_positive_int("original_length", original_length)
    if not 0 < alpha < beta:
        raise ValueError(f"alpha and beta must satisfy 0 < alpha < beta, got alpha={alpha}, beta={beta}")
    theta = rope_frequencies(head_dim, base)  # (E/2,)
    turns = original_length * theta / (2 * math.pi)  # (E/2,): r_i = L / lambda_i
    gamma = ((turns - alpha) / (beta - alpha)).clamp(0.0, 1.0)  # (E/2,)
    return (1 - gamma) * theta / factor + gamma * theta  # (E/2,)


def yarn_temperature(factor: float) -> float:
    """YaRN's factor on queries and keys, ``sqrt(1/t) = 0.1 ln(s) + 1`` (section 3.4, Eq. 22).

    Multiplying both ``q`` and ``k`` by it divides the logits by ``t``: attention stays as sharp at
    ``s L`` tokens as it was at ``L``. It is 1 for ``s = 1`` and 1.208 at ``s = 8``.
    """
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not factor >= 1:
        raise ValueError(f"factor must be a number >= 1, got {factor!r}")
    return 0.1 * math.log(factor) + 1.0


def llama3_frequencies(head_dim: int, factor: float = 8.0, original_length: int = 8192, base: float = 500000.0, *,
                       low_freq_factor: float = 1.0, high_freq_factor: float = 4.0) -> Tensor:
    """Llama 3.1's rule keeps wavelengths under ``L / high``, divides those over ``L / low`` by ``s``, blends between.

    Meta's reference code (``llama_models``, ``apply_scaling``; defaults: factor 8, low and high
    frequency factors 1 and 4, original context 8192, base 500000). Between the two wavelengths the
    frequency is ``(1 - w) theta / s + w theta`` with ``w = (L / lambda - low) / (high - low)``. No
    temperature. YaRN's ramp with ``alpha = low`` and ``beta = high``, as a function of the same
    ``r = L / lambda``.

    Shape:
        ``(E/2,)``.
    """
    _check(head_dim, factor, base)
    check_positive_int("original_length", original_length)
    if not 0 < low_freq_factor < high_freq_factor:
        raise ValueError(f"need 0 < low_freq_factor < high_freq_factor, got {low_freq_factor}, {high_freq_factor}")
    theta = rope_frequencies(head_dim, base)  # (E/2,)
    wavelength = 2 * math.pi / theta  # (E/2,)
    blend = ((original_length / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)).clamp(0, 1)
    return (1 - blend) * theta / factor + blend * theta  # (E/2,)


class ScaledRotaryEmbedding(RotaryEmbedding):
    """A rotary embedding with its own frequencies, and cosines and sines multiplied by an attention factor.

    ``apply_rotary_pos_emb`` is linear in ``cos`` and ``sin``, so a factor ``m`` on both multiplies
    the rotated queries and keys by ``m`` and every logit by ``m**2``: YaRN's temperature folded into
    ``q`` and ``k`` (section 3.4), as Hugging Face's ``attention_scaling`` does. Used in chapter 6's
    "Long context in practice"; made by :func:`scaled_rotary_embedding`.
    """

    def __init__(self, inv_freq: Tensor, attention_factor: float = 1.0) -> None:
        super().__init__(2 * inv_freq.numel(), device=inv_freq.device)
        self.inv_freq = inv_freq.to(torch.float32).clone()
        self.attention_factor = float(attention_factor)

    def forward(self, positions: int | Tensor, *, offset: int = 0) -> tuple[Tensor, Tensor]:
        """Cosines and sines of the rescaled angles, times the attention factor (shapes as the parent's)."""
        cos, sin = super().forward(positions, offset=offset)  # (B or 1, L, E) each
        if self.attention_factor == 1.0:
            return cos, sin
        return cos * self.attention_factor, sin * self.attention_factor  # (B or 1, L, E) each

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, attention_factor={self.attention_factor}"


def scaled_rotary_embedding(inv_freq: Tensor, attention_factor: float = 1.0) -> ScaledRotaryEmbedding:
    """A :class:`~helpers.positional.RotaryEmbedding` that rotates with the given frequencies.

    Args:
        inv_freq: ``(E/2,)`` frequencies, e.g. from :func:`yarn_frequencies`.
        attention_factor: Multiplies queries and keys after the rotation (logits by its square):
            :func:`yarn_temperature` for YaRN, 1 for the others.

    Returns:
        The module; its ``cos`` and ``sin`` go to :func:`helpers.positional.apply_rotary_pos_emb`.
    """
    if not isinstance(inv_freq, Tensor) or inv_freq.dim() != 1 or not inv_freq.is_floating_point():
        raise ValueError(f"inv_freq must be a 1-D float tensor of E/2 frequencies, got {inv_freq!r}")
    if not bool((inv_freq > 0).all()):
        raise ValueError("inv_freq must be positive")
    if (not isinstance(attention_factor, (int, float)) or isinstance(attention_factor, bool)
            or not 0 < attention_factor < math.inf):
        raise ValueError(f"attention_factor must be a positive number, got {attention_factor!r}")
    return ScaledRotaryEmbedding(inv_freq, attention_factor)
