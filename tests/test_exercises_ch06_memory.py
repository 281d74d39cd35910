"""Chapter 6.3–6.5's exercise checkers: accept the reference solutions (and honest answers in another
style), reject typical mistakes by name, reject answers that delegate to the package's own
implementation by any route (default argument, closure, partial, dict) or to a third-party one, and
reject tables of answers and runs that training did not produce."""

import math

import pytest
import torch
import torch.nn.functional as F

from exercise_routes import delegating_routes
from helpers import chunked
from helpers.attention import repeat_kv
from helpers.exercises import ch06_memory as ex
from helpers.exercises import predictions
from helpers.exercises.memory_position import cache_bytes as cache_bytes_module
from helpers.exercises.memory_position import decode, ranking
from helpers.experiments import position as pos
from helpers.memory import kv_cache_bytes
from helpers.multihead import KVCache, MultiHeadAttention
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb, rotate_half


def refused(verdict, *needles):
    assert not verdict.passed, verdict.message
    for needle in needles:
        assert needle in verdict.message, (needle, verdict.message)
    return verdict.message


# ---------------------------------------------------------------- exercise 1: a KV-cache decoding step


def make_step(*, append=True, position="right", causal_flag=False, tile=False, attend=None):
    """A decoding step from scratch, right by default, or with one of the classic mistakes."""

    def step(x_new, layer, cache, rope):
        b, _, d = x_new.shape
        h, hkv, e = layer.num_heads, layer.num_kv_heads, layer.head_dim
        q = layer.q_proj(x_new).view(b, 1, h, e).transpose(1, 2)
        k = layer.k_proj(x_new).view(b, 1, hkv, e).transpose(1, 2)
        v = layer.v_proj(x_new).view(b, 1, hkv, e).transpose(1, 2)
        where = {"right": cache.seq_len, "zero": 0, "after": cache.seq_len + 1}[position]
        cos, sin = rope(1, offset=where)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        if append:
            k_all, v_all = cache.update(k, v)
        else:
            k_all, v_all = torch.cat((cache.key, k), dim=2), torch.cat((cache.value, v), dim=2)
        groups = h // hkv
        if tile:
            k_all, v_all = k_all.repeat(1, groups, 1, 1), v_all.repeat(1, groups, 1, 1)
        else:
            k_all, v_all = k_all.repeat_interleave(groups, 1), v_all.repeat_interleave(groups, 1)
        out = (attend or F.scaled_dot_product_attention)(q, k_all, v_all, is_causal=causal_flag)
        return layer.o_proj(out.transpose(1, 2).reshape(b, 1, d))

    return step


def reference_step(x_new, layer, cache, rope):  # the lab's folded solution
    b, _, d = x_new.shape
    h, h_kv, e = layer.num_heads, layer.num_kv_heads, layer.head_dim
    q = layer.q_proj(x_new).view(b, 1, h, e).transpose(1, 2)
    k = layer.k_proj(x_new).view(b, 1, h_kv, e).transpose(1, 2)
    v = layer.v_proj(x_new).view(b, 1, h_kv, e).transpose(1, 2)
    cos, sin = rope(1, offset=cache.seq_len)
    q, k = apply_rotary_pos_emb(q, k, cos, sin)
    keys, values = cache.update(k, v)
    keys, values = repeat_kv(keys, h // h_kv), repeat_kv(values, h // h_kv)
    weights = torch.softmax(q @ keys.transpose(-2, -1) / math.sqrt(e), dim=-1)
    return layer.o_proj((weights @ values).transpose(1, 2).reshape(b, 1, d))


def test_decode_step_accepts_the_solution_and_other_styles():
    assert ex.check_decode_step(reference_step).passed
    assert ex.check_decode_step(make_step()).passed  # PyTorch's attention as a tool is fine here

    def einsum_attend(q, k, v, is_causal=False):
        w = torch.einsum("bhle,bhse->bhls", q, k).div(q.shape[-1] ** 0.5).softmax(-1)
        return torch.einsum("bhls,bhse->bhle", w, v)
    assert ex.check_decode_step(make_step(attend=einsum_attend)).passed


def test_decode_step_names_each_mistake():
    refused(ex.check_decode_step(make_step(append=False)), "never appended")
    refused(ex.check_decode_step(make_step(position="zero")), "position offset error", "position 0")
    refused(ex.check_decode_step(make_step(position="after")), "after appending")
    refused(ex.check_decode_step(make_step(causal_flag=True)), "causal mask", "top-left")
    refused(ex.check_decode_step(make_step(tile=True)), "h // (H / H_kv)")


def test_decode_step_tries_named_shapes_and_fresh_ones():
    named = [params["config"] for _, params in decode.CASES]
    assert any(c[4] == 0 for c in named) and any(c[1] != c[2] for c in named) and any(c[1] == c[2] for c in named)
    fresh = {tuple(decode._fresh(torch.Generator().manual_seed(seed))["config"]) for seed in range(6)}
    assert len(fresh) == 6 and all(c[1] != c[2] and c[4] > 0 for c in fresh)


def test_decode_step_rejects_the_stub_and_every_route_to_the_layer():
    def stub(x_new, layer, cache, rope):
        raise NotImplementedError

    assert "stub" in ex.check_decode_step(stub).message
    refused(ex.check_decode_step(lambda x, layer, cache, rope: layer(x, kv_cache=cache, rope=rope, is_causal=True)[0]),
            "helpers.MultiHeadAttention")
    adapt = lambda f, x, layer, cache, rope: f(layer, x, kv_cache=cache, rope=rope, is_causal=True)[0]  # noqa: E731
    for route, answer in delegating_routes(MultiHeadAttention.forward, adapt).items():
        refused(ex.check_decode_step(answer), "helpers.MultiHeadAttention", "yourself")


def test_decode_step_allows_only_what_the_solution_needs():
    from helpers.attention import scaled_dot_product_attention

    refused(ex.check_decode_step(make_step(attend=lambda q, k, v, is_causal: scaled_dot_product_attention(q, k, v)[0])),
            "helpers.scaled_dot_product_attention")

    def resets(x_new, layer, cache, rope):  # a KVCache method the step has no use for is refused
        KVCache().reset()
        return reference_step(x_new, layer, cache, rope)
    refused(ex.check_decode_step(resets), "helpers.KVCache")


# ---------------------------------------------------------------- exercise 2: the cache of a real model


def cache_bytes(layers, heads, kv_heads, head_dim, seq_len, batch, dtype):
    return 2 * layers * batch * kv_heads * seq_len * head_dim * dtype.itemsize


def test_cache_bytes_accepts_the_formula_and_names_each_mistake():
    verdict = ex.check_cache_bytes(cache_bytes)
    assert verdict.passed and "GiB" in verdict.message
    bits = lambda L, h, hkv, e, s, b, dt: 2 * L * b * hkv * s * e * torch.finfo(dt).bits // 8  # noqa: E731
    assert ex.check_cache_bytes(bits).passed  # another honest style
    mistakes = {
        "keys or values, not both": lambda *a: cache_bytes(*a) // 2,
        "one layer": lambda L, *a: cache_bytes(L, *a) // L,
        "query heads": lambda L, h, hkv, *a: cache_bytes(L, h, h, *a),
        "elements, not bytes": lambda *a: cache_bytes(*a) // a[-1].itemsize,
        "4 bytes per element": lambda *a: cache_bytes(*a) // a[-1].itemsize * 4,
        "2 bytes per element": lambda *a: cache_bytes(*a) // a[-1].itemsize * 2,
        "bits": lambda *a: cache_bytes(*a) * 8,
    }
    for name, wrong in mistakes.items():
        refused(ex.check_cache_bytes(wrong), name)
    refused(ex.check_cache_bytes(lambda *a: cache_bytes(*a) + 1), "expected")


def test_cache_bytes_refuses_a_table_of_the_published_models():
    table = {shape[1:]: cache_bytes(*shape[1:]) for shape in cache_bytes_module.SHAPES[:4]}
    refused(ex.check_cache_bytes(lambda *a: table.get(a, 0)), "made-up shapes", "not look them up")
    shapes = [cache_bytes_module._fresh(torch.Generator().manual_seed(seed))["shape"] for seed in range(8)]
    assert len({s[7] for s in shapes}) > 1 and len({s[1:7] for s in shapes}) == len(shapes)


def test_cache_bytes_rejects_the_package_function_by_every_route():
    refused(ex.check_cache_bytes(lambda L, h, hkv, e, s, b, dt: kv_cache_bytes(L, hkv, e, s, b, dt)), "kv_cache_bytes")
    assert not ex.check_cache_bytes(kv_cache_bytes).passed
    adapt = lambda f, L, h, hkv, e, s, b, dt: f(L, hkv, e, s, b, dt)  # noqa: E731
    for route, answer in delegating_routes(kv_cache_bytes, adapt).items():
        refused(ex.check_cache_bytes(answer), "kv_cache_bytes", "yourself")


# ---------------------------------------------------------------- exercise 3: RoPE from scratch


def my_rope(x, positions, *, pairing="half", step=2, sign=1.0):
    e = x.shape[-1]
    theta = 10000.0 ** (-step * torch.arange(e // 2, dtype=torch.float32) / e)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos(), sign * angle.sin()
    if pairing == "half":
        x1, x2 = x[..., : e // 2], x[..., e // 2:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)


def rope_with_matrices(x, positions):  # another honest style: an explicit 2 x 2 rotation per pair, in float64
    e = x.shape[-1]
    out = torch.empty_like(x, dtype=torch.float64)
    for i in range(e // 2):
        a = positions.double() * 10000.0 ** (-2 * i / e)
        x1, x2 = x[..., i].double(), x[..., i + e // 2].double()
        out[..., i], out[..., i + e // 2] = x1 * a.cos() - x2 * a.sin(), x2 * a.cos() + x1 * a.sin()
    return out


def test_rope_accepts_the_solution_and_names_each_mistake():
    verdict = ex.check_rope(my_rope)
    assert verdict.passed and "m − n" in verdict.message
    assert ex.check_rope(rope_with_matrices).passed
    refused(ex.check_rope(lambda x, p: my_rope(x, p, pairing="interleaved")), "interleaved")
    refused(ex.check_rope(lambda x, p: my_rope(x, p, sign=-1.0)), "wrong way")
    refused(ex.check_rope(lambda x, p: my_rope(x, p, step=1)), "wrong frequencies")
    refused(ex.check_rope(lambda x, p: x), "unrotated")
    refused(ex.check_rope(lambda x, p: my_rope(x, p * p)), "diagonal")  # not a function of m - n


def test_rope_refuses_a_table_of_answers_for_fixed_inputs():
    gen = torch.Generator().manual_seed(3)  # the inputs of the checker before it drew fresh ones
    x = torch.randn(2, 3, 5, 8, generator=gen)
    positions = torch.tensor([5, 0, 17, 3, 100])
    table = {(tuple(x.shape), tuple(positions.tolist())): my_rope(x, positions)}
    answer = lambda x, p: table.get((tuple(x.shape), tuple(p.tolist())), x)  # noqa: E731
    refused(ex.check_rope(answer))


def test_rope_rejects_the_package_functions_by_every_route():
    def with_package(x, positions):
        cos, sin = RotaryEmbedding(x.shape[-1])(positions)
        return apply_rotary_pos_emb(x, x, cos, sin)[0]

    def with_rotate_half(x, positions):
        e = x.shape[-1]
        angle = torch.cat([positions.float()[:, None] * 10000.0 ** (-torch.arange(0, e, 2) / e)] * 2, dim=-1)
        return x * angle.cos() + rotate_half(x) * angle.sin()

    for answer, name in ((with_package, "RotaryEmbedding"), (with_rotate_half, "rotate_half")):
        refused(ex.check_rope(answer), name)

    def rotate(table_fn, x, positions):
        angle = torch.cat([positions.float()[:, None] * 10000.0 ** (-torch.arange(0, x.shape[-1], 2) / x.shape[-1])]
                          * 2, dim=-1)
        return table_fn(x, x, angle.cos(), angle.sin())[0]
    for route, answer in delegating_routes(apply_rotary_pos_emb, rotate).items():
        refused(ex.check_rope(answer), "apply_rotary_pos_emb", "yourself")


def test_rope_decode_and_fix_reject_transformers_rotary_code():
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama as llama

    def with_llama(x, positions):
        config = LlamaConfig(hidden_size=x.shape[-1], num_attention_heads=1, head_dim=x.shape[-1])
        cos, sin = llama.LlamaRotaryEmbedding(config)(x, positions[None])
        return llama.apply_rotary_pos_emb(x, x, cos, sin)[0]

    refused(ex.check_rope(with_llama), "transformers")
    refused(ex.check_rope(lambda x, p: llama.rotate_half(x) * 0 + my_rope(x, p)), "transformers")


    def decode_with_llama(x_new, layer, cache, rope):  # the decode step, rotated by transformers' code
        b, _, d = x_new.shape
        h, h_kv, e = layer.num_heads, layer.num_kv_heads, layer.head_dim
        q = layer.q_proj(x_new).view(b, 1, h, e).transpose(1, 2)
        k = layer.k_proj(x_new).view(b, 1, h_kv, e).transpose(1, 2)
        v = layer.v_proj(x_new).view(b, 1, h_kv, e).transpose(1, 2)
        cos, sin = rope(1, offset=cache.seq_len)
        q, k = llama.apply_rotary_pos_emb(q, k, cos, sin)
        keys, values = cache.update(k, v)
        out = F.scaled_dot_product_attention(q, repeat_kv(keys, h // h_kv), repeat_kv(values, h // h_kv))
        return layer.o_proj(out.transpose(1, 2).reshape(b, 1, d))
    refused(ex.check_decode_step(decode_with_llama), "transformers")

    def fix_with_llama(x, layer, rope):
        b, length, d = x.shape
        h, e = layer.num_heads, layer.head_dim
        q, k, v = (p(x).view(b, length, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
        cos, sin = rope(length)
        q, k = llama.apply_rotary_pos_emb(q, k, cos, sin)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return layer.o_proj(out.transpose(1, 2).reshape(b, length, d))
    refused(ex.check_rope_fix(fix_with_llama), "transformers")


# ---------------------------------------------------------------- exercise 4: the bug hunt


def quarter_turn(t):  # the buggy function's turn of neighbours (2i, 2i + 1), copied as a student would
    return torch.stack((-t[..., 1::2], t[..., 0::2]), dim=-1).flatten(-2)


def rope_attention(x, layer, rope, *, neighbours=False, rotate_v=False, causal=True, interleaved=False, sides="qk"):
    b, l, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q, k, v = (p(x).view(b, l, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    cos, sin = (t[:, None] for t in rope(l))
    if interleaved:
        cos, sin = (t[..., : e // 2].repeat_interleave(2, -1) for t in (cos, sin))
    turn = quarter_turn if neighbours or interleaved else rotate_half
    q = q * cos + turn(q) * sin if "q" in sides else q
    k = k * cos + turn(k) * sin if "k" in sides else k
    if rotate_v:
        v = v * cos + turn(v) * sin
    scores = q @ k.transpose(-2, -1) / math.sqrt(e)
    if causal:
        scores = scores.masked_fill(~torch.ones(l, l, dtype=torch.bool).tril(), float("-inf"))
    return layer.o_proj((torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, l, d))


def fixed_with_apply(x, layer, rope):  # the lab's folded solution
    b, length, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q, k, v = (p(x).view(b, length, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    cos, sin = rope(length)
    q, k = apply_rotary_pos_emb(q, k, cos, sin)
    scores = q @ k.transpose(-2, -1) / math.sqrt(e)
    weights = torch.softmax(scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("-inf")),
                            dim=-1)
    return layer.o_proj((weights @ v).transpose(1, 2).reshape(b, length, d))


def test_rope_fix_accepts_the_fix_and_says_which_bug_is_left():
    assert ex.check_rope_fix(fixed_with_apply).passed
    assert ex.check_rope_fix(rope_attention).passed
    refused(ex.check_rope_fix(ex.buggy_rope_attention), "both bugs")
    refused(ex.check_rope_fix(lambda x, layer, rope: rope_attention(x, layer, rope, neighbours=True)),
            "V is fixed", "pairing")
    refused(ex.check_rope_fix(lambda x, layer, rope: rope_attention(x, layer, rope, rotate_v=True)),
            "pairing is fixed", "V is still rotated")
    refused(ex.check_rope_fix(lambda x, layer, rope: rope_attention(x, layer, rope, causal=False)), "causal mask")
    refused(ex.check_rope_fix(lambda x, layer, rope: rope_attention(x, layer, rope, interleaved=True)),
            "interleaved", "not the convention")
    for side, unrotated in (("q", "k"), ("k", "q")):
        refused(ex.check_rope_fix(lambda x, layer, rope, s=side: rope_attention(x, layer, rope, sides=s)),
                f"but {unrotated} is not rotated")


def test_rope_fix_rejects_the_layer_by_every_route():
    refused(ex.check_rope_fix(lambda x, layer, rope: layer(x, is_causal=True, rope=rope)[0]),
            "helpers.MultiHeadAttention")
    adapt = lambda f, x, layer, rope: f(layer, x, is_causal=True, rope=rope)[0]  # noqa: E731
    for route, answer in delegating_routes(MultiHeadAttention.forward, adapt).items():
        refused(ex.check_rope_fix(answer), "helpers.MultiHeadAttention", "yourself")


# ---------------------------------------------------------------- exercise 5: extrapolation ranking

SETTINGS = dict(steps=3, train_len=6, test_len=20, num_test=8)


@pytest.fixture(scope="module")
def runs():
    return pos.extrapolation_runs(("none", "alibi"), seeds=(0, 1), **SETTINGS)


@pytest.fixture(autouse=True)
def no_predictions():
    predictions._forget()
    yield
    predictions._forget()


def far_accuracy(runs):
    out = {}
    for name, group in runs.items():
        values = [sum(r.per_position[2 * r.train_len - 1:]) / len(r.per_position[2 * r.train_len - 1:])
                  for r in group]
        out[name] = sum(values) / len(values)
    return out


def test_extrapolation_ranking_needs_a_prediction_recorded_before(runs):
    refused(ex.check_extrapolation_ranking(far_accuracy, runs, SETTINGS), "first record your prediction")
    ex.predict(ex.RANKING, ["alibi"])
    refused(ex.check_extrapolation_ranking(far_accuracy, runs, SETTINGS), "each of")
    measured = sorted(runs, key=lambda n: -ranking.far_accuracy(runs)[n])
    ex.predict(ex.RANKING, measured)
    verdict = ex.check_extrapolation_ranking(far_accuracy, runs, SETTINGS)
    assert verdict.passed and "was right" in verdict.message and "You placed 2 of 2" in verdict.message
    ex.predict(ex.RANKING, measured[::-1])  # recorded after the result was shown
    verdict = ex.check_extrapolation_ranking(far_accuracy, runs, SETTINGS)
    assert verdict.passed and "does not count as a prediction" in verdict.message
    predictions._forget()
    ex.predict(ex.RANKING, measured[::-1])
    verdict = ex.check_extrapolation_ranking(far_accuracy, runs, SETTINGS)
    assert verdict.passed and "was wrong" in verdict.message and "You placed 0 of 2" in verdict.message


def test_extrapolation_ranking_shows_nothing_before_the_accuracy_is_right(runs):
    ex.predict(ex.RANKING, ["none", "alibi"])
    refused(ex.check_extrapolation_ranking(lambda runs: {"none": 1.0, "alibi": 0.5}, runs, SETTINGS))
    assert predictions.recorded(ex.RANKING).late is False  # nothing was revealed


def test_extrapolation_ranking_names_each_mistake(runs):
    ex.predict(ex.RANKING, ["alibi", "none"])

    def mean_from(first):
        return lambda runs: {n: sum(sum(r.per_position[first(r.train_len):]) / len(r.per_position[first(r.train_len):])
                                    for r in g) / len(g) for n, g in runs.items()}
    refused(ex.check_extrapolation_ranking(mean_from(lambda t: 2 * t), runs, SETTINGS), "off by one")
    refused(ex.check_extrapolation_ranking(mean_from(lambda t: 2 * t - 2), runs, SETTINGS), "off by one")
    refused(ex.check_extrapolation_ranking(mean_from(lambda t: t - 1), runs, SETTINGS), "started at train_len")
    refused(ex.check_extrapolation_ranking(mean_from(lambda t: 0), runs, SETTINGS), "every position")
    refused(ex.check_extrapolation_ranking(lambda runs: far_accuracy({n: g[:1] for n, g in runs.items()}), runs,
                                           SETTINGS), "first seed")


def test_extrapolation_ranking_refuses_precomputed_fabricated_and_delegated_answers(runs):
    ex.predict(ex.RANKING, ["alibi", "none"])
    precomputed = far_accuracy(runs)
    refused(ex.check_extrapolation_ranking(lambda _: dict(precomputed), runs, SETTINGS), "made up")
    fabricated = {n: [pos.ExtrapolationRun(r.positional, r.seed, r.train_len, [1.0 if n == "alibi" else 0.0]
                                           * len(r.per_position)) for r in g] for n, g in runs.items()}
    refused(ex.check_extrapolation_ranking(far_accuracy, fabricated, SETTINGS), "not produced")
    refused(ex.check_extrapolation_ranking(far_accuracy, runs, dict(SETTINGS, steps=4)), "not produced")
    refused(ex.check_extrapolation_ranking(far_accuracy, runs, dict(SETTINGS, seeds=(0,))), "settings")
    refused(ex.check_extrapolation_ranking(far_accuracy, {"none": [1, 2]}, SETTINGS), "ExtrapolationRun")
    delegated = lambda runs: {n: pos.mean_spread([r.accuracy(2 * r.train_len, len(r.per_position) + 1)  # noqa: E731
                                                  for r in g])[0] for n, g in runs.items()}
    refused(ex.check_extrapolation_ranking(delegated, runs, SETTINGS), "accuracy", "yourself")
    adapt = lambda f, runs: {n: sum(f(r, 2 * r.train_len, len(r.per_position) + 1) for r in g) / len(g)  # noqa: E731
                             for n, g in runs.items()}
    for route, answer in delegating_routes(pos.ExtrapolationRun.accuracy, adapt).items():
        refused(ex.check_extrapolation_ranking(answer, runs, SETTINGS), "accuracy", "yourself")


# ---------------------------------------------------------------- exercise 6: the online softmax


def online_attention(q, k, v, block_size, *, rescale_sum=True, rescale_out=True, subtract_max=True,
                     max_start=float("-inf"), per_block=False, drop_tail=False, scaled=True, keep=False):
    """The online softmax, right by default (the lab's folded solution), or with one mistake."""
    q = q / math.sqrt(q.shape[-1]) if scaled else q
    m = torch.full(q.shape[:-1] + (1,), max_start)
    total = torch.zeros(q.shape[:-1] + (1,))
    out = torch.zeros(q.shape[:-1] + (v.shape[-1],))
    stop = k.shape[-2] - k.shape[-2] % block_size if drop_tail else k.shape[-2]
    kept = []
    for start in range(0, stop, block_size):
        s = q @ k[..., start:start + block_size, :].transpose(-2, -1)  # (B, H, L, b)
        if keep:
            kept.append(s)
        vb = v[..., start:start + block_size, :]
        if per_block:
            out = out + torch.softmax(s, -1) @ vb
            continue
        new = torch.maximum(m, s.amax(-1, keepdim=True)) if subtract_max else torch.zeros_like(m)
        alpha = torch.exp(m - new)
        p = torch.exp(s - new)
        total = (total * alpha if rescale_sum else total) + p.sum(-1, keepdim=True)
        out = (out * alpha if rescale_out else out) + p @ vb
        m = new
    return out if per_block else out / total


def online_normalised(q, k, v, block_size):  # another honest style: split, einsum, output kept normalised every step
    q = q * q.shape[-1] ** -0.5
    m = acc = total = None
    for kb, vb in zip(k.split(block_size, dim=-2), v.split(block_size, dim=-2)):
        s = torch.einsum("bhle,bhse->bhls", q, kb)
        new = s.amax(-1, keepdim=True) if m is None else torch.maximum(m, s.amax(-1, keepdim=True))
        p = (s - new).exp()
        if m is None:
            total = p.sum(-1, keepdim=True)
            acc = torch.einsum("bhls,bhse->bhle", p, vb) / total
        else:
            old = total * (m - new).exp()
            total = old + p.sum(-1, keepdim=True)
            acc = (acc * old + torch.einsum("bhls,bhse->bhle", p, vb)) / total
        m = new
    return acc


def test_online_softmax_accepts_the_solution_and_other_styles():
    verdict = ex.check_online_softmax(online_attention)
    assert verdict.passed and "KiB" in verdict.message
    assert ex.check_online_softmax(online_normalised).passed


def test_online_softmax_names_each_mistake():
    cases = {
        "multiply the running sum and the running output": dict(rescale_sum=False, rescale_out=False),
        "but not the running sum": dict(rescale_sum=False),
        "but not the running output": dict(rescale_out=False),
        "a softmax per block": dict(per_block=True),
        "the last, shorter block": dict(drop_tail=True),
        "not scaled": dict(scaled=False),
        "overflow": dict(subtract_max=False),
        "starts at 0": dict(max_start=0.0),
    }
    for needle, mistake in cases.items():
        refused(ex.check_online_softmax(lambda q, k, v, b, m=mistake: online_attention(q, k, v, b, **m)), needle)


def test_online_softmax_measures_memory():
    dense = lambda q, k, v, b: torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, -1) @ v  # noqa: E731
    refused(ex.check_online_softmax(dense), "scores of a head", "never to hold them")
    refused(ex.check_online_softmax(lambda q, k, v, b: online_attention(q, k, v, b, keep=True)), "peak")


def test_online_softmax_rejects_the_package_and_pytorch_by_every_route():
    refused(ex.check_online_softmax(lambda q, k, v, b: F.scaled_dot_product_attention(q, k, v)),
            "scaled_dot_product_attention")
    for target in (chunked.online_softmax_attention, chunked.chunked_attention):
        adapt = lambda f, q, k, v, b: f(q, k, v, chunk_size=b)  # noqa: E731
        for route, answer in delegating_routes(target, adapt).items():
            refused(ex.check_online_softmax(answer), target.__name__, "yourself")

    def stub(q, k, v, block_size):
        raise NotImplementedError
    assert "stub" in ex.check_online_softmax(stub).message


def test_every_message_of_the_lab_has_chinese():
    from helpers.exercises.catalogue.ch06_memory import MESSAGES

    assert all(set(texts) == {"en", "zh"} and all(texts.values()) for texts in MESSAGES.values())
    assert "ch06_memory.online.no_max" in MESSAGES and "ch06_memory.ranking.late" in MESSAGES
    zh = ex.check_online_softmax(lambda q, k, v, b: online_attention(q, k, v, b, subtract_max=False), language="zh")
    assert not zh.passed and "溢出" in zh.message
