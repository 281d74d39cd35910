"""Tests of helpers.blocks: parity with torch's Transformer layers, causality, KV-cache generation."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers.blocks import TransformerBlock
from helpers.masks import padding_mask
from helpers.models import TinyConfig, TinyDecoder, TinyEncoder, TinyEncoderDecoder, TinyGPT
from helpers.multihead import MultiHeadAttention

TOL = dict(atol=1e-5, rtol=1e-5)


def randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    q, k, v = theirs.in_proj_weight.chunk(3)
    qb, kb, vb = theirs.in_proj_bias.chunk(3)
    for linear, weight, bias in ((ours.q_proj, q, qb), (ours.k_proj, k, kb), (ours.v_proj, v, vb)):
        linear.weight.copy_(weight)
        linear.bias.copy_(bias)
    ours.o_proj.load_state_dict(theirs.out_proj.state_dict())


def twin_block(layer: nn.Module, *, cross: bool) -> TransformerBlock:
    """Our block holding the weights of a torch TransformerEncoderLayer / TransformerDecoderLayer."""
    d = layer.linear1.in_features
    block = TransformerBlock(
        d, layer.self_attn.num_heads, ffn_dim=layer.linear1.out_features, norm_first=layer.norm_first,
        cross_attention=cross, activation="gelu" if layer.activation is torch.nn.functional.gelu else "relu",
    ).eval()
    with torch.no_grad():
        copy_attention(block.self_attn, layer.self_attn)
        block.self_attn_norm.load_state_dict(layer.norm1.state_dict())
        block.ffn.linear1.load_state_dict(layer.linear1.state_dict())
        block.ffn.linear2.load_state_dict(layer.linear2.state_dict())
        if cross:
            copy_attention(block.cross_attn, layer.multihead_attn)
            block.cross_attn_norm.load_state_dict(layer.norm2.state_dict())
            block.ffn_norm.load_state_dict(layer.norm3.state_dict())
        else:
            block.ffn_norm.load_state_dict(layer.norm2.state_dict())
    return block


def randomise_norms(layer: nn.Module) -> None:
    with torch.no_grad():
        for module in layer.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.normal_(1.0, 0.3)
                module.bias.normal_(0.0, 0.3)


# ----------------------------------------------------------------------------------------------
# TransformerBlock
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("cross_attention", [False, True])
def test_block_shapes_pre_ln_and_post_ln(norm_first: bool, cross_attention: bool) -> None:
    block = TransformerBlock(16, 4, norm_first=norm_first, cross_attention=cross_attention)
    x, memory = randn(2, 5, 16), randn(2, 7, 16, seed=1) if cross_attention else None
    hidden, self_w, cross_w = block(x, memory, need_weights=True)
    assert hidden.shape == (2, 5, 16) and self_w.shape == (2, 4, 5, 5)
    assert (cross_w.shape == (2, 4, 5, 7)) if cross_attention else cross_w is None
    assert block(x, memory).self_weights is None


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("need_weights", [False, True])
def test_block_equals_torch_transformer_encoder_layer(norm_first: bool, activation: str, need_weights: bool) -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        16, 4, dim_feedforward=24, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    ).eval()
    randomise_norms(layer)
    block = twin_block(layer, cross=False)
    x = randn(3, 6, 16)
    real = torch.arange(6)[None, :] < torch.tensor([[6], [5], [2]])
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    ours = block(x, key_mask=real, need_weights=need_weights).hidden
    torch.testing.assert_close(ours, layer(x, src_key_padding_mask=~real), **TOL)
    ours_causal = block(x, is_causal=True, need_weights=need_weights).hidden
    torch.testing.assert_close(ours_causal, layer(x, src_mask=~causal), **TOL)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("need_weights", [False, True])
def test_cross_attention_block_equals_torch_transformer_decoder_layer(norm_first: bool, need_weights: bool) -> None:
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(
        16, 4, dim_feedforward=24, dropout=0.0, activation="relu", batch_first=True, norm_first=norm_first
    ).eval()
    randomise_norms(layer)
    block = twin_block(layer, cross=True)
    target, memory = randn(2, 5, 16), randn(2, 7, 16, seed=1)
    memory_real = torch.arange(7)[None, :] < torch.tensor([[7], [3]])
    future = torch.ones(5, 5, dtype=torch.bool).triu(1)
    ours = block(
        target, memory, is_causal=True, memory_key_mask=memory_real, need_weights=need_weights
    ).hidden
    theirs = layer(target, memory, tgt_mask=future, memory_key_padding_mask=~memory_real)
    torch.testing.assert_close(ours, theirs, **TOL)


def test_block_errors() -> None:
    with pytest.raises(ValueError, match=r"activation must be one of \['gelu', 'relu'\], got 'tanh'"):
        TransformerBlock(16, 4, activation="tanh")
    with pytest.raises(ValueError, match=r"memory must be given exactly when.*cross_attention=False"):
        TransformerBlock(16, 4)(randn(1, 3, 16), randn(1, 2, 16))
    with pytest.raises(ValueError, match=r"got memory None and cross_attention=True"):
        TransformerBlock(16, 4, cross_attention=True)(randn(1, 3, 16))


def test_pytorch_padding_mask_names_fail_with_the_conversion() -> None:
    padding = torch.tensor([[False, False, True]])  # PyTorch's polarity: True = padding, ignore
    with pytest.raises(TypeError, match=r"key_padding_mask is not an argument.*key_mask=~key_padding_mask"):
        TransformerBlock(16, 4)(randn(1, 3, 16), key_padding_mask=padding)
    with pytest.raises(TypeError, match=r"memory_key_mask=~memory_key_padding_mask"):
        TransformerBlock(16, 4, cross_attention=True)(randn(1, 2, 16), randn(1, 3, 16), memory_key_padding_mask=padding)
    with pytest.raises(TypeError, match=r"key_mask=~key_padding_mask"):
        TinyEncoder(TinyConfig())(torch.zeros(1, 3, dtype=torch.long), key_padding_mask=padding)
    tokens, memory = torch.zeros(1, 3, dtype=torch.long), randn(1, 3, TinyConfig().embed_dim)
    with pytest.raises(TypeError, match=r"memory_key_mask=~memory_key_padding_mask"):
        TinyDecoder(TinyConfig())(tokens, memory, memory_key_padding_mask=padding)
    with pytest.raises(TypeError, match=r"source_key_mask=~source_key_padding_mask"):
        TinyEncoderDecoder(TinyConfig())(tokens, tokens, source_key_padding_mask=padding)


# ----------------------------------------------------------------------------------------------
# Tiny models
# ----------------------------------------------------------------------------------------------

POSITIONAL = ["learned", "sinusoidal", "rope", "alibi", "none"]


def tiny_gpt(positional: str = "learned", **kwargs) -> TinyGPT:
    torch.manual_seed(0)
    model = TinyGPT(TinyConfig(vocab_size=11, embed_dim=32, num_heads=4, positional=positional, **kwargs)).eval()
    with torch.no_grad():  # larger weights than the 0.02 init, so that greedy outputs vary with the input
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    return model


@pytest.mark.parametrize("positional", POSITIONAL)
def test_tiny_gpt_logits_ignore_future_tokens_and_get_no_gradient_from_them(positional: str) -> None:
    model = tiny_gpt(positional)
    tokens = torch.randint(0, 11, (2, 8), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 11
    logits, _, _ = model(tokens)
    logits_changed, _, _ = model(changed)
    torch.testing.assert_close(logits[:, :5], logits_changed[:, :5], atol=0, rtol=0)
    assert (logits[:, 5:] - logits_changed[:, 5:]).abs().max() > 1e-3

    embedded: list[torch.Tensor] = []  # the token embeddings of each forward pass, to read their .grad

    def keep(module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
        output.retain_grad()
        embedded.append(output)

    handle = model.stack.token_embedding.register_forward_hook(keep)
    try:
        for position in (3, 5):  # gradient of the logits at one position w.r.t. every input embedding
            model(tokens).output[:, position].sum().backward()
    finally:
        handle.remove()
    grads = [x.grad for x in embedded]
    assert grads[0][:, 4:].abs().max().item() == 0.0 and grads[0][:, :4].abs().min(-1).values.gt(0).all()
    assert grads[1][:, 6:].abs().max().item() == 0.0


@pytest.mark.parametrize("positional", POSITIONAL)
@pytest.mark.parametrize("num_kv_heads", [None, 1])
def test_tiny_gpt_kv_cache_logits_equal_full_forward(positional: str, num_kv_heads: int | None) -> None:
    model = tiny_gpt(positional, num_kv_heads=num_kv_heads)
    tokens = torch.randint(0, 11, (2, 9), generator=torch.Generator().manual_seed(2))
    full, full_weights, _ = model(tokens, need_weights=True)
    caches = model.new_kv_caches()
    prefill = model(tokens[:, :4], kv_caches=caches).output
    steps = [model(tokens[:, t:t + 1], kv_caches=caches, need_weights=True) for t in range(4, 9)]
    torch.testing.assert_close(torch.cat([prefill] + [s.output for s in steps], dim=1), full, **TOL)
    # the last step's weights over all 9 keys equal the last row of the full pass, in every layer
    torch.testing.assert_close(steps[-1].attentions[:, :, :, 0], full_weights[:, :, :, 8], **TOL)


@pytest.mark.parametrize("positional", POSITIONAL)
def test_tiny_gpt_generation_with_kv_cache_equals_without(positional: str) -> None:
    model = tiny_gpt(positional)
    prompt = torch.randint(0, 11, (3, 4), generator=torch.Generator().manual_seed(3))
    cached = model.generate(prompt, 12, use_cache=True)
    uncached = model.generate(prompt, 12, use_cache=False)
    assert cached.shape == (3, 16)
    torch.testing.assert_close(cached, uncached, atol=0, rtol=0)
    torch.testing.assert_close(cached[:, :4], prompt, atol=0, rtol=0)
    assert cached[:, 4:].unique().numel() > 1  # a non-trivial continuation
    sampled = [model.generate(prompt, 6, temperature=1.0, generator=torch.Generator().manual_seed(0)) for _ in range(2)]
    torch.testing.assert_close(sampled[0], sampled[1], atol=0, rtol=0)  # seeded sampling is reproducible


@pytest.mark.parametrize("norm_first", [True, False])
def test_tiny_models_fast_path_equals_weights_path(norm_first: bool) -> None:
    torch.manual_seed(0)
    config = TinyConfig(vocab_size=11, embed_dim=32, num_heads=4, num_layers=3, norm_first=norm_first)
    model = TinyEncoderDecoder(config).eval()
    source = torch.randint(0, 11, (2, 7), generator=torch.Generator().manual_seed(4))
    target = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(5))
    real = torch.arange(7)[None, :] < torch.tensor([[7], [4]])
    fast_enc, fast_dec = model(source, target, source_key_mask=real)
    enc, dec = model(source, target, source_key_mask=real, need_weights=True)
    torch.testing.assert_close(fast_enc.output, enc.output, **TOL)
    torch.testing.assert_close(fast_dec.output, dec.output, **TOL)
    assert fast_enc.attentions is None and fast_dec.cross_attentions is None
    assert enc.attentions.shape == (3, 2, 4, 7, 7)
    assert dec.attentions.shape == (3, 2, 4, 5, 5) and dec.cross_attentions.shape == (3, 2, 4, 5, 7)
    assert dec.cross_attentions[:, 1, :, :, 4:].abs().max().item() == 0.0  # no weight on padding
    torch.testing.assert_close(dec.cross_attentions.sum(-1), torch.ones(3, 2, 4, 5), **TOL)
    assert dec.attentions.triu(1).abs().max().item() == 0.0  # decoder self-attention is causal


def test_tiny_encoder_outputs_on_real_tokens_ignore_padding_tokens() -> None:
    torch.manual_seed(0)
    encoder = TinyEncoder(TinyConfig(vocab_size=11, embed_dim=32), num_outputs=3).eval()
    tokens = torch.randint(0, 11, (2, 6), generator=torch.Generator().manual_seed(6))
    real = torch.arange(6)[None, :] < torch.tensor([[6], [4]])
    changed = tokens.clone()
    changed[1, 4:] = (changed[1, 4:] + 3) % 11  # change only padding
    out = encoder(tokens, key_mask=real).output
    out_changed = encoder(changed, key_mask=real).output
    from_builder = encoder(tokens, key_mask=padding_mask(real.sum(-1), real.size(1))).output  # (B, 1, 1, S)
    torch.testing.assert_close(from_builder, out, atol=0, rtol=0)
    assert out.shape == (2, 6, 3)
    torch.testing.assert_close(out[1, :4], out_changed[1, :4], **TOL)
    unpadded = encoder(tokens, need_weights=True)
    assert (unpadded.output[1, :4] - out[1, :4]).abs().max() > 1e-4  # the mask did matter


def test_tiny_decoder_kv_cache_generation_equals_without() -> None:
    torch.manual_seed(0)
    model = TinyEncoderDecoder(TinyConfig(vocab_size=11, embed_dim=32, positional="rope")).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    source = torch.randint(0, 11, (2, 6), generator=torch.Generator().manual_seed(7))
    start = torch.zeros(2, 1, dtype=torch.long)
    cached = model.generate(source, start, 8, use_cache=True)
    torch.testing.assert_close(cached, model.generate(source, start, 8, use_cache=False), atol=0, rtol=0)
    assert cached.shape == (2, 9)


def test_tiny_model_errors() -> None:
    with pytest.raises(ValueError, match=r"config.positional must be one of.*got 'xpos'"):
        TinyGPT(TinyConfig(positional="xpos"))
    model = TinyGPT(TinyConfig(max_positions=8))
    with pytest.raises(ValueError, match=r"tokens must be an integer tensor of shape \(B, L\), got \(5,\)"):
        model(torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"max_positions=8"):
        model.generate(torch.zeros(1, 6, dtype=torch.long), 4)
    with pytest.raises(ValueError, match=r"max_positions=8"):
        TinyGPT(TinyConfig(max_positions=8, positional="sinusoidal"))(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match=r"one KVCache per layer \(2\), got 1"):
        model(torch.zeros(1, 2, dtype=torch.long), kv_caches=[model.new_kv_caches()[0]])
    with pytest.raises(TypeError):
        TinyDecoder(TinyConfig())(torch.zeros(1, 2, dtype=torch.long))  # memory is required
