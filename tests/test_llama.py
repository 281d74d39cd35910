"""The package's own Llama (chapter 7) on a tiny random configuration: its logits and greedy tokens are
transformers' LlamaForCausalLM's with the same weights; decoding through each cache equals the pass it stands
for (plain: the causal pass; rolling: the sliding-window mask; sink: StreamingLLM written out); the head mask
removes exactly a head's share of o_proj; the attention weights and residual stream it returns are the ones
it used. The same checks on SmolLM2-135M itself are in test_pretrained.py."""

from __future__ import annotations

import pytest
import torch

from helpers import seeding
from helpers.kv_cache import KVCache, RollingKVCache
from helpers.llama import LlamaConfig, LlamaForCausalLM, RMSNorm
from helpers.masks import sliding_window_mask
from helpers.streaming import SinkKVCache
from llama_reference import streaming_reference, transformers_copy

TINY = LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=8, rope_theta=100000.0, rms_norm_eps=1e-5,
                   max_position_embeddings=256)


@pytest.fixture(scope="module")
def tiny() -> LlamaForCausalLM:
    seeding.manual_seed(0)
    model = LlamaForCausalLM(TINY).eval()
    with torch.no_grad():  # norms away from 1, so that a norm's weight left out would show
        for name, parameter in model.named_parameters():
            if name.endswith("layernorm.weight") or name == "norm.weight":
                parameter.uniform_(0.5, 1.5, generator=seeding.generator(1))
    return model


def tokens(batch: int, length: int, seed: int = 2) -> torch.Tensor:
    return torch.randint(0, TINY.vocab_size, (batch, length), generator=seeding.generator(seed))


def test_its_logits_are_transformers_llama_with_the_same_weights(tiny):
    ids = tokens(2, 17)
    with torch.no_grad():
        ours, theirs = tiny(ids), transformers_copy(tiny)(ids).logits
    assert ours.shape == (2, 17, TINY.vocab_size)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_its_attention_weights_are_transformers_eager_weights(tiny):
    ids = tokens(1, 9)
    with torch.no_grad():
        out = tiny.run(ids, need_weights=True, output_hidden_states=True)
        theirs = transformers_copy(tiny)(ids, output_attentions=True)
    assert sorted(out.attentions) == [0, 1, 2] and len(out.hidden_states) == TINY.num_hidden_layers + 1
    for index, weights in out.attentions.items():
        torch.testing.assert_close(weights, theirs.attentions[index], rtol=1e-5, atol=1e-6)
        assert weights.triu(1).abs().max() == 0  # no peeking
        torch.testing.assert_close(weights.sum(-1), torch.ones(1, 4, 9))
    torch.testing.assert_close(out.hidden_states[0], tiny.embed_tokens(ids))
    torch.testing.assert_close(tiny.lm_head(tiny.norm(out.hidden_states[-1])), out.logits)
    assert list(tiny.run(ids, need_weights=[2]).attentions) == [2]


@pytest.mark.parametrize("chunks", [[1] * 12, [5, 1, 1, 5], [12]])
def test_decoding_through_the_plain_cache_equals_one_causal_pass(tiny, chunks):
    ids = tokens(2, sum(chunks))
    with torch.no_grad():
        reference = tiny(ids)
        caches, outputs, start = tiny.new_caches(), [], 0
        for size in chunks:
            outputs.append(tiny(ids[:, start:start + size], caches=caches))
            start += size
    assert all(cache.seq_len == start for cache in caches)
    torch.testing.assert_close(torch.cat(outputs, dim=1), reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("window, chunks", [(4, [1] * 14), (5, [7, 1, 1, 5])])
def test_decoding_through_a_rolling_cache_equals_one_pass_under_the_sliding_window_mask(tiny, window, chunks):
    length = sum(chunks)
    ids = tokens(2, length)
    with torch.no_grad():
        reference = tiny(ids, attn_mask=sliding_window_mask(length, length, window, is_causal=True))
        caches, outputs, start = tiny.new_caches(lambda: RollingKVCache(window)), [], 0
        for size in chunks:
            outputs.append(tiny(ids[:, start:start + size], caches=caches))
            start += size
    assert all(cache.cached == window for cache in caches)
    torch.testing.assert_close(torch.cat(outputs, dim=1), reference, rtol=1e-5, atol=1e-5)
    assert (tiny(ids) - reference).abs().max() > 1e-3  # the window changed something: the check has teeth


@pytest.mark.parametrize("num_sinks, window", [(2, 4), (1, 3), (0, 5)])
def test_decoding_through_sink_caches_is_streamingllm_written_out(tiny, num_sinks, window):
    ids = tokens(2, 15)
    with torch.no_grad():
        ours = tiny(ids, caches=tiny.new_caches(lambda: SinkKVCache(num_sinks, window)))  # fed one token at a time
        reference = streaming_reference(tiny, ids, num_sinks, window)
    torch.testing.assert_close(ours, reference, rtol=1e-5, atol=1e-5)


def test_a_sink_cache_as_long_as_the_text_is_the_plain_pass(tiny):
    ids = tokens(1, 10)
    with torch.no_grad():
        torch.testing.assert_close(tiny(ids, caches=tiny.new_caches(lambda: SinkKVCache(2, 8))), tiny(ids),
                                   rtol=1e-5, atol=1e-5)


def test_greedy_generation_is_transformers_generate_with_and_without_the_cache(tiny):
    ids = tokens(2, 6)
    with torch.no_grad():
        cached = tiny.generate(ids, 10)
        uncached = tiny.generate(ids, 10, use_cache=False)
        theirs = transformers_copy(tiny).generate(ids, max_new_tokens=10, do_sample=False, min_new_tokens=10)
    assert cached.shape == (2, 16) and torch.equal(cached[:, :6], ids)
    assert torch.equal(cached, uncached) and torch.equal(cached, theirs)
    rolling = tiny.generate(ids, 10, caches=tiny.new_caches(lambda: RollingKVCache(32)))  # window > text
    assert torch.equal(rolling, cached)


def test_a_row_that_reaches_the_end_token_repeats_it_and_generation_stops_when_all_have(tiny):
    ids = tokens(2, 6)
    free = tiny.generate(ids, 8)
    eos = int(free[0, 7])  # the second token row 0 writes
    out = tiny.generate(ids, 8, eos_token_id=eos)
    row = out[0, 6:].tolist()
    assert row[:2] == free[0, 6:8].tolist() and set(row[2:]) <= {eos}
    if eos not in free[1, 6:].tolist():
        assert out.shape == (2, 14) and torch.equal(out[1], free[1])


def test_a_head_mask_of_zero_removes_exactly_that_heads_share_of_o_proj(tiny):
    ids = tokens(2, 11)
    layer, head, size = 1, 2, TINY.head_dim
    mask = torch.ones(TINY.num_hidden_layers, TINY.num_attention_heads)
    mask[layer, head] = 0
    with torch.no_grad():
        ablated = tiny(ids, head_mask=mask)
        surgery = LlamaForCausalLM.from_state_dict(TINY, {k: v.clone() for k, v in tiny.state_dict().items()})
        surgery.layers[layer].self_attn.o_proj.weight[:, head * size:(head + 1) * size] = 0
        torch.testing.assert_close(ablated, surgery(ids), rtol=1e-5, atol=1e-5)
        per_row = torch.stack([torch.ones_like(mask), mask])  # (B, N, H): only row 1 ablated
        both = tiny(ids, head_mask=per_row)
    torch.testing.assert_close(both[0], tiny(ids)[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(both[1], ablated[1], rtol=1e-5, atol=1e-5)


def test_from_state_dict_ties_the_embeddings_and_gives_the_same_model(tiny):
    copy = LlamaForCausalLM.from_state_dict(TINY, {k: v for k, v in tiny.state_dict().items() if k != "lm_head.weight"})
    assert copy.lm_head.weight is copy.embed_tokens.weight and not copy.training
    ids = tokens(1, 5)
    torch.testing.assert_close(copy(ids), tiny(ids))


def test_rms_norm_is_the_formula_in_float32():
    x = torch.randn(3, 7, generator=seeding.generator(3)).to(torch.bfloat16)
    norm = RMSNorm(7, eps=1e-5)
    expected = (x.float() / (x.float().pow(2).mean(-1, keepdim=True) + 1e-5).sqrt()).to(torch.bfloat16)
    torch.testing.assert_close(norm(x), expected.float() * norm.weight)


def test_bad_arguments_are_named(tiny):
    with pytest.raises(ValueError, match=r"input_ids must be an integer tensor of shape \(B, L\)"):
        tiny(torch.zeros(2, 3))
    with pytest.raises(TypeError, match="input_ids must be a torch.Tensor"):
        tiny([[1, 2]])
    with pytest.raises(ValueError, match=r"caches must be a list of 3 caches .* got 2 caches"):
        tiny(tokens(1, 2), caches=[KVCache(), KVCache()])
    with pytest.raises(TypeError, match=r"caches\[1\] must be a KV cache .* got dict"):
        tiny(tokens(1, 2), caches=[KVCache(), {}, KVCache()])
    with pytest.raises(ValueError, match=r"head_mask must have shape \(N, H\) = \(3, 4\) or \(B, N, H\)"):
        tiny(tokens(1, 2), head_mask=torch.ones(4))
    with pytest.raises(ValueError, match=r"need_weights must be a bool or layer indices in 0..2, got \[3\]"):
        tiny.run(tokens(1, 2), need_weights=[3])
    with pytest.raises(ValueError, match="need_weights and attn_mask are not available when the input is fed in"):
        tiny.run(tokens(1, 3), caches=tiny.new_caches(lambda: SinkKVCache(1, 2)), need_weights=True)
    with pytest.raises(ValueError, match="caches were given with use_cache=False"):
        tiny.generate(tokens(1, 2), 3, caches=tiny.new_caches(), use_cache=False)
    with pytest.raises(ValueError, match="max_new_tokens must be >= 0"):
        tiny.generate(tokens(1, 2), -1)
    with pytest.raises(ValueError, match=r"num_attention_heads \* head_dim must equal hidden_size, got 4 \* 4 != 32"):
        LlamaConfig(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=4)
    with pytest.raises(ValueError, match="num_key_value_heads=3 must divide num_attention_heads=4"):
        LlamaConfig(hidden_size=32, num_attention_heads=4, num_key_value_heads=3, head_dim=8)
    with pytest.raises(TypeError, match="config must be a LlamaConfig"):
        LlamaForCausalLM({"hidden_size": 32})
