"""Chapter 5's exercise checkers: accept the reference solutions and honest answers in another style,
reject each typical mistake by name, and reject answers that delegate (to the package, by any route,
or to PyTorch's own attention), tables of answers and invented timings."""

import math
import sys
import time

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

import helpers
from exercise_routes import delegating_routes
from helpers import attention, masks
from helpers.efficient import sliding_window_attention
from helpers.efficient_linear import _kernel_attention, linear_attention
from helpers.exercises import ch05
from helpers.exercises.predictions import _forget as forget
from helpers.exercises.predictions import predict
from helpers.exercises.variants import crossover
from helpers.experiments import causal_masking, efficient_cost
from helpers.vision import SqueezeExcitation


def stub(*args):
    raise NotImplementedError


def table_answer(check, correct):
    """An answer that replays the outputs the correct one gave on the inputs of one earlier check."""
    table = {}

    def key(args):
        return tuple((tuple(a.shape), float(a.double().sum())) if isinstance(a, torch.Tensor) else repr(a)
                     for a in args)

    def recording(*args):
        out = correct(*args)
        table[key(args)] = out
        return out

    assert check(recording).passed

    def replay(*args):
        return table.get(key(args), next(iter(table.values())))
    return replay


# --- exercise 1: sliding window -------------------------------------------------------------------

def window_attention(q, k, v, window, inclusive=False, causal=False, scale=True, after=False):
    n = q.shape[-2]
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    allowed = (i - j).abs() <= window if inclusive else (i - j).abs() < window
    if causal:
        allowed = allowed & (j <= i)
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale else 1.0)
    if after:
        return torch.softmax(scores, dim=-1) * allowed @ v
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v


def window_loops(q, k, v, window):
    n = q.shape[-2]
    out = torch.zeros_like(q)
    for i in range(n):
        lo, hi = max(0, i - window + 1), min(n, i + window)
        scores = torch.einsum("bhe,bhse->bhs", q[:, :, i], k[:, :, lo:hi]) / q.shape[-1] ** 0.5
        out[:, :, i] = torch.einsum("bhs,bhse->bhe", scores.softmax(-1), v[:, :, lo:hi])
    return out


def test_sliding_window_accepts_the_solution_and_another_style():
    assert ch05.check_sliding_window_attention(window_attention).passed
    assert ch05.check_sliding_window_attention(window_loops).passed


@pytest.mark.parametrize("answer, words", [
    (lambda q, k, v, w: window_attention(q, k, v, w, inclusive=True), "off by one"),
    (lambda q, k, v, w: window_attention(q, k, v, w, causal=True), "causal window"),
    (lambda q, k, v, w: window_attention(q, k, v, w, scale=False), "not divided by sqrt(d)"),
    (lambda q, k, v, w: window_attention(q, k, v, w, after=True), "*after* the softmax"),
    (lambda q, k, v, w: window_attention(q, k, v, q.shape[-2] + 1), "full attention"),
    (stub, "stub"),
])
def test_sliding_window_names_each_mistake(answer, words):
    verdict = ch05.check_sliding_window_attention(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


def _with_package_mask(f, q, k, v, w):
    n = q.shape[-2]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~f(n, n, w), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


@pytest.mark.parametrize("target, adapt, name", [
    (sliding_window_attention, None, "sliding_window_attention"),
    (masks.sliding_window_mask, _with_package_mask, "sliding_window_mask"),
    (lambda n, s, w: masks.dilated_mask(n, s, w, 1), _with_package_mask, "dilated_mask"),
    (attention.masked_softmax, lambda f, q, k, v, w: f(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]),
     (torch.arange(q.shape[-2])[:, None] - torch.arange(q.shape[-2])[None, :]).abs() < w) @ v, "masked_softmax"),
    (F.scaled_dot_product_attention, lambda f, q, k, v, w: f(q, k, v, attn_mask=(
        torch.arange(q.shape[-2])[:, None] - torch.arange(q.shape[-2])[None, :]).abs() < w),
     "scaled_dot_product_attention"),
])
def test_sliding_window_refuses_every_route_to_a_ready_made_version(target, adapt, name):
    for route, answer in delegating_routes(target, adapt).items():
        verdict = ch05.check_sliding_window_attention(answer)
        assert not verdict.passed and name in verdict.message, (route, verdict.message)


def test_sliding_window_refuses_a_table_of_answers():
    replay = table_answer(ch05.check_sliding_window_attention, window_attention)
    assert not ch05.check_sliding_window_attention(replay).passed


# --- exercise 2: linear attention -----------------------------------------------------------------

def phi(x):
    return F.elu(x) + 1


def linear(q, k, v):
    pq, pk = phi(q), phi(k)
    return (pq @ (pk.transpose(-2, -1) @ v)) / (pq @ pk.sum(-2, keepdim=True).transpose(-2, -1))


def linear_einsum(q, k, v):
    pq, pk = phi(q), phi(k)
    summary = torch.einsum("bhse,bhsv->bhev", pk, v)
    return torch.einsum("bhle,bhev->bhlv", pq, summary) / torch.einsum("bhle,bhe->bhl", pq, pk.sum(-2))[..., None]


def linear_left_order(q, k, v):
    w = phi(q) @ phi(k).transpose(-2, -1)
    return (w / w.sum(-1, keepdim=True)) @ v


def linear_row_loop(q, k, v):
    pq, pk = phi(q), phi(k)
    rows = []
    for i in range(q.shape[-2]):  # one row of the L x S matrix at a time: no L x S tensor, O(L S) work
        w = pq[..., i:i + 1, :] @ pk.transpose(-2, -1)
        rows.append((w / w.sum(-1, keepdim=True)) @ v)
    return torch.cat(rows, dim=-2)


def test_linear_attention_accepts_the_solution_and_another_style():
    verdict = ch05.check_linear_attention(linear)
    assert verdict.passed and "no L x S matrix" in verdict.message
    assert verdict.fields["growth"] < 5  # about 4 for 4 times the length
    assert ch05.check_linear_attention(linear_einsum).passed


def test_linear_attention_refuses_the_l_by_s_matrix_and_a_loop_over_rows():
    assert "L x S matrix" in ch05.check_linear_attention(linear_left_order).message
    verdict = ch05.check_linear_attention(linear_row_loop)
    assert not verdict.passed and "grows like n^2" in verdict.message
    assert verdict.fields["growth"] > 12  # about 16


@pytest.mark.parametrize("answer, words", [
    (lambda q, k, v: phi(q) @ (phi(k).transpose(-2, -1) @ v), "normaliser"),
    (lambda q, k, v: (lambda pq, pk: (pq @ (pk.transpose(-2, -1) @ v)) / (pq @ pk.sum(-2, keepdim=True).transpose(
        -2, -1)))(F.elu(q), F.elu(k)), "without the +1"),
    (lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v, "softmax attention"),
    (lambda q, k, v: linear(q, k, v).transpose(-2, -1), "output shape"),
    (stub, "stub"),
])
def test_linear_attention_names_each_mistake(answer, words):
    verdict = ch05.check_linear_attention(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


@pytest.mark.parametrize("target, adapt, name", [
    (linear_attention, None, "linear_attention"),
    (_kernel_attention, lambda f, q, k, v: f(phi(q), phi(k), v, is_causal=False, eps=0.0, chunk_size=64),
     "_kernel_attention"),
])
def test_linear_attention_refuses_every_route_to_the_package(target, adapt, name):
    for route, answer in delegating_routes(target, adapt).items():
        verdict = ch05.check_linear_attention(answer)
        assert not verdict.passed and name in verdict.message, (route, verdict.message)


def test_linear_attention_refuses_a_table_of_answers():
    replay = table_answer(ch05.check_linear_attention, linear)
    assert not ch05.check_linear_attention(replay).passed


# --- exercise 3: squeeze and excitation -----------------------------------------------------------

def se(x, fc1, fc2, squeeze="mean", relu=True, gate="sigmoid"):
    s = {"mean": lambda: x.mean(dim=(2, 3)), "max": lambda: x.amax(dim=(2, 3)), "sum": lambda: x.sum(dim=(2, 3))}
    h = fc1(s[squeeze]())
    z = fc2(torch.relu(h) if relu else h)
    w = {"sigmoid": torch.sigmoid, "softmax": lambda t: torch.softmax(t, 1), "none": lambda t: t}[gate](z)
    return x * w[:, :, None, None]


def se_pooled(x, fc1, fc2):
    squeezed = F.adaptive_avg_pool2d(x, 1).flatten(1)
    return x * F.sigmoid(fc2(F.relu(fc1(squeezed)))).unsqueeze(-1).unsqueeze(-1)


def test_se_accepts_the_solution_and_another_style():
    assert ch05.check_se_block(se).passed
    assert ch05.check_se_block(se_pooled).passed


@pytest.mark.parametrize("answer, words", [
    (lambda x, fc1, fc2: se(x, fc1, fc2, squeeze="max"), "with the max"),
    (lambda x, fc1, fc2: se(x, fc1, fc2, squeeze="sum"), "with the sum"),
    (lambda x, fc1, fc2: se(x, fc1, fc2, relu=False), "ReLU between fc1 and fc2 is missing"),
    (lambda x, fc1, fc2: se(x, fc1, fc2, gate="softmax"), "softmax over channels"),
    (lambda x, fc1, fc2: se(x, fc1, fc2, gate="none"), "sigmoid is missing"),
    (lambda x, fc1, fc2: torch.sigmoid(fc2(torch.relu(fc1(x.mean(dim=(2, 3)))))), "returned the channel weights"),
    (lambda x, fc1, fc2: x.mean(dim=1), "output shape"),
    (stub, "stub"),
])
def test_se_names_each_mistake(answer, words):
    verdict = ch05.check_se_block(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


def _through_module(f, x, fc1, fc2):
    block = f(x.shape[1], reduction=max(1, x.shape[1] // fc1.out_features))
    block.fc1, block.fc2 = fc1, fc2
    return block(x)


def test_se_refuses_every_route_to_the_package():
    for target in (SqueezeExcitation, helpers.CBAM):
        for route, answer in delegating_routes(target, _through_module).items():
            verdict = ch05.check_se_block(answer)
            assert not verdict.passed and target.__name__ in verdict.message, (route, verdict.message)
    layer = SqueezeExcitation(8, 2)
    saved = layer.forward  # a bound method saved before: the code it runs is the package's
    verdict = ch05.check_se_block(lambda x, fc1, fc2: saved(x))
    assert not verdict.passed and "SqueezeExcitation" in verdict.message


FAKE_TORCHVISION_OPS = """
import torch


class SqueezeExcitation(torch.nn.Module):  # torchvision.ops.SqueezeExcitation's computation, for the test
    def __init__(self, input_channels, squeeze_channels):
        super().__init__()
        self.fc1 = torch.nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = torch.nn.Conv2d(squeeze_channels, input_channels, 1)

    def forward(self, x):
        scale = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(scale))))
"""


def test_se_refuses_torchvisions_squeeze_excitation(tmp_path, monkeypatch):
    # torchvision is not installed here (it is on Colab): a stand-in with the same name and layout is.
    package = tmp_path / "torchvision"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ops.py").write_text(FAKE_TORCHVISION_OPS)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("torchvision", "torchvision.ops"):
        monkeypatch.delitem(sys.modules, name, raising=False)

    def through_torchvision(x, fc1, fc2):
        from torchvision.ops import SqueezeExcitation as TorchvisionSE

        layer = TorchvisionSE(fc1.in_features, fc1.out_features).double()
        with torch.no_grad():
            for conv, linear in ((layer.fc1, fc1), (layer.fc2, fc2)):
                conv.weight.copy_(linear.weight[:, :, None, None])
                conv.bias.copy_(linear.bias)
        return layer(x)

    x = torch.randn(2, 6, 4, 4, dtype=torch.float64)
    fc1, fc2 = torch.nn.Linear(6, 3).double(), torch.nn.Linear(3, 6).double()
    torch.testing.assert_close(through_torchvision(x, fc1, fc2), se(x, fc1, fc2))  # right when unwatched
    verdict = ch05.check_se_block(through_torchvision)
    assert not verdict.passed and "torchvision" in verdict.message, verdict.message
    monkeypatch.delitem(sys.modules, "torchvision.ops", raising=False)
    monkeypatch.delitem(sys.modules, "torchvision", raising=False)


def test_se_refuses_a_table_of_answers():
    replay = table_answer(ch05.check_se_block, se)
    assert not ch05.check_se_block(replay).passed


# --- exercise 4: the padding bug hunt -------------------------------------------------------------

def padded(q, k, v, lengths, keys=True, inverted=False, shift=0, after=False, scale=True, mask=True):
    S = k.shape[-2]
    real = torch.arange(S)[None, :] < lengths[:, None] + shift
    if inverted:
        real = ~real
    m = real[:, None, None, :] if keys else real[:, None, :, None]
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale else 1.0)
    if after:
        return torch.softmax(scores, -1) * m @ v
    if mask:
        scores = scores.masked_fill(~m, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0) @ v


def padded_loops(q, k, v, lengths):
    out = torch.zeros_like(q)
    for b, n in enumerate(lengths.tolist()):
        if n == 0:
            continue
        scores = q[b] @ k[b, :, :n].transpose(-2, -1) / q.shape[-1] ** 0.5
        out[b] = torch.softmax(scores, dim=-1) @ v[b, :, :n]
    return out


def test_padding_fix_accepts_the_fix_and_another_style():
    assert ch05.check_padding_fix(padded).passed
    assert ch05.check_padding_fix(padded_loops).passed


@pytest.mark.parametrize("answer, words", [
    (ch05.buggy_padded_attention, "still the bug"),
    (lambda q, k, v, n: padded(q, k, v, n, keys=False), "still the bug"),
    (lambda q, k, v, n: padded(q, k, v, n, mask=False), "no mask at all"),
    (lambda q, k, v, n: padded(q, k, v, n, inverted=True), "the mask is inverted"),
    (lambda q, k, v, n: padded(q, k, v, n, shift=1), "off by one"),
    (lambda q, k, v, n: padded(q, k, v, n, after=True), "*after* the softmax"),
    (lambda q, k, v, n: padded(q, k, v, n, scale=False), "not divided by sqrt(E)"),
    (lambda q, k, v, n: padded(q, k, v, n) * float("nan"), "NaN"),
    (stub, "stub"),
])
def test_padding_fix_names_each_mistake(answer, words):
    verdict = ch05.check_padding_fix(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


def _with_padding_mask(f, q, k, v, lengths):
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~f(lengths, k.shape[-2]), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


@pytest.mark.parametrize("target, adapt, name", [
    (masks.padding_mask, _with_padding_mask, "padding_mask"),
    (attention.scaled_dot_product_attention, lambda f, q, k, v, n: f(q, k, v, attn_mask=(
        torch.arange(k.shape[-2])[None, :] < n[:, None])[:, None, None, :])[0], "scaled_dot_product_attention"),
    (F.scaled_dot_product_attention, lambda f, q, k, v, n: f(q, k, v, attn_mask=(
        torch.arange(k.shape[-2])[None, :] < n[:, None])[:, None, None, :]), "scaled_dot_product_attention"),
])
def test_padding_fix_refuses_every_route_to_a_ready_made_version(target, adapt, name):
    for route, answer in delegating_routes(target, adapt).items():
        verdict = ch05.check_padding_fix(answer)
        assert not verdict.passed and name in verdict.message, (route, verdict.message)


def test_padding_fix_refuses_a_table_of_answers():
    replay = table_answer(ch05.check_padding_fix, padded)
    assert not ch05.check_padding_fix(replay).passed


# --- exercise 5: predict, then measure, the crossover ---------------------------------------------

def best(fn, repeats=3):
    fn()
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return min(times)


def time_both(n):
    q, k, v = (torch.randn(1, 1, n, 32) for _ in range(3))
    return (best(lambda: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(32), -1) @ v),
            best(lambda: sliding_window_attention(q, k, v, 32)))


def time_both_wall(n):
    q, k, v = (torch.randn(1, 1, n, 32) for _ in range(3))
    out = []
    for fn in (lambda: F.softmax(torch.einsum("bhle,bhse->bhls", q, k) / 32 ** 0.5, -1) @ v,
               lambda: sliding_window_attention(q, k, v, 32)):
        fn()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        out.append(min(times))
    return out


@pytest.fixture
def no_predictions():
    forget(ch05.CROSSOVER)
    yield
    forget(ch05.CROSSOVER)


def test_crossover_refuses_to_show_a_result_before_a_prediction(no_predictions):
    verdict = ch05.check_crossover(time_both)
    assert not verdict.passed and 'predict("ch05.crossover"' in verdict.message
    assert not any(ch.isdigit() for ch in verdict.message.replace("ch05", ""))  # nothing measured is shown
    predict(ch05.CROSSOVER, "soon")
    assert "positive number" in ch05.check_crossover(time_both).message


def test_crossover_measures_itself_and_judges_the_prediction(no_predictions):
    predict(ch05.CROSSOVER, 1)
    small = ch05.check_crossover(time_both)
    assert small.passed and "agree with the checker's own measurement" in small.message, small.message
    forget(ch05.CROSSOVER)
    predict(ch05.CROSSOVER, 10**7)
    large = ch05.check_crossover(time_both_wall)
    assert large.passed, large.message
    judged = [v.fields["judged"]["en"] for v in (small, large)]
    assert any("was wrong" in j for j in judged), judged  # 1 and 10 million cannot both be within 2x of it
    predict(ch05.CROSSOVER, 400)  # after the result was shown
    late = ch05.check_crossover(time_both)
    assert late.passed and "recorded after the result had been shown" in late.message


def _runs_dense_then_invents(n):
    q, k, v = (torch.randn(1, 1, n, 32) for _ in range(3))
    torch.softmax(q @ k.transpose(-2, -1), -1) @ v
    return (1e-6 * n**2, 1e-4 * n)


@pytest.mark.parametrize("answer, words", [
    (lambda n: (1e-9 * n**2, 1e-6 * n), "did not compute dense attention"),
    (_runs_dense_then_invents, "what the checker measures for the same calls"),
    (lambda n: (torch.softmax(torch.randn(n, n), -1), 1.0)[1:] * 2, "what the checker measures"),
    (lambda n: (torch.randn(n, n).sum(), "fast")[1], "two positive numbers"),
    (lambda n: [t[0] for t in crossover.own_times(n, torch.Generator().manual_seed(0))],
     "helpers.exercises.variants.crossover.own_times"),
    (stub, "stub"),
])
def test_crossover_refuses_timings_it_did_not_see_measured(no_predictions, answer, words):
    predict(ch05.CROSSOVER, 400)
    verdict = ch05.check_crossover(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


def test_crossover_refuses_the_package_measurement_by_every_route(no_predictions):
    predict(ch05.CROSSOVER, 400)
    adapt = lambda f, n: tuple(f([n], methods=["dense", "sliding window"], heads=1)[m]["time_s"][0]  # noqa: E731
                               for m in ("dense", "sliding window"))
    for route, answer in delegating_routes(efficient_cost.measure_cost, adapt).items():
        verdict = ch05.check_crossover(answer)
        assert not verdict.passed and "measure_cost" in verdict.message, (route, verdict.message)


# --- exercise 6: causal attention, bottom-right aligned -------------------------------------------

def causal(q, k, v, fill=float("-inf"), shift=0, scale=True, top_left=False, inverted=False, after=False,
           mask=True, upcast=True, keep_float=False):
    L, S = q.shape[-2], k.shape[-2]
    offset = 0 if top_left else S - L
    allowed = torch.arange(S)[None, :] <= torch.arange(L)[:, None] + offset + shift
    if inverted:
        allowed = ~allowed
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale else 1.0)
    if after:
        return (torch.softmax(scores.float(), -1) * allowed).to(q.dtype) @ v
    if mask:
        scores = scores.masked_fill(~allowed, fill)
    weights = torch.softmax(scores.float() if upcast else scores, dim=-1)
    return weights @ v.float() if keep_float else weights.to(q.dtype) @ v


def causal_tril(q, k, v):
    L, S = q.shape[-2], k.shape[-2]
    keep = torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    return torch.softmax(scores.masked_fill(~keep, torch.finfo(scores.dtype).min), dim=-1) @ v


def causal_loops(q, k, v):
    L, S = q.shape[-2], k.shape[-2]
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for i in range(L):
        visible = i + S - L + 1
        scores = torch.einsum("bhe,bhse->bhs", q[:, :, i].float(), k[:, :, :visible].float()) / q.shape[-1] ** 0.5
        out[:, :, i] = torch.einsum("bhs,bhse->bhe", scores.softmax(-1), v[:, :, :visible].float()).to(q.dtype)
    return out


def test_causal_accepts_the_solution_and_other_styles():
    for answer in (causal, causal_tril, causal_loops, lambda q, k, v: causal(q, k, v, upcast=False)):
        verdict = ch05.check_causal_attention(answer)
        assert verdict.passed, verdict.message


@pytest.mark.parametrize("answer, words", [
    (lambda q, k, v: causal(q, k, v, top_left=True), "top-left alignment"),
    (lambda q, k, v: causal(q, k, v, shift=-1), "does not see its own position"),
    (lambda q, k, v: causal(q, k, v, shift=1), "also sees the next position"),
    (lambda q, k, v: causal(q, k, v, inverted=True), "the mask is inverted"),
    (lambda q, k, v: causal(q, k, v, mask=False), "no mask at all"),
    (lambda q, k, v: causal(q, k, v, after=True), "*after* the softmax"),
    (lambda q, k, v: causal(q, k, v, scale=False), "not divided by sqrt(E)"),
    (lambda q, k, v: causal(q, k, v, fill=-1e4), "finite number"),
    (lambda q, k, v: causal(q, k, v, fill=-1e9), "does not fit in float16"),
    (lambda q, k, v: causal(q, k, v, keep_float=True), "return the input's dtype"),
    (lambda q, k, v: causal(q, k, v) * float("nan"), "NaN"),
    (lambda q, k, v: causal(q, k, v).sum(-1), "output shape"),
    (stub, "stub"),
])
def test_causal_names_each_mistake(answer, words):
    verdict = ch05.check_causal_attention(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


def _with_package_causal_mask(f, q, k, v):
    L, S = q.shape[-2], k.shape[-2]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~f(L, S, align="bottom_right"),
                                                                            float("-inf"))
    return torch.softmax(scores.float(), -1).to(q.dtype) @ v


def _bottom_right(q, k):
    L, S = q.shape[-2], k.shape[-2]
    return torch.ones(L, S, dtype=torch.bool).tril(S - L)


@pytest.mark.parametrize("target, adapt, name", [
    (masks.causal_mask, _with_package_causal_mask, "causal_mask"),
    (attention.scaled_dot_product_attention,
     lambda f, q, k, v: f(q, k, v, attn_mask=_bottom_right(q, k))[0], "scaled_dot_product_attention"),
    (F.scaled_dot_product_attention, lambda f, q, k, v: f(q, k, v, attn_mask=_bottom_right(q, k)),
     "scaled_dot_product_attention"),
    (causal_lower_right,
     lambda f, q, k, v: F.softmax((q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).masked_fill(
         ~f(q.shape[-2], k.shape[-2])._materialize(), float("-inf")).float(), -1).to(q.dtype) @ v,
     "torch.nn.attention"),
])
def test_causal_refuses_every_route_to_a_ready_made_version(target, adapt, name):
    for route, answer in delegating_routes(target, adapt).items():
        verdict = ch05.check_causal_attention(answer)
        assert not verdict.passed and name in verdict.message, (route, verdict.message)


def test_causal_refuses_a_table_of_answers():
    replay = table_answer(ch05.check_causal_attention, causal)
    assert not ch05.check_causal_attention(replay).passed


# --- exercise 7: masks that are safe in any dtype -------------------------------------------------

def fill_min(scores, mask):
    return scores.masked_fill(~mask, torch.finfo(scores.dtype).min)


def where_min(scores, mask):
    return torch.where(mask, scores, torch.finfo(scores.dtype).min)


def in_place_min(scores, mask):  # modifies the scores it was given, and returns them
    return scores.masked_fill_(~mask, torch.finfo(scores.dtype).min)


def added_min(scores, mask):
    low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
    return scores + torch.where(mask, torch.zeros((), dtype=scores.dtype), low)


def indexed(scores, mask):  # boolean indexing does not broadcast the mask
    out = scores.clone()
    out[~mask] = torch.finfo(scores.dtype).min
    return out


def test_masked_scores_accepts_the_solution_and_other_styles():
    for answer in (fill_min, where_min, in_place_min):
        verdict = ch05.check_masked_scores(answer)
        assert verdict.passed, verdict.message


def test_masked_scores_reference_is_the_chapters_masked_fill_row():
    """The checker's reference on a fully masked row is uniform, what the chapter's table gives ``finfo.min``
    written with masked_fill, in every dtype, on its three fully masked rows."""
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for row in causal_masking.MASK_ROWS.values():
            scores = torch.tensor(row, dtype=dtype)
            keep = torch.zeros(4, dtype=torch.bool)
            weights = torch.softmax(fill_min(scores, keep), dim=-1)
            torch.testing.assert_close(weights, causal_masking._masked_softmax_row(scores, keep,
                                                                                   "finfo.min by masked_fill"))
            torch.testing.assert_close(weights.double(), torch.full((4,), 0.25, dtype=torch.float64))
    # and adding finfo.min in float16 gives the NaN and the one-hot row the chapter shows
    negative = torch.tensor(causal_masking.MASK_ROWS["negative"], dtype=torch.float16)
    one_positive = torch.tensor(causal_masking.MASK_ROWS["one positive"], dtype=torch.float16)
    nothing = torch.zeros(4, dtype=torch.bool)
    assert torch.isnan(torch.softmax(added_min(negative, nothing), -1)).all()
    assert torch.softmax(added_min(one_positive, nothing), -1).tolist() == [0.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize("answer, key, words", [
    (added_min, ("ch05.mask_dtype.added_min", "ch05.mask_dtype.added_twice"), "*added* torch.finfo(dtype).min"),
    (lambda s, m: torch.where(m, s, -1e9), ("ch05.mask_dtype.minus_1e9",), "-1e9 becomes -inf"),
    (lambda s, m: s + torch.where(m, 0.0, -1e9).to(s.dtype), ("ch05.mask_dtype.minus_1e9",), "-1e9"),
    (lambda s, m: s.masked_fill(~m, -1e9), ("ch05.mask_dtype.fill_overflows",), "does not fit in float16"),
    (lambda s, m: s.masked_fill(~m, torch.finfo(torch.float32).min), ("ch05.mask_dtype.fill_overflows",),
     "does not fit in"),
    (lambda s, m: s.masked_fill(~m, float("-inf")), ("ch05.mask_dtype.minus_inf",), "0/0 = NaN"),
    (lambda s, m: s.masked_fill(m, torch.finfo(s.dtype).min), ("ch05.mask_dtype.inverted",), "inverted"),
    (lambda s, m: s * m, ("ch05.mask_dtype.multiplied",), "multiplied the scores by the mask"),
    (indexed, ("ch05.mask_dtype.broadcast",), "broadcast"),
    (lambda s, m: fill_min(s.float(), m), ("ch05.mask_dtype.dtype",), "return the scores' dtype"),
    (lambda s, m: fill_min(s, m)[..., 0], ("ch05.mask_dtype.shape",), "return the scores' shape"),
    (lambda s, m: fill_min(s, m) * float("nan"), ("ch05.mask_dtype.nan",), "NaN"),
    (lambda s, m: fill_min(s, m) * 2, ("ch05.mask_dtype.nan",), "overflows to -inf"),  # 2 * finfo.min
    (lambda s, m: fill_min(s.flip(-1), m), ("ch05.mask_dtype.differs",), "differs from the masked softmax"),
    (stub, ("reader.stub",), "stub"),
])
def test_masked_scores_names_each_mistake(answer, key, words):
    verdict = ch05.check_masked_scores(answer)
    assert not verdict.passed and verdict.key in key and words in verdict.message, verdict.message


def test_masked_scores_names_two_added_masks_in_float32():
    """Adding finfo(float32).min, right with one mask in float32 (the first named case), is named on the second,
    float32 with two masks, every time."""
    verdicts = [ch05.check_masked_scores(added_min) for _ in range(3)]
    assert {v.key for v in verdicts} == {"ch05.mask_dtype.added_twice"}, [v.message for v in verdicts]
    assert "float32" in verdicts[0].message


def _masked_scores_by_log(f, scores, mask):
    return torch.log(f(scores.float(), mask.expand_as(scores))).clamp(min=-1e4).to(scores.dtype)


@pytest.mark.parametrize("target, adapt, name", [
    (attention.masked_softmax, _masked_scores_by_log, "masked_softmax"),
    (causal_masking._masked_softmax_row,
     lambda f, s, m: torch.log(f(s, m.expand_as(s), "finfo.min by masked_fill")), "_masked_softmax_row"),
])
def test_masked_scores_refuses_every_route_to_the_package(target, adapt, name):
    for route, answer in delegating_routes(target, adapt).items():
        verdict = ch05.check_masked_scores(answer)
        assert not verdict.passed and name in verdict.message, (route, verdict.message)


def test_masked_scores_refuses_a_table_of_answers():
    replay = table_answer(ch05.check_masked_scores, fill_min)
    assert not ch05.check_masked_scores(replay).passed


def test_every_checker_speaks_chinese():
    for check, answer in ((ch05.check_sliding_window_attention, stub), (ch05.check_causal_attention, causal),
                          (ch05.check_padding_fix, ch05.buggy_padded_attention),
                          (ch05.check_masked_scores, added_min)):
        verdict = check(answer, language="zh")
        assert verdict.language == "zh" and any("\u4e00" <= ch <= "\u9fff" for ch in verdict.message)


# --- a fill of -30 leaks where the real scores are lower (issue 40: accepted before) ------------------------

def window_fill(q, k, v, window, fill=-30.0):
    n = q.shape[-2]
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill((i - j).abs() >= window, fill)
    return torch.softmax(scores, dim=-1) @ v


def padding_fill(q, k, v, lengths, fill=-30.0):
    real = torch.arange(k.shape[-2])[None, :] < lengths[:, None]  # (B, S)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~real[:, None, None, :], fill)
    return torch.softmax(scores, dim=-1) @ v


@pytest.mark.parametrize("fill", [-30.0, -10.0, -50.0])
def test_a_finite_fill_is_named_where_the_scores_are_lower(fill):
    for check, answer in ((ch05.check_sliding_window_attention, window_fill), (ch05.check_padding_fix, padding_fill)):
        verdict = check(lambda *args: answer(*args, fill=fill))
        assert not verdict.passed and verdict.key.endswith("finite_fill"), verdict.message
        assert "finite number (such as -10 or -30)" in verdict.message and "-inf" in verdict.message
    for check, answer in ((ch05.check_sliding_window_attention, window_fill), (ch05.check_padding_fix, padding_fill)):
        assert check(lambda *args: answer(*args, fill=-1e9)).passed  # a fill below every score does no harm
