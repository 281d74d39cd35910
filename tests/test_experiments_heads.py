"""Chapter 4's experiments: the traced layer, the per-head equivalence, costs and the filter ceiling."""

import torch

from helpers.experiments import heads as hd
from helpers.experiments import heads_training as ht
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
