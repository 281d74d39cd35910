"""References for the Llama tests, written out without the package's caches: StreamingLLM's decoding by brute
force, and the copy of a package Llama into transformers' LlamaForCausalLM."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from helpers.llama import LlamaForCausalLM
from helpers.positional import apply_rotary_pos_emb


def kept_positions(t: int, num_sinks: int, window: int) -> list[int]:
    """The text positions token t sees under a sink cache: the first num_sinks, then the last window (t included)."""
    sinks = [j for j in range(num_sinks) if j <= t]
    return sinks + list(range(max(num_sinks, t - window + 1), t + 1))


@torch.no_grad()
def streaming_reference(model: LlamaForCausalLM, ids: torch.Tensor, num_sinks: int, window: int) -> torch.Tensor:
    """StreamingLLM's decoding, written out: every layer remembers every token's key (before RoPE) and value;
    token t attends to the kept positions only, the keys rotated by their rank among them, the query by the
    last rank (positions counted inside the cache, ``pos_shift/modify_llama.py``). No eviction, no cache class."""
    config = model.config
    batch, length = ids.shape
    heads, kv_heads, head_dim = config.num_attention_heads, config.num_key_value_heads, config.head_dim
    keys: list[list[torch.Tensor]] = [[] for _ in model.layers]
    values: list[list[torch.Tensor]] = [[] for _ in model.layers]
    logits = []
    for t in range(length):
        kept = kept_positions(t, num_sinks, window)
        cos, sin = model.rotary_emb(len(kept))  # ranks 0 .. S - 1
        x = model.embed_tokens(ids[:, t:t + 1])  # (B, 1, D)
        for n, layer in enumerate(model.layers):
            attention, h = layer.self_attn, layer.input_layernorm(x)
            q = attention.q_proj(h).view(batch, 1, heads, head_dim).transpose(1, 2)  # (B, H, 1, E)
            keys[n].append(attention.k_proj(h).view(batch, 1, kv_heads, head_dim).transpose(1, 2))
            values[n].append(attention.v_proj(h).view(batch, 1, kv_heads, head_dim).transpose(1, 2))
            k = torch.cat([keys[n][j] for j in kept], dim=2)  # (B, H_kv, S, E)
            v = torch.cat([values[n][j] for j in kept], dim=2)
            _, k = apply_rotary_pos_emb(k, k, cos, sin)
            q, _ = apply_rotary_pos_emb(q, q, cos[:, -1:], sin[:, -1:])
            groups = heads // kv_heads
            out = F.scaled_dot_product_attention(q, k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1))
            x = x + attention.o_proj(out.transpose(1, 2).reshape(batch, 1, heads * head_dim))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        logits.append(model.lm_head(model.norm(x)))
    return torch.cat(logits, dim=1)  # (B, L, V)


def transformers_copy(model: LlamaForCausalLM):
    """transformers' LlamaForCausalLM (eager attention, float32) with the weights of ``model``."""
    import transformers

    c = model.config
    config = transformers.LlamaConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, intermediate_size=c.intermediate_size,
        num_hidden_layers=c.num_hidden_layers, num_attention_heads=c.num_attention_heads,
        num_key_value_heads=c.num_key_value_heads, head_dim=c.head_dim, rms_norm_eps=c.rms_norm_eps,
        max_position_embeddings=c.max_position_embeddings, tie_word_embeddings=c.tie_word_embeddings,
        rope_theta=c.rope_theta, rope_parameters={"rope_type": "default", "rope_theta": c.rope_theta},
        bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation="eager",
    )
    reference = transformers.LlamaForCausalLM(config).eval()
    state = {("" if name.startswith("lm_head") else "model.") + name: tensor
             for name, tensor in model.state_dict().items() if name != "rotary_emb.inv_freq"}
    missing, unexpected = reference.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
    return reference
