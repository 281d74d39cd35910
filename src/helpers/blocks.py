"""Transformer blocks, Pre-LN and Post-LN: attention and a feed-forward network with residuals.

A block is attention followed by a position-wise feed-forward network, each wrapped in a
residual connection and a layer norm: after the residual sum in the original Transformer
(Post-LN, ``norm_first=False``), or on the branch input in GPT-2 and most models since (Pre-LN,
``norm_first=True``), which keeps an identity path from the output back to the embeddings and
trains without warm-up. Explained in chapter 6 (Post-LN vs Pre-LN); :mod:`helpers.models` stacks
these blocks into the tiny models of the experiments.

Every attention here is :class:`helpers.multihead.MultiHeadAttention`: the fused PyTorch kernel
when no weights are asked for, the package's readable attention when they are.

Shape legend:
    B   batch size
    L   target (query) length
    S   source (memory) length
    D   model dimension ``embed_dim``
    F   feed-forward hidden size ``ffn_dim``
    H   number of heads
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from torch import Tensor, nn

from .checks import reject_pytorch_padding_mask
from .multihead import KVCache, MultiHeadAttention
from .positional import RotaryEmbedding

__all__ = [
    "BlockOutput",
    "TransformerBlock",
]

_ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}


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
        key_mask: Tensor | None = None,
        is_causal: bool = False,
        memory_key_mask: Tensor | None = None,
        need_weights: bool = False,
        kv_cache: KVCache | None = None,
        rope: RotaryEmbedding | None = None,
        key_padding_mask: None = None,
        memory_key_padding_mask: None = None,
    ) -> BlockOutput:
        """Runs the block.

        Args:
            x: input hidden states.
            memory: encoder output for the cross-attention (needed iff ``cross_attention``).
            attn_mask: self-attention mask or bias, as in :class:`~helpers.multihead.MultiHeadAttention`.
            key_mask: ``(B, L)`` (or ``(B, 1, 1, L)``) bool, ``True`` = real token
                (self-attention keys); see :class:`~helpers.multihead.MultiHeadAttention`.
            is_causal: causal self-attention, top-left as in PyTorch; with a cache the queries
                follow the cached tokens (the table in :mod:`helpers.masks`).
            memory_key_mask: ``(B, S)`` (or ``(B, 1, 1, S)``) bool, ``True`` = real memory token.
            key_padding_mask: not accepted (PyTorch's name, where ``True`` means "ignore"):
                raises a ``TypeError``; pass ``key_mask=~key_padding_mask``.
            memory_key_padding_mask: not accepted either; pass
                ``memory_key_mask=~memory_key_padding_mask``.
            need_weights: also return the attention weights (readable attention path).
            kv_cache: self-attention KV cache for incremental decoding.
            rope: rotary embedding for the self-attention.

        Returns:
            ``BlockOutput(hidden, self_weights, cross_weights)``.

        Shape:
            x: ``(B, L, D)``; memory: ``(B, S, D)``; hidden: ``(B, L, D)``;
            self_weights: ``(B, H, L, L)``; cross_weights: ``(B, H, L, S)``.
        """
        reject_pytorch_padding_mask("key_padding_mask", key_padding_mask, "key_mask")
        reject_pytorch_padding_mask("memory_key_padding_mask", memory_key_padding_mask, "memory_key_mask")
        if (memory is None) != (self.cross_attn is None):
            raise ValueError(
                "memory must be given exactly when the block has cross_attention=True; got memory "
                f"{None if memory is None else tuple(memory.shape)} and cross_attention={self.cross_attn is not None}"
            )

        def self_attention(h: Tensor) -> tuple[Tensor, Tensor | None]:
            return self.self_attn(
                h, attn_mask=attn_mask, key_mask=key_mask, is_causal=is_causal,
                need_weights=need_weights, kv_cache=kv_cache, rope=rope,
            )  # (B, L, D)

        def cross_attention(cross_attn: MultiHeadAttention, h: Tensor) -> tuple[Tensor, Tensor | None]:
            return cross_attn(
                h, memory, key_mask=memory_key_mask, need_weights=need_weights
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
