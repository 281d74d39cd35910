"""Chapter 4's exercise checkers: accept the reference solutions, reject typical mistakes by name,
and reject answers that delegate to the package's own implementation."""

import math

import torch

from helpers.exercises import ch04
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


def test_split_and_merge_accept_the_solutions_and_name_the_missing_transpose():
    assert ch04.check_split_heads(split).passed and ch04.check_merge_heads(merge).passed
    bad = ch04.check_split_heads(lambda x, h: x.view(x.shape[0], h, x.shape[1], x.shape[2] // h))
    assert not bad.passed and "without the transpose" in bad.message
    assert "(B, L, H, E)" in ch04.check_split_heads(lambda x, h: x.view(*x.shape[:2], h, x.shape[2] // h)).message
    assert "Transpose back" in ch04.check_merge_heads(lambda x: x.reshape(x.shape[0], x.shape[2], -1)).message


def test_multihead_checker_accepts_scratch_and_names_the_bugs():
    assert ch04.check_multihead_attention(mha).passed
    assert ch04.check_view_fix(mha).passed
    bug = ch04.check_view_fix(ch04.buggy_multihead_attention)
    assert not bug.passed and "without transpose" in bug.message and "mix positions" in bug.message


def test_answers_that_call_the_package_are_rejected_by_name():
    verdict = ch04.check_multihead_attention(lambda x, layer: layer(x)[0])
    assert not verdict.passed and "helpers.MultiHeadAttention" in verdict.message
    verdict = ch04.check_parameter_count(
        lambda d, h, hkv, bias: sum(
            p.numel() for p in MultiHeadAttention(d, h, num_kv_heads=hkv, bias=bias).parameters()
        ))
    assert not verdict.passed and "helpers.MultiHeadAttention" in verdict.message
    run = ht.train_filter(2, offsets=(1,), steps=20, num_test=50)
    verdict = ch04.check_head_ablation(ht.head_ablation, run, 0)
    assert not verdict.passed and "head_ablation" in verdict.message


def test_parameter_count_names_gqa_and_bias_mistakes():
    right = lambda d, h, hkv, bias: 2 * d * d + 2 * d * hkv * (d // h) + ((2 * d + 2 * hkv * (d // h)) if bias else 0)
    assert ch04.check_parameter_count(right).passed
    assert "key/value" in ch04.check_parameter_count(lambda d, h, hkv, bias: 4 * d * d + (4 * d if bias else 0)).message
    no_bias = lambda d, h, hkv, bias: 2 * d * d + 2 * d * hkv * (d // h)
    assert "biases are missing" in ch04.check_parameter_count(no_bias).message


def test_head_ablation_needs_a_prediction_and_names_a_mask_that_removes_nothing():
    run = ht.train_filter(2, offsets=(1,), steps=20, num_test=50)
    good = lambda r: [r.score(1 - torch.eye(r.num_heads)[h]) for h in range(r.num_heads)]
    assert not ch04.check_head_ablation(good, run, None).passed
    assert ch04.check_head_ablation(good, run, 1).passed
    assert "removed nothing" in ch04.check_head_ablation(lambda r: [r.score()] * r.num_heads, run, 0).message
