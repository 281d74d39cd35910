"""Chapter 6, "Long context in practice": RoPE's scaling rules on chapter 6.5's toy, against plain RoPE, the
closed form of position interpolation, a brute-force loop over the trained angles, and the papers' equations."""

from __future__ import annotations

import math

import pytest
import torch

from helpers.experiments import position as pos
from helpers.experiments import rope_extrapolation as rx
from helpers.figures import long_context as fig
from helpers.models import TinyConfig, TinyGPT
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb


def rope_gpt(seed: int = 0) -> TinyGPT:
    torch.manual_seed(seed)
    model = TinyGPT(TinyConfig(vocab_size=8, embed_dim=32, num_heads=4, num_layers=2, positional="rope")).eval()
    with torch.no_grad():  # larger weights than the 0.02 init, so that positions change the outputs
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    return model


@pytest.mark.parametrize("method", rx.METHODS)
def test_every_method_with_factor_one_is_plain_rope(method: str) -> None:
    model = rope_gpt()
    tokens = torch.randint(0, 8, (3, 40), generator=torch.Generator().manual_seed(1))
    reference = model(tokens).output  # the model's own RotaryEmbedding
    scaled = rx.with_rotary(model, rx.scaled_rotary(method, 8, 1.0, 16))
    torch.testing.assert_close(scaled(tokens).output, reference, atol=1e-5, rtol=1e-5)
    assert isinstance(model.stack.rope, RotaryEmbedding) and model.stack.rope is not scaled.stack.rope  # a copy


@pytest.mark.parametrize("method", ["ntk", "yarn", "llama3", "pi"])
def test_a_scaled_model_differs_from_plain_rope_past_factor_one(method: str) -> None:
    model = rope_gpt()
    tokens = torch.randint(0, 8, (2, 40), generator=torch.Generator().manual_seed(2))
    scaled = rx.with_rotary(model, rx.scaled_rotary(method, 8, 4.0, 16))
    assert (scaled(tokens).output - model(tokens).output).abs().max() > 1e-3


def test_yarn_multiplies_every_logit_by_the_square_of_its_factor() -> None:
    rotary = rx.scaled_rotary("yarn", 8, 4.0, 16)
    plain = rx.scaled_rotary("rope", 8, 1.0, 16)
    plain.inv_freq = rotary.inv_freq.clone()  # the same angles, no temperature
    q, k = torch.randn(1, 1, 12, 8), torch.randn(1, 1, 12, 8)
    logits = [torch.einsum("bhie,bhje->bhij", *apply_rotary_pos_emb(q, k, *r(12))) for r in (rotary, plain)]
    m = 0.1 * math.log(4.0) + 1  # YaRN, Eq. 22: sqrt(1/t)
    torch.testing.assert_close(logits[0], logits[1] * m ** 2, atol=1e-5, rtol=1e-5)


def test_the_toy_methods_follow_the_papers_equations_pair_by_pair() -> None:
    theta = [10000.0 ** (-2 * i / 8) for i in range(4)]  # E = 8
    s, length = 4.0, 16
    turns = [length * t / (2 * math.pi) for t in theta]  # YaRN's r = L / lambda
    ntk_base = 10000.0 * s ** (8 / 6)  # YaRN, Eq. 16
    expected = {
        "rope": theta,
        "pi": [t / s for t in theta],
        "ntk": [ntk_base ** (-2 * i / 8) for i in range(4)],
        "yarn": [],
        "llama3": [],
    }
    for t, r in zip(theta, turns):
        gamma = min(max((r - rx.YARN_ALPHA) / (rx.YARN_BETA - rx.YARN_ALPHA), 0.0), 1.0)
        expected["yarn"].append((1 - gamma) * t / s + gamma * t)
        wavelength = 2 * math.pi / t  # Meta's apply_scaling, branch by branch
        if wavelength < length / rx.LLAMA_HIGH:
            expected["llama3"].append(t)
        elif wavelength > length / rx.LLAMA_LOW:
            expected["llama3"].append(t / s)
        else:
            smooth = (length / wavelength - rx.LLAMA_LOW) / (rx.LLAMA_HIGH - rx.LLAMA_LOW)
            expected["llama3"].append((1 - smooth) * t / s + smooth * t)
    for method, values in expected.items():
        inv_freq, factor = rx.method_frequencies(method, 8, s, length)
        torch.testing.assert_close(inv_freq, torch.tensor(values), rtol=1e-5, atol=0)
        assert factor == (0.1 * math.log(s) + 1 if method == "yarn" else 1.0)
    assert expected["yarn"][0] == theta[0]  # the fastest pair (2.5 turns in 16 tokens) is kept
    assert 0 < (expected["llama3"][0] - theta[0] / s) / (theta[0] - theta[0] / s) < 1  # Llama blends it


@pytest.mark.parametrize("factor", [2, 4, 8])
def test_position_interpolation_at_p_times_s_turns_as_plain_rope_at_p(factor: int) -> None:
    p = torch.arange(0, 100)
    plain = rx.rotation_angles(rx.method_frequencies("rope", 8, 1.0, 16)[0], p)
    interpolated = rx.rotation_angles(rx.method_frequencies("pi", 8, float(factor), 16)[0], p * factor)
    gap = (interpolated - plain).abs()
    torch.testing.assert_close(torch.minimum(gap, 2 * math.pi - gap), torch.zeros_like(gap), atol=1e-5, rtol=0)


def brute_force_covered(angles: torch.Tensor, trained: torch.Tensor, max_distance: int) -> torch.Tensor:
    """Covered if the angle lies between the angles of two neighbouring trained distances d and d + 1."""
    out = torch.zeros(angles.shape, dtype=torch.bool)
    for j in range(angles.shape[1]):
        step = float(trained[j])
        for row in range(angles.shape[0]):
            a = float(angles[row, j])
            if a <= 1e-6 or 2 * math.pi - a <= 1e-6:  # angle 0 is distance 0's
                out[row, j] = True
            for d in range(max_distance):
                if (a - d * step) % (2 * math.pi) <= step + 1e-6:  # on the arc from d to d + 1
                    out[row, j] = True
    return out


@pytest.mark.parametrize("method", rx.METHODS)
@pytest.mark.parametrize("train_len", [6, 16])
def test_angle_coverage_against_a_brute_force_loop(method: str, train_len: int) -> None:
    coverage = rx.angle_coverage(method, head_dim=8, train_len=train_len, factor=4.0, base=50.0 if train_len == 6
                                 else 10000.0)
    assert coverage.angles.shape == coverage.covered.shape == (4 * train_len, 4)
    torch.testing.assert_close(coverage.angles, torch.remainder(
        torch.arange(4 * train_len, dtype=torch.float64)[:, None] * coverage.inv_freq.double(), 2 * math.pi))
    expected = brute_force_covered(coverage.angles, coverage.trained_inv_freq, train_len - 2)
    assert torch.equal(coverage.covered, expected)
    if method == "rope":  # the trained distances themselves
        assert bool(coverage.covered[: train_len - 1].all())


def test_plain_rope_meets_new_angles_on_its_slow_pairs_and_interpolation_does_not() -> None:
    rope = rx.angle_coverage("rope").new_beyond()
    assert rope[0] == 0 and bool((rope[1:] > 0.9).all())  # only the fastest pair turned a whole circle in training
    pi = rx.angle_coverage("pi").new_beyond()
    # distances up to 62 become 15.5 < 16, yet the toy's inputs held 15 tokens (distances 0 .. 14): 7 of 49 are new
    torch.testing.assert_close(pi[1:], torch.full((3,), 7 / 49, dtype=torch.float64))
    ntk = rx.angle_coverage("ntk").new_beyond()
    assert bool((ntk <= rope).all()) and ntk[-1] == pi[-1]  # the slowest pair as interpolation


def test_the_experiment_runs_small_and_keeps_plain_rope_inside_the_training_length() -> None:
    runs = rx.rope_scaling_runs(("rope", "yarn"), (0,), train_len=8, factor=2, steps=8, fine_tune_steps=2,
                                fine_tune_batch=4, num_test=8)
    assert set(runs) == {("rope", 0), ("rope", 2), ("yarn", 0), ("yarn", 2)}
    for group in runs.values():
        assert len(group) == 1 and len(group[0].per_position) == 15
        assert all(0.0 <= a <= 1.0 for a in group[0].per_position)
    bins = runs[("rope", 0)][0].binned(4)
    assert [(a, b) for a, b, _ in bins] == [(3, 7), (7, 11), (11, 15), (15, 16)]
    assert rx.summarise(runs[("rope", 0)], 3, 8)[0] == runs[("rope", 0)][0].accuracy(3, 8)
    # plain RoPE with no fine-tune is the trained model itself: the same per-position accuracy as chapter 6.5's
    ext = pos.extrapolation_runs(("rope",), (0,), train_len=8, test_len=16, steps=8, num_test=8)
    assert runs[("rope", 0)][0].per_position == ext["rope"][0].per_position


@pytest.mark.parametrize("call, words", [
    (lambda: rx.method_frequencies("alibi", 8, 2.0, 16), "method"),
    (lambda: rx.method_frequencies("pi", 8, 0.5, 16), "factor"),
    (lambda: rx.scaled_rotary("ntk", 7, 2.0, 16), "head_dim"),
    (lambda: rx.with_rotary(TinyGPT(TinyConfig(positional="t5")), RotaryEmbedding(16)), "model"),
    (lambda: rx.with_rotary(rope_gpt(), RotaryEmbedding(16)), "rotary"),
    (lambda: rx.rope_scaling_runs(("rope", "xpos")), "method"),
    (lambda: rx.rope_scaling_runs(seeds=()), "seeds"),
    (lambda: rx.rope_scaling_runs(factor=0), "factor"),
    (lambda: rx.rope_scaling_runs(fine_tune_steps=-1), "fine_tune_steps"),
    (lambda: rx.rope_scaling_runs(fine_tune_lr=0.0), "fine_tune_lr"),
    (lambda: rx.rope_scaling_runs(embed_dim=12), "embed_dim"),
    (lambda: rx.rotation_angles(torch.tensor([1.0, -0.1]), torch.arange(4)), "inv_freq"),
    (lambda: rx.rotation_angles(torch.tensor([1.0]), torch.tensor([-1])), "distances"),
    (lambda: rx.covered_angles(torch.zeros(3, 2), torch.ones(3), 4), "trained_inv_freq"),
    (lambda: rx.covered_angles(torch.zeros(3, 2), torch.ones(2), -1), "max_trained_distance"),
    (lambda: rx.angle_coverage(train_len=1), "train_len"),
    (lambda: rx.ScalingRun("rope", 0, 0, 16, [0.5] * 15).accuracy(20, 30), "positions"),
])
def test_bad_arguments_are_named(call, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        call()


def test_the_fine_tuned_models_are_also_tested_past_the_fine_tuning_length() -> None:
    runs = rx.rope_scaling_runs(("rope", "pi"), (0,), train_len=8, factor=2, steps=8, fine_tune_steps=2,
                                fine_tune_batch=4, num_test=8, long_test_len=40, num_long_test=8)
    for (method, steps), (run,) in runs.items():
        if steps == 0:
            assert run.long_per_position is None  # only the fine-tuned models go that far
            with pytest.raises(ValueError, match="long_test_len"):
                run.accuracy(16, 32)
        else:
            assert len(run.long_per_position) == 39
            assert run.accuracy(16, 40) == pytest.approx(sum(run.long_per_position[15:39]) / 24)
            assert run.accuracy(3, 8) == pytest.approx(sum(run.per_position[2:7]) / 5)  # short spans: the 16-token test
    table = fig.scaling_table(runs, [(3, 16), (16, 40)])
    assert "| position interpolation | 0 | " in table and table.count("—") == 2
    figure = fig.scaling_figure(runs, train_len=8)
    assert len(figure.layout.annotations) >= 3  # a third panel: the longer test
    longest = [t for t in figure.data if t.mode == "lines"][-1]
    assert list(longest.x) == list(range(1, 40))
