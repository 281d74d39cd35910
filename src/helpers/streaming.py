"""Streaming decoding with attention sinks: keep the first tokens' keys and a recent window.

StreamingLLM (Xiao et al., 2023, "Efficient Streaming Language Models with Attention Sinks")
decodes past the trained length with a cache of fixed size: the keys and values of the first
``num_sinks`` tokens (the "attention sinks", 4 in the official code) and of the ``window`` most
recent ones. Two details of the official code (``mit-han-lab/streaming-llm``,
``pos_shift/modify_llama.py``) are reproduced here:

- keys are cached *before* RoPE, and rotated at every step by their slot in the cache
  (``0 .. num_sinks - 1`` for the sinks, then the recent tokens in order), the query by the
  last slot; the model thus never sees a distance larger than the cache;
- the cache is trimmed after each token, so its memory is ``num_sinks + window`` positions
  whatever the length decoded.

:class:`SinkKVCache` is the cache; :func:`sink_attention` runs one
:class:`~helpers.multihead.MultiHeadAttention` layer through it; :func:`streaming_logits`
decodes a :class:`~helpers.models.TinyGPT` token by token through one cache per layer.
Explained in chapter 6 ("Long context in practice").

Shape legend:
    B     batch size
    L     number of tokens decoded
    D     model dimension
    H     number of query heads
    H_kv  number of key/value heads
    E     head dimension
    S     keys a new token sees: the held sinks and recent tokens, itself included
    V     vocabulary size
"""

from __future__ import annotations

import torch
from torch import Tensor

from .attention import scaled_dot_product_attention
from .checks import check_int, check_positive_int
from .models import TinyGPT
from .multihead import MultiHeadAttention
from .positional import RotaryEmbedding, rotate_half

__all__ = ["SinkKVCache", "sink_attention", "streaming_logits"]


class SinkKVCache:
    """A KV cache of fixed size that keeps the first ``num_sinks`` tokens and the ``window`` latest.

    The token decoded at position ``t`` sees the sinks ``0 .. num_sinks - 1`` and the recent
    positions ``max(num_sinks, t - window + 1) .. t`` (itself included), ``S <= num_sinks + window``
    keys in all. The keys are stored without RoPE; :func:`sink_attention` rotates them by their
    rank among the kept keys (:meth:`positions`), as StreamingLLM's code does, never by their
    position in the text.

    Which baseline is which:

    - ``num_sinks > 0`` is StreamingLLM (Xiao et al., 2023, figure 1d).
    - ``num_sinks == 0`` is their "window attention" (figure 1b): the cached keys of the last
      ``window`` tokens, each computed once when its token was decoded (with the whole text
      before it in view at that time) and never recomputed. Counting positions inside the cache
      changes nothing for it: the query sits at the last slot and the key ``d`` tokens back at
      ``d`` slots before it, the same distance as with positions counted in the text, and RoPE
      scores depend on the distance only. It computes what
      :class:`~helpers.multihead.RollingKVCache` computes (tested). It is *not* their "sliding
      window with re-computation" (figure 1c), which rebuilds the window's keys from its tokens
      at every step, so that the window's first token is again a first token.

    Paper: Xiao et al., 2023, "Efficient Streaming Language Models with Attention Sinks"
    (arXiv 2309.17453), section 3; code: ``mit-han-lab/streaming-llm`` (``start_size=4``,
    ``recent_size=2000`` by default). Explained in chapter 6.

    Args:
        num_sinks: ``k``, the first tokens always kept (0 for window attention).
        window: ``W``, the recent tokens a query sees, itself included.

    Shape:
        sink_key: ``(B, H_kv, min(seq_len, k), E)``; key: ``(B, H_kv, <= W, E)`` (values alike, ``Ev``).
    """

    rotates_keys_on_read = True  # keys stored before RoPE, rotated by their slot at every step
    max_update_length = 1  # one token per update: positions are counted in the cache as it is then

    def __init__(self, num_sinks: int, window: int) -> None:
        self.num_sinks = check_int("num_sinks", num_sinks, minimum=0)
        self.window = check_positive_int("window", window)
        self.sink_key: Tensor | None = None  # (B, H_kv, <= k, E): positions 0 .. k - 1, before RoPE
        self.sink_value: Tensor | None = None
        self.key: Tensor | None = None  # (B, H_kv, <= W, E): the latest positions, before RoPE
        self.value: Tensor | None = None
        self.seq_len = 0  # tokens decoded so far

    @property
    def cached(self) -> int:
        """How many positions the cache holds now (at most ``num_sinks + window``)."""
        return sum(0 if t is None else t.size(2) for t in (self.sink_key, self.key))

    def reset(self) -> None:
        """Empties the cache (for a new sequence)."""
        self.sink_key = self.sink_value = self.key = self.value = None
        self.seq_len = 0

    def positions(self) -> Tensor:
        """The RoPE position of each held key: its slot, ``0 .. cached - 1`` (sinks first)."""
        device = None if self.sink_key is None and self.key is None else (
            self.sink_key if self.sink_key is not None else self.key).device
        return torch.arange(self.cached, device=device)  # (S,)

    def query_positions(self, length: int, device: torch.device | str | None = None) -> Tensor:
        """The RoPE position of the new token, asked before :meth:`update`: the last slot it will take.

        Part of the protocol :class:`~helpers.multihead.AttentionCache`, through which
        :class:`~helpers.multihead.MultiHeadAttention` decodes with this cache as
        :func:`sink_attention` does.

        Args:
            length: the number of new tokens; must be 1 (one token per update).
            device: where to make the positions.

        Shape:
            output: ``(1,)``.
        """
        if length != 1:
            raise ValueError(f"a SinkKVCache takes one token per update (token-by-token decoding), got "
                             f"length={length!r}")
        sinks = min(self.seq_len + 1, self.num_sinks)
        recent = min(self.seq_len + 1 - sinks, self.window)
        return torch.tensor([sinks + recent - 1], device=device)  # (1,)

    def key_positions(self, device: torch.device | str | None = None) -> Tensor:
        """The RoPE position of each held key, its slot ``0 .. S - 1``, asked after :meth:`update`.

        Shape:
            output: ``(S,)``.
        """
        return torch.arange(self.cached, device=device)  # (S,)

    def attention_mask(self, length: int, device: torch.device | str | None = None) -> None:
        """``None``: the new token sees every held key (the sinks and its window, itself included)."""
        return None

    def held_positions(self) -> list[int]:
        """The text positions of the held keys, sinks first (what a reference attends to)."""
        sinks = list(range(min(self.seq_len, self.num_sinks)))
        recent = 0 if self.key is None else self.key.size(2)
        return sinks + list(range(self.seq_len - recent, self.seq_len))

    def update(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Adds one new token, evicts what falls out of the window, returns every held key and value.

        Args:
            key: the new token's key, without RoPE.
            value: the new token's value.

        Returns:
            ``(key_all, value_all)``: the sinks then the recent tokens, oldest first, the new one
            last; rotate the keys by :meth:`positions`.

        Shape:
            key: ``(B, H_kv, 1, E)``, value: ``(B, H_kv, 1, Ev)`` -> ``(B, H_kv, S, E)``, ``(B, H_kv, S, Ev)``
        """
        if not isinstance(key, Tensor) or not isinstance(value, Tensor):
            raise TypeError(f"key and value must be tensors, got {type(key).__name__} and {type(value).__name__}")
        if key.dim() != 4 or value.dim() != 4 or key.shape[:3] != value.shape[:3] or key.size(2) != 1:
            raise ValueError(
                "key and value must have shapes (B, H_kv, 1, E) and (B, H_kv, 1, Ev): the cache takes one "
                f"token per update (token-by-token decoding); got key {tuple(key.shape)} and value "
                f"{tuple(value.shape)}"
            )
        held = self.sink_key if self.sink_key is not None else self.key
        held_value = self.sink_value if self.sink_value is not None else self.value
        if held is not None and held_value is not None and (
            (key.shape[:2], key.size(3), value.size(3)) != (held.shape[:2], held.size(3), held_value.size(3))
        ):
            raise ValueError(
                f"new key {tuple(key.shape)} / value {tuple(value.shape)} do not match the cached key "
                f"{tuple(held.shape)} / value {tuple(held_value.shape)} in B, H_kv, E or Ev"
            )
        if self.seq_len < self.num_sinks:  # one of the first k tokens: a sink, kept for good
            if self.sink_key is None or self.sink_value is None:
                self.sink_key, self.sink_value = key, value  # (B, H_kv, 1, E), (B, H_kv, 1, Ev)
            else:
                self.sink_key = torch.cat((self.sink_key, key), dim=2)  # (B, H_kv, <= k, E)
                self.sink_value = torch.cat((self.sink_value, value), dim=2)  # (B, H_kv, <= k, Ev)
        elif self.key is None or self.value is None:
            self.key, self.value = key, value  # (B, H_kv, 1, E), (B, H_kv, 1, Ev)
        else:  # append, then keep the latest W: a copy, so the dropped key is freed
            self.key = torch.cat((self.key, key), dim=2)[:, :, -self.window:].contiguous()  # (B, H_kv, <= W, E)
            self.value = torch.cat((self.value, value), dim=2)[:, :, -self.window:].contiguous()  # (B, H_kv, <= W, Ev)
        self.seq_len += 1
        keys = [t for t in (self.sink_key, self.key) if t is not None]
        values = [t for t in (self.sink_value, self.value) if t is not None]
        return torch.cat(keys, dim=2), torch.cat(values, dim=2)  # (B, H_kv, S, E), (B, H_kv, S, Ev)

    def __repr__(self) -> str:
        return f"SinkKVCache(num_sinks={self.num_sinks}, window={self.window}, seq_len={self.seq_len})"


def _rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """RoPE on ``(B, H, S, E)`` with ``cos``/``sin`` of shape ``(1, S, E)``, as in ``apply_rotary_pos_emb``."""
    return x * cos.unsqueeze(1).to(x.dtype) + rotate_half(x) * sin.unsqueeze(1).to(x.dtype)  # (B, H, S, E)


def sink_attention(
    layer: MultiHeadAttention,
    x: Tensor,
    cache: SinkKVCache,
    rope: RotaryEmbedding | None = None,
    *,
    need_weights: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Self-attention of one new token through a :class:`SinkKVCache`, with positions counted in the cache.

    Uses the projections, QK-norm, scale and grouped heads of ``layer`` (a
    :class:`~helpers.multihead.MultiHeadAttention`); only the cache and the positions differ
    from ``layer(x, is_causal=True, kv_cache=..., rope=rope)``: the new key is stored before
    RoPE, the ``S`` held keys are rotated by their slots ``0 .. S - 1`` and the query by
    ``S - 1`` (``pos_shift/modify_llama.py`` of StreamingLLM's code). Explained in chapter 6.

    Args:
        layer: the attention layer whose weights are used (self-attention).
        x: the new token's input.
        cache: this layer's cache, updated in place.
        rope: the rotary embedding, or ``None`` for a model without positions.
        need_weights: also return the attention weights over the held keys.

    Returns:
        ``(output, weights)``; ``weights`` is ``None`` unless asked.

    Shape:
        x: ``(B, 1, D)``; output: ``(B, 1, D)``; weights: ``(B, H, 1, S)``.
    """
    if not isinstance(layer, MultiHeadAttention):
        raise TypeError(f"layer must be a MultiHeadAttention, got {type(layer).__name__}")
    if not isinstance(cache, SinkKVCache):
        raise TypeError(f"cache must be a SinkKVCache, got {type(cache).__name__}")
    if not isinstance(x, Tensor) or x.dim() != 3 or x.size(1) != 1 or x.size(2) != layer.embed_dim:
        got = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"x must have shape (B, 1, {layer.embed_dim}) (one new token), got {got}")
    if rope is not None and rope.head_dim != layer.head_dim:
        raise ValueError(f"rope.head_dim={rope.head_dim} must equal the layer's head_dim={layer.head_dim}")
    batch = x.size(0)
    q = layer.q_proj(x).view(batch, 1, layer.num_heads, layer.head_dim).transpose(1, 2)  # (B, H, 1, E)
    k = layer.k_proj(x).view(batch, 1, layer.num_kv_heads, layer.head_dim).transpose(1, 2)  # (B, H_kv, 1, E)
    v = layer.v_proj(x).view(batch, 1, layer.num_kv_heads, layer.head_dim).transpose(1, 2)  # (B, H_kv, 1, E)
    if layer.q_norm is not None and layer.k_norm is not None:
        q, k = layer.q_norm(q), layer.k_norm(k)  # (B, H, 1, E), (B, H_kv, 1, E)
    keys, values = cache.update(k, v)  # (B, H_kv, S, E) each, before RoPE
    if rope is not None:
        cos, sin = rope(cache.positions())  # (1, S, E) each: slots 0 .. S - 1
        keys = _rotate(keys, cos, sin)  # (B, H_kv, S, E): each key at its slot
        q = _rotate(q, cos[:, -1:], sin[:, -1:])  # (B, H, 1, E): the query at the last slot
    dropout_p = layer.dropout if layer.training else 0.0
    out, weights = scaled_dot_product_attention(
        q, keys, values, dropout_p=dropout_p, scale=layer.scale, enable_gqa=layer.num_key_value_groups > 1,
        need_weights=True,
    )  # (B, H, 1, E), (B, H, 1, S): every held key is visible
    out = out.transpose(1, 2).reshape(batch, 1, layer.embed_dim)  # (B, 1, D): heads concatenated
    return layer.o_proj(out), (weights if need_weights else None)  # (B, 1, D)


@torch.no_grad()
def streaming_logits(
    model: TinyGPT, tokens: Tensor, caches: list[SinkKVCache], *, need_weights: bool = False
) -> tuple[Tensor, list[list[Tensor]] | None]:
    """Decodes ``tokens`` one at a time through one :class:`SinkKVCache` per layer; next-token logits.

    The model's own blocks are reused (Pre-LN: ``x + Attn(LN(x))``, then ``x + FFN(LN(x))``),
    with :func:`sink_attention` in place of their self-attention. The caches may already hold a
    prefix; they are updated in place. Supports a :class:`~helpers.models.TinyGPT` with
    ``positional="rope"`` or ``"none"`` and Pre-LN blocks, in eval mode. Explained in chapter 6.

    Args:
        model: the trained model.
        tokens: the tokens to feed, in order.
        caches: one cache per layer.
        need_weights: also return each step's attention weights, per layer.

    Returns:
        ``(logits, weights)``: ``weights[t][n]`` is layer ``n``'s ``(B, H, 1, S_t)`` at step
        ``t``, or ``None`` unless asked.

    Shape:
        tokens: ``(B, L)``; logits: ``(B, L, V)``.
    """
    if not isinstance(model, TinyGPT):
        raise TypeError(f"model must be a TinyGPT, got {type(model).__name__}")
    config = model.config
    if config.positional not in ("rope", "none") or not config.norm_first:
        raise ValueError(
            "streaming_logits needs a TinyGPT with positional='rope' or 'none' and norm_first=True, got "
            f"positional={config.positional!r}, norm_first={config.norm_first}"
        )
    if model.training:
        raise ValueError("model is in training mode: call model.eval() first (decoding runs without dropout)")
    if not isinstance(tokens, Tensor) or tokens.dim() != 2 or tokens.is_floating_point():
        got = tuple(tokens.shape) if isinstance(tokens, Tensor) else type(tokens).__name__
        raise ValueError(f"tokens must be an integer tensor of shape (B, L), got {got}")
    stack = model.stack
    if not isinstance(caches, (list, tuple)) or len(caches) != len(stack.blocks) or not all(
        isinstance(c, SinkKVCache) for c in caches
    ):
        raise ValueError(f"caches must be a list of {len(stack.blocks)} SinkKVCache (one per layer), got {caches!r}")
    logits, steps = [], []
    for t in range(tokens.size(1)):
        x = stack.token_embedding(tokens[:, t:t + 1])  # (B, 1, D)
        step_weights = []
        for block, cache in zip(stack.blocks, caches):
            attended, weights = sink_attention(
                block.self_attn, block.self_attn_norm(x), cache, stack.rope, need_weights=need_weights
            )  # (B, 1, D)
            x = x + attended  # (B, 1, D)
            x = x + block.ffn(block.ffn_norm(x))  # (B, 1, F) -> (B, 1, D)
            if weights is not None:
                step_weights.append(weights)
        logits.append(model.lm_head(stack.final_norm(x)))  # (B, 1, V)
        steps.append(step_weights)
    return torch.cat(logits, dim=1), (steps if need_weights else None)  # (B, L, V)
