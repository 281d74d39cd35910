"""Chapter 4's experiments: the traced layer, the per-head equivalence, costs and the filter ceiling."""

import math

import pytest
import torch

from helpers.experiments import heads as hd
from helpers.experiments import heads_training as ht
from helpers.figures import heads as fig
from helpers.multihead import MultiHeadAttention


def test_per_head_reference_equals_the_layer_and_one_head_is_plain_attention():
    torch.manual_seed(0)
    layer, x = MultiHeadAttention(24, 3), torch.randn(2, 5, 24)
    torch.testing.assert_close(hd.per_head_reference(layer, x)[0], layer(x)[0], rtol=1e-5, atol=1e-6)
    one = MultiHeadAttention(24, 1)
    torch.testing.assert_close(hd.single_head_reference(one, x), one(x)[0], rtol=1e-5, atol=1e-6)
    assert hd.trace_shapes(layer, x)[3].shape == (2, 3, 5, 8)


def test_costs_do_not_depend_on_heads_and_score_rank_is_head_dim():
    cost = hd.head_costs(32, [1, 4, 32], seq_len=16)
    assert len(set(cost.parameters)) == 1 and cost.parameters[0] == 4 * 32 * 32 + 4 * 32
    assert len(set(cost.flops)) == 1
    assert {h: max(r) for h, r in hd.score_ranks(32, [1, 4, 32], seq_len=40).items()} == {1: 32, 4: 8, 32: 1}


def test_filter_ceiling_is_one_with_a_head_per_offset_and_a_share_below():
    filters = torch.stack([torch.eye(3), 2 * torch.eye(3)])  # orthogonal? no: parallel filters -> one head suffices
    assert abs(ht.filter_ceiling(filters, 1) - 1.0) < 1e-9
    filters = torch.zeros(2, 2, 2)
    filters[0, 0, 0] = filters[1, 1, 1] = 1.0  # orthogonal, equal norms: one head explains half
    assert abs(ht.filter_ceiling(filters, 1) - 0.5) < 1e-9 and abs(ht.filter_ceiling(filters, 2) - 1) < 1e-9


def test_profile_r2_matches_the_ceiling_for_one_hot_and_mixed_position_only_maps():
    filters = torch.zeros(2, 2, 2)
    filters[0, 0, 0], filters[1, 1, 1] = 1.0, 2.0  # orthogonal filters: G = diag(1, 4)
    one_hot = torch.zeros(1, 6)
    one_hot[0, 2] = 1.0  # one head entirely on offset +2 (the second filter)
    assert abs(ht.profile_r2(one_hot, (-1, 2), filters) - 4 / 5) < 1e-9
    both = torch.zeros(2, 6)
    both[0, 5], both[1, 2] = 1.0, 1.0  # one head per offset (-1 is position 5 of 6)
    assert abs(ht.profile_r2(both, (-1, 2), filters) - 1.0) < 1e-9
    split = torch.zeros(1, 6)
    split[0, 5] = split[0, 2] = 0.5  # one head split evenly: |A_1 + A_2|^2 / (2 tr G) = 5 / 10
    assert abs(ht.profile_r2(split, (-1, 2), filters) - 0.5) < 1e-9
    same = torch.stack([torch.eye(2), torch.eye(2)])  # the same rule at both offsets: the even split is exact
    assert abs(ht.profile_r2(split, (-1, 2), same) - 1.0) < 1e-9


def test_offset_profile_rows_sum_to_one_and_specialisation_reads_its_columns():
    run = ht.train_filter(2, steps=5, num_test=20)
    profile = ht.offset_profile(run)
    assert profile.shape == (2, 12)
    torch.testing.assert_close(profile.sum(1), torch.ones(2))
    torch.testing.assert_close(ht.offset_specialisation(run), profile[:, [11, 2, 4]])


def test_head_importance_is_the_mean_absolute_per_example_gradient_of_the_head_mask():
    run = ht.train_filter(3, steps=20, num_test=8, embed_dim=12)
    keep = torch.tensor([1.0, 0.0, 1.0])
    expected = torch.zeros(3)
    for x, y in zip(run.test_x, run.test_y):  # one example at a time, by autograd on an (H,) mask
        xi = keep.clone().requires_grad_(True)
        loss = ((run.model(x[None], head_mask=xi)[0] - y) ** 2).mean()
        expected += torch.autograd.grad(loss, xi)[0].abs() / len(run.test_x)
    torch.testing.assert_close(ht.head_importance(run, keep), expected, rtol=1e-4, atol=1e-7)


def test_pruning_orders_remove_every_head_once_and_end_at_the_same_empty_model():
    run = ht.train_filter(4, steps=10, num_test=20, embed_dim=16)
    prunings = [ht.greedy_pruning(run), ht.importance_pruning(run), ht.random_pruning(run, seed=1)]
    for p in prunings:
        assert sorted(p.removed) == [0, 1, 2, 3] and len(p.r2) == 5
        assert abs(p.r2[0] - run.r2) < 1e-6
    assert len({round(p.r2[-1], 6) for p in prunings}) == 1  # no head left: the same model whatever the order
    assert ht.random_pruning(run, seed=1).removed == prunings[2].removed  # seeded


def test_train_filter_with_the_same_matrix_at_every_offset_has_ceiling_one():
    shared = torch.eye(4).expand(3, 4, 4).clone()
    run = ht.train_filter(1, steps=5, num_test=20, filters=shared)
    assert abs(run.ceiling - 1.0) < 1e-9 and run.filters is not None


def test_multihead_core_equals_the_layer_and_pytorch_with_the_same_weights():
    torch.manual_seed(0)
    layer, x = MultiHeadAttention(24, 3, bias=False), torch.randn(2, 7, 24)
    ws = [p.weight.T for p in (layer.q_proj, layer.k_proj, layer.v_proj, layer.o_proj)]  # x W = Linear(x)
    with torch.no_grad():
        core = hd.multihead_core(x, *ws, num_heads=3)
        torch.testing.assert_close(core, layer(x)[0], rtol=1e-5, atol=1e-5)
        ref = torch.nn.MultiheadAttention(24, 3, bias=False, batch_first=True)
        ref.in_proj_weight.copy_(torch.cat([layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight]))
        ref.out_proj.weight.copy_(layer.o_proj.weight)
        torch.testing.assert_close(core, ref(x, x, x, need_weights=False)[0], rtol=1e-5, atol=1e-5)


def test_multihead_core_rejects_bad_arguments_by_name():
    x, w = torch.randn(1, 4, 6), torch.randn(6, 6)
    with pytest.raises(ValueError, match="num_heads"):
        hd.multihead_core(x, w, w, w, w, num_heads=4)
    with pytest.raises(ValueError, match="w_k"):
        hd.multihead_core(x, w, torch.randn(6, 3), w, w, num_heads=2)
    with pytest.raises(TypeError, match="num_heads"):
        hd.multihead_core(x, w, w, w, w, num_heads=2.0)
    with pytest.raises(ValueError, match="x must"):
        hd.multihead_core(x[0], w, w, w, w, num_heads=2)


def test_score_costs_count_the_materialised_scores_and_time_both_paths():
    b, n, heads = 2, 24, [1, 2, 8]
    cost = hd.score_costs(16, heads, batch_size=b, seq_len=n, repeats=1)
    assert cost.num_heads == heads and (cost.batch_size, cost.seq_len, cost.threads) == (b, n, 1)
    assert cost.score_bytes == [b * h * n * n * 4 for h in heads]  # float32 (B, H, L, L)
    assert cost.score_elements == [b * h * n * n for h in heads]
    assert [s // cost.score_bytes[0] for s in cost.score_bytes] == heads  # exactly x H
    assert cost.score_mib[-1] == cost.score_bytes[-1] / 2**20
    assert all(t > 0 and math.isfinite(t) for t in cost.readable_ms + cost.fused_ms)
    table = fig.score_cost_table(cost)
    assert table.count("\n") == 1 + len(heads) and f"| 8 | 2 | {8 * b * n * n * 4 / 2**20:.2g} |" in table
    full = fig.cost_table(hd.head_costs(16, [1, 4]), {1: [16], 4: [4]}, cost)
    assert full.splitlines()[2].endswith(f"{cost.fused_ms[0]:,.1f} |") and full.splitlines()[3].endswith("– |")


def test_score_costs_rejects_bad_arguments_by_name():
    with pytest.raises(ValueError, match="num_heads"):
        hd.score_costs(16, [1, 3])
    with pytest.raises(ValueError, match="num_heads"):
        hd.score_costs(16, [])
    for name in ("batch_size", "seq_len", "repeats", "threads"):
        with pytest.raises(ValueError, match=name):
            hd.score_costs(16, [1], **{name: 0})


def test_exhaustive_pruning_bounds_every_order_and_starts_and_ends_where_they_do():
    run = ht.train_filter(4, steps=10, num_test=20, embed_dim=16)
    best = ht.exhaustive_pruning(run)
    on_test = (run.test_x, run.test_y)  # choose where the bound is measured: no order can beat it there
    for pruning in (ht.greedy_pruning(run, select_on=on_test), ht.importance_pruning(run, select_on=on_test),
                    ht.random_pruning(run, seed=2)):
        assert all(b >= r - 1e-6 for b, r in zip(best, pruning.r2))
    assert abs(best[0] - run.r2) < 1e-6 and abs(best[-1] - ht.greedy_pruning(run).r2[-1]) < 1e-6
    assert abs(best[1] - max(ht.head_ablation(run))) < 1e-6  # one removal: the best single ablation


def test_importance_and_removal_cost_are_the_slope_and_the_step_of_one_parabola():
    # The output is linear in the head mask: loss(xi_h) = mean |r + (xi_h - 1) c_h|^2 per example.
    run = ht.train_filter(3, steps=30, num_test=16, embed_dim=12)
    importance, rise = ht.head_importance(run), ht.removal_loss_increase(run)
    with torch.no_grad():
        full = run.model(run.test_x)[0]  # (N, L, dim)
        residual = full - run.test_y
        for h in range(3):
            contribution = full - run.model(run.test_x, head_mask=1 - torch.eye(3)[h])[0]  # c_h
            slope = 2 * (residual * contribution).mean(dim=(1, 2))  # (N,): d loss(x) / d xi_h at 1
            step = (contribution ** 2 - 2 * residual * contribution).mean()  # loss(0) - loss(1), all examples
            torch.testing.assert_close(importance[h], slope.abs().mean(), rtol=1e-4, atol=1e-7)
            torch.testing.assert_close(rise[h], step, rtol=1e-4, atol=1e-7)
