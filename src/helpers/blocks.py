"""Transformer blocks (Pre-LN and Post-LN) and tiny models built from them.

A block is attention followed by a position-wise feed-forward network, each wrapped in a
residual connection and a layer norm: after the residual sum in the original Transformer
(Post-LN, ``norm_first=False``), or on the branch input in GPT-2 and most models since (Pre-LN,
``norm_first=True``), which keeps an identity path from the output back to the embeddings and
trains without warm-up. Explained in chapter 6 (Post-LN vs Pre-LN); the tiny models serve the
experiments of chapters 1, 4, 5 and 6.

Every attention here is :class:`helpers.multihead.MultiHeadAttention`: the fused PyTorch kernel
when no weights are asked for, the package's readable attention when they are.

Shape legend:
    B   batch size
    L   target (query) length
    S   source (memory) length
    D   model dimension ``embed_dim``
    F   feed-forward hidden size ``ffn_dim``
    H   number of heads
    N   number of layers (blocks)
    V   vocabulary size
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor, nn

from .multihead import KVCache, MultiHeadAttention
from .positional import LearnedPositionalEmbedding, RotaryEmbedding, alibi_bias, sinusoidal_encoding

__all__ = [
    "BlockOutput",
    "TransformerBlock",
    "TinyConfig",
    "ModelOutput",
    "TinyEncoder",
    "TinyDecoder",
    "TinyGPT",
    "TinyEncoderDecoder",
]

_ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}
_POSITIONAL = ("learned", "sinusoidal", "rope", "alibi", "none")


class BlockOutput(NamedTuple):
    """What a :class:`TransformerBlock` returns (unpacks as a 3-tuple)."""

    hidden: Tensor
    """``(B, L, D)`` hidden states."""
    self_weights: Tensor | None
    """``(B, H, L, L)`` self-attention weights (``(B, H, L, S_cached)`` with a cache), or None."""
    cross_weights: Tensor | None
    """``(B, H, L, S)`` cross-attention weights, or None (no cross-attention or no weights asked)."""


class TransformerBlock(nn.Module):
    """One Transformer layer: self-attention, optional cross-attention, feed-forward network.

    Pre-LN (``norm_first=True``): ``x = x + Attn(LN(x))``; ``x = x + FFN(LN(x))``.
    Post-LN (``norm_first=False``, the original): ``x = LN(x + Attn(x))``; ``x = LN(x + FFN(x))``.
    With ``cross_attention`` a cross-attention sub-layer over ``memory`` sits between the two,
    as in the original decoder. With matching settings it computes the same function as
    ``torch.nn.TransformerEncoderLayer`` / ``TransformerDecoderLayer`` (tested).

    Papers: Vaswani et al., 2017, "Attention Is All You Need", section 3.1 (Post-LN);
    Xiong et al., 2020, "On Layer Normalization in the Transformer Architecture" (Pre-LN).
    Explained in chapter 6.

    Args:
        embed_dim: model dimension ``D``.
        num_heads: number of attention heads ``H``.
        ffn_dim: hidden size ``F`` of the feed-forward network (default ``4 * D``).
        dropout: dropout on the attention weights, inside the FFN and on each residual branch.
        norm_first: Pre-LN (``True``) or Post-LN (``False``).
        num_kv_heads: key/value heads of the self-attention (GQA/MQA; default ``H``).
        cross_attention: add a cross-attention sub-layer (decoder of an encoder-decoder).
        activation: ``"relu"`` (original Transformer, PyTorch's default) or ``"gelu"`` (GPT, BERT).
        layer_norm_eps: epsilon of the layer norms.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        *,
        ffn_dim: int | None = None,
        dropout: float = 0.0,
        norm_first: bool = True,
        num_kv_heads: int | None = None,
        cross_attention: bool = False,
        activation: str = "relu",
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}")
        ffn_dim = 4 * embed_dim if ffn_dim is None else ffn_dim
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(embed_dim, num_heads, num_kv_heads=num_kv_heads, dropout=dropout)
        self.self_attn_norm = nn.LayerNorm(embed_dim, eps=layer_norm_eps)
        self.cross_attn: MultiHeadAttention | None = None
        self.cross_attn_norm: nn.LayerNorm | None = None
        if cross_attention:
            self.cross_attn = MultiHeadAttention(embed_dim, num_heads, dropout=dropout)
            self.cross_attn_norm = nn.LayerNorm(embed_dim, eps=layer_norm_eps)
        self.ffn = nn.Sequential(
            OrderedDict(
                linear1=nn.Linear(embed_dim, ffn_dim),
                activation=_ACTIVATIONS[activation](),
                dropout=nn.Dropout(dropout),
                linear2=nn.Linear(ffn_dim, embed_dim),
            )
        )
        self.ffn_norm = nn.LayerNorm(embed_dim, eps=layer_norm_eps)
        self.residual_dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        *,
        attn_mask: Tensor | None = None,
        key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
        memory_key_padding_mask: Tensor | None = None,
        need_weights: bool = False,
        kv_cache: KVCache | None = None,
        rope: RotaryEmbedding | None = None,
    ) -> BlockOutput:
        """Runs the block.

        Args:
            x: input hidden states.
            memory: encoder output for the cross-attention (needed iff ``cross_attention``).
            attn_mask: self-attention mask or bias, as in :class:`~helpers.multihead.MultiHeadAttention`.
            key_padding_mask: ``(B, L)`` bool, ``True`` = real token (self-attention keys).
            is_causal: causal self-attention (bottom-right aligned with a cache).
            memory_key_padding_mask: ``(B, S)`` bool, ``True`` = real memory token.
            need_weights: also return the attention weights (readable attention path).
            kv_cache: self-attention KV cache for incremental decoding.
            rope: rotary embedding for the self-attention.

        Returns:
            ``BlockOutput(hidden, self_weights, cross_weights)``.

        Shape:
            x: ``(B, L, D)``; memory: ``(B, S, D)``; hidden: ``(B, L, D)``;
            self_weights: ``(B, H, L, L)``; cross_weights: ``(B, H, L, S)``.
        """
        if (memory is None) != (self.cross_attn is None):
            raise ValueError(
                "memory must be given exactly when the block has cross_attention=True; got memory "
                f"{None if memory is None else tuple(memory.shape)} and cross_attention={self.cross_attn is not None}"
            )

        def self_attention(h: Tensor) -> tuple[Tensor, Tensor | None]:
            return self.self_attn(
                h, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                need_weights=need_weights, kv_cache=kv_cache, rope=rope,
            )  # (B, L, D)

        def cross_attention(cross_attn: MultiHeadAttention, h: Tensor) -> tuple[Tensor, Tensor | None]:
            return cross_attn(
                h, memory, key_padding_mask=memory_key_padding_mask, need_weights=need_weights
            )  # (B, L, D) attending to (B, S, D)

        cross_weights = None
        if self.norm_first:  # Pre-LN: normalise the branch input, keep the residual path clean
            attended, self_weights = self_attention(self.self_attn_norm(x))
            x = x + self.residual_dropout(attended)  # (B, L, D)
            if self.cross_attn is not None and self.cross_attn_norm is not None:
                attended, cross_weights = cross_attention(self.cross_attn, self.cross_attn_norm(x))
                x = x + self.residual_dropout(attended)  # (B, L, D)
            x = x + self.residual_dropout(self.ffn(self.ffn_norm(x)))  # (B, L, F) -> (B, L, D)
        else:  # Post-LN: normalise after each residual sum
            attended, self_weights = self_attention(x)
            x = self.self_attn_norm(x + self.residual_dropout(attended))  # (B, L, D)
            if self.cross_attn is not None and self.cross_attn_norm is not None:
                attended, cross_weights = cross_attention(self.cross_attn, x)
                x = self.cross_attn_norm(x + self.residual_dropout(attended))  # (B, L, D)
            x = self.ffn_norm(x + self.residual_dropout(self.ffn(x)))  # (B, L, F) -> (B, L, D)
        return BlockOutput(x, self_weights, cross_weights)


# ----------------------------------------------------------------------------------------------
# Tiny models
# ----------------------------------------------------------------------------------------------


@dataclass
class TinyConfig:
    """Size and options of the tiny models (defaults train in seconds on a CPU)."""

    vocab_size: int = 16  # V: number of token ids
    max_positions: int = 64  # longest sequence for "learned"/"sinusoidal" positions
    embed_dim: int = 64  # D: model width
    num_heads: int = 4  # H: attention heads per layer
    num_layers: int = 2  # N: Transformer blocks per stack
    ffn_dim: int | None = None  # F: feed-forward hidden size (None: 4 * D)
    num_kv_heads: int | None = None  # key/value heads of self-attention, for GQA/MQA (None: H)
    dropout: float = 0.0  # dropout on attention weights, FFN and residual branches
    norm_first: bool = True  # Pre-LN (True) or Post-LN (False)
    activation: str = "gelu"  # "gelu" or "relu" in the feed-forward network
    positional: str = "learned"  # "learned", "sinusoidal", "rope", "alibi" or "none"


class ModelOutput(NamedTuple):
    """What the tiny models return (unpacks as a 3-tuple)."""

    output: Tensor
    """``(B, L, V)`` logits, or ``(B, L, D)`` hidden states for a :class:`TinyEncoder` without head."""
    attentions: Tensor | None
    """``(N, B, H, L, L)`` self-attention weights of every layer, or None."""
    cross_attentions: Tensor | None
    """``(N, B, H, L, S)`` cross-attention weights of every layer (decoders), or None."""


class _TinyStack(nn.Module):
    """Token embedding + positions + ``N`` blocks + final norm, shared by the tiny models."""

    sinusoidal: Tensor

    def __init__(self, config: TinyConfig, *, is_causal: bool, cross_attention: bool) -> None:
        super().__init__()
        if config.positional not in _POSITIONAL:
            raise ValueError(f"config.positional must be one of {_POSITIONAL}, got {config.positional!r}")
        self.config = config
        self.is_causal = is_causal
        self.token_embedding = nn.Embedding(config.vocab_size, config.embed_dim)
        self.position_embedding = None
        self.rope = None
        if config.positional == "learned":
            self.position_embedding = LearnedPositionalEmbedding(config.max_positions, config.embed_dim)
        elif config.positional == "sinusoidal":
            self.register_buffer(
                "sinusoidal", sinusoidal_encoding(config.max_positions, config.embed_dim), persistent=False
            )
        elif config.positional == "rope":
            self.rope = RotaryEmbedding(config.embed_dim // config.num_heads)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                config.embed_dim, config.num_heads, ffn_dim=config.ffn_dim, dropout=config.dropout,
                norm_first=config.norm_first, num_kv_heads=config.num_kv_heads,
                cross_attention=cross_attention, activation=config.activation,
            )
            for _ in range(config.num_layers)
        )
        # Pre-LN leaves the residual stream un-normalised: one last norm before the output
        self.final_norm = nn.LayerNorm(config.embed_dim) if config.norm_first else nn.Identity()

    def forward(
        self,
        tokens: Tensor,
        memory: Tensor | None,
        key_padding_mask: Tensor | None,
        memory_key_padding_mask: Tensor | None,
        need_weights: bool,
        kv_caches: list[KVCache] | None,
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        if not isinstance(tokens, Tensor) or tokens.dim() != 2 or tokens.is_floating_point():
            got = tuple(tokens.shape) if isinstance(tokens, Tensor) else type(tokens).__name__
            raise ValueError(f"tokens must be an integer tensor of shape (B, L), got {got}")
        if kv_caches is not None and len(kv_caches) != len(self.blocks):
            raise ValueError(f"kv_caches must hold one KVCache per layer ({len(self.blocks)}), got {len(kv_caches)}")
        length = tokens.size(1)
        past = 0 if kv_caches is None else kv_caches[0].seq_len
        x = self.token_embedding(tokens)  # (B, L, D)
        if self.position_embedding is not None:
            x = x + self.position_embedding(length, offset=past)  # (B, L, D) + (L, D)
        elif self.config.positional == "sinusoidal":
            if past + length > self.config.max_positions:
                raise ValueError(
                    f"positions up to {past + length - 1} exceed max_positions={self.config.max_positions} "
                    "of the sinusoidal table"
                )
            x = x + self.sinusoidal[past:past + length]  # (B, L, D) + (L, D)
        x = self.dropout(x)
        attn_mask = None
        if self.config.positional == "alibi":  # (1, H, L, S) float bias; -inf on the future if causal
            attn_mask = alibi_bias(
                self.config.num_heads, length, past + length, is_causal=self.is_causal, device=x.device
            )

        self_weights, cross_weights = [], []
        for i, block in enumerate(self.blocks):
            x, attended, crossed = block(
                x, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=self.is_causal,
                memory_key_padding_mask=memory_key_padding_mask, need_weights=need_weights,
                kv_cache=None if kv_caches is None else kv_caches[i], rope=self.rope,
            )  # (B, L, D)
            if need_weights:
                self_weights.append(attended)
                if crossed is not None:
                    cross_weights.append(crossed)
        x = self.final_norm(x)  # (B, L, D)
        stacked_self = torch.stack(self_weights) if self_weights else None  # (N, B, H, L, L)
        stacked_cross = torch.stack(cross_weights) if cross_weights else None  # (N, B, H, L, S)
        return x, stacked_self, stacked_cross


def _init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation: N(0, 0.02) weights, zero biases (as in nanoGPT)."""
    for sub in module.modules():
        if isinstance(sub, nn.Linear):
            nn.init.normal_(sub.weight, std=0.02)
            if sub.bias is not None:
                nn.init.zeros_(sub.bias)
        elif isinstance(sub, (nn.Embedding, LearnedPositionalEmbedding)):
            nn.init.normal_(sub.weight, std=0.02)


class TinyEncoder(nn.Module):
    """A bidirectional Transformer encoder: token embedding + positions + ``N`` blocks.

    Paper: Vaswani et al., 2017, section 3.1 (encoder); Devlin et al., 2019 (BERT).
    Explained in chapter 5.

    Args:
        config: sizes and options.
        num_outputs: if given, a linear head maps every position to ``num_outputs`` logits;
            otherwise the hidden states are returned (e.g. as memory for a decoder).
    """

    def __init__(self, config: TinyConfig, *, num_outputs: int | None = None) -> None:
        super().__init__()
        self.config = config
        self.stack = _TinyStack(config, is_causal=False, cross_attention=False)
        self.head = None if num_outputs is None else nn.Linear(config.embed_dim, num_outputs)
        _init_weights(self)

    def forward(
        self, tokens: Tensor, *, key_padding_mask: Tensor | None = None, need_weights: bool = False
    ) -> ModelOutput:
        """Encodes a batch of token sequences.

        Args:
            tokens: token ids.
            key_padding_mask: bool, ``True`` = real token, ``False`` = padding.
            need_weights: also return every layer's attention weights.

        Returns:
            ``ModelOutput(output, attentions, None)``.

        Shape:
            tokens: ``(B, L)``; key_padding_mask: ``(B, L)``; output: ``(B, L, D)`` or
            ``(B, L, num_outputs)``; attentions: ``(N, B, H, L, L)``.
        """
        hidden, attentions, _ = self.stack(tokens, None, key_padding_mask, None, need_weights, None)
        output = hidden if self.head is None else self.head(hidden)  # (B, L, D) or (B, L, num_outputs)
        return ModelOutput(output, attentions, None)


class _Generation(nn.Module):
    """Greedy or sampled autoregressive generation, with or without a KV cache."""

    config: TinyConfig
    stack: _TinyStack
    lm_head: nn.Linear

    def new_kv_caches(self) -> list[KVCache]:
        """One empty :class:`KVCache` per layer, for incremental decoding."""
        return [KVCache() for _ in range(self.config.num_layers)]

    def _logits(
        self,
        tokens: Tensor,
        memory: Tensor | None,
        memory_key_padding_mask: Tensor | None,
        need_weights: bool,
        kv_caches: list[KVCache] | None,
    ) -> ModelOutput:
        hidden, attentions, cross = self.stack(tokens, memory, None, memory_key_padding_mask, need_weights, kv_caches)
        return ModelOutput(self.lm_head(hidden), attentions, cross)  # (B, L, V)

    @torch.no_grad()
    def _generate(
        self,
        tokens: Tensor,
        max_new_tokens: int,
        memory: Tensor | None,
        memory_key_padding_mask: Tensor | None,
        use_cache: bool,
        temperature: float,
        generator: torch.Generator | None,
    ) -> Tensor:
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
        caches = self.new_kv_caches() if use_cache else None
        new_input = tokens  # (B, L0): the whole prompt first, then one token at a time with a cache
        for _ in range(max_new_tokens):
            logits = self._logits(new_input, memory, memory_key_padding_mask, False, caches).output[:, -1]  # (B, V)
            if temperature == 0:
                next_token = logits.argmax(dim=-1, keepdim=True)  # (B, 1)
            else:
                probs = torch.softmax(logits.float() / temperature, dim=-1)  # (B, V)
                if generator is not None:  # a generator samples on its own device, whatever the model's
                    probs = probs.to(generator.device)
                next_token = torch.multinomial(probs, 1, generator=generator).to(tokens.device)  # (B, 1)
            tokens = torch.cat((tokens, next_token), dim=1)  # (B, L + 1)
            new_input = next_token if use_cache else tokens
        return tokens


class TinyGPT(_Generation):
    """A decoder-only (GPT-style) causal language model.

    Paper: Radford et al., 2018/2019 (GPT, GPT-2); layout as in nanoGPT. Explained in chapter 6
    (KV cache, causal masks) and used in chapters 4-6.

    Args:
        config: sizes and options.
    """

    def __init__(self, config: TinyConfig) -> None:
        super().__init__()
        self.config = config
        self.stack = _TinyStack(config, is_causal=True, cross_attention=False)
        self.lm_head = nn.Linear(config.embed_dim, config.vocab_size, bias=False)
        _init_weights(self)

    def forward(
        self, tokens: Tensor, *, need_weights: bool = False, kv_caches: list[KVCache] | None = None
    ) -> ModelOutput:
        """Next-token logits at every position.

        Args:
            tokens: token ids (only the new ones when ``kv_caches`` already hold the prefix).
            need_weights: also return every layer's attention weights.
            kv_caches: from ``self.new_kv_caches()``, updated in place.

        Returns:
            ``ModelOutput(logits, attentions, None)``.

        Shape:
            tokens: ``(B, L)``; logits: ``(B, L, V)``; attentions: ``(N, B, H, L, S)`` with
            ``S = cached + L``.
        """
        return self._logits(tokens, None, None, need_weights, kv_caches)

    def generate(
        self,
        tokens: Tensor,
        max_new_tokens: int,
        *,
        use_cache: bool = True,
        temperature: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> Tensor:
        """Continues ``tokens`` by ``max_new_tokens`` tokens (greedy when ``temperature == 0``).

        Shape:
            tokens: ``(B, L0)``; output: ``(B, L0 + max_new_tokens)``
        """
        return self._generate(tokens, max_new_tokens, None, None, use_cache, temperature, generator)


class TinyDecoder(_Generation):
    """A causal decoder with cross-attention to an encoder's output (the original decoder).

    Paper: Vaswani et al., 2017, section 3.1 (decoder). Explained in chapter 5.

    Args:
        config: sizes and options.
    """

    def __init__(self, config: TinyConfig) -> None:
        super().__init__()
        self.config = config
        self.stack = _TinyStack(config, is_causal=True, cross_attention=True)
        self.lm_head = nn.Linear(config.embed_dim, config.vocab_size, bias=False)
        _init_weights(self)

    def forward(
        self,
        tokens: Tensor,
        memory: Tensor,
        *,
        memory_key_padding_mask: Tensor | None = None,
        need_weights: bool = False,
        kv_caches: list[KVCache] | None = None,
    ) -> ModelOutput:
        """Next-token logits given the target prefix and the encoder's memory.

        Shape:
            tokens: ``(B, L)``; memory: ``(B, S, D)``; memory_key_padding_mask: ``(B, S)``
            (``True`` = real token); logits: ``(B, L, V)``; attentions: ``(N, B, H, L, L)``;
            cross_attentions: ``(N, B, H, L, S)``.
        """
        return self._logits(tokens, memory, memory_key_padding_mask, need_weights, kv_caches)

    def generate(
        self,
        tokens: Tensor,
        memory: Tensor,
        max_new_tokens: int,
        *,
        memory_key_padding_mask: Tensor | None = None,
        use_cache: bool = True,
        temperature: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> Tensor:
        """Continues ``tokens`` (e.g. a start token) by ``max_new_tokens``, attending to ``memory``.

        Shape:
            tokens: ``(B, L0)``; memory: ``(B, S, D)``; output: ``(B, L0 + max_new_tokens)``
        """
        return self._generate(tokens, max_new_tokens, memory, memory_key_padding_mask, use_cache, temperature, generator)


class TinyEncoderDecoder(nn.Module):
    """Encoder + decoder with cross-attention: the sequence-to-sequence Transformer.

    Paper: Vaswani et al., 2017, figure 1. Explained in chapter 5.

    Args:
        config: sizes and options, shared by the encoder and the decoder.
    """

    def __init__(self, config: TinyConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = TinyEncoder(config)
        self.decoder = TinyDecoder(config)

    def forward(
        self,
        source: Tensor,
        target: Tensor,
        *,
        source_key_padding_mask: Tensor | None = None,
        need_weights: bool = False,
    ) -> tuple[ModelOutput, ModelOutput]:
        """Encodes ``source`` and returns next-token logits for the ``target`` prefix.

        Returns:
            ``(encoder_output, decoder_output)``: the encoder's hidden states and self-attention
            weights, then the decoder's logits, self- and cross-attention weights.

        Shape:
            source: ``(B, S)``; target: ``(B, L)``; source_key_padding_mask: ``(B, S)``
            (``True`` = real token); decoder logits: ``(B, L, V)``.
        """
        encoded = self.encoder(source, key_padding_mask=source_key_padding_mask, need_weights=need_weights)
        decoded = self.decoder(
            target, encoded.output, memory_key_padding_mask=source_key_padding_mask, need_weights=need_weights
        )
        return encoded, decoded

    @torch.no_grad()
    def generate(
        self,
        source: Tensor,
        start_tokens: Tensor,
        max_new_tokens: int,
        *,
        source_key_padding_mask: Tensor | None = None,
        use_cache: bool = True,
    ) -> Tensor:
        """Greedy decoding of ``max_new_tokens`` tokens after ``start_tokens``.

        Shape:
            source: ``(B, S)``; start_tokens: ``(B, L0)``; output: ``(B, L0 + max_new_tokens)``
        """
        memory = self.encoder(source, key_padding_mask=source_key_padding_mask).output  # (B, S, D)
        return self.decoder.generate(
            start_tokens, memory, max_new_tokens, memory_key_padding_mask=source_key_padding_mask, use_cache=use_cache
        )
