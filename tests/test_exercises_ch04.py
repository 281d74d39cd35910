"""Chapter 4's exercise checkers: accept the reference solutions and honest answers in other styles,
name each typical mistake, and refuse answers that delegate (to the package, by any route, or to
PyTorch's attention), tables of answers for fixed inputs, a bug hunt answered by a layer written anew,
and an ablation without a prediction recorded before it."""

import math

import pytest
import torch
import torch.nn.functional as F

import helpers
from exercise_routes import delegating_routes
from helpers.exercises import ch04, predictions
from helpers.exercises.predictions import predict
from helpers.experiments import heads as hd
from helpers.experiments import heads_training as ht
from helpers.multihead import MultiHeadAttention


def split(x, h):
    b, l, d = x.shape
    return x.view(b, l, h, d // h).transpose(1, 2)


def merge(x):
    b, h, l, e = x.shape
    return x.transpose(1, 2).reshape(b, l, h * e)


def mha(x, layer):
    q, k, v = (split(p(x), layer.num_heads) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(layer.head_dim), dim=-1)
    return layer.o_proj(merge(w @ v))


# --- exercises 1 and 2: split and merge -------------------------------------------------------------

def test_split_and_merge_accept_the_solutions_and_other_styles():
    assert ch04.check_split_heads(split).passed and ch04.check_merge_heads(merge).passed
    by_chunks = lambda x, h: torch.stack(x.chunk(h, dim=-1), dim=1)  # noqa: E731
    assert ch04.check_split_heads(by_chunks).passed
    by_cat = lambda x: torch.cat([x[:, i] for i in range(x.shape[1])], dim=-1)  # noqa: E731
    assert ch04.check_merge_heads(by_cat).passed


@pytest.mark.parametrize("answer, words", [
    (lambda x, h: x.view(x.shape[0], h, x.shape[1], x.shape[2] // h), "without the transpose"),
    (lambda x, h: x.view(*x.shape[:2], h, x.shape[2] // h), "(B, L, H, E)"),
    (lambda x, h: x.view(*x.shape[:2], x.shape[2] // h, h).permute(0, 3, 1, 2), "every H-th feature"),
    (lambda x, h: split(x, h).flip(1), "reverse order"),
    (lambda x, h: split(x, h)[:, :, :-1], "expected shape"),
    (lambda x, h: split(x, h).roll(1, dims=2), "not where they belong"),
])
def test_split_names_each_mistake(answer, words):
    verdict = ch04.check_split_heads(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


@pytest.mark.parametrize("answer, words", [
    (lambda x: x.reshape(x.shape[0], x.shape[2], -1), "Transpose back"),
    (lambda x: merge(x.flip(1)), "reverse order"),
    (lambda x: x.permute(0, 2, 3, 1).reshape(x.shape[0], x.shape[2], -1), "interleaved"),
    (lambda x: merge(x)[:, :, 1:], "expected shape"),
    (lambda x: merge(x).roll(1, dims=1), "wrong order"),
])
def test_merge_names_each_mistake(answer, words):
    verdict = ch04.check_merge_heads(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


def test_split_and_merge_refuse_the_package_by_every_route():
    # repeat_kv(t, 1) returns its input: a package function the answer leans on
    for route, answer in delegating_routes(helpers.repeat_kv, lambda f, x, h: f(split(x, h), 1)).items():
        verdict = ch04.check_split_heads(answer)
        assert not verdict.passed and "helpers.repeat_kv" in verdict.message, route
    for route, answer in delegating_routes(helpers.repeat_kv, lambda f, x: merge(f(x, 1))).items():
        verdict = ch04.check_merge_heads(answer)
        assert not verdict.passed and "helpers.repeat_kv" in verdict.message, route


def test_split_and_merge_draw_fresh_inputs_so_a_table_of_answers_fails():
    seen = []
    ch04.check_split_heads(lambda x, h: seen.append((x.clone(), h)) or split(x, h))
    table = {(tuple(x.shape), h): split(x, h) for x, h in seen}
    verdict = ch04.check_split_heads(lambda x, h: table.get((tuple(x.shape), h), split(x, h) * 0))
    assert not verdict.passed
    shapes = []
    for _ in range(4):
        ch04.check_merge_heads(lambda x: shapes.append(tuple(x.shape)) or merge(x))
    assert len(set(shapes)) > 1  # the shapes are drawn afresh too


# --- exercise 3: the whole layer ----------------------------------------------------------------------

def by_loops(x, layer):
    """An honest answer in another style: one head at a time, einsum, explicit weights."""
    b, l, d = x.shape
    h, e = layer.num_heads, d // layer.num_heads
    q = x @ layer.q_proj.weight.T + layer.q_proj.bias
    k = x @ layer.k_proj.weight.T + layer.k_proj.bias
    v = x @ layer.v_proj.weight.T + layer.v_proj.bias
    heads = []
    for i in range(h):
        cols = slice(i * e, (i + 1) * e)
        scores = torch.einsum("ble,bme->blm", q[..., cols], k[..., cols]) / e ** 0.5
        heads.append(F.softmax(scores, dim=-1) @ v[..., cols])
    return torch.cat(heads, dim=-1) @ layer.o_proj.weight.T + layer.o_proj.bias


def student(x, layer, split_view="right", merge_kind="right", scale="head", axis=-1, bias=(True,) * 4,
            transposed=True, output=True):
    """A student's layer, written with one of the typical mistakes."""
    b, l, d = x.shape
    h = layer.num_heads
    e = d // h
    projections = (layer.q_proj, layer.k_proj, layer.v_proj, layer.o_proj)

    def project(t, p, with_bias):
        w = p.weight.T if transposed else p.weight
        return t @ w + (p.bias if with_bias else 0)

    def cut(t):
        if split_view == "no_transpose":
            return t.view(b, h, l, e)
        if split_view == "transposed_wrong_view":
            return t.view(b, h, l, e).transpose(1, 2)
        return t.view(b, l, h, e).transpose(1, 2)

    q, k, v = (cut(project(x, p, keep)) for p, keep in zip(projections[:3], bias[:3]))
    scores = q @ k.transpose(-2, -1)
    scores = {"head": scores / math.sqrt(e), "model": scores / math.sqrt(d), "e": scores / e, "none": scores}[scale]
    weights = scores if axis is None else scores.softmax(dim=axis)
    out = weights @ v
    if merge_kind == "no_transpose":
        merged = out.reshape(b, l, d)
    elif merge_kind == "reversed":
        merged = torch.cat([out[:, i] for i in reversed(range(h))], dim=-1) if split_view == "right" else None
    elif merge_kind == "interleaved":
        merged = out.permute(0, 2, 3, 1).reshape(b, l, d)
    else:
        merged = out.transpose(1, 2).reshape(b, l, d)
    return project(merged, projections[3], bias[3]) if output else merged


def test_multihead_checker_accepts_the_solution_and_another_style():
    assert ch04.check_multihead_attention(mha).passed
    assert ch04.check_multihead_attention(by_loops).passed
    assert ch04.check_multihead_attention(student).passed


MISTAKES = [
    (dict(split_view="no_transpose", merge_kind="no_transpose"), "view(B, H, L, E) without transpose"),
    (dict(split_view="no_transpose"), "the merge transposes back, but the split"),
    (dict(merge_kind="no_transpose"), "the split is right, but the merge reshapes"),
    (dict(split_view="transposed_wrong_view", merge_kind="no_transpose"), "followed by transpose(1, 2)"),
    (dict(split_view="transposed_wrong_view"), "followed by transpose(1, 2)"),
    (dict(merge_kind="reversed"), "reverse order"),
    (dict(merge_kind="interleaved"), "interleaved"),
    (dict(scale="model"), "√d_model"),
    (dict(scale="e"), "divided by head_dim"),
    (dict(scale="none"), "not scaled"),
    (dict(axis=-2), "over the queries (dim=-2)"),
    (dict(axis=None), "without a softmax"),
    (dict(output=False), "o_proj is missing"),
    (dict(transposed=False), "x @ W instead of x @ W.T"),
    (dict(transposed=False, bias=(False,) * 4), "x @ W instead of x @ W.T"),
    (dict(bias=(False,) * 4), "biases of q_proj, v_proj, o_proj are missing"),
    (dict(bias=(True, True, True, False)), "biases of o_proj are missing"),
    (dict(bias=(False, True, False, True)), "biases of q_proj, v_proj are missing"),
]


@pytest.mark.parametrize("settings, words", MISTAKES, ids=[str(s) for s, _ in MISTAKES])
def test_multihead_checker_names_each_mistake(settings, words):
    verdict = ch04.check_multihead_attention(lambda x, layer: student(x, layer, **settings))
    assert not verdict.passed and words in verdict.message, verdict.message
    assert "embed_dim=" in verdict.message  # it says on which layer


def test_multihead_checker_names_a_wrong_shape_and_an_unknown_difference():
    verdict = ch04.check_multihead_attention(lambda x, layer: mha(x, layer)[:, :-1])
    assert not verdict.passed and "expected shape" in verdict.message
    verdict = ch04.check_multihead_attention(lambda x, layer: mha(x, layer) + 0.01)
    assert not verdict.passed and "max |diff| 1.00e-02" in verdict.message


def test_multihead_checker_refuses_the_package_by_every_route():
    for route, answer in delegating_routes(MultiHeadAttention.forward, lambda f, x, layer: f(layer, x)[0]).items():
        verdict = ch04.check_multihead_attention(answer)
        assert not verdict.passed and "helpers.MultiHeadAttention" in verdict.message, route
    for route, answer in delegating_routes(hd.per_head_reference, lambda f, x, layer: f(layer, x)[0]).items():
        verdict = ch04.check_multihead_attention(answer)
        assert not verdict.passed and "per_head_reference" in verdict.message, route
    saved = {}

    def saved_forward(x, layer):
        saved.setdefault("forward", MultiHeadAttention.forward)
        return saved["forward"](layer, x)[0]
    assert "helpers.MultiHeadAttention" in ch04.check_multihead_attention(saved_forward).message
    assert "helpers.MultiHeadAttention" in ch04.check_multihead_attention(lambda x, layer: layer(x)[0]).message


def with_pytorch_layer(x, layer):
    """nn.MultiheadAttention with the layer's weights copied in."""
    d = x.shape[-1]
    torch_layer = torch.nn.MultiheadAttention(d, layer.num_heads, batch_first=True)
    with torch.no_grad():
        torch_layer.in_proj_weight.copy_(torch.cat([layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight]))
        torch_layer.in_proj_bias.copy_(torch.cat([layer.q_proj.bias, layer.k_proj.bias, layer.v_proj.bias]))
        torch_layer.out_proj.weight.copy_(layer.o_proj.weight)
        torch_layer.out_proj.bias.copy_(layer.o_proj.bias)
    return torch_layer(x, x, x, need_weights=False)[0]


def with_fused_kernel(x, layer):
    q, k, v = (split(p(x), layer.num_heads) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    return layer.o_proj(merge(F.scaled_dot_product_attention(q, k, v)))


def with_functional_layer(x, layer):
    w = torch.cat([layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight])
    b = torch.cat([layer.q_proj.bias, layer.k_proj.bias, layer.v_proj.bias])
    t = x.transpose(0, 1)
    out, _ = F.multi_head_attention_forward(t, t, t, x.shape[-1], layer.num_heads, w, b, None, None, False, 0.0,
                                            layer.o_proj.weight, layer.o_proj.bias, need_weights=False)
    return out.transpose(0, 1)


@pytest.mark.parametrize("answer, name", [
    (with_pytorch_layer, "MultiheadAttention"),
    (with_fused_kernel, "scaled_dot_product_attention"),
    (with_functional_layer, "multi_head_attention_forward"),
])
def test_multihead_checker_refuses_pytorchs_attention(answer, name):
    verdict = ch04.check_multihead_attention(answer)
    assert not verdict.passed and name in verdict.message, verdict.message


def test_multihead_checker_draws_fresh_layers_so_a_table_of_answers_fails():
    seen = {}

    def spy(x, layer):
        seen[tuple(x.shape)] = mha(x, layer)
        return seen[tuple(x.shape)]
    assert ch04.check_multihead_attention(spy).passed
    verdict = ch04.check_multihead_attention(lambda x, layer: seen.get(tuple(x.shape), torch.zeros_like(x)))
    assert not verdict.passed


# --- exercise 4: the bug hunt -------------------------------------------------------------------------

def still_buggy(x, layer):
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    q = layer.q_proj(x).view(batch, heads, length, e)  # (B, H, L, E)?
    k = layer.k_proj(x).view(batch, heads, length, e)
    v = layer.v_proj(x).view(batch, heads, length, e)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = (weights @ v).reshape(batch, length, d_model)  # (B, L, D)
    return layer.o_proj(out)


def fixed(x, layer):
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    q = layer.q_proj(x).view(batch, length, heads, e).transpose(1, 2)  # (B, H, L, E)
    k = layer.k_proj(x).view(batch, length, heads, e).transpose(1, 2)
    v = layer.v_proj(x).view(batch, length, heads, e).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = (weights @ v).transpose(1, 2).reshape(batch, length, d_model)  # (B, L, D)
    return layer.o_proj(out)


def fixed_in_more_lines(x, layer):
    """Another style of the same fix: the wrong lines replaced by a few lines each."""
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    q = layer.q_proj(x).reshape(batch, length, heads, e)
    k = layer.k_proj(x).reshape(batch, length, heads, e)
    v = layer.v_proj(x).reshape(batch, length, heads, e)
    q, k, v = q.permute(0, 2, 1, 3), k.permute(0, 2, 1, 3), v.permute(0, 2, 1, 3)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = weights @ v
    out = out.transpose(1, 2).contiguous().view(batch, length, d_model)
    return layer.o_proj(out)


def split_fixed_only(x, layer):
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    q = layer.q_proj(x).view(batch, length, heads, e).transpose(1, 2)
    k = layer.k_proj(x).view(batch, length, heads, e).transpose(1, 2)
    v = layer.v_proj(x).view(batch, length, heads, e).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = (weights @ v).reshape(batch, length, d_model)  # (B, L, D)
    return layer.o_proj(out)


def merge_fixed_only(x, layer):
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    q = layer.q_proj(x).view(batch, heads, length, e)  # (B, H, L, E)?
    k = layer.k_proj(x).view(batch, heads, length, e)
    v = layer.v_proj(x).view(batch, heads, length, e)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = (weights @ v).transpose(1, 2).reshape(batch, length, d_model)
    return layer.o_proj(out)


def transpose_added_to_the_wrong_view(x, layer):
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    q = layer.q_proj(x).view(batch, heads, length, e).transpose(1, 2)
    k = layer.k_proj(x).view(batch, heads, length, e).transpose(1, 2)
    v = layer.v_proj(x).view(batch, heads, length, e).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = (weights @ v).reshape(batch, length, d_model)  # (B, L, D)
    return layer.o_proj(out)


def returns_early(x, layer):
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    if heads:
        return mha(x, layer)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # noqa: F821
    out = weights
    return layer.o_proj(out)


def fixed_with_chunk_and_stack(x, layer):
    """A third style: the heads cut with chunk along the feature axis and stacked, merged with cat."""
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads

    def split(t):  # (B, L, D) -> (B, H, L, E)
        return torch.stack(t.chunk(heads, dim=-1), dim=1)

    q, k, v = split(layer.q_proj(x)), split(layer.k_proj(x)), split(layer.v_proj(x))
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = torch.cat((weights @ v).unbind(1), dim=-1)  # (B, L, D): heads side by side
    return layer.o_proj(out)


def test_view_fix_accepts_the_fix_in_either_style():
    assert ch04.check_view_fix(fixed).passed
    assert ch04.check_view_fix(fixed_in_more_lines).passed
    assert ch04.check_view_fix(fixed_with_chunk_and_stack).passed


@pytest.mark.parametrize("answer, words", [
    (still_buggy, "still what the buggy function computes"),
    (split_fixed_only, "the split is fixed, the merge is not"),
    (merge_fixed_only, "the merge is fixed, the split is not"),
    (transpose_added_to_the_wrong_view, "followed by transpose(1, 2)"),
])
def test_view_fix_names_an_unfixed_or_half_fixed_function(answer, words):
    verdict = ch04.check_view_fix(answer)
    assert not verdict.passed and words in verdict.message, verdict.message
    assert "predict" not in verdict.message and "(B, L, H, E)" not in ch04.check_view_fix(still_buggy).message


def test_view_fix_refuses_a_layer_written_anew_and_an_early_return():
    for answer in (mha, by_loops):  # exercise 3's answer pasted: right output, but not the fix
        verdict = ch04.check_view_fix(answer)
        assert not verdict.passed and "not the buggy function fixed" in verdict.message
    verdict = ch04.check_view_fix(returns_early)
    assert not verdict.passed and "returns before" in verdict.message
    verdict = ch04.check_view_fix(lambda x, layer: mha(x, layer))
    assert not verdict.passed and "cannot read your function's source" in verdict.message


def test_view_fix_refuses_delegation():
    for route, answer in delegating_routes(MultiHeadAttention.forward, lambda f, x, layer: f(layer, x)[0]).items():
        verdict = ch04.check_view_fix(answer)
        assert not verdict.passed and "helpers.MultiHeadAttention" in verdict.message, route
    assert "scaled_dot_product_attention" in ch04.check_view_fix(with_fused_kernel).message
    assert "MultiheadAttention" in ch04.check_view_fix(with_pytorch_layer).message
    verdict = ch04.check_view_fix(ch04.buggy_view_attention)
    assert not verdict.passed and "buggy_view_attention" in verdict.message


# --- exercise 5: parameters ---------------------------------------------------------------------------

def right_count(d, h, hkv, bias):
    return 2 * d * d + 2 * d * hkv * (d // h) + ((2 * d + 2 * hkv * (d // h)) if bias else 0)


def test_parameter_count_accepts_the_formula_in_any_style():
    assert ch04.check_parameter_count(right_count).passed

    def by_layers(d, h, hkv, bias):
        shapes = [(d, d), (hkv * d // h, d), (hkv * d // h, d), (d, d)]
        return sum(o * i + (o if bias else 0) for o, i in shapes)
    assert ch04.check_parameter_count(by_layers).passed


@pytest.mark.parametrize("answer, words", [
    (lambda d, h, hkv, bias: 4 * d * d + (4 * d if bias else 0), "key/value heads they map"),
    (lambda d, h, hkv, bias: 2 * d * d + 2 * d * hkv * d + ((2 * d + 2 * hkv * d) if bias else 0), "head_dim ="),
    (lambda d, h, hkv, bias: right_count(d, h, hkv, False), "biases are missing"),
    (lambda d, h, hkv, bias: right_count(d, h, hkv, True), "bias=False the projections have no biases"),
    (lambda d, h, hkv, bias: right_count(d, h, hkv, bias) - d * d - (d if bias else 0), "o_proj"),
    (lambda d, h, hkv, bias: right_count(d, h, hkv, bias) * h, "multiplied by the number of heads"),
    (lambda d, h, hkv, bias: right_count(d, h, hkv, bias) + 1, "expected"),
    (lambda d, h, hkv, bias: right_count(d, h, hkv, bias) + 0.5, "a whole number"),
    (lambda d, h, hkv, bias: str(right_count(d, h, hkv, bias)), "a whole number"),
])
def test_parameter_count_names_each_mistake(answer, words):
    verdict = ch04.check_parameter_count(answer)
    assert not verdict.passed and words in verdict.message, verdict.message


def test_parameter_count_refuses_the_package_s_count_of_a_model_shape_by_name():
    from helpers.experiments import decoding

    def by_model_shape(d, h, hkv, bias):  # the package's own count (a property of a shape the answer builds)
        shape = decoding.ModelShape("mine", num_layers=1, embed_dim=d, num_heads=h, num_kv_heads=hkv,
                                    head_dim=d // h, ffn_dim=0, ffn_matrices=0, vocab_size=0)
        return shape.params_per_layer + ((2 * d + 2 * hkv * (d // h)) if bias else 0)  # right, with the biases
    assert by_model_shape(8, 2, 1, True) == right_count(8, 2, 1, True)
    verdict = ch04.check_parameter_count(by_model_shape)
    assert not verdict.passed and "ModelShape.params_per_layer" in verdict.message, verdict.message


def test_parameter_count_refuses_building_a_layer_by_any_route():
    count = lambda f, d, h, hkv, bias: sum(  # noqa: E731
        p.numel() for p in f(d, h, num_kv_heads=hkv, bias=bias).parameters())
    for route, answer in delegating_routes(MultiHeadAttention, count).items():
        verdict = ch04.check_parameter_count(answer)
        assert not verdict.passed and "helpers.MultiHeadAttention" in verdict.message, route

    def with_linear(d, h, hkv, bias):
        kv = hkv * d // h
        layers = [torch.nn.Linear(d, n, bias=bias) for n in (d, kv, kv, d)]
        return sum(p.numel() for layer in layers for p in layer.parameters())
    assert "torch.nn.Linear" in ch04.check_parameter_count(with_linear).message
    torch_layer = lambda d, h, hkv, bias: sum(  # noqa: E731
        p.numel() for p in torch.nn.MultiheadAttention(d, h, bias=bias).parameters())
    assert "MultiheadAttention" in ch04.check_parameter_count(torch_layer).message


def test_parameter_count_draws_fresh_layouts_so_a_table_of_answers_fails():
    seen = {}
    ch04.check_parameter_count(lambda *args: seen.setdefault(args, right_count(*args)))
    verdict = ch04.check_parameter_count(lambda *args: seen.get(args, 0))
    assert not verdict.passed
    assert len({args[1:3] for args in seen}) >= 3  # MHA, GQA and MQA layouts


# --- exercise 6: predict, then ablate -----------------------------------------------------------------

@pytest.fixture(scope="module")
def run():
    return ht.train_filter(3, offsets=(1,), steps=20, num_test=50)


@pytest.fixture(autouse=True)
def no_prediction():
    predictions._forget(ch04.ABLATION)
    yield
    predictions._forget(ch04.ABLATION)


def good(r):
    return [r.score(1 - torch.eye(r.num_heads)[h]) for h in range(r.num_heads)]


def test_head_ablation_refuses_to_run_without_a_recorded_prediction(run):
    verdict = ch04.check_head_ablation(good, run)
    assert not verdict.passed and 'predict("ch04.head_ablation", head)' in verdict.message
    assert "R²" not in verdict.message  # nothing shown
    predict(ch04.ABLATION, 0)
    assert not predictions.recorded(ch04.ABLATION).late  # the refusal revealed nothing
    predict(ch04.ABLATION, run.num_heads)
    verdict = ch04.check_head_ablation(good, run)
    assert not verdict.passed and "head index 0 .. 2" in verdict.message
    predict(ch04.ABLATION, "the first")
    assert not ch04.check_head_ablation(good, run).passed


def test_head_ablation_accepts_the_solution_and_compares_the_prediction(run):
    worst = min(range(run.num_heads), key=lambda h: good(run)[h])
    predict(ch04.ABLATION, worst)
    verdict = ch04.check_head_ablation(good, run)
    assert verdict.passed and "your prediction was right" in verdict.message
    predictions._forget(ch04.ABLATION)
    predict(ch04.ABLATION, (worst + 1) % run.num_heads)
    verdict = ch04.check_head_ablation(good, run)
    assert verdict.passed and f"the data say head {worst}" in verdict.message
    predict(ch04.ABLATION, worst)  # after the result was shown
    verdict = ch04.check_head_ablation(good, run)
    assert verdict.passed and "recorded after this result had been shown" in verdict.message
    assert "was right" not in verdict.message


def test_head_ablation_refuses_the_package_by_every_route(run):
    predict(ch04.ABLATION, 0)
    for target in (ht.head_ablation, ht.break_one_head):
        for route, answer in delegating_routes(target).items():
            verdict = ch04.check_head_ablation(answer, run)
            assert not verdict.passed and target.__name__ in verdict.message, route
    by_model = lambda r: [ht.r_squared(r.model(r.test_x, head_mask=1 - torch.eye(r.num_heads)[h])[0], r.test_y)  # noqa: E731
                          for h in range(r.num_heads)]
    assert "helpers" in ch04.check_head_ablation(by_model, run).message


def test_head_ablation_reruns_the_answer_so_a_table_or_constant_fails(run):
    predict(ch04.ABLATION, 0)
    table = good(run)  # the ablation of the lab's run, computed beforehand
    assert not ch04.check_head_ablation(lambda r: table, run).passed
    verdict = ch04.check_head_ablation(lambda r: [a + 0.01 for a in good(r)], run)
    assert not verdict.passed and "on the run the checker gave your function" in verdict.message
    verdict = ch04.check_head_ablation(lambda r: [0.5] * r.num_heads, run)
    assert not verdict.passed
    verdict = ch04.check_head_ablation(lambda r: [0.5] * 3, run)
    assert not verdict.passed
    sizes = []
    for _ in range(4):
        ch04.check_head_ablation(lambda r: sizes.append(r.num_heads) or good(r), run)
    assert len(set(sizes)) > 1  # the checker's own model has a fresh number of heads
    assert not ch04.check_head_ablation(good, "my run").passed


def test_head_ablation_refuses_a_run_built_by_hand_or_changed_after_training(run):
    import copy
    import dataclasses

    predict(ch04.ABLATION, 0)
    assert ch04.check_head_ablation(good, run).passed
    untrained = ht.FilterRun(run.num_heads, run.seed, run.offsets, run.r2, run.ceiling,
                             ht.FilterHeads(12, 4, 24, run.num_heads).eval(), run.test_x, run.test_y, run.filters)
    doctored = copy.deepcopy(run)
    with torch.no_grad():
        doctored.model.attention.o_proj.weight[:, :8] = 0  # head 0 silenced after training
    boasted = dataclasses.replace(run, r2=1.0)  # the same model, a better R² typed in
    for fake in (untrained, doctored, boasted):
        verdict = ch04.check_head_ablation(good, fake)
        assert not verdict.passed and "ht.train_filter" in verdict.message, verdict.message
        assert "R²" in verdict.message and "prediction" not in verdict.message
    assert "ht.train_filter" in ch04.check_head_ablation(good, doctored, language="zh").message
    assert ch04.check_head_ablation(good, run).passed  # the lab's own run, unchanged, still passes


def test_head_ablation_names_a_mask_that_removes_nothing_or_keeps_one(run):
    predict(ch04.ABLATION, 0)
    assert "removed nothing" in ch04.check_head_ablation(lambda r: [r.score()] * r.num_heads, run).message
    keep_one = lambda r: [r.score(torch.eye(r.num_heads)[h]) for h in range(r.num_heads)]  # noqa: E731
    assert "kept one head" in ch04.check_head_ablation(keep_one, run).message


# --- the student's answers (shared/reviews/labs-student.md) -----------------------------------------------

def test_a_fix_with_a_variable_renamed_is_accepted():
    def renamed(x, layer):  # e -> head_dim, every line else the buggy function's, the view lines fixed
        batch, length, d_model = x.shape
        heads = layer.num_heads
        head_dim = d_model // heads
        q = layer.q_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)
        k = layer.k_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)
        v = layer.v_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(head_dim), dim=-1)  # (B, H, L, L)
        out = (weights @ v).transpose(1, 2).reshape(batch, length, d_model)  # (B, L, D)
        return layer.o_proj(out)
    verdict = ch04.check_view_fix(renamed)
    assert verdict.passed, verdict.message


def test_a_count_returned_as_an_integral_float_is_accepted():
    verdict = ch04.check_parameter_count(lambda d, h, hkv, bias: float(right_count(d, h, hkv, bias)))
    assert verdict.passed, verdict.message


def test_a_layer_whose_split_heads_is_still_the_stub_names_the_stub():
    def split_heads(x, num_heads):
        raise NotImplementedError  # your code here

    def my_multihead(x, layer):
        q, k, v = (split_heads(p(x), layer.num_heads) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
        return layer.o_proj(merge(torch.softmax(q @ k.transpose(-2, -1) / layer.head_dim ** 0.5, -1) @ v))
    verdict = ch04.check_multihead_attention(my_multihead)
    assert not verdict.passed and "calls split_heads, which is still the stub" in verdict.message, verdict.message
    verdict = ch04.check_split_heads(split_heads)
    assert not verdict.passed and verdict.message.startswith("split_heads is still the stub"), verdict.message
    assert "split_heads" in ch04.check_multihead_attention(my_multihead, language="zh").message


def test_a_mask_that_keeps_one_head_says_what_the_mask_means(run):
    predict(ch04.ABLATION, 0)
    removing = lambda r: [r.score(torch.eye(r.num_heads)[h].bool()) for h in range(r.num_heads)]  # noqa: E731
    verdict = ch04.check_head_ablation(removing, run)
    assert not verdict.passed and "kept one head" in verdict.message and "True" in verdict.message
