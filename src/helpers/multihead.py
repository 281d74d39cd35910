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
from .masks import causal_mask
from .positional import RotaryEmbedding, apply_rotary_pos_emb

__all__ = ["KVCache", "RollingKVCache", "MultiHeadAttention"]


def _check_new_keys(key: Tensor, value: Tensor) -> None:
    """The shapes every cache's ``update`` takes: ``(B, H_kv, L_new, E)`` and ``(B, H_kv, L_new, Ev)``."""
    if key.dim() != 4 or value.dim() != 4 or key.shape[:3] != value.shape[:3]:
        raise ValueError(
            f"key and value must have shapes (B, H_kv, L_new, E) and (B, H_kv, L_new, Ev), "
            f"got key {tuple(key.shape)} and value {tuple(value.shape)}"
        )


class KVCache:
    """Keys and values of the tokens decoded so far, for incremental (token-by-token) decoding.

    At each step the new tokens' keys and values are appended and attention runs over all of
    them: the keys of earlier tokens are never recomputed. The cache holds ``H_kv`` heads, which
    is why MQA/GQA shrink it by ``H / H_kv``. Use one cache per attention layer.
    Explained in chapter 6.

    Args:
        max_length: optional limit on the number of cached positions; ``update`` past it raises
            a ``ValueError``.

    Shape:
        key: ``(B, H_kv, S_so_far, E)``; value: ``(B, H_kv, S_so_far, Ev)``
    """

    def __init__(self, max_length: int | None = None) -> None:
        if max_length is not None and (
            isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1
        ):
            raise ValueError(f"max_length must be a positive int or None, got {max_length!r}")
        self.max_length = max_length
        self.key: Tensor | None = None
        self.value: Tensor | None = None

    @property
    def seq_len(self) -> int:
        """Number of positions cached so far (0 when empty)."""
        return 0 if self.key is None else self.key.size(2)

    def reset(self) -> None:
        """Empties the cache (for a new sequence)."""
        self.key = None
        self.value = None

    def update(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Appends new keys and values and returns all of them.

        Args:
            key: keys of the new positions.
            value: values of the new positions.

        Returns:
            ``(key_all, value_all)``: cached followed by new positions.

        Shape:
            key: ``(B, H_kv, L_new, E)``, value: ``(B, H_kv, L_new, Ev)``
            -> ``(B, H_kv, S_so_far + L_new, E)``, ``(B, H_kv, S_so_far + L_new, Ev)``
        """
        _check_new_keys(key, value)
        if self.key is not None and self.value is not None:
            cached = (self.key.shape[:2], self.key.size(3), self.value.size(3))
            if (key.shape[:2], key.size(3), value.size(3)) != cached:
                raise ValueError(
                    f"new key {tuple(key.shape)} / value {tuple(value.shape)} do not match the cached key "
                    f"{tuple(self.key.shape)} / value {tuple(self.value.shape)} in B, H_kv, E or Ev"
                )
        new_len = self.seq_len + key.size(2)
        if self.max_length is not None and new_len > self.max_length:
            raise ValueError(
                f"KVCache is full: {self.seq_len} cached + {key.size(2)} new positions = {new_len} > "
                f"max_length={self.max_length}"
            )
        if self.key is None or self.value is None:
            self.key, self.value = key, value
        else:
            self.key = torch.cat((self.key, key), dim=2)  # (B, H_kv, S_so_far + L_new, E)
            self.value = torch.cat((self.value, value), dim=2)  # (B, H_kv, S_so_far + L_new, Ev)
        return self.key, self.value

    def __repr__(self) -> str:
        return f"KVCache(seq_len={self.seq_len}, max_length={self.max_length})"


class RollingKVCache:
    """A KV cache of fixed size for sliding-window attention: position ``p`` is kept in slot ``p mod W``.

    Each query attends to the ``window`` most recent positions, itself included (keys ``j`` with
    ``p - W < j <= p``). Older keys are never needed again, so the cache holds ``W`` positions
    whatever the length decoded: its memory is bounded by the window, not by the sequence.
    :class:`MultiHeadAttention` reads ``window`` and masks the keys outside it, so decoding through
    this cache equals one pass of attention under the sliding-window causal mask. ``seq_len``
    counts every position decoded (RoPE rotates the new tokens from there: positions are not
    wrapped, slots are).

    Paper: Jiang et al., 2023, "Mistral 7B", section 2 ("Rolling buffer cache"; their W = 4096).
    Explained in chapter 6.

    Args:
        window: ``W``, the keys a query sees.

    Shape:
        slots: ``(B, H_kv, W, E)`` and ``(B, H_kv, W, Ev)`` once full.
    """

    def __init__(self, window: int) -> None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be a positive int, got {window!r}")
        self.window = window
        self.key: Tensor | None = None  # (B, H_kv, W, E): slot p % W holds position p
        self.value: Tensor | None = None
        self.seq_len = 0  # positions decoded so far

    @property
    def cached(self) -> int:
        """How many positions the cache holds now, ``min(seq_len, window)``."""
        return min(self.seq_len, self.window)

    def reset(self) -> None:
        """Empties the cache (for a new sequence)."""
        self.key = self.value = None
        self.seq_len = 0

    def _in_order(self) -> tuple[Tensor, Tensor]:
        """The held positions, oldest first: ``seq_len - cached .. seq_len - 1``."""
        if self.key is None or self.value is None:
            raise RuntimeError("the cache is empty: nothing is held before the first update")
        slots = torch.arange(self.seq_len - self.cached, self.seq_len, device=self.key.device) % self.window
        return self.key[:, :, slots], self.value[:, :, slots]  # (B, H_kv, cached, E), (B, H_kv, cached, Ev)

    def update(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Returns the held positions followed by the new ones, then keeps the last ``W`` in their slots.

        Args:
            key: keys of the new positions.
            value: values of the new positions.

        Returns:
            ``(key_all, value_all)``, oldest first: what the new queries may need (the mask of
            :class:`MultiHeadAttention` keeps each one's window).

        Shape:
            key: ``(B, H_kv, L_new, E)``, value: ``(B, H_kv, L_new, Ev)``
            -> ``(B, H_kv, cached + L_new, E)``, ``(B, H_kv, cached + L_new, Ev)``
        """
        _check_new_keys(key, value)
        if self.key is None or self.value is None:
            self.key = key.new_zeros(*key.shape[:2], self.window, key.size(3))  # (B, H_kv, W, E)
            self.value = value.new_zeros(*value.shape[:2], self.window, value.size(3))  # (B, H_kv, W, Ev)
            held_k, held_v = key[:, :, :0], value[:, :, :0]
        elif (key.shape[:2], key.size(3), value.size(3)) != (self.key.shape[:2], self.key.size(3), self.value.size(3)):
            raise ValueError(
                f"new key {tuple(key.shape)} / value {tuple(value.shape)} do not match the cached key "
                f"{tuple(self.key.shape)} / value {tuple(self.value.shape)} in B, H_kv, E or Ev"
            )
        else:
            held_k, held_v = self._in_order()
        all_k = torch.cat((held_k, key), dim=2)  # (B, H_kv, cached + L_new, E)
        all_v = torch.cat((held_v, value), dim=2)  # (B, H_kv, cached + L_new, Ev)
        new = key.size(2)
        kept = min(new, self.window)  # the newest positions go to their slots
        positions = torch.arange(self.seq_len + new - kept, self.seq_len + new, device=key.device)
        self.key[:, :, positions % self.window] = key[:, :, new - kept:]
        self.value[:, :, positions % self.window] = value[:, :, new - kept:]
        self.seq_len += new
        return all_k, all_v

    def __repr__(self) -> str:
        return f"RollingKVCache(window={self.window}, seq_len={self.seq_len})"


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
        kv_cache: KVCache | RollingKVCache | None = None,
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
            kv_cache: for incremental self-attention decoding: the new keys/values are
                appended to it and attention runs over all cached positions; a
                :class:`RollingKVCache` keeps only its window, and each query attends to its
                ``window`` most recent positions.
            rope: rotary embedding applied to queries and keys (self-attention only), at
                positions ``kv_cache.seq_len ...`` when a cache is used, ``0 ...`` otherwise.
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
        if rope is not None:
            cos, sin = rope(length, offset=past)  # (1, L, E) each
            q, k = apply_rotary_pos_emb(q, k, cos, sin)  # (B, H, L, E), (B, H_kv, L, E)
        if kv_cache is not None:
            k, v = kv_cache.update(k, v)  # (B, H_kv, S, E) each, S = past + L
        # Grouped query heads share each key/value head: the kernels expand the groups themselves
        # (enable_gqa; the readable path with repeat_kv), so the cache stays (B, H_kv, S, E).
        grouped = self.num_key_value_groups > 1

        window = getattr(kv_cache, "window", None)  # a RollingKVCache: each query sees its last `window` keys
        mask, causal_flag = self._merge_masks(attn_mask, key_mask, is_causal, past, batch, length, k.size(2), q,
                                              window=window)
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
        kv_cache: KVCache | RollingKVCache | None,
        rope: RotaryEmbedding | None,
    ) -> tuple[Tensor, Tensor]:
        """Validates the inputs of :meth:`forward` and returns ``(key, value)`` (``query`` for
        self-attention), raising errors that name the argument and its shape."""
        _check_input("query", query, self.embed_dim, "L")
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
        window: int | None = None,
    ) -> tuple[Tensor | None, bool]:
        """Combines the causal, attention and key masks into one ``attn_mask``.

        Returns ``(mask, is_causal_flag)``: a causal mask alone, without a cache (``past == 0``),
        stays the ``is_causal`` flag, top-left as in PyTorch (the fused kernels skip the masked
        blocks); anything else becomes one boolean mask (``True`` = may attend) or, if
        ``attn_mask`` is a float bias, one float bias with ``-inf`` at masked positions. Shape
        ``(L, S)`` or ``(B or 1, H or 1, L, S)``. With ``past`` cached positions the queries sit
        at ``past + i`` and the keys at ``j``, so the causal mask is ``j <= past + i``. With a
        ``window`` (a :class:`RollingKVCache`) the keys are the last ``S`` positions and the new
        queries the last ``L`` of them: query ``i`` may attend to key ``j`` only if
        ``(S - L + i) - j < window``.
        """
        if attn_mask is None and key_mask is None and window is None and (not is_causal or past == 0):
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
        if window is not None:  # the new queries are the last L of the S keys held
            i = torch.arange(length, device=query.device)[:, None] + source_length - length  # (L, 1)
            j = torch.arange(source_length, device=query.device)[None, :]  # (1, S)
            masks.append(i - j < window)  # (L, S): keys older than the window are out of reach
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
