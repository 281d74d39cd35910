"""The same answer gets the same verdict every time (issue 40): the checkers try named cases seeded through
helpers.seeding, and a fresh case only after them, so a right answer and each typical mistake get the same verdict,
the same message and the same numbers at every call; a fresh draw's seed is in the verdict that it decides."""

from __future__ import annotations

import math

import pytest
import torch

from helpers.exercises import ch01, ch02, ch03, ch04, ch05, ch06_long_context, ch06_memory, ch06_training

TIMED = {"speedup", "your_ms", "loop_ms"}
"""Fields that are measurements of time, which no seed fixes."""


def _split(x, h):
    b, length, d = x.shape
    return x.view(b, length, h, d // h).transpose(1, 2)


def _mha(x, layer):
    q, k, v = (_split(p(x), layer.num_heads) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(layer.head_dim), -1)
    return layer.o_proj((w @ v).transpose(1, 2).reshape(x.shape))


def _cosine(q, k):
    return (q / q.norm(dim=-1, keepdim=True).clamp_min(1e-8)) @ (k / k.norm(dim=-1, keepdim=True).clamp_min(1e-8)).T


def _window(q, k, v, w, fill=float("-inf")):
    i, j = torch.arange(q.shape[-2])[:, None], torch.arange(q.shape[-2])[None, :]
    s = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill((i - j).abs() >= w, fill)
    return torch.softmax(s, -1) @ v


def _entropy(scores, mask, base=math.e):
    p = torch.softmax(scores.float().masked_fill(~mask[:, None, None, :], float("-inf")), -1)
    return -torch.special.xlogy(p, p).sum(-1).mean(-1) / math.log(base)


CASES = [  # (checker, a right answer, a wrong one)
    (ch01.check_additive_scores, lambda q, k, wq, wk, v: torch.tanh((q @ wq.T)[:, None, :] + k @ wk.T) @ v,
     lambda q, k, wq, wk, v: ((q @ wq.T)[:, None, :] + k @ wk.T) @ v),
    (ch01.check_masked_softmax,
     lambda s, n: torch.softmax(s.masked_fill(torch.arange(s.shape[-1]) >= n[:, None], -math.inf), -1).nan_to_num(0),
     lambda s, n: torch.softmax(s.masked_fill(torch.arange(s.shape[-1]) >= n[:, None], -30.0), -1)),
    (ch02.check_dot_scores, lambda q, k: q @ k.transpose(-2, -1), lambda q, k: q @ k.transpose(-2, -1) / 2),
    (ch02.check_dot_flops, lambda L, S, E: 2 * L * S * E, lambda L, S, E: L * S * E),
    (ch02.check_euclidean_scores, lambda q, k: -torch.cdist(q, k) ** 2, lambda q, k: -torch.cdist(q, k)),
    (ch02.check_vectorised_cosine, _cosine, lambda q, k: q @ k.T),
    (ch03.check_softmax_jacobian, lambda z: torch.diag_embed(torch.softmax(z, -1)) - torch.softmax(z, -1)[
        ..., :, None] * torch.softmax(z, -1)[..., None, :], lambda z: torch.diag_embed(torch.softmax(z, -1))),
    (ch03.check_attention_scale, lambda d, h, kv: (d // h) ** -0.5, lambda d, h, kv: d ** -0.5),
    (ch04.check_split_heads, _split, lambda x, h: x.view(x.shape[0], h, x.shape[1], x.shape[2] // h)),
    (ch04.check_multihead_attention, _mha, lambda x, layer: _mha(x, layer) + 0.01),
    (ch04.check_parameter_count, lambda d, h, kv, b: 2 * d * d + 2 * d * kv * (d // h) + (
        (2 * d + 2 * kv * (d // h)) if b else 0), lambda d, h, kv, b: 4 * d * d),
    (ch05.check_sliding_window_attention, _window, lambda q, k, v, w: _window(q, k, v, w, fill=-30.0)),
    (ch06_training.check_head_entropy, _entropy, lambda s, m: _entropy(s, m, base=2)),
    (ch06_memory.check_cache_bytes, lambda L, h, kv, e, s, b, dt: 2 * L * b * kv * s * e * dt.itemsize,
     lambda L, h, kv, e, s, b, dt: L * b * kv * s * e * dt.itemsize),
    (ch06_long_context.check_rolling_cache, lambda L, h, kv, e, w, s, n: 2 * L * kv * e * min(s, w) * n / 2**30,
     lambda L, h, kv, e, w, s, n: 2 * L * kv * e * s * n / 2**30),
]


def _verdict(result):
    return result.passed, result.key, result.message if not TIMED & set(result.fields) else None, \
        {k: v for k, v in result.fields.items() if k not in TIMED}


@pytest.mark.parametrize("checker, right, wrong", CASES, ids=[c.__name__ for c, _, _ in CASES])
def test_the_same_answer_gets_the_same_verdict_every_time(checker, right, wrong):
    for answer, passed in ((right, True), (wrong, False)):
        verdicts = [_verdict(checker(answer)) for _ in range(3)]
        assert verdicts[0][0] is passed, verdicts[0]
        assert verdicts.count(verdicts[0]) == 3, verdicts
        assert verdicts[0][1] != "cases.fresh"  # a typical mistake is named on the named cases, never left to chance


def test_a_verdict_decided_on_the_fresh_case_gives_its_seed():
    seen = {}

    def recording(q, k):
        return seen.setdefault((tuple(q.shape), float(q.sum())), q @ k.transpose(-2, -1))
    assert ch02.check_dot_scores(recording).passed
    replay = lambda q, k: seen.get((tuple(q.shape), float(q.sum())), q[..., :1] * 0)  # noqa: E731 (a table)
    verdict = ch02.check_dot_scores(replay)
    assert not verdict.passed and verdict.key == "cases.fresh", verdict.message
    seed = verdict.fields["seed"]
    assert f"seed {seed}" in verdict.message and "named cases" in verdict.message
