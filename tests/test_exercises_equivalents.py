"""The same computation by another library, exercise by exercise: each from-scratch checker refuses, by
name, PyTorch's own multi-head attention layer and the way out of PyTorch (NumPy, SciPy, scikit-learn)
where it applies. Each answer below is first shown to be right when nothing watches it, so that its
refusal is the guard's doing, not a wrong result's."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist
from scipy.stats import entropy as scipy_entropy
from sklearn.metrics.pairwise import cosine_similarity as sklearn_cosine

from helpers.attention import scaled_dot_product_attention
from helpers.diagnostics import attention_entropy
from helpers.efficient_linear import linear_attention
from helpers.exercises import ch02, ch05, ch06_memory, ch06_training
from helpers.scores import cosine_scores, neg_euclidean_scores
from helpers.vision import SqueezeExcitation

# --- PyTorch's nn.MultiheadAttention with identity projections: one head, the scores q.k / sqrt(E) ---------

def torch_layer_attention(q, k, v, allowed=None):
    """``softmax(q k^T / sqrt(E) where allowed) v`` computed by ``torch.nn.MultiheadAttention``.

    Shape: q ``(..., L, E)``, k and v ``(..., S, E)``, allowed ``(L, S)`` or ``(..., L, S)`` (True = may attend).
    """
    *lead, length, width = q.shape
    keys = k.shape[-2]
    layer = torch.nn.MultiheadAttention(width, 1, bias=False, batch_first=True, dtype=q.dtype)
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.eye(width, dtype=q.dtype).repeat(3, 1))
        layer.out_proj.weight.copy_(torch.eye(width, dtype=q.dtype))
    mask = None
    if allowed is not None:
        mask = ~allowed.expand(*lead, length, keys).reshape(-1, length, keys)  # (N, L, S): True = may not
    out, _ = layer(q.reshape(-1, length, width), k.reshape(-1, keys, width), v.reshape(-1, keys, width),
                   attn_mask=mask, need_weights=False)
    return out.reshape(*lead, length, width)


def sliding_window_by_layer(q, k, v, window):
    i = torch.arange(q.shape[-2])[:, None]
    j = torch.arange(k.shape[-2])[None, :]
    return torch_layer_attention(q, k, v, (i - j).abs() < window)


def padding_fix_by_layer(q, k, v, lengths):
    real = torch.arange(k.shape[-2])[None, :] < lengths[:, None]  # (B, S)
    allowed = real[:, None, None, :].expand(-1, q.shape[1], q.shape[-2], -1)  # (B, H, L, S)
    return torch_layer_attention(q, k, v, allowed).nan_to_num(0.0)


def causal_by_layer(q, k, v):
    length, keys = q.shape[-2], k.shape[-2]
    allowed = torch.ones(length, keys, dtype=torch.bool).tril(keys - length)  # bottom-right aligned
    return torch_layer_attention(q.float(), k.float(), v.float(), allowed).to(q.dtype)


def online_softmax_by_layer(q, k, v, block_size):
    return torch_layer_attention(q, k, v)


def _qkv(length=5, keys=7, width=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(2, 3, length, width, generator=gen), torch.randn(2, 3, keys, width, generator=gen),
            torch.randn(2, 3, keys, width, generator=gen))


def test_the_torch_layer_routes_are_right_when_nothing_watches_them():
    q, k, v = _qkv()
    window = torch.ones(5, 7, dtype=torch.bool)
    torch.testing.assert_close(torch_layer_attention(q, k, v, window), scaled_dot_product_attention(q, k, v))
    i, j = torch.arange(5)[:, None], torch.arange(7)[None, :]
    torch.testing.assert_close(sliding_window_by_layer(q, k, v, 2),
                               scaled_dot_product_attention(q, k, v, attn_mask=(i - j).abs() < 2))
    bottom_right = torch.ones(5, 7, dtype=torch.bool).tril(2)
    torch.testing.assert_close(causal_by_layer(q, k, v), scaled_dot_product_attention(q, k, v, attn_mask=bottom_right))
    qs, ks, vs = _qkv(length=6, keys=6)
    lengths = torch.tensor([6, 3])
    real = torch.arange(6)[None, :] < lengths[:, None]
    torch.testing.assert_close(padding_fix_by_layer(qs, ks, vs, lengths),
                               scaled_dot_product_attention(qs, ks, vs, attn_mask=real[:, None, None, :]))


@pytest.mark.parametrize("checker, answer", [
    (ch05.check_sliding_window_attention, sliding_window_by_layer),
    (ch05.check_padding_fix, padding_fix_by_layer),
    (ch05.check_causal_attention, causal_by_layer),
    (ch06_memory.check_online_softmax, online_softmax_by_layer),
], ids=["sliding window", "padding fix", "causal", "online softmax"])
def test_pytorchs_multihead_attention_layer_is_refused_by_name(checker, answer):
    verdict = checker(answer)
    assert not verdict.passed and "MultiheadAttention" in verdict.message, verdict.message
    assert "MultiheadAttention" in checker(answer, language="zh").message


# --- the way out of PyTorch: NumPy, SciPy, scikit-learn ------------------------------------------------

def dot_by_numpy(q, k):
    return torch.from_numpy(q.numpy() @ np.swapaxes(k.numpy(), -1, -2))


def euclidean_by_scipy(q, k):
    *lead, length, width = q.shape
    qs, ks = q.reshape(-1, length, width).numpy(), k.reshape(-1, k.shape[-2], width).numpy()
    out = np.stack([-cdist(a, b, "sqeuclidean") for a, b in zip(qs, ks)])
    return torch.from_numpy(out).reshape(*lead, length, k.shape[-2]).to(q.dtype)


def cosine_by_sklearn(q, k):
    return torch.from_numpy(sklearn_cosine(q.numpy(), k.numpy())).to(q.dtype)


def linear_by_numpy(q, k, v):
    phi_q, phi_k = (np.where(x > 0, x + 1, np.exp(x)) for x in (q.numpy(), k.numpy()))  # elu + 1
    kv = np.swapaxes(phi_k, -1, -2) @ v.numpy()  # (..., E, Ev)
    normaliser = phi_q @ phi_k.sum(-2)[..., None]  # (..., L, 1)
    return torch.from_numpy(phi_q @ kv / normaliser).to(q.dtype)


def se_by_numpy(x, fc1, fc2):
    squeezed = x.numpy().mean(axis=(2, 3))
    hidden = np.maximum(squeezed @ fc1.weight.detach().numpy().T + fc1.bias.detach().numpy(), 0)
    gates = 1 / (1 + np.exp(-(hidden @ fc2.weight.detach().numpy().T + fc2.bias.detach().numpy())))
    return torch.from_numpy(x.numpy() * gates[:, :, None, None])


def entropy_by_scipy(scores, key_mask):
    s = scores.double().numpy()
    s = np.where(key_mask.numpy()[:, None, None, :], s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s) / np.exp(s).sum(-1, keepdims=True)
    return torch.from_numpy(scipy_entropy(p, axis=-1).mean(-1)).float()


def test_the_array_routes_are_right_when_nothing_watches_them():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 5, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    torch.testing.assert_close(dot_by_numpy(q, k), q @ k.transpose(-2, -1))
    torch.testing.assert_close(euclidean_by_scipy(q, k), neg_euclidean_scores(q, k))
    torch.testing.assert_close(cosine_by_sklearn(q[0, 0], k[0, 0]), cosine_scores(q[0, 0], k[0, 0]))
    torch.testing.assert_close(linear_by_numpy(q, k, v), linear_attention(q, k, v))
    x = torch.randn(2, 6, 3, 3, generator=gen, dtype=torch.float64)
    block = SqueezeExcitation(6, 2).double()
    torch.testing.assert_close(se_by_numpy(x, block.fc1, block.fc2), block(x))
    scores = torch.randn(2, 3, 4, 5, generator=gen)
    key_mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    weights = torch.softmax(scores.masked_fill(~key_mask[:, None, None, :], -math.inf), dim=-1)
    torch.testing.assert_close(entropy_by_scipy(scores, key_mask), attention_entropy(weights))


@pytest.mark.parametrize("checker, answer, names", [
    (ch02.check_euclidean_scores, euclidean_by_scipy, ("scipy",)),
    (ch02.check_vectorised_cosine, cosine_by_sklearn, ("numpy", "sklearn")),
    (ch05.check_linear_attention, linear_by_numpy, ("numpy",)),
    (ch06_training.check_head_entropy, entropy_by_scipy, ("scipy",)),
], ids=["Euclidean (SciPy's cdist)", "cosine (scikit-learn)", "linear attention (NumPy, where the work is counted)",
        "entropy (SciPy)"])
def test_other_libraries_and_the_way_out_of_pytorch_are_refused_by_name(checker, answer, names):
    """SciPy's and scikit-learn's ready-made functions are refused wherever the thing practised is theirs; leaving
    PyTorch is refused where the checker measures the work of PyTorch operations (the linear attention's L x S check,
    the cosine's call count)."""
    verdict = checker(answer)
    assert not verdict.passed and any(name in verdict.message for name in names), verdict.message


@pytest.mark.parametrize("checker, answer", [
    (ch02.check_dot_scores, dot_by_numpy),
    (ch05.check_se_block, se_by_numpy),
], ids=["dot (NumPy)", "SE (NumPy)"])
def test_a_reimplementation_in_numpy_is_the_readers_own_work(checker, answer):
    """NumPy is arithmetic: the reader who writes the computation in NumPy has done the exercise."""
    verdict = checker(answer)
    assert verdict.passed, verdict.message
