"""Chapter 6.1–6.2's exercise checkers: accept the reference solutions, reject typical mistakes by name,
and reject answers that delegate to the package's own implementation."""

import math

import pytest
import torch

from helpers.diagnostics import attention_entropy
from helpers.exercises import ch06_training as ex
from helpers.experiments import training_failures as tf


def masked_weights(scores, mask):
    return torch.softmax(scores.masked_fill(~mask[:, None, None, :], float("-inf")), dim=-1)


def entropy(scores, mask):
    p = masked_weights(scores, mask)
    return -torch.special.xlogy(p, p).sum(-1).mean(-1)


def test_entropy_checker_accepts_scratch_and_names_bits_mask_and_nan():
    assert ex.check_head_entropy(entropy).passed
    bits = ex.check_head_entropy(lambda s, m: entropy(s, m) / math.log(2))
    assert not bits.passed and "bits" in bits.message and "nats" in bits.message

    def no_mask(s, m):
        p = torch.softmax(s, dim=-1)
        return -torch.special.xlogy(p, p).sum(-1).mean(-1)

    verdict = ex.check_head_entropy(no_mask)
    assert not verdict.passed and "mask is missing" in verdict.message and "padded key" in verdict.message

    def nan(s, m):
        p = masked_weights(s, m)
        return -(p * p.log()).sum(-1).mean(-1)

    assert "0 log 0" in ex.check_head_entropy(nan).message
    assert "inverted" in ex.check_head_entropy(lambda s, m: entropy(s, ~m)).message
    assert "after the softmax" in ex.check_head_entropy(
        lambda s, m: -torch.special.xlogy(p := torch.softmax(s, -1) * m[:, None, None, :], p).sum(-1).mean(-1)).message
    assert "per query" in ex.check_head_entropy(
        lambda s, m: -torch.special.xlogy(p := masked_weights(s, m), p).sum(-1)).message
    assert "stub" in ex.check_head_entropy(lambda s, m: (_ for _ in ()).throw(NotImplementedError)).message


def test_entropy_checker_rejects_the_package_function():
    verdict = ex.check_head_entropy(lambda s, m: attention_entropy(masked_weights(s, m)))
    assert not verdict.passed and "helpers.attention_entropy" in verdict.message
    assert not ex.check_head_entropy(attention_entropy).passed


def fixed_block(block, x):
    x = x + block.self_attn(block.self_attn_norm(x))[0]
    return x + block.ffn(block.ffn_norm(x))


def test_pre_ln_checker_accepts_the_fix_and_says_what_the_bug_does():
    assert ex.check_pre_ln_fix(fixed_block).passed
    bug = ex.check_pre_ln_fix(ex.buggy_pre_ln_block)
    assert not bug.passed and "residual stream itself" in bug.message and "identity path" in bug.message

    def post_ln(block, x):
        x = block.self_attn_norm(x + block.self_attn(x)[0])
        return block.ffn_norm(x + block.ffn(x))

    assert "Post-LN" in ex.check_pre_ln_fix(post_ln).message

    def half(block, x):
        x = x + block.self_attn(block.self_attn_norm(x))[0]
        x = block.ffn_norm(x)
        return x + block.ffn(x)

    verdict = ex.check_pre_ln_fix(half)
    assert "feed-forward sub-layer normalises the residual stream" in verdict.message
    assert "attention sub-layer" not in verdict.message

    def swapped(block, x):
        x = x + block.self_attn(block.ffn_norm(x))[0]
        return x + block.ffn(block.self_attn_norm(x))

    assert "swapped" in ex.check_pre_ln_fix(swapped).message


def test_pre_ln_checker_rejects_calling_the_block():
    verdict = ex.check_pre_ln_fix(lambda block, x: block(x).hidden)
    assert not verdict.passed and "helpers.TransformerBlock" in verdict.message


def find_heads(run):
    table = run.entropy_table()  # (P, N, H)
    heads = run.num_heads
    collapsed = divmod(int(table[0].argmin()), heads)  # one-hot before training
    dead = divmod(int(table.min(0).values.argmax()), heads)  # uniform at every probe
    return collapsed, dead


@pytest.mark.slow
def test_broken_heads_checker_accepts_the_monitor_reading_and_names_the_confusions():
    run = ex.train_broken_heads(0)
    assert run.loss[-1] < 0.1 * tf.CHANCE  # the model still learns the task with two broken heads
    assert ex.check_broken_heads(find_heads, run).passed
    assert "swapped" in ex.check_broken_heads(lambda r: find_heads(r)[::-1], run).message

    def lowest_at_the_end(r):
        return divmod(int(r.entropy_table()[-1].argmin()), r.num_heads), find_heads(r)[1]

    verdict = ex.check_broken_heads(lowest_at_the_end, run)
    assert not verdict.passed and "learnt the task" in verdict.message and "not a collapse" in verdict.message

    def highest_at_the_end(r):
        table = r.entropy_table()[-1].clone()
        collapsed, dead = find_heads(r)
        table[dead] = -1  # any head but the dead one
        return collapsed, divmod(int(table.argmax()), r.num_heads)

    assert "is not dead" in ex.check_broken_heads(highest_at_the_end, run).message
    typed = ex.check_broken_heads(lambda r: (run._collapsed, run._dead), run)  # answers typed for seed 0 only
    assert not typed.passed and "seed 1" in typed.message
    assert "(layer, head)" in ex.check_broken_heads(lambda r: 3, run).message
    verdict = ex.check_broken_heads(lambda r: ex.train_broken_heads(r.seed)._collapsed, run)
    assert not verdict.passed and "train_broken_heads" in verdict.message


def lower_lr(seed):
    return tf.train_lag_model(norm_first=False, lr=1e-2, seed=seed)


@pytest.mark.slow
def test_post_ln_fix_checker_needs_a_prediction_a_training_fix_and_an_explanation_naming_it():
    assert "prediction" in ex.check_post_ln_fix(lower_lr, "lower learning rate", None).message
    verdict = ex.check_post_ln_fix(lower_lr, "Lowering the learning rate to 0.01 fixed it.", False)
    assert verdict.passed and "prediction was right" in verdict.message
    assert "prediction was wrong" in ex.check_post_ln_fix(lower_lr, "The learning rate, lowered.", True).message
    verdict = ex.check_post_ln_fix(lower_lr, "It works now, by magic.", False)
    assert not verdict.passed and "does not name the learning rate" in verdict.message
    clipped = ex.check_post_ln_fix(lambda s: tf.train_lag_model(norm_first=False, lr=3e-2, clip_grad_norm=0.5, seed=s),
                                   "clipping the gradient", False)
    assert not clipped.passed and "Clipping alone" in clipped.message
    same = ex.check_post_ln_fix(lambda s: tf.train_lag_model(norm_first=False, lr=3e-2, seed=s),
                                "nothing changed here", False)
    assert not same.passed and "failing run's settings" in same.message
    wrong_seed = ex.check_post_ln_fix(lambda s: lower_lr(0), "the learning rate", False)
    assert not wrong_seed.passed and "seed 1" in wrong_seed.message
    assert "RunResult" in ex.check_post_ln_fix(lambda s: 0.1, "the learning rate", False).message


@pytest.mark.slow
def test_post_ln_fix_checker_measures_each_of_several_changes_alone():
    verdict = ex.check_post_ln_fix(lambda s: tf.train_lag_model(norm_first=True, lr=3e-2, warmup_steps=30, seed=s),
                                   "Pre-LN plus a warm-up", True)
    assert verdict.passed and "one at a time" in verdict.message and "warmup_steps=30 alone" in verdict.message
