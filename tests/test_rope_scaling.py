"""RoPE's context-extension rules against the papers' equations (written out here, pair by pair), their
defining properties, and Hugging Face transformers' implementations where they follow the same rule."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from helpers import rope_scaling as rs
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb


def hf_frequencies(rope_type: str, head_dim: int, **parameters: float) -> tuple[torch.Tensor, float]:
    config = LlamaConfig(hidden_size=head_dim * 4, num_attention_heads=4, head_dim=head_dim,
                         max_position_embeddings=1 << 17, rope_parameters={"rope_type": rope_type, **parameters})
    return ROPE_INIT_FUNCTIONS[rope_type](config, "cpu")


def test_the_unscaled_frequencies_are_the_rotary_modules() -> None:
    torch.testing.assert_close(rs.rope_frequencies(64), RotaryEmbedding(64).inv_freq)
    torch.testing.assert_close(rs.rope_frequencies(128, 500000.0), RotaryEmbedding(128, 500000.0).inv_freq)


@pytest.mark.parametrize("factor", [2.0, 4.0, 8.0])
def test_position_interpolation_rotates_position_m_times_s_as_rope_rotates_m(factor: float) -> None:
    scaled = rs.scaled_rotary_embedding(rs.position_interpolation(64, factor))
    positions = torch.arange(0, 200)
    cos, sin = RotaryEmbedding(64)(positions)
    cos_s, sin_s = scaled(positions * factor)
    torch.testing.assert_close(cos_s, cos, atol=2e-5, rtol=0)  # Chen et al., Eq. 4: f'(x, m) = f(x, m / s)
    torch.testing.assert_close(sin_s, sin, atol=2e-5, rtol=0)
    hf, attention = hf_frequencies("linear", 64, rope_theta=10000.0, factor=factor)
    torch.testing.assert_close(rs.position_interpolation(64, factor), hf, rtol=0, atol=0)
    assert attention == 1.0


@pytest.mark.parametrize("head_dim, factor", [(64, 4.0), (128, 8.0), (32, 2.0)])
def test_ntk_aware_base_keeps_the_fastest_pair_and_interpolates_the_slowest(head_dim: int, factor: float) -> None:
    theta = rs.rope_frequencies(head_dim)
    ntk = rs.ntk_aware_frequencies(head_dim, factor)
    assert ntk[0] == theta[0] == 1.0  # the fastest pair turns as before
    torch.testing.assert_close(ntk[-1], theta[-1] / factor, rtol=1e-5, atol=0)  # the slowest: exactly as interpolation
    assert bool((ntk <= theta).all() and (ntk >= theta / factor * (1 - 1e-6)).all())  # in between: partly stretched
    assert bool((ntk[1:] / theta[1:]).diff().lt(0).all())  # the slower the pair, the more it is stretched
    torch.testing.assert_close(ntk, rs.rope_frequencies(head_dim, 10000.0 * factor ** (head_dim / (head_dim - 2))))


@pytest.mark.parametrize("head_dim, factor", [(8, 4.0), (64, 4.0), (128, 8.0)])
def test_ntk_aware_follows_yarn_s_equation_pair_by_pair(head_dim: int, factor: float) -> None:
    base = 10000.0 * factor ** (head_dim / (head_dim - 2))  # YaRN, Eq. 16: b' = b s^(|D| / (|D| - 2))
    expected = torch.tensor([base ** (-2 * d / head_dim) for d in range(head_dim // 2)])  # theta_d = b'^(-2d/|D|)
    torch.testing.assert_close(rs.ntk_aware_frequencies(head_dim, factor), expected, rtol=1e-5, atol=0)


def test_ntk_aware_base_of_a_llama_sized_head() -> None:
    ntk = rs.ntk_aware_frequencies(128, 8.0)
    base = float(ntk[1]) ** (-128 / 2)  # theta_1 = base**(-2/E)
    assert abs(base - 82_700) / 82_700 < 2e-3  # b' = 10000 * 8**(128/126), about 82,700


def yarn_reference(head_dim: int, factor: float, length: int, base: float, alpha: float, beta: float) -> list[float]:
    """YaRN, section 3.2, pair by pair: lambda_d = 2 pi b^(2d/|D|), r = L / lambda, the ramp gamma(r), h(theta)."""
    out = []
    for d in range(head_dim // 2):
        theta = base ** (-2 * d / head_dim)
        r = length / (2 * math.pi * base ** (2 * d / head_dim))
        gamma = 0.0 if r < alpha else 1.0 if r > beta else (r - alpha) / (beta - alpha)
        out.append((1 - gamma) * theta / factor + gamma * theta)
    return out


@pytest.mark.parametrize("head_dim, factor, length", [(64, 4.0, 4096), (128, 16.0, 4096), (128, 8.0, 2048)])
def test_yarn_follows_the_papers_ramp_and_hugging_face_at_both_ends(head_dim: int, factor: float, length: int) -> None:
    ours = rs.yarn_frequencies(head_dim, factor, length)
    torch.testing.assert_close(ours, torch.tensor(yarn_reference(head_dim, factor, length, 10000.0, 1.0, 32.0)),
                               rtol=1e-5, atol=0)
    theta = rs.rope_frequencies(head_dim)
    turns = length * theta / (2 * math.pi)
    hf, attention = hf_frequencies("yarn", head_dim, rope_theta=10000.0, factor=factor,
                                   original_max_position_embeddings=length)
    ends = (turns >= 32) | (turns <= 1)  # untouched and fully interpolated pairs: the same in both
    assert ends.sum() >= head_dim // 4
    torch.testing.assert_close(ours[ends], hf[ends], rtol=1e-6, atol=0)
    torch.testing.assert_close(ours[turns >= 32], theta[turns >= 32], rtol=0, atol=0)
    torch.testing.assert_close(ours[turns <= 1], theta[turns <= 1] / factor, rtol=1e-6, atol=0)
    middle = ~ends  # the ramp: both between interpolation and the original, by different ramps
    assert bool((hf[middle] <= theta[middle] * (1 + 1e-6)).all() and (ours[middle] >= theta[middle] / factor).all())
    assert math.isclose(rs.yarn_temperature(factor), attention, rel_tol=1e-12)


def test_yarn_temperature_is_the_papers() -> None:
    assert rs.yarn_temperature(1.0) == 1.0
    assert round(rs.yarn_temperature(8.0), 3) == 1.208  # YaRN, appendix A.2
    assert math.isclose(rs.yarn_temperature(16.0), 0.1 * math.log(16.0) + 1)


def test_llama3_is_meta_s_rule_as_hugging_face_implements_it() -> None:
    ours = rs.llama3_frequencies(128)  # Llama 3.1: factor 8, low 1, high 4, context 8192, base 500000
    hf, attention = hf_frequencies("llama3", 128, rope_theta=500000.0, factor=8.0, low_freq_factor=1.0,
                                   high_freq_factor=4.0, original_max_position_embeddings=8192)
    torch.testing.assert_close(ours, hf, rtol=1e-6, atol=0)
    assert attention == 1.0  # no temperature
    theta = rs.rope_frequencies(128, 500000.0)
    wavelength = 2 * math.pi / theta
    torch.testing.assert_close(ours[wavelength < 2048], theta[wavelength < 2048], rtol=0, atol=0)  # kept
    torch.testing.assert_close(ours[wavelength > 8192], theta[wavelength > 8192] / 8, rtol=1e-6, atol=0)  # divided
    # the same ramp as YaRN's with alpha = low and beta = high
    torch.testing.assert_close(ours, rs.yarn_frequencies(128, 8.0, 8192, 500000.0, alpha=1.0, beta=4.0), rtol=1e-6,
                               atol=0)


def test_a_scaled_rotary_embedding_rotates_queries_and_keys_relatively() -> None:
    rotary = rs.scaled_rotary_embedding(rs.yarn_frequencies(32, 4.0, 256))
    q, k = torch.randn(1, 1, 1, 32), torch.randn(1, 1, 1, 32)
    scores = []
    for shift in (0, 37, 500):
        cos, sin = rotary(torch.tensor([[shift + 9, shift]]))  # a query 9 positions after its key
        q_rot, _ = apply_rotary_pos_emb(q, q, cos[:, :1], sin[:, :1])
        _, k_rot = apply_rotary_pos_emb(k, k, cos[:, 1:], sin[:, 1:])
        scores.append(float((q_rot * k_rot).sum()))
    assert max(scores) - min(scores) < 1e-4  # the score depends on the distance only, rescaled or not


def test_the_attention_factor_scales_every_logit_by_its_square_as_hugging_face_s_yarn() -> None:
    inv_freq = rs.yarn_frequencies(32, 4.0, 256)
    tempered = rs.scaled_rotary_embedding(inv_freq, rs.yarn_temperature(4.0))
    plain = rs.scaled_rotary_embedding(inv_freq)
    q, k = torch.randn(1, 2, 10, 32), torch.randn(1, 2, 10, 32)
    logits = [torch.einsum("bhie,bhje->bhij", *apply_rotary_pos_emb(q, k, *r(10))) for r in (tempered, plain)]
    _, attention = hf_frequencies("yarn", 32, rope_theta=10000.0, factor=4.0, original_max_position_embeddings=256)
    torch.testing.assert_close(logits[0], logits[1] * attention ** 2, atol=1e-4, rtol=1e-5)  # HF: cos, sin * factor
    cos, sin = RotaryEmbedding(32)(10)
    torch.testing.assert_close(rs.scaled_rotary_embedding(rs.rope_frequencies(32), 1.0)(10)[0], cos)  # factor 1
    assert isinstance(tempered, RotaryEmbedding) and tempered.head_dim == 32


@pytest.mark.parametrize("call, words", [
    (lambda: rs.position_interpolation(63, 2.0), "head_dim"),
    (lambda: rs.position_interpolation(64, 0.5), "factor"),
    (lambda: rs.ntk_aware_frequencies(64, 2.0, base=1.0), "base"),
    (lambda: rs.yarn_frequencies(64, 2.0, 0), "original_length"),
    (lambda: rs.yarn_frequencies(64, 2.0, 4096, alpha=32.0, beta=1.0), "alpha"),
    (lambda: rs.llama3_frequencies(128, low_freq_factor=4.0, high_freq_factor=1.0), "low_freq_factor"),
    (lambda: rs.yarn_temperature(0.5), "factor"),
    (lambda: rs.scaled_rotary_embedding(torch.tensor([[1.0]])), "inv_freq"),
    (lambda: rs.scaled_rotary_embedding(torch.tensor([1.0, -1.0])), "inv_freq"),
    (lambda: rs.scaled_rotary_embedding(torch.tensor([1.0, 0.1]), 0.0), "attention_factor"),
])
def test_bad_arguments_are_named(call, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        call()
