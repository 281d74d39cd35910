"""Key/value caches for token-by-token decoding, and what an attention layer asks of a cache.

A decoder that writes one token at a time keeps the keys and values of the tokens before it,
so that each step computes them for the new token only. This module holds the caches of
:class:`~helpers.multihead.MultiHeadAttention` and the protocol that says what the layer asks of
any cache (:class:`AttentionCache`), so that the layer never guesses a cache's kind from its
attributes:

- :class:`KVCache`: every position; RoPE at the position in the text (``seq_len + i``), keys stored
  rotated, once; no mask of its own.
- :class:`RollingKVCache`: the last ``W`` positions; RoPE in the text, keys stored rotated; it
  masks the keys outside each query's window (Mistral's sliding window).
- :class:`~helpers.streaming.SinkKVCache`: the first ``k`` tokens and the last ``W``; keys stored
  before RoPE and rotated at every step by their slot in the cache, ``0 .. S - 1`` (StreamingLLM).

The layer asks, in this order: :meth:`AttentionCache.query_positions` (the new tokens' RoPE
positions), :meth:`AttentionCache.update` (store the new keys and values, get back every key and
value the new queries may need), :meth:`AttentionCache.key_positions` (where to rotate the held
keys, for a cache with ``rotates_keys_on_read``), :meth:`AttentionCache.attention_mask` (which
held keys each new query may see). ``is_causal`` is the layer's own: it adds the causal mask,
bottom-right aligned, on top of the cache's mask. Explained in chapter 6 (the KV cache, long
context) and chapter 7 (the caches in a real model).

Shape legend:
    B     batch size
    L     number of new tokens in one update
    S     keys the new queries see: the held positions and the new ones
    H_kv  number of key/value heads
    E     head dimension (of the keys); ``Ev`` of the values
    W     window of a rolling cache
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch
from torch import Tensor

# AttentionCache, KVCache and RollingKVCache are defined here and published by helpers.multihead (``__all__``
# there), where the book's pages and API reference name them (helpers.multihead.KVCache): listed in both, an
# API page for this module would describe them twice.
__all__ = ["check_cache"]


@runtime_checkable
class AttentionCache(Protocol):
    """What :class:`~helpers.multihead.MultiHeadAttention` asks of a KV cache.

    :class:`KVCache`, :class:`RollingKVCache` and :class:`~helpers.streaming.SinkKVCache` follow
    it; any object with these members can be passed as ``kv_cache`` (it need not inherit from
    this class). Explained in chapter 6.

    Attributes:
        seq_len: tokens decoded so far (before the current update).
        rotates_keys_on_read: ``False`` when keys are stored rotated, at their position in the text,
            by the layer before :meth:`update` (RoPE once per key); ``True`` when they are stored
            before RoPE and the layer rotates every held key by :meth:`key_positions` after each
            update (StreamingLLM's positions counted inside the cache).
        max_update_length: the most new tokens one :meth:`update` takes (``None``: any number);
            the layer refuses more, and a decoder feeds a longer text in blocks of this size.
    """

    seq_len: int
    rotates_keys_on_read: bool
    max_update_length: int | None

    def query_positions(self, length: int, device: torch.device | str | None = None) -> Tensor:
        """The RoPE positions of the ``length`` new tokens, asked before :meth:`update`.

        Shape:
            output: ``(L,)``, int64.
        """
        ...

    def update(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Stores the new keys and values; returns every key and value the new queries may need.

        Shape:
            key: ``(B, H_kv, L, E)``, value: ``(B, H_kv, L, Ev)`` -> ``(B, H_kv, S, E)``, ``(B, H_kv, S, Ev)``,
            the new positions last.
        """
        ...

    def key_positions(self, device: torch.device | str | None = None) -> Tensor:
        """The RoPE position of each key the last :meth:`update` returned.

        Shape:
            output: ``(S,)``, int64.
        """
        ...

    def attention_mask(self, length: int, device: torch.device | str | None = None) -> Tensor | None:
        """Which keys of the last :meth:`update` each of the ``length`` new queries may see.

        Returns:
            A boolean mask (``True`` = may attend), or ``None`` when every returned key is
            visible (the layer's ``is_causal`` still applies).

        Shape:
            output: ``(L, S)``.
        """
        ...


_PROTOCOL = ("seq_len", "rotates_keys_on_read", "max_update_length", "query_positions", "update", "key_positions",
             "attention_mask")


def check_cache(name: str, cache: object) -> AttentionCache:
    """Returns ``cache`` if it follows :class:`AttentionCache`, else raises a ``TypeError`` naming it.

    Args:
        name: the argument's name, for the message.
        cache: what the caller passed.

    Returns:
        ``cache``, unchanged.

    Raises:
        TypeError: ``cache`` lacks a member of the protocol (a Hugging Face ``DynamicCache``, a
            tuple of tensors...); the message names its type and what it lacks.
    """
    if isinstance(cache, AttentionCache):
        return cache
    missing = [member for member in _PROTOCOL if not hasattr(cache, member)]
    raise TypeError(
        f"{name} must be a KV cache this package's attention can use (KVCache, RollingKVCache, SinkKVCache, or "
        f"an object with {', '.join(_PROTOCOL)}), got {type(cache).__name__}, which has no {', '.join(missing)}"
    )


def _text_positions(start: int, length: int, device: torch.device | str | None) -> Tensor:
    """Positions ``start .. start + length - 1`` (the new tokens, counted in the text)."""
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"length must be a positive int, got {length!r}")
    return torch.arange(start, start + length, device=device)  # (L,)


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

    rotates_keys_on_read = False  # keys are stored rotated, at their position in the text
    max_update_length = None  # any number of new tokens per update

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

    def query_positions(self, length: int, device: torch.device | str | None = None) -> Tensor:
        """The positions of the ``length`` new tokens in the text, ``seq_len .. seq_len + length - 1``.

        Shape:
            output: ``(L,)``.
        """
        return _text_positions(self.seq_len, length, device)  # (L,)

    def key_positions(self, device: torch.device | str | None = None) -> Tensor:
        """The position of every cached key in the text, ``0 .. seq_len - 1``.

        Shape:
            output: ``(S,)``.
        """
        return torch.arange(self.seq_len, device=device)  # (S,)

    def attention_mask(self, length: int, device: torch.device | str | None = None) -> None:
        """``None``: every cached key is visible (the layer's ``is_causal`` orders the new ones)."""
        return None

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
    Its :meth:`attention_mask` hides from each query the keys outside its window, so decoding
    through this cache in :class:`~helpers.multihead.MultiHeadAttention` equals one pass of
    attention under the sliding-window causal mask. ``seq_len``
    counts every position decoded (RoPE rotates the new tokens from there: positions are not
    wrapped, slots are).

    Paper: Jiang et al., 2023, "Mistral 7B", section 2 ("Rolling buffer cache"; their W = 4096).
    Explained in chapter 6.

    Args:
        window: ``W``, the keys a query sees.

    Shape:
        slots: ``(B, H_kv, W, E)`` and ``(B, H_kv, W, Ev)`` once full.
    """

    rotates_keys_on_read = False  # keys are stored rotated, at their position in the text
    max_update_length = None  # any number of new tokens per update (a block longer than W too)

    def __init__(self, window: int) -> None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be a positive int, got {window!r}")
        self.window = window
        self.key: Tensor | None = None  # (B, H_kv, W, E): slot p % W holds position p
        self.value: Tensor | None = None
        self.seq_len = 0  # positions decoded so far
        self._returned = 0  # keys the last update returned (held + new)
        self._new = 0  # new positions in the last update

    @property
    def cached(self) -> int:
        """How many positions the cache holds now, ``min(seq_len, window)``."""
        return min(self.seq_len, self.window)

    def reset(self) -> None:
        """Empties the cache (for a new sequence)."""
        self.key = self.value = None
        self.seq_len = self._returned = self._new = 0

    def query_positions(self, length: int, device: torch.device | str | None = None) -> Tensor:
        """The positions of the ``length`` new tokens in the text (not wrapped: slots are, positions are not).

        Shape:
            output: ``(L,)``.
        """
        return _text_positions(self.seq_len, length, device)  # (L,)

    def key_positions(self, device: torch.device | str | None = None) -> Tensor:
        """The positions in the text of the keys the last :meth:`update` returned, oldest first.

        Shape:
            output: ``(S,)``.
        """
        return torch.arange(self.seq_len - self._returned, self.seq_len, device=device)  # (S,)

    def attention_mask(self, length: int, device: torch.device | str | None = None) -> Tensor:
        """The window: query ``i`` (the ``i``-th new token) may see key ``j`` only if ``(S - L + i) - j < W``.

        Asked after :meth:`update`; ``length`` is the number of new tokens it took. With
        ``is_causal`` the layer also hides the keys after each query.

        Raises:
            ValueError: ``length`` is not the number of tokens of the last update.

        Shape:
            output: ``(L, S)``, bool.
        """
        if length != self._new:
            raise ValueError(f"length={length!r} must be the number of new tokens of the last update, {self._new}")
        i = torch.arange(length, device=device)[:, None] + self._returned - length  # (L, 1): the new queries
        j = torch.arange(self._returned, device=device)[None, :]  # (1, S)
        return i - j < self.window  # (L, S): keys older than the window are out of reach

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
            ``(key_all, value_all)``, oldest first: what the new queries may need
            (:meth:`attention_mask` keeps each one's window).

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
        self._returned, self._new = all_k.size(2), new
        return all_k, all_v

    def __repr__(self) -> str:
        return f"RollingKVCache(window={self.window}, seq_len={self.seq_len})"
