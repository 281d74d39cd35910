"""Chapter 3's exercise checkers: accept the reference solutions, reject typical mistakes by name."""

import math

import pytest
import torch

from helpers import diagnostics
from helpers.attention import scaled_dot_product_attention
from helpers.diagnostics import softmax_jacobian
from helpers.exercises import CheckResult, ch03
from helpers.experiments import dot_variance
from helpers.experiments.logit_scale import logit_scale_of
from helpers.multihead import MultiHeadAttention

# --------------------------------------------------------------------------------------------
# Exercise 1: predict Var(q . k)
# --------------------------------------------------------------------------------------------


def test_predicted_variance_accepts_d_k_sigma_to_the_fourth():
    result = ch03.check_predicted_variance(64 * 0.5**4, d_k=64, sigma=0.5)
    assert isinstance(result, CheckResult) and result.passed
    assert ch03.check_predicted_variance(torch.tensor(10 * 2.0**4), d_k=10, sigma=2.0).passed


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (math.sqrt(64 * 0.5**4), "standard deviation"),
        (64 * 0.25, "counts σ² once"),
        (64.0, "unit-variance"),
        (0.5**4, "one product"),
        (64**2 * 0.5**4, "d_k²"),
    ],
)
def test_predicted_variance_names_the_mistake(answer, words):
    result = ch03.check_predicted_variance(answer, d_k=64, sigma=0.5)
    assert not result.passed
    assert words in result.message


@pytest.mark.parametrize("answer", [None, "4", float("nan"), [4.0]])
def test_predicted_variance_rejects_non_numbers_without_raising(answer):
    result = ch03.check_predicted_variance(answer)
    assert not result.passed and ("number" in result.message or "finite" in result.message)


# --------------------------------------------------------------------------------------------
# Exercise 2: the right scale for a head layout
# --------------------------------------------------------------------------------------------


def test_attention_scale_accepts_one_over_sqrt_head_dim():
    result = ch03.check_attention_scale(lambda embed_dim, num_heads, num_kv_heads: (embed_dim // num_heads) ** -0.5)
    assert result.passed


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda d, h, hkv: 1 / math.sqrt(d), "√d_model bug"),
        (lambda d, h, hkv: math.sqrt(d // h), "divided"),
        (lambda d, h, hkv: 1 / (d // h), "square root"),
        (lambda d, h, hkv: 1 / math.sqrt(d // hkv), "key/value heads are shared"),
        (lambda d, h, hkv: 1 / math.sqrt(h), "√num_heads"),
    ],
)
def test_attention_scale_names_the_mistake(answer, words):
    result = ch03.check_attention_scale(answer)
    assert not result.passed
    assert words in result.message


def test_attention_scale_reports_the_stub_and_exceptions():
    def stub(embed_dim, num_heads, num_kv_heads):
        raise NotImplementedError

    assert "stub" in ch03.check_attention_scale(stub).message
    assert "ZeroDivisionError" in ch03.check_attention_scale(lambda d, h, hkv: 1 / 0).message
    assert "expected a function" in ch03.check_attention_scale(0.125).message
    assert "number" in ch03.check_attention_scale(lambda d, h, hkv: None).message


# --------------------------------------------------------------------------------------------
# Exercise 3: find and fix the scaling bug
# --------------------------------------------------------------------------------------------


def _fixed(x, layer, *, scale=None, mix_heads=False):
    batch, length, d_model = x.shape
    heads = layer.num_heads
    head_dim = d_model // heads

    def split(t):
        if mix_heads:  # the classic reshape mistake: no transpose, heads mixed with positions
            return t.reshape(batch, heads, length, head_dim)
        return t.view(batch, length, heads, head_dim).transpose(1, 2)

    q, k, v = split(layer.q_proj(x)), split(layer.k_proj(x)), split(layer.v_proj(x))
    factor = 1 / math.sqrt(head_dim) if scale is None else scale
    weights = torch.softmax(q @ k.transpose(-2, -1) * factor, dim=-1)
    return layer.o_proj((weights @ v).transpose(1, 2).reshape(batch, length, d_model))


def test_multihead_fix_accepts_the_reference():
    assert ch03.check_multihead_fix(_fixed).passed
    assert ch03.check_multihead_fix(lambda x, layer: (_fixed(x, layer), None)).passed  # (output, weights) is accepted


def test_buggy_multihead_attention_really_differs_from_the_layer():
    torch.manual_seed(0)
    layer = MultiHeadAttention(32, 4)
    x = torch.randn(2, 6, 32)
    with torch.no_grad():
        assert not torch.allclose(ch03.buggy_multihead_attention(x, layer), layer(x)[0], atol=1e-4)
        torch.testing.assert_close(_fixed(x, layer), layer(x)[0], rtol=1e-4, atol=1e-5)
    assert "√d_model" in ch03.check_multihead_fix(ch03.buggy_multihead_attention).message


@pytest.mark.parametrize(
    ("scale", "words"),
    [(1.0, "not scaled at all"), ("1/head_dim", "divide by head_dim"), ("sqrt", "multiply by √head_dim")],
)
def test_multihead_fix_names_the_wrong_scale(scale, words):
    def answer(x, layer):
        head_dim = layer.head_dim
        factor = {"1/head_dim": 1 / head_dim, "sqrt": math.sqrt(head_dim)}.get(scale, scale)
        return _fixed(x, layer, scale=factor)

    result = ch03.check_multihead_fix(answer)
    assert not result.passed and words in result.message


def test_multihead_fix_rejects_other_mistakes_with_a_hint():
    mixed = ch03.check_multihead_fix(lambda x, layer: _fixed(x, layer, mix_heads=True))
    assert not mixed.passed and "Fix only the scale line" in mixed.message
    shape = ch03.check_multihead_fix(lambda x, layer: _fixed(x, layer)[:, 0])
    assert not shape.passed and "shape" in shape.message
    none = ch03.check_multihead_fix(lambda x, layer: None)
    assert not none.passed and "return" in none.message


# --------------------------------------------------------------------------------------------
# Exercise 4: predict the entropy
# --------------------------------------------------------------------------------------------


def _simulated_entropy(d_k, scaled, rows=4000, log=torch.log):
    gen = torch.Generator().manual_seed(99)
    q = torch.randn(rows, 1, d_k, generator=gen)
    k = torch.randn(rows, 16, d_k, generator=gen)
    scores = (q @ k.transpose(-2, -1)).squeeze(1)
    if scaled:
        scores = scores / math.sqrt(d_k)
    p = torch.softmax(scores, dim=-1)
    return float(-(p * log(p.clamp_min(1e-38))).sum(-1).mean())


def test_expected_entropy_matches_an_independent_simulation():
    for d_k, scaled in ((256, False), (64, True), (4, False)):
        assert ch03.expected_entropy(d_k, 16, scaled=scaled) == pytest.approx(_simulated_entropy(d_k, scaled), abs=0.03)


def test_entropy_prediction_accepts_a_readers_simulation():
    assert ch03.check_entropy_prediction(_simulated_entropy(256, False), d_k=256).passed
    assert ch03.check_entropy_prediction(_simulated_entropy(64, True), d_k=64, scaled=True).passed


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda: _simulated_entropy(256, True), "*with* the scale"),
        (lambda: _simulated_entropy(256, False, log=torch.log2), "bits"),
        (lambda: math.log(16), "uniform"),
        (lambda: -0.2, "never negative"),
        (lambda: 1.0, "too high"),
    ],
)
def test_entropy_prediction_names_the_mistake(answer, words):
    result = ch03.check_entropy_prediction(answer(), d_k=256)
    assert not result.passed and words in result.message


def test_entropy_prediction_catches_standard_deviation_d_k():
    gen = torch.Generator().manual_seed(1)
    p = torch.softmax(torch.randn(4000, 16, generator=gen) * 256, dim=-1)  # std d_k instead of sqrt(d_k)
    value = float(-torch.special.xlogy(p, p).sum(-1).mean())
    result = ch03.check_entropy_prediction(value, d_k=256)
    assert not result.passed and "standard deviation is √d_k" in result.message


def test_entropy_prediction_of_scaled_question_rejects_the_unscaled_value():
    result = ch03.check_entropy_prediction(_simulated_entropy(256, False), d_k=256, scaled=True)
    assert not result.passed and "*unscaled*" in result.message


# --------------------------------------------------------------------------------------------
# Exercise 5: the softmax Jacobian
# --------------------------------------------------------------------------------------------


def _jacobian(z):
    p = torch.softmax(z, dim=-1)
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)


def test_softmax_jacobian_accepts_the_reference_and_autograd():
    assert ch03.check_softmax_jacobian(_jacobian).passed

    def by_autograd(z):
        rows = z.reshape(-1, z.shape[-1])
        jac = torch.stack([torch.autograd.functional.jacobian(lambda r: torch.softmax(r, 0), row) for row in rows])
        return jac.reshape(*z.shape, z.shape[-1])

    assert ch03.check_softmax_jacobian(by_autograd).passed


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda z: -_jacobian(z), "sign is flipped"),
        (lambda z: torch.diag_embed(torch.softmax(z, -1)), "dropped the − p pᵀ"),
        (lambda z: -torch.softmax(z, -1).unsqueeze(-1) * torch.softmax(z, -1).unsqueeze(-2), "only − p pᵀ"),
        (lambda z: torch.diag_embed(z) - z.unsqueeze(-1) * z.unsqueeze(-2), "logits z"),
        (lambda z: _jacobian(z)[0, 0], "shape"),
        (lambda z: torch.diag_embed(torch.softmax(z, -1) * (1 - torch.softmax(z, -1))), "off-diagonal"),
    ],
)
def test_softmax_jacobian_names_the_mistake(answer, words):
    result = ch03.check_softmax_jacobian(answer)
    assert not result.passed and words in result.message


def test_softmax_jacobian_reports_exceptions_and_non_tensors():
    assert "RuntimeError" in ch03.check_softmax_jacobian(lambda z: z @ torch.ones(3, 3)).message
    assert "return" in ch03.check_softmax_jacobian(lambda z: None).message


# --------------------------------------------------------------------------------------------
# Delegation: an answer that calls the package's own implementation fails, by name
# --------------------------------------------------------------------------------------------


def test_multihead_fix_rejects_the_layer_itself_by_name():
    for answer in (lambda x, layer: layer(x)[0], lambda x, layer: layer(x)):
        result = ch03.check_multihead_fix(answer)
        assert not result.passed and "helpers.MultiHeadAttention" in result.message


def test_multihead_fix_rejects_the_package_kernel_by_name():

    def answer(x, layer):
        b, n, d = x.shape
        h, e = layer.num_heads, d // layer.num_heads
        q, k, v = (p(x).view(b, n, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
        return layer.o_proj(scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d))

    result = ch03.check_multihead_fix(answer)
    assert not result.passed and "scaled_dot_product_attention" in result.message


def test_softmax_jacobian_rejects_the_package_function_by_name():

    for answer in (softmax_jacobian, lambda z: softmax_jacobian(z), lambda z: diagnostics.softmax_jacobian(z)):
        result = ch03.check_softmax_jacobian(answer)
        assert not result.passed and "softmax_jacobian" in result.message


def test_attention_scale_rejects_the_package_scale_by_name():

    result = ch03.check_attention_scale(lambda d, h, hkv: logit_scale_of(MultiHeadAttention(d, h, num_kv_heads=hkv)))
    assert not result.passed and "logit_scale_of" in result.message


def test_checkers_restore_the_package_after_a_delegating_answer():

    ch03.check_softmax_jacobian(lambda z: softmax_jacobian(z))
    assert softmax_jacobian(torch.zeros(1, 3)).shape == (1, 3, 3)
    layer = MultiHeadAttention(8, 2)
    assert layer(torch.randn(1, 3, 8))[0].shape == (1, 3, 8)


# --------------------------------------------------------------------------------------------
# Exercise 2: the spread the softmax sees
# --------------------------------------------------------------------------------------------


def _row_spread(d_k, seed, *, across_pairs=False):
    gen = torch.Generator().manual_seed(seed)
    if across_pairs:
        q, k = torch.randn(4000, d_k, generator=gen) + 1, torch.randn(4000, d_k, generator=gen) + 1
        return (q * k).sum(-1).var().item()
    q = torch.randn(300, 1, d_k, generator=gen) + 1  # (N, 1, E)
    k = torch.randn(300, 32, d_k, generator=gen) + 1  # (N, S, E)
    return (q * k).sum(-1).var(-1).mean().item()


def test_row_spread_accepts_a_within_row_measurement():
    assert ch03.check_row_spread(_row_spread).passed


def test_row_spread_names_the_variance_across_pairs():
    result = ch03.check_row_spread(lambda d, s: _row_spread(d, s, across_pairs=True))
    assert not result.passed and "across independent" in result.message


def test_row_spread_rejects_a_formula_and_other_mistakes():
    assert "formula" in ch03.check_row_spread(lambda d, s: 2.0 * d).message
    assert "zero-mean" in ch03.check_row_spread(lambda d, s: _row_spread(d, s) / 2).message
    assert "standard deviation" in ch03.check_row_spread(lambda d, s: _row_spread(d, s) ** 0.5).message
    assert "stub" in ch03.check_row_spread(lambda d, s: (_ for _ in ()).throw(NotImplementedError)).message


def test_row_spread_rejects_the_package_measurement_by_name():

    result = ch03.check_row_spread(
        lambda d, s: dot_variance.within_row_variance((d,), distribution="shifted", seed=s).within_row[0])
    assert not result.passed and "within_row_variance" in result.message
    result = ch03.check_row_spread(lambda d, s: dot_variance.theoretical_row_variance("shifted", d))
    assert not result.passed and "theoretical_row_variance" in result.message


# --------------------------------------------------------------------------------------------
# Exercise 4: predict the usable learning rates, then read them off the runs
# --------------------------------------------------------------------------------------------


def _usable(sweep, label):
    return [lr for lr, runs in zip(sweep.lrs, sweep.runs[label])
            if min(r.final_accuracy for r in runs) >= sweep.threshold]


def test_lr_prediction_needs_a_prediction_and_accepts_a_right_reading():
    sweep = ch03._probe_sweep()
    assert "prediction" in ch03.check_lr_prediction(_usable, sweep, None).message
    assert "prediction" in ch03.check_lr_prediction(_usable, sweep, {"scaled": 9, "no scale": 0}).message
    right = ch03.check_lr_prediction(_usable, sweep, {"scaled": 1, "no scale": 1})
    assert right.passed and "prediction was right" in right.message
    wrong = ch03.check_lr_prediction(_usable, sweep, {"scaled": 3, "no scale": 0})
    assert wrong.passed and "you predicted 3 and 0" in wrong.message


def test_lr_prediction_names_the_mean_over_seeds():
    def by_mean(sweep, label):
        return [lr for lr, a in zip(sweep.lrs, sweep.final_accuracy(label)) if a >= sweep.threshold]

    result = ch03.check_lr_prediction(by_mean, ch03._probe_sweep(), {"scaled": 1, "no scale": 1})
    assert not result.passed and "every seed" in result.message


def test_lr_prediction_rejects_the_package_reading_by_name():
    result = ch03.check_lr_prediction(lambda sweep, label: sweep.usable(label), ch03._probe_sweep(),
                                      {"scaled": 1, "no scale": 1})
    assert not result.passed and "usable" in result.message
