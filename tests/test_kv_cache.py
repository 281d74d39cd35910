"""The cache protocol (chapters 6 and 7): MultiHeadAttention asks each cache for the RoPE positions and the
mask it needs. A SinkKVCache passed to the layer keeps its sinks (before, it was taken for a rolling cache
and its sinks were masked out) and decodes as sink_attention does; a plain and a rolling cache keep their
behaviour; a cache the layer cannot use is refused with a TypeError that names it."""

from __future__ import annotations

import pytest
import torch

from helpers import seeding
from helpers.kv_cache import AttentionCache, KVCache, RollingKVCache, check_cache
from helpers.multihead import MultiHeadAttention
from helpers.positional import RotaryEmbedding
from helpers.streaming import SinkKVCache, sink_attention


def layer_and_input(num_kv_heads: int = 2, length: int = 21) -> tuple[MultiHeadAttention, torch.Tensor]:
    seeding.manual_seed(0)
    layer = MultiHeadAttention(16, 4, num_kv_heads=num_kv_heads).eval()
    return layer, torch.randn(2, length, 16, generator=seeding.generator(1))


@pytest.mark.parametrize("num_sinks, window, num_kv_heads", [(4, 5, 2), (1, 3, 1), (0, 4, 4), (2, 1, 2)])
def test_the_layer_decodes_through_a_sink_cache_as_sink_attention_does(num_sinks, window, num_kv_heads):
    layer, x = layer_and_input(num_kv_heads)
    rope = RotaryEmbedding(4)
    ours, theirs = SinkKVCache(num_sinks, window), SinkKVCache(num_sinks, window)
    with torch.no_grad():
        for t in range(x.size(1)):
            out, weights = layer(x[:, t:t + 1], is_causal=True, kv_cache=ours, rope=rope, need_weights=True)
            expected, expected_weights = sink_attention(layer, x[:, t:t + 1], theirs, rope, need_weights=True)
            torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(weights, expected_weights, rtol=1e-5, atol=1e-6)
            assert ours.held_positions() == theirs.held_positions()


def test_a_sink_cache_keeps_its_sinks_in_view_once_the_window_has_passed_them():
    layer, x = layer_and_input()
    cache = SinkKVCache(2, 3)
    with torch.no_grad():
        for t in range(x.size(1)):
            _, weights = layer(x[:, t:t + 1], is_causal=True, kv_cache=cache, rope=RotaryEmbedding(4),
                               need_weights=True)
    assert cache.held_positions() == [0, 1, 18, 19, 20]
    assert weights.shape == (2, 4, 1, 5)
    assert weights[..., :2].min() > 0  # the sinks get weight: read as a window of 3, they would get exactly 0


def test_a_sink_cache_places_the_query_at_the_last_slot_and_the_keys_at_theirs():
    cache = SinkKVCache(2, 3)
    for t in range(8):
        slot = cache.query_positions(1)
        cache.update(torch.zeros(1, 1, 1, 4), torch.zeros(1, 1, 1, 4))
        torch.testing.assert_close(cache.key_positions(), torch.arange(min(t + 1, 5)))
        assert slot.tolist() == [min(t, 4)] and cache.attention_mask(1) is None
    with pytest.raises(ValueError, match=r"one token per update .* got length=3"):
        cache.query_positions(3)


def test_the_plain_and_rolling_caches_count_positions_in_the_text():
    plain, rolling = KVCache(), RollingKVCache(4)
    for cache in (plain, rolling):
        assert cache.query_positions(3).tolist() == [0, 1, 2]
        cache.update(torch.zeros(1, 1, 3, 2), torch.zeros(1, 1, 3, 2))
        assert cache.query_positions(2).tolist() == [3, 4]
        cache.update(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2))
    assert plain.key_positions().tolist() == [0, 1, 2, 3, 4] and plain.attention_mask(2) is None
    assert rolling.key_positions().tolist() == [0, 1, 2, 3, 4]  # the 3 held, then the 2 new
    # each new query loses the keys W or more positions back; the keys after it are the layer's is_causal
    expected = torch.tensor([[True, True, True, True, True], [False, True, True, True, True]])
    torch.testing.assert_close(rolling.attention_mask(2), expected)
    rolling.update(torch.zeros(1, 1, 1, 2), torch.zeros(1, 1, 1, 2))
    assert rolling.key_positions().tolist() == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match=r"length=2 must be the number of new tokens of the last update, 1"):
        rolling.attention_mask(2)


def test_the_three_caches_follow_the_protocol():
    for cache in (KVCache(), RollingKVCache(3), SinkKVCache(1, 3)):
        assert isinstance(cache, AttentionCache) and check_cache("kv_cache", cache) is cache
    assert [c.rotates_keys_on_read for c in (KVCache(), RollingKVCache(3), SinkKVCache(1, 3))] == [False, False, True]


class WrappedCache:
    """A cache of another author that follows the protocol without inheriting from anything."""

    rotates_keys_on_read = False
    max_update_length = None

    def __init__(self) -> None:
        self.inner = KVCache()
        self.reads = 0

    @property
    def seq_len(self) -> int:
        return self.inner.seq_len

    def query_positions(self, length, device=None):
        return self.inner.query_positions(length, device)

    def update(self, key, value):
        self.reads += 1
        return self.inner.update(key, value)

    def key_positions(self, device=None):
        return self.inner.key_positions(device)

    def attention_mask(self, length, device=None):
        return None


def test_any_object_with_the_protocols_members_is_a_cache_the_layer_uses():
    layer, x = layer_and_input()
    rope = RotaryEmbedding(4)
    with torch.no_grad():
        reference, _ = layer(x, is_causal=True, rope=rope)
        cache = WrappedCache()
        out = torch.cat([layer(x[:, t:t + 1], is_causal=True, kv_cache=cache, rope=rope)[0]
                         for t in range(x.size(1))], dim=1)
    assert cache.reads == x.size(1)
    torch.testing.assert_close(out, reference, rtol=1e-5, atol=1e-5)


class DynamicCache:
    """Stands for a Hugging Face cache: it stores keys and values, and knows nothing of the protocol."""

    def update(self, key, value, layer_idx):
        return key, value


@pytest.mark.parametrize("cache, name, lacks", [
    (DynamicCache(), "DynamicCache",
     "seq_len, rotates_keys_on_read, max_update_length, query_positions, key_positions, attention_mask"),
    ((torch.zeros(1), torch.zeros(1)), "tuple", "seq_len"),
])
def test_a_cache_the_layer_cannot_use_is_refused_with_its_name(cache, name, lacks):
    layer, x = layer_and_input()
    with pytest.raises(TypeError, match=rf"kv_cache must be a KV cache .* got {name}, which has no {lacks}"):
        layer(x[:, :1], is_causal=True, kv_cache=cache)


def test_a_sink_cache_refuses_a_block_of_tokens_through_the_layer():
    layer, x = layer_and_input()
    with pytest.raises(ValueError, match=r"kv_cache SinkKVCache takes at most 1 new token\(s\) per call, got a query "
                                         r"of 3 tokens \(2, 3, 16\): feed them in blocks"):
        layer(x[:, :3], is_causal=True, kv_cache=SinkKVCache(1, 4), rope=RotaryEmbedding(4))
