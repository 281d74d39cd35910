"""The rolling (sliding-window) KV cache: decoding through it equals one pass of attention under the
sliding-window causal mask, token by token and across the wrap of its slots, with RoPE positions and
grouped heads; its memory is its window, however long the sequence."""

from __future__ import annotations

import pytest
import torch

from helpers.masks import causal_mask
from helpers.multihead import KVCache, MultiHeadAttention, RollingKVCache
from helpers.positional import RotaryEmbedding


def window_mask(length: int, window: int) -> torch.Tensor:
    """Query p sees keys p - window < j <= p: the reference, written out."""
    p = torch.arange(length)[:, None]
    j = torch.arange(length)[None, :]
    return (j <= p) & (p - j < window)  # (L, L)


@pytest.mark.parametrize("window, num_kv_heads, chunks", [
    (4, 4, [1] * 19),  # token by token, wrapping the 4 slots four times
    (5, 2, [3, 1, 1, 7, 1, 1, 1, 4]),  # chunks shorter and longer than the window, grouped heads
    (8, 1, [8, 1, 9, 1]),  # a chunk of exactly the window, then more than it (multi-query)
    (1, 4, [1] * 6),  # a window of one: each token sees itself only
])
def test_decoding_through_the_rolling_cache_equals_one_pass_under_the_window_mask(window, num_kv_heads, chunks):
    torch.manual_seed(0)
    layer = MultiHeadAttention(16, 4, num_kv_heads=num_kv_heads).eval()
    rope = RotaryEmbedding(4)
    total = sum(chunks)
    x = torch.randn(2, total, 16)
    with torch.no_grad():
        reference, _ = layer(x, attn_mask=window_mask(total, window), rope=rope)  # (B, total, D)
        cache, outputs, start = RollingKVCache(window), [], 0
        for size in chunks:
            out, _ = layer(x[:, start:start + size], is_causal=True, kv_cache=cache, rope=rope)
            outputs.append(out)
            start += size
            assert cache.seq_len == start and cache.cached == min(start, window)
    torch.testing.assert_close(torch.cat(outputs, dim=1), reference, rtol=1e-5, atol=1e-5)


def test_with_a_window_as_long_as_the_sequence_it_is_the_ordinary_cache():
    torch.manual_seed(1)
    layer = MultiHeadAttention(12, 3).eval()
    x = torch.randn(1, 10, 12)
    with torch.no_grad():
        full, rolling = KVCache(), RollingKVCache(10)
        a = torch.cat([layer(x[:, t:t + 1], is_causal=True, kv_cache=full)[0] for t in range(10)], dim=1)
        b = torch.cat([layer(x[:, t:t + 1], is_causal=True, kv_cache=rolling)[0] for t in range(10)], dim=1)
        whole, _ = layer(x, attn_mask=causal_mask(10, 10))
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(a, whole, rtol=1e-5, atol=1e-5)


def test_its_memory_is_the_window_however_long_the_sequence():
    layer = MultiHeadAttention(16, 4, num_kv_heads=2).eval()
    cache = RollingKVCache(6)
    sizes = []
    with torch.no_grad():
        for t in range(50):
            layer(torch.randn(3, 1, 16), is_causal=True, kv_cache=cache)
            sizes.append(cache.key.nbytes + cache.value.nbytes)
    per_position = 2 * 3 * 2 * 4 * 4  # key and value, B = 3, H_kv = 2, E = 4, float32
    assert set(sizes) == {6 * per_position}  # allocated once, W slots, never grown
    assert cache.key.shape == (3, 2, 6, 4) and cache.seq_len == 50
    full = KVCache()
    with torch.no_grad():
        for t in range(50):
            layer(torch.randn(3, 1, 16), is_causal=True, kv_cache=full)
    assert full.key.nbytes + full.value.nbytes == 50 * per_position  # the ordinary cache grows with the sequence


def test_position_p_is_kept_in_slot_p_mod_w():
    cache = RollingKVCache(3)
    for p in range(7):
        k = torch.full((1, 1, 1, 2), float(p))
        cache.update(k, k)
    assert cache.key[0, 0, :, 0].tolist() == [6.0, 4.0, 5.0]  # slots 0, 1, 2 hold positions 6, 4, 5
    held, _ = cache._in_order()
    assert held[0, 0, :, 0].tolist() == [4.0, 5.0, 6.0]  # oldest first
    cache.reset()
    assert cache.seq_len == 0 and cache.key is None


@pytest.mark.parametrize("window", [0, -1, 2.5, True, None])
def test_a_bad_window_is_named(window):
    with pytest.raises(ValueError, match="window"):
        RollingKVCache(window)


def test_new_keys_of_another_shape_are_refused():
    cache = RollingKVCache(4)
    cache.update(torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4))
    with pytest.raises(ValueError, match="do not match"):
        cache.update(torch.zeros(1, 3, 1, 4), torch.zeros(1, 3, 1, 4))


def test_an_empty_cache_holds_nothing_to_read():
    with pytest.raises(RuntimeError, match="empty"):
        RollingKVCache(3)._in_order()
