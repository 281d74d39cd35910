"""Tiny Transformer models for the experiments: an encoder, a decoder, a GPT-style decoder-only
model and an encoder-decoder, each a stack of :class:`helpers.blocks.TransformerBlock`.

They are sized to train in seconds on a CPU (see :class:`TinyConfig`) and return the attention
weights of every layer when asked, for the figures. They serve the experiments of chapters 4, 5
and 6; generation uses the KV cache of :mod:`helpers.multihead` (chapter 6).

Shape legend:
    B   batch size
    L   target (query) length
    S   source (memory) length
    D   model dimension ``embed_dim``
    H   number of heads
    N   number of layers (blocks)
    V   vocabulary size
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor, nn

from .blocks import TransformerBlock
from .checks import reject_pytorch_padding_mask
from .multihead import KVCache
from .positional import LearnedPositionalEmbedding, RotaryEmbedding, T5RelativeBias, alibi_bias, sinusoidal_encoding

__all__ = [
    "TinyConfig",
    "ModelOutput",
    "TinyEncoder",
    "TinyDecoder",
    "TinyGPT",
    "TinyEncoderDecoder",
    "LogitsOnly",
]

_POSITIONAL = ("learned", "sinusoidal", "rope", "alibi", "t5", "none")


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
    positional: str = "learned"  # "learned", "sinusoidal", "rope", "alibi", "t5" (relative bias) or "none"


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
        self.relative_bias = None
        if config.positional == "learned":
            self.position_embedding = LearnedPositionalEmbedding(config.max_positions, config.embed_dim)
        elif config.positional == "sinusoidal":
            self.register_buffer(
                "sinusoidal", sinusoidal_encoding(config.max_positions, config.embed_dim), persistent=False
            )
        elif config.positional == "rope":
            self.rope = RotaryEmbedding(config.embed_dim // config.num_heads)
        elif config.positional == "t5":  # one learned bias per (bucket, head), shared by all layers as in T5
            self.relative_bias = T5RelativeBias(config.num_heads, bidirectional=not is_causal)
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
        key_mask: Tensor | None,
        memory_key_mask: Tensor | None,
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
                self.config.num_heads, length, past + length, is_causal=self.is_causal, query_offset=past,
                device=x.device,
            )
        elif self.relative_bias is not None:  # (1, H, L, S) learned bias; queries at past .. past + L - 1
            attn_mask = self.relative_bias(length, past + length, query_offset=past)

        self_weights, cross_weights = [], []
        for i, block in enumerate(self.blocks):
            x, attended, crossed = block(
                x, memory, attn_mask=attn_mask, key_mask=key_mask, is_causal=self.is_causal,
                memory_key_mask=memory_key_mask, need_weights=need_weights,
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
        self,
        tokens: Tensor,
        *,
        key_mask: Tensor | None = None,
        need_weights: bool = False,
        key_padding_mask: None = None,
    ) -> ModelOutput:
        """Encodes a batch of token sequences.

        Args:
            tokens: token ids.
            key_mask: bool, ``True`` = real token, ``False`` = padding (the polarity of every
                mask of the package; see :class:`~helpers.multihead.MultiHeadAttention`).
            need_weights: also return every layer's attention weights.
            key_padding_mask: not accepted (PyTorch's name, where ``True`` means "ignore"):
                raises a ``TypeError``; pass ``key_mask=~key_padding_mask``.

        Returns:
            ``ModelOutput(output, attentions, None)``.

        Shape:
            tokens: ``(B, L)``; key_mask: ``(B, L)`` or ``(B, 1, 1, L)``; output: ``(B, L, D)`` or
            ``(B, L, num_outputs)``; attentions: ``(N, B, H, L, L)``.
        """
        reject_pytorch_padding_mask("key_padding_mask", key_padding_mask, "key_mask")
        hidden, attentions, _ = self.stack(tokens, None, key_mask, None, need_weights, None)
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
        memory_key_mask: Tensor | None,
        need_weights: bool,
        kv_caches: list[KVCache] | None,
    ) -> ModelOutput:
        hidden, attentions, cross = self.stack(tokens, memory, None, memory_key_mask, need_weights, kv_caches)
        return ModelOutput(self.lm_head(hidden), attentions, cross)  # (B, L, V)

    @torch.no_grad()
    def _generate(
        self,
        tokens: Tensor,
        max_new_tokens: int,
        memory: Tensor | None,
        memory_key_mask: Tensor | None,
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
            logits = self._logits(new_input, memory, memory_key_mask, False, caches).output[:, -1]  # (B, V)
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
        memory_key_mask: Tensor | None = None,
        need_weights: bool = False,
        kv_caches: list[KVCache] | None = None,
        memory_key_padding_mask: None = None,
    ) -> ModelOutput:
        """Next-token logits given the target prefix and the encoder's memory.

        ``memory_key_padding_mask`` (PyTorch's name, where ``True`` means "ignore") is not accepted:
        it raises a ``TypeError``; pass ``memory_key_mask=~memory_key_padding_mask``.

        Shape:
            tokens: ``(B, L)``; memory: ``(B, S, D)``; memory_key_mask: ``(B, S)``
            (``True`` = real token); logits: ``(B, L, V)``; attentions: ``(N, B, H, L, L)``;
            cross_attentions: ``(N, B, H, L, S)``.
        """
        reject_pytorch_padding_mask("memory_key_padding_mask", memory_key_padding_mask, "memory_key_mask")
        return self._logits(tokens, memory, memory_key_mask, need_weights, kv_caches)

    def generate(
        self,
        tokens: Tensor,
        memory: Tensor,
        max_new_tokens: int,
        *,
        memory_key_mask: Tensor | None = None,
        use_cache: bool = True,
        temperature: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> Tensor:
        """Continues ``tokens`` (e.g. a start token) by ``max_new_tokens``, attending to ``memory``.

        Shape:
            tokens: ``(B, L0)``; memory: ``(B, S, D)``; output: ``(B, L0 + max_new_tokens)``
        """
        return self._generate(
            tokens, max_new_tokens, memory, memory_key_mask, use_cache, temperature, generator
        )


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
        source_key_mask: Tensor | None = None,
        need_weights: bool = False,
        source_key_padding_mask: None = None,
    ) -> tuple[ModelOutput, ModelOutput]:
        """Encodes ``source`` and returns next-token logits for the ``target`` prefix.

        ``source_key_padding_mask`` (PyTorch's ``src_key_padding_mask`` polarity, ``True`` = ignore;
        this model's earlier name for ``source_key_mask``) is not accepted: it raises a ``TypeError``.

        Returns:
            ``(encoder_output, decoder_output)``: the encoder's hidden states and self-attention
            weights, then the decoder's logits, self- and cross-attention weights.

        Shape:
            source: ``(B, S)``; target: ``(B, L)``; source_key_mask: ``(B, S)``
            (``True`` = real token); decoder logits: ``(B, L, V)``.
        """
        reject_pytorch_padding_mask("source_key_padding_mask", source_key_padding_mask, "source_key_mask")
        encoded = self.encoder(source, key_mask=source_key_mask, need_weights=need_weights)
        decoded = self.decoder(
            target, encoded.output, memory_key_mask=source_key_mask, need_weights=need_weights
        )
        return encoded, decoded

    @torch.no_grad()
    def generate(
        self,
        source: Tensor,
        start_tokens: Tensor,
        max_new_tokens: int,
        *,
        source_key_mask: Tensor | None = None,
        use_cache: bool = True,
    ) -> Tensor:
        """Greedy decoding of ``max_new_tokens`` tokens after ``start_tokens``.

        Shape:
            source: ``(B, S)``; start_tokens: ``(B, L0)``; output: ``(B, L0 + max_new_tokens)``
        """
        memory = self.encoder(source, key_mask=source_key_mask).output  # (B, S, D)
        return self.decoder.generate(
            start_tokens, memory, max_new_tokens, memory_key_mask=source_key_mask, use_cache=use_cache
        )


class LogitsOnly(nn.Module):
    """A tiny model seen by :func:`helpers.train.train`: its forward returns the logits alone.

    The loop takes the first item of a tuple as the logits (:mod:`helpers.train`); a tiny model
    returns a :class:`ModelOutput` (and :class:`TinyEncoderDecoder` a pair of them), so the
    experiments that train one wrap it in this adapter. The wrapped model is trained in place.

    Args:
        model: a :class:`TinyEncoder`, :class:`TinyDecoder` or :class:`TinyGPT` (logits: its
            ``output``), or a :class:`TinyEncoderDecoder` (logits: its decoder's ``output``).

    Shape:
        inputs: those of ``model`` (positional); output: ``(B, L, V)``.
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *inputs: Tensor) -> Tensor:
        output = self.model(*inputs)
        if isinstance(self.model, TinyEncoderDecoder):
            output = output[1]  # (encoder's, decoder's): the logits are the decoder's
        return output.output  # (B, L, V)
