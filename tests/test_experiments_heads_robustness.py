"""Chapter 4's bad-head experiments: a saturated head during training, and a broken head fine-tuned."""

import math

import pytest
import torch
import torch.nn.functional as F

from helpers.experiments import heads_robustness as hr
from helpers.experiments import heads_training as ht
from helpers.tasks import offset_filter_task

SEQ_LEN, DIM = 12, 4


def _model(num_heads: int = 4) -> ht.FilterHeads:
    torch.manual_seed(0)
    return ht.FilterHeads(SEQ_LEN, DIM, 32, num_heads)


def _data(n: int = 64):
    x, y, _ = offset_filter_task(n, SEQ_LEN, DIM, (2,), seed=5)
    return x, y


def test_scale_head_scores_scales_that_heads_queries_and_keys_only():
    model, (x, _) = _model(), _data()
    h = model.in_proj(x).detach()  # (B, L, D)
    att = model.attention
    before = [p(h).detach() for p in (att.q_proj, att.k_proj, att.v_proj)]  # (B, L, D) each
    bias_before = model.position_bias.detach().clone()
    hr.scale_head_scores(model, 1, 10.0)
    after = [p(h).detach() for p in (att.q_proj, att.k_proj, att.v_proj)]
    rows = slice(att.head_dim, 2 * att.head_dim)
    for b, a in zip(before[:2], after[:2]):  # q and k: head 1 times 10, the others unchanged
        torch.testing.assert_close(a[..., rows], 10 * b[..., rows], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(a[..., :att.head_dim], b[..., :att.head_dim])
        torch.testing.assert_close(a[..., 2 * att.head_dim:], b[..., 2 * att.head_dim:])
    torch.testing.assert_close(after[2], before[2])  # v unchanged
    torch.testing.assert_close(model.position_bias.detach(), bias_before)


def test_a_scaled_head_is_saturated_and_gets_a_smaller_position_gradient():
    x, y = _data()
    clean, bad = _model(), _model()
    hr.scale_head_scores(bad, 0, 10.0)
    # saturation: a fresh head is near uniform (1/L = 0.083), the scaled one near one-hot
    assert hr.head_saturation(clean, x, 0) < 2 / SEQ_LEN
    assert hr.head_saturation(bad, x, 0) > 0.8
    with torch.no_grad():  # the brute-force reference: the largest weight of head 0, query by query
        weights = bad(x, need_weights=True)[1][:, 0]  # (B, L, L)
    reference = sum(max(row.tolist()) for seq in weights for row in seq) / (weights.shape[0] * SEQ_LEN)
    assert math.isclose(hr.head_saturation(bad, x, 0), reference, rel_tol=1e-5)
    for heads in (1, 4, 8):  # the saturated softmax passes back less to the head's position bias
        grads = []
        for scale in (1.0, 10.0):
            model = _model(heads)
            hr.scale_head_scores(model, 0, scale)
            F.mse_loss(model(x)[0], y).backward()
            grads.append(model.position_bias.grad[0].norm().item())
        assert grads[1] < 0.6 * grads[0]


def test_head_offset_weight_is_the_weight_on_the_positions_at_those_offsets():
    model, (x, _) = _model(), _data()
    with torch.no_grad():
        weights = model(x, need_weights=True)[1][:, 1]  # (B, L, L): head 1
    reference = sum(float(weights[b, i, (i + o) % SEQ_LEN]) for b in range(len(x)) for i in range(SEQ_LEN)
                    for o in (2, -1)) / (len(x) * SEQ_LEN)  # brute force, query by query
    assert math.isclose(hr.head_offset_weight(model, x, 1, (2, -1)), reference, rel_tol=1e-5)
    assert math.isclose(hr.head_offset_weight(model, x, 1, (2, 14)), hr.head_offset_weight(model, x, 1, (2,)),
                        rel_tol=1e-6)  # 14 = 2 (mod 12): one position, counted once
    with torch.no_grad():  # a head whose scores are all position bias, +2 far above the rest: all weight on +2
        model.attention.q_proj.weight.zero_()
        model.attention.q_proj.bias.zero_()
        model.position_bias[1] = -30.0
        model.position_bias[1, 2] = 30.0
    assert hr.head_offset_weight(model, x, 1, (2,)) > 0.999


def test_a_bad_head_run_reports_its_weight_on_the_task_offset():
    run = hr.train_with_bad_head(4, "init", steps=30, num_test=50)
    assert 0.0 <= run.weight_on_offsets <= 1.0
    assert math.isnan(hr.BadHeadRun(1, 0, "none", 0.0, 0.0, 0.0).weight_on_offsets)  # a default for older callers


def test_reinit_head_breaks_a_head_exactly_as_break_one_head():
    run = ht.train_filter(4, offsets=(2,), embed_dim=32, steps=20, num_test=100)
    reference = ht.break_one_head(run, "reinit")
    for head in range(4):
        result = hr.break_and_finetune(run, head, steps=0)
        assert math.isclose(result.r2_broken, reference[head], rel_tol=1e-6, abs_tol=1e-6)
        assert result.r2_finetuned == result.r2_broken  # 0 steps: nothing trained
        assert result.r2_before == run.r2
    assert ht.trained_by_train_filter(run)  # the run itself was not changed


def test_reinit_head_with_a_scale_then_saturates_the_new_head():
    model, (x, _) = _model(), _data()
    hr.reinit_head(model, 2, qk_scale=10.0)
    assert hr.head_saturation(model, x, 2) > 0.8
    assert model.position_bias[2].abs().max().item() == 0.0


def test_clean_run_equals_train_filter_and_mid_run_before_the_break_equals_a_shorter_one():
    kwargs = dict(offsets=(2,), embed_dim=32, num_test=100, seed=1)
    clean = hr.train_with_bad_head(4, "none", steps=30, **kwargs)
    assert clean.r2 == ht.train_filter(4, steps=30, **kwargs).r2
    assert math.isnan(clean.r2_before_break) and math.isnan(clean.r2_after_break)
    mid = hr.train_with_bad_head(4, "mid", steps=30, break_step=20, **kwargs)
    assert math.isclose(mid.r2_before_break, ht.train_filter(4, steps=20, **kwargs).r2, rel_tol=1e-6)


def test_fine_tuning_after_a_break_takes_the_model_back_up():
    run = ht.train_filter(4, offsets=(2,), embed_dim=32, steps=100, num_test=100)
    results = hr.finetune_sweep({4: [run]}, steps=20)[4][0]
    assert [r.head for r in results] == [0, 1, 2, 3]
    worst = min(results, key=lambda r: r.r2_broken)
    assert worst.r2_finetuned > worst.r2_broken  # 20 steps of fine-tuning help the worst break


@pytest.mark.slow
def test_a_saturated_head_from_the_start_stalls_one_head_but_not_four():
    one = [hr.train_with_bad_head(1, c) for c in ("none", "init")]
    four = [hr.train_with_bad_head(4, c) for c in ("none", "init")]
    assert one[1].r2 < one[0].r2 - 0.5  # one head: 300 steps are not enough to get out
    assert four[1].r2 > four[0].r2 - 0.01  # four heads: the others do the work...
    assert four[1].r2_without_bad_head > four[0].r2 - 0.01  # ...without the bad head


def test_arguments_are_checked():
    model = _model(4)
    with pytest.raises(ValueError, match="head"):
        hr.scale_head_scores(model, 4, 10.0)
    with pytest.raises(TypeError, match="head"):
        hr.reinit_head(model, 1.0)
    with pytest.raises(ValueError, match="qk_scale"):
        hr.scale_head_scores(model, 0, 0.0)
    with pytest.raises(ValueError, match="qk_scale"):
        hr.reinit_head(model, 0, qk_scale=float("nan"))
    with pytest.raises(ValueError, match="condition"):
        hr.train_with_bad_head(2, "later")
    with pytest.raises(ValueError, match="break_step"):
        hr.train_with_bad_head(2, "mid", steps=10, break_step=10)
    with pytest.raises(ValueError, match="bad_head"):
        hr.train_with_bad_head(2, "init", bad_head=2)
    with pytest.raises(ValueError, match="num_heads"):
        hr.bad_head_sweep([0])
    with pytest.raises(TypeError, match="run"):
        hr.break_and_finetune(model, 0)
