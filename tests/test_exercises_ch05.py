"""Chapter 5's exercise checkers: accept the reference solutions, reject typical mistakes by name,
and reject answers that delegate to the package's own implementation."""

import math
import time

import torch

from helpers import masks
from helpers.efficient import sliding_window_attention
from helpers.efficient_linear import linear_attention
from helpers.exercises import ch05
from helpers.vision import SqueezeExcitation


def window_attention(q, k, v, window, inclusive=False):
    n = q.shape[-2]
    gap = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs()
    allowed = gap <= window if inclusive else gap < window
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def linear(q, k, v):
    pq, pk = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    return (pq @ (pk.transpose(-2, -1) @ v)) / (pq @ pk.sum(-2, keepdim=True).transpose(-2, -1))


def linear_left_order(q, k, v):
    w = (torch.nn.functional.elu(q) + 1) @ (torch.nn.functional.elu(k) + 1).transpose(-2, -1)
    return (w / w.sum(-1, keepdim=True)) @ v


def se(x, fc1, fc2):
    return x * torch.sigmoid(fc2(torch.relu(fc1(x.mean(dim=(2, 3))))))[:, :, None, None]


def fixed(q, k, v, lengths):
    real = torch.arange(k.shape[-2])[None, :] < lengths[:, None]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~real[:, None, None, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def test_sliding_window_checker_accepts_the_solution_and_names_the_off_by_one():
    assert ch05.check_sliding_window_attention(window_attention).passed
    verdict = ch05.check_sliding_window_attention(lambda q, k, v, w: window_attention(q, k, v, w, inclusive=True))
    assert not verdict.passed and "off by one" in verdict.message
    stub = ch05.check_sliding_window_attention(lambda q, k, v, w: (_ for _ in ()).throw(NotImplementedError()))
    assert not stub.passed and "stub" in stub.message


def test_linear_attention_checker_wants_the_right_order_and_the_normaliser():
    assert ch05.check_linear_attention(linear).passed
    verdict = ch05.check_linear_attention(linear_left_order)
    assert not verdict.passed and "L x S" in verdict.message
    def unnormalised(q, k, v):
        phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
        return phi_q @ (phi_k.transpose(-2, -1) @ v)

    assert "normaliser" in ch05.check_linear_attention(unnormalised).message


def test_se_checker_names_max_softmax_and_returned_weights():
    assert ch05.check_se_block(se).passed
    as_max = lambda x, fc1, fc2: x * torch.sigmoid(fc2(torch.relu(fc1(x.amax(dim=(2, 3))))))[:, :, None, None]
    assert "mean" in ch05.check_se_block(as_max).message
    weights_only = lambda x, fc1, fc2: torch.sigmoid(fc2(torch.relu(fc1(x.mean(dim=(2, 3))))))
    assert "returned the channel weights" in ch05.check_se_block(weights_only).message


def test_padding_fix_checker_accepts_the_fix_and_recognises_the_bug():
    assert ch05.check_padding_fix(fixed).passed
    verdict = ch05.check_padding_fix(ch05.buggy_padded_attention)
    assert not verdict.passed and "still the bug" in verdict.message


def test_answers_that_call_the_package_are_rejected_by_name():
    verdict = ch05.check_sliding_window_attention(lambda q, k, v, w: sliding_window_attention(q, k, v, w))
    assert not verdict.passed and "sliding_window_attention" in verdict.message
    verdict = ch05.check_sliding_window_attention(
        lambda q, k, v, w: window_attention(q, k, v, w) * masks.sliding_window_mask(4, 4, 1).any())
    assert not verdict.passed and "sliding_window_mask" in verdict.message
    verdict = ch05.check_linear_attention(lambda q, k, v: linear_attention(q, k, v))
    assert not verdict.passed and "linear_attention" in verdict.message
    verdict = ch05.check_se_block(lambda x, fc1, fc2: SqueezeExcitation(8, 2)(x))
    assert not verdict.passed and "SqueezeExcitation" in verdict.message
    verdict = ch05.check_padding_fix(
        lambda q, k, v, lengths: fixed(q, k, v, lengths) * masks.padding_mask(lengths, 6).any())
    assert not verdict.passed and "padding_mask" in verdict.message


def test_crossover_checker_needs_a_prediction_and_plausible_timings():
    def time_both(n):
        q, k, v = (torch.randn(1, 1, n, 32) for _ in range(3))
        out = []
        for fn in (lambda: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(32), -1) @ v,
                   lambda: sliding_window_attention(q, k, v, 32)):
            fn()
            best = math.inf
            for _ in range(3):
                start = time.thread_time()
                fn()
                best = min(best, time.thread_time() - start)
            out.append(best)
        return tuple(out)

    assert "prediction" in ch05.check_crossover(time_both, None).message
    verdict = ch05.check_crossover(time_both, 300)
    assert verdict.passed and "you predicted 300" in verdict.message
    flat = ch05.check_crossover(lambda n: (1e-3, 1e-3), 300)
    assert not flat.passed and "grow clearly faster" in flat.message
