"""Multi-head attention: MHA, grouped-query (GQA) and multi-query (MQA), with a KV cache.

``MultiHeadAttention`` projects the inputs to ``H`` query heads and ``H_kv`` key/value heads,
attends in each head independently, concatenates the heads and mixes them with ``o_proj``.
``H_kv == H`` is the multi-head attention of Vaswani et al. (2017); ``H_kv == 1`` is
multi-query attention (Shazeer, 2019); anything in between is grouped-query attention
(Ainslie et al., 2023): each key/value head is shared by ``H / H_kv`` query heads.
Explained in chapter 4 (heads) and chapter 6 (KV cache, MQA/GQA).

Two attention paths sit side by side, as in nanoGPT: without ``need_weights`` the module calls
PyTorch's fused :func:`torch.nn.functional.scaled_dot_product_attention` (fast, for training);
with ``need_weights`` it calls this package's readable
:func:`helpers.attention.scaled_dot_product_attention`, which also returns the weights to draw.
Both give the same output (tested).

Shape legend:
    B     batch size
    L     number of queries (target length)
    S     number of keys/values (source length; with a cache: all cached + new tokens)
    D     model dimension ``embed_dim`` (= H * E)
    H     number of query heads ``num_heads``
    H_kv  number of key/value heads ``num_kv_heads``
    E     head dimension ``head_dim``
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import scaled_dot_product_attention
from .checks import check_attn_mask, check_key_mask, reject_pytorch_padding_mask
from .kv_cache import AttentionCache, KVCache, RollingKVCache, check_cache
from .masks import causal_mask
from .positional import RotaryEmbedding, apply_rotary_pos_emb, rotate_half

# The caches and the protocol the layer asks them through are defined in helpers.kv_cache and published
# here, where the book's pages and its API reference name them (helpers.multihead.KVCache).
__all__ = ["AttentionCache", "KVCache", "RollingKVCache", "MultiHeadAttention"]


def _check_input(name: str, x: object, dim: int, expected: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 3 or x.size(-1) != dim:
        raise ValueError(f"{name} must have shape (B, {expected}, {dim}), got {tuple(x.shape)}")


class MultiHeadAttention(nn.Module):
    """Multi-head attention with optional grouped/multi-query heads, KV cache and RoPE.

    ``MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W^O`` with
    ``head_h = Attention(Q W_h^Q, K W_h^K, V W_h^V)``. With ``num_kv_heads < num_heads`` the
    key/value projections produce fewer heads, each shared by ``num_key_value_groups`` query
    heads (GQA; MQA when ``num_kv_heads == 1``): query head ``h`` uses key/value head
    ``h // num_key_value_groups``.

    Papers: Vaswani et al., 2017, "Attention Is All You Need", section 3.2.2; Shazeer, 2019,
    "Fast Transformer Decoding: One Write-Head is All You Need" (MQA); Ainslie et al., 2023
    (GQA). Explained in chapters 4 and 6.

    Args:
        embed_dim: model dimension ``D``.
        num_heads: number of query heads ``H``; must divide ``D``.
        num_kv_heads: number of key/value heads ``H_kv`` (default ``H``); must divide ``H``.
        dropout: dropout probability on the attention weights (training mode only).
        bias: whether the four projections have biases.
        kdim: feature size of ``key`` inputs (default ``D``), for cross-attention.
        vdim: feature size of ``value`` inputs (default ``D``), for cross-attention.
        scale: factor applied to ``Q K^T`` (as in
            :func:`torch.nn.functional.scaled_dot_product_attention`); ``None`` means
            ``1 / sqrt(head_dim)``, the per-head scale of chapter 3.
        qk_norm: apply a LayerNorm over each head's query and key vectors (of size
            ``head_dim``, with a learned gain and bias shared by the heads) before the scores:
            "QK-norm" (Henry et al., 2020; Dehghani et al., 2023, "Scaling Vision Transformers to
            22 Billion Parameters"; Wortsman et al., 2023). It bounds the logits by the gains
            rather than by the growing projection weights, which prevents attention-entropy
            collapse at a high learning rate. Explained in chapter 6.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        *,
        num_kv_heads: int | None = None,
        dropout: float = 0.0,
        bias: bool = True,
        kdim: int | None = None,
        vdim: int | None = None,
        scale: float | None = None,
        qk_norm: bool = False,
    ) -> None:
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if embed_dim % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide embed_dim={embed_dim}")
        if num_heads % num_kv_heads:
            raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={num_heads}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))):
            raise TypeError(f"scale must be a float or None, got {type(scale).__name__} {scale!r}")
        self.scale = scale
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.num_key_value_groups = num_heads // num_kv_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.dropout = dropout
        self.q_proj = nn.Linear(embed_dim, num_heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(self.kdim, num_kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(self.vdim, num_kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(num_heads * self.head_dim, embed_dim, bias=bias)
        self.qk_norm = bool(qk_norm)
        self.q_norm = nn.LayerNorm(self.head_dim) if qk_norm else None
        self.k_norm = nn.LayerNorm(self.head_dim) if qk_norm else None

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        *,
        attn_mask: Tensor | None = None,
        key_mask: Tensor | None = None,
        is_causal: bool = False,
        need_weights: bool = False,
        kv_cache: AttentionCache | None = None,
        rope: RotaryEmbedding | None = None,
        head_mask: Tensor | None = None,
        key_padding_mask: None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attends from ``query`` to ``key``/``value`` (to ``query`` itself when ``key`` is None).

        Args:
            query: the tokens that ask.
            key: the tokens attended to (cross-attention); ``None`` for self-attention.
            value: the values of those tokens; defaults to ``key``.
            attn_mask: bool mask (``True`` = may attend) or float bias added to the scores,
                of shape ``(L, S)`` or broadcastable ``(B or 1, H or 1, L, S)``.
            key_mask: bool, ``True`` = a real token, ``False`` = padding to ignore, of shape
                ``(B, S)`` or ``(B, 1, 1, S)`` (what :func:`helpers.masks.padding_mask` returns).
                It is not called ``key_padding_mask`` because ``torch.nn.MultiheadAttention``'s
                argument of that name means the opposite (``True`` = ignore); here every boolean
                mask means "may attend". With a ``kv_cache`` it covers all ``S`` cached + new keys.
            key_padding_mask: not accepted: passing it raises a ``TypeError`` saying to pass
                ``key_mask=~key_padding_mask``, so that a mask copied from PyTorch code is not
                silently inverted.
            is_causal: each query sees only keys at or before its own position, top-left
                aligned as in :func:`torch.nn.functional.scaled_dot_product_attention`: query
                ``i`` sees keys ``j <= i``. With a ``kv_cache`` the queries are the tokens after
                the cached ones, at positions ``kv_cache.seq_len + i`` (as for ``rope``), so the
                new tokens see every cached token and each other up to themselves. May be
                combined with the masks above. The table in :mod:`helpers.masks` lists every
                ``is_causal`` of the package.
            need_weights: also return the attention weights (readable path); otherwise the
                fused PyTorch kernel runs and ``None`` is returned in their place.
            kv_cache: for incremental self-attention decoding, any cache of the protocol
                :class:`AttentionCache`: the new keys/values are stored in it and
                attention runs over what it returns, under the mask it asks for. A
                :class:`KVCache` keeps every position; a :class:`RollingKVCache` keeps its window,
                and each query attends to its ``window`` most recent positions; a
                :class:`~helpers.streaming.SinkKVCache` keeps its sinks and window, one token per
                call, with positions counted in the cache. Anything else raises a ``TypeError``
                that names it.
            rope: rotary embedding applied to queries and keys (self-attention only), at the
                positions the cache gives (its ``query_positions``:
                ``kv_cache.seq_len ...`` for a plain or rolling cache), ``0 ...`` without one.
            head_mask: one factor per query head (per example with shape ``(B, H)``) that
                multiplies each head's attention output before the heads are concatenated and
                mixed by ``o_proj``: 0 removes a head, 1 keeps it, anything in between scales it
                (Michel et al., 2019, "Are Sixteen Heads Really Better than One?", the mask
                variable xi_h). A bool mask means keep (``True``) / remove. It acts on query
                heads, so with GQA it removes one query head, not the key/value head it
                shares; the ``kv_cache`` is filled as without it. The returned weights are
                the heads' attention as computed (not multiplied). Explained in chapter 4.

        Returns:
            ``(output, weights)``; ``weights`` is float32 per head (average over dim 1 for
            ``torch.nn.MultiheadAttention``'s default), or ``None`` without ``need_weights``.
            A query whose keys are all masked gets zero weights and a zero attention output.

        Shape:
            query: ``(B, L, D)``; key: ``(B, S, kdim)``; value: ``(B, S, vdim)``;
            attn_mask: ``(L, S)`` or ``(B, H, L, S)`` (broadcastable); key_mask:
            ``(B, S)`` or ``(B, 1, 1, S)``; head_mask: ``(H,)`` or ``(B, H)``; output: ``(B, L, D)``;
            weights: ``(B, H, L, S)``.
        """
        reject_pytorch_padding_mask("key_padding_mask", key_padding_mask, "key_mask")
        key, value = self._check_inputs(query, key, value, kv_cache, rope)
        batch, length, _ = query.shape
        head_factors = self._head_factors(head_mask, batch, query)  # (B or 1, H, 1, 1) or None

        q = self.q_proj(query).view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, L, E)
        # (B, H_kv, S_new, E)
        k = self.k_proj(key).view(batch, key.size(1), self.num_kv_heads, self.head_dim).transpose(1, 2)
        # (B, H_kv, S_new, E)
        v = self.v_proj(value).view(batch, value.size(1), self.num_kv_heads, self.head_dim).transpose(1, 2)

        if self.q_norm is not None and self.k_norm is not None:  # QK-norm: each head's q and k normalised
            q, k = self.q_norm(q), self.k_norm(k)  # (B, H, L, E), (B, H_kv, S_new, E)
        past = 0 if kv_cache is None else kv_cache.seq_len
        # The cache says where the new tokens sit for RoPE, and whether it keeps its keys rotated
        # (rotated once, here) or not (rotated at every step by the positions it gives after update).
        rotate_on_read = kv_cache is not None and kv_cache.rotates_keys_on_read
        if rope is not None:
            positions = torch.arange(length, device=q.device) if kv_cache is None else (
                kv_cache.query_positions(length, device=q.device))  # (L,)
            cos, sin = rope(positions)  # (1, L, E) each
            if rotate_on_read:
                q = q * cos.unsqueeze(1).to(q.dtype) + rotate_half(q) * sin.unsqueeze(1).to(q.dtype)  # (B, H, L, E)
            else:
                q, k = apply_rotary_pos_emb(q, k, cos, sin)  # (B, H, L, E), (B, H_kv, L, E)
        cache_mask = None
        if kv_cache is not None:
            k, v = kv_cache.update(k, v)  # (B, H_kv, S, E) each: held + new positions
            if rope is not None and rotate_on_read:  # keys stored before RoPE: rotated where the cache says
                cos, sin = rope(kv_cache.key_positions(device=k.device))  # (1, S, E) each
                k = k * cos.unsqueeze(1).to(k.dtype) + rotate_half(k) * sin.unsqueeze(1).to(k.dtype)  # (B, H_kv, S, E)
            cache_mask = kv_cache.attention_mask(length, device=q.device)  # (L, S) or None (all visible)
        # Grouped query heads share each key/value head: the kernels expand the groups themselves
        # (enable_gqa; the readable path with repeat_kv), so the cache stays (B, H_kv, S, E).
        grouped = self.num_key_value_groups > 1

        mask, causal_flag = self._merge_masks(attn_mask, key_mask, is_causal, past, batch, length, k.size(2), q,
                                              cache_mask=cache_mask)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            out, weights = scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=causal_flag, scale=self.scale,
                enable_gqa=grouped, need_weights=True,
            )  # (B, H, L, E), (B, H, L, S)
        else:
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=causal_flag, scale=self.scale,
                enable_gqa=grouped,
            )  # (B, H, L, S) x (B, H_kv, S, E) -> (B, H, L, E)
            weights = None
        if head_factors is not None:
            out = out * head_factors  # (B, H, L, E) x (B or 1, H, 1, 1): head h's output scaled by head_mask[h]
        out = out.transpose(1, 2).reshape(batch, length, self.embed_dim)  # (B, L, D): heads concatenated
        return self.o_proj(out), weights  # (B, L, D)

    def _head_factors(self, head_mask: Tensor | None, batch: int, query: Tensor) -> Tensor | None:
        """Checks ``head_mask`` and returns it as factors of shape ``(B or 1, H, 1, 1)`` in the
        query's dtype (``None`` when there is no mask)."""
        if head_mask is None:
            return None
        if not isinstance(head_mask, Tensor):
            raise TypeError(f"head_mask must be a torch.Tensor or None, got {type(head_mask).__name__}")
        if head_mask.dtype != torch.bool and not head_mask.is_floating_point():
            raise TypeError(f"head_mask must be a float or bool tensor, got dtype {head_mask.dtype}")
        if head_mask.shape not in ((self.num_heads,), (batch, self.num_heads)):
            raise ValueError(
                f"head_mask must have shape (H,) = ({self.num_heads},) or (B, H) = {(batch, self.num_heads)}, "
                f"got {tuple(head_mask.shape)}"
            )
        if head_mask.device != query.device:
            raise ValueError(f"head_mask is on {head_mask.device}, the query on {query.device}")
        factors = head_mask.to(query.dtype)
        return factors.reshape(-1, self.num_heads, 1, 1)  # (B or 1, H, 1, 1)

    def _check_inputs(
        self,
        query: Tensor,
        key: Tensor | None,
        value: Tensor | None,
        kv_cache: AttentionCache | None,
        rope: RotaryEmbedding | None,
    ) -> tuple[Tensor, Tensor]:
        """Validates the inputs of :meth:`forward` and returns ``(key, value)`` (``query`` for
        self-attention), raising errors that name the argument and its shape."""
        _check_input("query", query, self.embed_dim, "L")
        if kv_cache is not None:
            check_cache("kv_cache", kv_cache)
            most = kv_cache.max_update_length
            if most is not None and query.size(1) > most:
                raise ValueError(f"kv_cache {type(kv_cache).__name__} takes at most {most} new token(s) per call, "
                                 f"got a query of {query.size(1)} tokens {tuple(query.shape)}: feed them in blocks")
        if rope is not None and rope.head_dim != self.head_dim:
            raise ValueError(f"rope.head_dim={rope.head_dim} must equal the head_dim={self.head_dim}")
        if key is None:
            if value is not None:
                raise ValueError("value was given without key; pass key too (or neither, for self-attention)")
            if self.kdim != self.embed_dim or self.vdim != self.embed_dim:
                raise ValueError(
                    f"self-attention (key=None) needs kdim == vdim == embed_dim, got kdim={self.kdim}, "
                    f"vdim={self.vdim}, embed_dim={self.embed_dim}"
                )
            return query, query
        value = key if value is None else value
        _check_input("key", key, self.kdim, "S")
        _check_input("value", value, self.vdim, "S")
        if key.shape[:2] != value.shape[:2] or key.size(0) != query.size(0):
            raise ValueError(
                f"query, key and value must share the batch size B, and key and value the length S; got "
                f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
            )
        if kv_cache is not None or rope is not None:
            raise ValueError("kv_cache and rope are for self-attention only (key=None)")
        return key, value

    def _merge_masks(
        self,
        attn_mask: Tensor | None,
        key_mask: Tensor | None,
        is_causal: bool,
        past: int,
        batch: int,
        length: int,
        source_length: int,
        query: Tensor,
        cache_mask: Tensor | None = None,
    ) -> tuple[Tensor | None, bool]:
        """Combines the causal, attention and key masks into one ``attn_mask``.

        Returns ``(mask, is_causal_flag)``: a causal mask alone, without a cache (``past == 0``),
        stays the ``is_causal`` flag, top-left as in PyTorch (the fused kernels skip the masked
        blocks); anything else becomes one boolean mask (``True`` = may attend) or, if
        ``attn_mask`` is a float bias, one float bias with ``-inf`` at masked positions. Shape
        ``(L, S)`` or ``(B or 1, H or 1, L, S)``. With a cache the new queries are the last ``L`` of
        the ``S`` keys it returns, so the causal mask is bottom-right aligned; ``cache_mask`` is
        what the cache asks for on top (a :class:`RollingKVCache`'s window), ``(L, S)``.
        """
        if attn_mask is None and key_mask is None and cache_mask is None and (not is_causal or past == 0):
            return None, is_causal
        weights_shape = (batch, self.num_heads, length, source_length)
        masks: list[Tensor] = []
        if attn_mask is not None:
            if isinstance(attn_mask, Tensor) and attn_mask.is_floating_point():
                attn_mask = attn_mask.to(query.dtype)  # a float bias of any precision is accepted here
            check_attn_mask(attn_mask, query, weights_shape)  # the same rules as scaled_dot_product_attention
            masks.append(attn_mask)
        if key_mask is not None:
            masks.append(check_key_mask("key_mask", key_mask, batch, source_length, query.device))  # (B, 1, 1, S)
        if is_causal:
            # queries at positions past .. past + L - 1, keys at 0 .. S - 1 (S = past + L with a cache)
            align = "top_left" if past == 0 else "bottom_right"
            masks.append(causal_mask(length, source_length, align=align, device=query.device))  # (L, S)
        if cache_mask is not None:
            if cache_mask.dtype != torch.bool or cache_mask.shape != (length, source_length):
                raise ValueError(f"the cache's attention_mask must be a bool (L, S) = {(length, source_length)} mask, "
                                 f"got {cache_mask.dtype} {tuple(cache_mask.shape)}")
            masks.append(cache_mask)  # (L, S): e.g. a rolling cache's window
        if all(m.dtype == torch.bool for m in masks):
            merged = masks[0]
            for m in masks[1:]:
                merged = merged & m  # broadcast to (B or 1, H or 1, L, S)
            return merged, False
        bias = torch.zeros((), dtype=query.dtype, device=query.device)
        for m in masks:
            if m.dtype == torch.bool:
                m = torch.zeros(m.shape, dtype=query.dtype, device=query.device).masked_fill(~m, float("-inf"))
            bias = bias + m  # broadcast to (B or 1, H or 1, L, S)
        return bias, False

    def extra_repr(self) -> str:
        return (
            f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, num_kv_heads={self.num_kv_heads}, "
            f"head_dim={self.head_dim}, dropout={self.dropout}"
            + (", qk_norm=True" if self.qk_norm else "")
        )
