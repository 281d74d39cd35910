"""norm_weighted_attention (Kobayashi et al., 2020), chapter 6."""

import pytest
import torch

from helpers.diagnostics import norm_weighted_attention


def test_norm_weighted_attention_matches_a_loop_over_heads_and_keys():
    torch.manual_seed(0)
    b, h, l, s, e, d = 2, 3, 4, 5, 2, 6
    weights = torch.softmax(torch.randn(b, h, l, s), -1)
    values = torch.randn(b, h, s, e)
    w_o = torch.randn(d, h * e)
    got = norm_weighted_attention(weights, values, w_o)
    expected = torch.zeros(b, h, l, s)
    for bi in range(b):
        for hi in range(h):
            for j in range(s):
                f = w_o[:, hi * e:(hi + 1) * e] @ values[bi, hi, j]  # (D,)
                expected[bi, hi, :, j] = weights[bi, hi, :, j] * f.norm()
    torch.testing.assert_close(got, expected)


def test_norm_weighted_attention_without_output_weight_uses_value_norms():
    weights = torch.tensor([[[[0.9, 0.1]]]])
    values = torch.tensor([[[[0.0, 0.1], [3.0, 4.0]]]])
    got = norm_weighted_attention(weights, values)
    torch.testing.assert_close(got, torch.tensor([[[[0.09, 0.5]]]]))  # the small weight carries more


def test_norm_weighted_attention_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="values"):
        norm_weighted_attention(torch.rand(1, 2, 3, 4), torch.rand(1, 2, 5, 2))
    with pytest.raises(ValueError, match="output_weight"):
        norm_weighted_attention(torch.rand(1, 2, 3, 4), torch.rand(1, 2, 4, 2), torch.rand(6, 5))
