"""Chapter 6.3–6.5's exercise checkers: accept the reference solutions, reject typical mistakes by
name, and reject answers that delegate to the package's own implementation."""

import math

import torch

from helpers.exercises import ch06_memory as ex
from helpers.experiments import position as pos
from helpers.memory import kv_cache_bytes
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb, rotate_half

# ---------------------------------------------------------------- exercise 1: a KV-cache decoding step


def make_step(*, append=True, position="right", causal_flag=False, tile=False):
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
        out = torch.nn.functional.scaled_dot_product_attention(q, k_all, v_all, is_causal=causal_flag)
        return layer.o_proj(out.transpose(1, 2).reshape(b, 1, d))

    return step


def test_decode_step_accepts_the_solution_and_names_each_mistake():
    assert ex.check_decode_step(make_step()).passed
    verdict = ex.check_decode_step(make_step(append=False))
    assert not verdict.passed and "never appended" in verdict.message
    verdict = ex.check_decode_step(make_step(position="zero"))
    assert not verdict.passed and "position offset error" in verdict.message and "position 0" in verdict.message
    verdict = ex.check_decode_step(make_step(position="after"))
    assert not verdict.passed and "after appending" in verdict.message
    verdict = ex.check_decode_step(make_step(causal_flag=True))
    assert not verdict.passed and "causal mask" in verdict.message and "top-left" in verdict.message
    verdict = ex.check_decode_step(make_step(tile=True))
    assert not verdict.passed and "h // (H / H_kv)" in verdict.message


def test_decode_step_rejects_the_stub_and_the_layer_itself():
    def stub(x_new, layer, cache, rope):
        raise NotImplementedError

    assert "stub" in ex.check_decode_step(stub).message
    verdict = ex.check_decode_step(lambda x, layer, cache, rope: layer(x, kv_cache=cache, rope=rope, is_causal=True)[0])
    assert not verdict.passed and "helpers.MultiHeadAttention" in verdict.message


# ---------------------------------------------------------------- exercise 2: the cache of a real model


def cache_bytes(layers, heads, kv_heads, head_dim, seq_len, batch, dtype):
    return 2 * layers * batch * kv_heads * seq_len * head_dim * dtype.itemsize


def test_cache_bytes_accepts_the_formula_and_names_each_mistake():
    verdict = ex.check_cache_bytes(cache_bytes)
    assert verdict.passed and "GiB" in verdict.message
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
        verdict = ex.check_cache_bytes(wrong)
        assert not verdict.passed and name in verdict.message, (name, verdict.message)
    assert "expected" in ex.check_cache_bytes(lambda *a: cache_bytes(*a) + 1).message


def test_cache_bytes_rejects_the_package_function():
    verdict = ex.check_cache_bytes(lambda L, h, hkv, e, s, b, dt: kv_cache_bytes(L, hkv, e, s, b, dt))
    assert not verdict.passed and "kv_cache_bytes" in verdict.message
    assert not ex.check_cache_bytes(kv_cache_bytes).passed


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


def test_rope_accepts_the_solution_and_names_each_mistake():
    verdict = ex.check_rope(my_rope)
    assert verdict.passed and "m − n" in verdict.message
    assert "interleaved" in ex.check_rope(lambda x, p: my_rope(x, p, pairing="interleaved")).message
    assert "wrong way" in ex.check_rope(lambda x, p: my_rope(x, p, sign=-1.0)).message
    assert "wrong frequencies" in ex.check_rope(lambda x, p: my_rope(x, p, step=1)).message
    assert "unrotated" in ex.check_rope(lambda x, p: x).message
    squared = ex.check_rope(lambda x, p: my_rope(x, p * p))  # not a function of m - n
    assert not squared.passed and "diagonal" in squared.message


def test_rope_rejects_the_package_functions():
    def with_package(x, positions):
        cos, sin = RotaryEmbedding(x.shape[-1])(positions)
        return apply_rotary_pos_emb(x, x, cos, sin)[0]

    def with_rotate_half(x, positions):
        e = x.shape[-1]
        angle = torch.cat([positions.float()[:, None] * 10000.0 ** (-torch.arange(0, e, 2) / e)] * 2, dim=-1)
        return x * angle.cos() + rotate_half(x) * angle.sin()

    for answer, name in ((with_package, "RotaryEmbedding"), (with_rotate_half, "rotate_half")):
        verdict = ex.check_rope(answer)
        assert not verdict.passed and name in verdict.message, verdict.message


# ---------------------------------------------------------------- exercise 4: the bug hunt


def rope_attention(x, layer, rope, *, neighbours=False, rotate_v=False, causal=True):
    b, l, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q, k, v = (p(x).view(b, l, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    cos, sin = (t[:, None] for t in rope(l))
    turn = ex._rotate_neighbours if neighbours else rotate_half
    q, k = (t * cos + turn(t) * sin for t in (q, k))
    if rotate_v:
        v = v * cos + turn(v) * sin
    scores = q @ k.transpose(-2, -1) / math.sqrt(e)
    if causal:
        scores = scores.masked_fill(~torch.ones(l, l, dtype=torch.bool).tril(), float("-inf"))
    return layer.o_proj((torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, l, d))


def test_rope_fix_accepts_the_fix_and_says_which_bug_is_left():
    assert ex.check_rope_fix(rope_attention).passed
    both = ex.check_rope_fix(ex.buggy_rope_attention)
    assert not both.passed and "both bugs" in both.message
    only_pairing = ex.check_rope_fix(lambda x, layer, rope: rope_attention(x, layer, rope, neighbours=True))
    assert not only_pairing.passed and "V is fixed" in only_pairing.message and "pairing" in only_pairing.message
    only_v = ex.check_rope_fix(lambda x, layer, rope: rope_attention(x, layer, rope, rotate_v=True))
    assert not only_v.passed and "pairing is fixed" in only_v.message and "V is still rotated" in only_v.message
    no_mask = ex.check_rope_fix(lambda x, layer, rope: rope_attention(x, layer, rope, causal=False))
    assert not no_mask.passed and "causal mask" in no_mask.message


def test_rope_fix_rejects_the_layer_itself():
    verdict = ex.check_rope_fix(lambda x, layer, rope: layer(x, is_causal=True, rope=rope)[0])
    assert not verdict.passed and "helpers.MultiHeadAttention" in verdict.message


# ---------------------------------------------------------------- exercise 5: extrapolation ranking


def far_accuracy(runs):
    out = {}
    for name, group in runs.items():
        values = [sum(r.per_position[2 * r.train_len - 1:]) / len(r.per_position[2 * r.train_len - 1:])
                  for r in group]
        out[name] = sum(values) / len(values)
    return out


def test_extrapolation_ranking_needs_a_prediction_checks_the_values_and_rejects_delegation():
    runs = pos.extrapolation_runs(("none", "alibi"), seeds=(0, 1), steps=3, train_len=6, test_len=20, num_test=8)
    assert "first write your prediction" in ex.check_extrapolation_ranking(far_accuracy, runs, None).message
    assert "first write your prediction" in ex.check_extrapolation_ranking(far_accuracy, runs, ["alibi"]).message
    verdict = ex.check_extrapolation_ranking(far_accuracy, runs, ["alibi", "none"])
    assert verdict.passed and "You placed" in verdict.message
    off = ex.check_extrapolation_ranking(
        lambda runs: {n: sum(sum(r.per_position[2 * r.train_len:]) / len(r.per_position[2 * r.train_len:])
                             for r in g) / len(g) for n, g in runs.items()}, runs, ["alibi", "none"])
    assert not off.passed and "off by one" in off.message
    first = ex.check_extrapolation_ranking(lambda runs: far_accuracy({n: g[:1] for n, g in runs.items()}), runs,
                                           ["none", "alibi"])
    assert not first.passed and "first seed" in first.message
    delegated = ex.check_extrapolation_ranking(
        lambda runs: {n: pos.mean_spread([r.accuracy(2 * r.train_len, 20) for r in g])[0] for n, g in runs.items()},
        runs, ["none", "alibi"])
    assert not delegated.passed and "accuracy" in delegated.message and "yourself" in delegated.message
