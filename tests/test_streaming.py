"""The sink cache of StreamingLLM (chapter 6, "Long context in practice"): token by token it equals full
attention over exactly the kept keys at the positions the cache assigns; its memory is sinks + window;
with no sink it is window attention (the rolling cache); and the attention-sinks experiment runs."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from helpers.experiments import attention_sinks as ex
from helpers.models import TinyConfig, TinyGPT
from helpers.multihead import MultiHeadAttention, RollingKVCache
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb
from helpers.streaming import SinkKVCache, sink_attention, streaming_logits


def kept_positions(t: int, num_sinks: int, window: int) -> list[int]:
    """The text positions the token at ``t`` sees, written out: the first k, then the last W."""
    sinks = [j for j in range(num_sinks) if j <= t]
    return sinks + [j for j in range(max(num_sinks, t - window + 1), t + 1)]


def brute_force(layer: MultiHeadAttention, x: torch.Tensor, rope: RotaryEmbedding, t: int, kept: list[int]):
    """Full attention of token t over the kept keys only, each rotated by its rank, the query by the last."""
    batch, _, dim = x.shape
    h, hkv, e = layer.num_heads, layer.num_kv_heads, layer.head_dim
    q = layer.q_proj(x[:, t:t + 1]).view(batch, 1, h, e).transpose(1, 2)  # (B, H, 1, E)
    k = layer.k_proj(x[:, kept]).view(batch, len(kept), hkv, e).transpose(1, 2)  # (B, H_kv, S, E)
    v = layer.v_proj(x[:, kept]).view(batch, len(kept), hkv, e).transpose(1, 2)  # (B, H_kv, S, E)
    if layer.q_norm is not None:
        q, k = layer.q_norm(q), layer.k_norm(k)
    cos, sin = rope(len(kept))  # ranks 0 .. S - 1
    _, k = apply_rotary_pos_emb(k, k, cos, sin)
    q, _ = apply_rotary_pos_emb(q, q, cos[:, -1:], sin[:, -1:])
    k = k.repeat_interleave(h // hkv, dim=1)  # (B, H, S, E)
    v = v.repeat_interleave(h // hkv, dim=1)
    out = F.scaled_dot_product_attention(q, k, v)  # (B, H, 1, E)
    return layer.o_proj(out.transpose(1, 2).reshape(batch, 1, dim))  # (B, 1, D)


@pytest.mark.parametrize("num_sinks, window, num_kv_heads, qk_norm", [
    (4, 5, 4, False), (1, 3, 2, True), (0, 4, 1, False), (2, 1, 4, False), (3, 30, 2, False),
])
def test_token_by_token_it_equals_full_attention_over_the_kept_keys(num_sinks, window, num_kv_heads, qk_norm):
    torch.manual_seed(0)
    layer = MultiHeadAttention(16, 4, num_kv_heads=num_kv_heads, qk_norm=qk_norm).eval()
    rope = RotaryEmbedding(4)
    x = torch.randn(2, 23, 16)
    cache = SinkKVCache(num_sinks, window)
    with torch.no_grad():
        for t in range(23):
            out, weights = sink_attention(layer, x[:, t:t + 1], cache, rope, need_weights=True)
            kept = kept_positions(t, num_sinks, window)
            assert cache.held_positions() == kept and cache.cached == len(kept) <= num_sinks + window
            assert weights.shape == (2, 4, 1, len(kept))
            torch.testing.assert_close(out, brute_force(layer, x, rope, t, kept), rtol=1e-5, atol=1e-5)


def test_memory_is_sinks_plus_window_however_long_the_sequence():
    cache = SinkKVCache(4, 6)
    for t in range(40):
        k = torch.full((3, 2, 1, 8), float(t))
        cache.update(k, k)
        stored = [s for s in (cache.sink_key, cache.sink_value, cache.key, cache.value) if s is not None]
        assert sum(s.size(2) for s in stored) == 2 * min(t + 1, 10)  # key and value
        assert sum(s.untyped_storage().nbytes() for s in stored) == 2 * min(t + 1, 10) * 3 * 2 * 8 * 4
    assert cache.sink_key[0, 0, :, 0].tolist() == [0, 1, 2, 3]  # the first four tokens, kept for good
    assert cache.key[0, 0, :, 0].tolist() == list(range(34, 40))  # the six latest
    assert cache.positions().tolist() == list(range(10)) and cache.seq_len == 40


def tiny_gpt(seed: int = 0) -> TinyGPT:
    torch.manual_seed(seed)
    model = TinyGPT(TinyConfig(vocab_size=13, embed_dim=32, num_heads=4, num_layers=2, positional="rope")).eval()
    with torch.no_grad():  # larger weights than the 0.02 init, so that outputs vary with the input
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    return model


def test_a_sequence_that_fits_in_the_cache_gives_the_uncached_forward():
    model = tiny_gpt()
    tokens = torch.randint(0, 13, (2, 12), generator=torch.Generator().manual_seed(1))
    streamed, _ = streaming_logits(model, tokens, [SinkKVCache(2, 10) for _ in range(2)])
    torch.testing.assert_close(streamed, model(tokens).output.detach(), rtol=1e-5, atol=1e-5)


def test_without_sinks_it_is_window_attention_the_rolling_cache():
    """RoPE scores depend on distances only: slots counted in the cache give the rolling cache's outputs."""
    model = tiny_gpt(2)
    tokens = torch.randint(0, 13, (2, 30), generator=torch.Generator().manual_seed(3))
    streamed, _ = streaming_logits(model, tokens, [SinkKVCache(0, 5) for _ in range(2)])
    caches = [RollingKVCache(5) for _ in range(2)]
    with torch.no_grad():
        rolling = torch.cat([model(tokens[:, t:t + 1], kv_caches=caches).output for t in range(30)], dim=1)
    torch.testing.assert_close(streamed, rolling, rtol=1e-4, atol=1e-4)
    with_sink, _ = streaming_logits(model, tokens, [SinkKVCache(1, 4) for _ in range(2)])
    assert (with_sink[:, 5:] - rolling[:, 5:]).abs().max() > 1e-2  # keeping token 0 changes the outputs


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_sinks"):
        SinkKVCache(-1, 4)
    with pytest.raises(ValueError, match="window"):
        SinkKVCache(2, 0)
    with pytest.raises(TypeError, match="window"):
        SinkKVCache(2, 2.5)
    cache = SinkKVCache(1, 3)
    with pytest.raises(ValueError, match="one token per update"):
        cache.update(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4))
    cache.update(torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4))
    with pytest.raises(ValueError, match="do not match"):
        cache.update(torch.randn(1, 2, 1, 6), torch.randn(1, 2, 1, 6))
    layer = MultiHeadAttention(16, 4)
    with pytest.raises(ValueError, match="x must have shape"):
        sink_attention(layer, torch.randn(1, 2, 16), SinkKVCache(1, 3))
    with pytest.raises(TypeError, match="cache"):
        sink_attention(layer, torch.randn(1, 1, 16), RollingKVCache(3))
    model = tiny_gpt()
    with pytest.raises(ValueError, match="caches"):
        streaming_logits(model, torch.zeros(1, 3, dtype=torch.long), [SinkKVCache(1, 3)])
    with pytest.raises(ValueError, match="positional"):
        streaming_logits(TinyGPT(TinyConfig(positional="learned")).eval(), torch.zeros(1, 3, dtype=torch.long),
                         [SinkKVCache(1, 3) for _ in range(2)])
    with pytest.raises(ValueError, match="training mode"):
        streaming_logits(model.train(), torch.zeros(1, 3, dtype=torch.long), [SinkKVCache(1, 3) for _ in range(2)])


def test_the_language_copies_the_token_offset_back_from_each_marker():
    config = ex.SinkConfig()
    tokens, predictable = ex.marker_copy_language(8, 64, config, seed=0)
    c = config.num_content
    assert (tokens[:, 0] == config.bos).all() and (tokens[:, 1:] != config.bos).all()
    for b in range(8):
        for t in range(2, 64):
            marker = tokens[b, t - 1].item()
            if c <= marker < c + len(config.offsets):
                source = t - 1 - config.offsets[marker - c]
                expected = source >= 1 and tokens[b, source].item() < c
                assert predictable[b, t].item() == expected
                if expected:
                    assert tokens[b, t] == tokens[b, source]
            else:
                assert not predictable[b, t]


def test_the_full_cache_decodes_what_one_forward_pass_predicts():
    model = tiny_gpt(4)
    tokens = torch.randint(0, 13, (2, 16), generator=torch.Generator().manual_seed(5))
    loss, correct = ex.decode(model, tokens, "full", cache_size=8)
    logits = model(tokens[:, :-1]).output.detach()  # (B, 15, V)
    reference = F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")
    torch.testing.assert_close(loss, reference, rtol=1e-5, atol=1e-5)
    assert torch.equal(correct, logits.argmax(-1) == tokens[:, 1:])
    with pytest.raises(ValueError, match="kind"):
        ex.decode(model, tokens, "sinks=3x", cache_size=8)


@pytest.mark.slow
def test_a_small_run_has_the_structure_of_the_figures():
    config = ex.SinkConfig(steps=20, train_length=16, cache_size=10, decode_factor=2, eval_samples=2,
                           bin_size=8, embed_dim=32)
    (run,) = ex.sink_runs(config, seeds=(0,))
    assert len(run.sink_weight) == config.num_layers and all(0 <= w <= 1 for w in run.sink_weight)
    assert run.bins == [1, 9, 17, 25]
    for kind in ex.KINDS:
        assert len(run.loss[kind]) == len(run.accuracy[kind]) == len(run.bins)
    # before the cache fills, every cache sees the same keys at the same distances: the same losses
    assert run.loss["window"][0] == pytest.approx(run.loss["full"][0], abs=1e-4)
    assert run.loss["sinks=4"][0] == pytest.approx(run.loss["full"][0], abs=1e-4)
    assert set(ex.summary([run])) == set(ex.KINDS)
    assert set(run.past_length_accuracy) == set(ex.KINDS) and 0 < run.floor_loss < math.log(config.num_content)


def _brute_force_floor(tokens: torch.Tensor, config: ex.SinkConfig) -> torch.Tensor:
    """The language's best loss, one token at a time, read off the generator's rules with plain Python."""
    c, offsets, p = config.num_content, config.offsets, config.marker_prob
    batch, length = tokens.shape
    out = torch.empty(batch, length - 1)
    for b in range(batch):
        for t in range(1, length):
            previous = tokens[b, t - 1].item()
            after_marker = t >= 2 and c <= previous < config.bos
            if after_marker:
                source = t - 1 - offsets[previous - c]
                if source >= 1 and tokens[b, source].item() < c:
                    out[b, t - 1] = 0.0  # a copy: determined
                else:
                    out[b, t - 1] = math.log(c)  # nothing to copy: uniform content
            elif t == length - 1:
                out[b, t - 1] = math.log(c)  # no marker at the last position
            elif c <= tokens[b, t].item() < config.bos:
                out[b, t - 1] = -math.log(p / len(offsets))
            else:
                out[b, t - 1] = -math.log((1 - p) / c)
    return out


def test_the_loss_floor_follows_the_generator_token_by_token():
    config = ex.SinkConfig()
    tokens, predictable = ex.marker_copy_language(6, 48, config, seed=3)
    floor = ex.optimal_loss(tokens, config)
    torch.testing.assert_close(floor, _brute_force_floor(tokens, config), rtol=1e-5, atol=1e-5)
    assert torch.equal(floor == 0, predictable[:, 1:])  # the copies, and only they, cost nothing
    free = -config.marker_prob * math.log(config.marker_prob / len(config.offsets)) \
        - (1 - config.marker_prob) * math.log((1 - config.marker_prob) / config.num_content)
    assert free > math.log(config.num_content)  # a free position costs more than uniform noise...
    long, _ = ex.marker_copy_language(400, 128, config, seed=4)
    assert ex.optimal_loss(long, config).mean() < math.log(config.num_content)  # ...but the copies pull the mean below
    with pytest.raises(ValueError, match="tokens"):
        ex.optimal_loss(torch.zeros(3, dtype=torch.long), config)


def test_the_expected_loss_of_the_true_distribution_is_the_floor():
    config = ex.SinkConfig()
    tokens, _ = ex.marker_copy_language(2000, 40, config, seed=5)
    floor = ex.optimal_loss(tokens, config)
    # positions that follow neither a marker nor the end: the mean floor is the entropy of (markers, content)
    previous = tokens[:, 1:-2]
    free = floor[:, 1:-1][previous < config.num_content]  # after a content token, before the last position
    expected = -config.marker_prob * math.log(config.marker_prob / len(config.offsets)) \
        - (1 - config.marker_prob) * math.log((1 - config.marker_prob) / config.num_content)
    assert abs(free.mean().item() - expected) < 0.02
