"""StreamingLLM's experiment in one pass: the loss of a long text under a window cache, with and without sinks.

A :class:`~helpers.streaming.SinkKVCache` decodes one token per call, which on SmolLM2-135M costs a
tenth of a second a token: 60 s for 600 tokens, over a page's budget for one setting. This module
computes the same logits in **one pass** over the text, by giving every query the keys, and the
RoPE distances, it would see in the cache (chapter 7):

- **which keys**: token ``t`` sees the sinks ``0 .. k - 1`` and the ``W`` latest tokens
  ``t - W + 1 .. t`` (the mask of :func:`cache_mask`); each token's keys and values are computed
  once, by the pass that reads that token, as in the cache (a token's hidden states depend only on
  what it saw, and the mask gives it the same view);
- **which distances**: the cache rotates its keys by their slot (``0 .. S - 1``) and the query by
  the last one, so a recent key ``j`` is ``t - j`` slots back, its distance in the text, but sink
  ``i`` is ``min(t, k + W - 1) - i`` slots back once the cache is full. RoPE scores depend on
  the distance only (``<R_m q, R_n k> = <q, R_{n-m} k>``): the recent keys' scores are the usual
  ones, and the sinks' are those of the query rotated at position ``min(t, k + W - 1)``
  (:func:`sink_query_positions`).

With ``num_sinks = 0`` this is the sliding-window mask (their "window attention"); with no window,
the plain causal pass. The tests check it against token-by-token decoding through
:class:`~helpers.streaming.SinkKVCache` on a random Llama and on SmolLM2-135M.

Paper: Xiao et al., 2024, "Efficient Streaming Language Models with Attention Sinks" (ICLR), section 3.2
(rolling KV cache with attention sinks; positions inside the cache) and table 1 (the first 4 tokens
with a window of 1,020 on Llama-2-13B, against a window of 1,024 alone).

Shape legend:
    B     texts
    L     tokens in each
    H     query heads; H_kv key/value heads; E head size
    V     vocabulary
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from ..attention import repeat_kv
from ..checks import check_int, check_positive_int
from ..llama import LlamaForCausalLM
from ..positional import apply_rotary_pos_emb

__all__ = ["cache_mask", "sink_query_positions", "cache_logits", "token_nll", "CacheLoss", "cache_losses"]


def cache_mask(length: int, num_sinks: int, window: int | None) -> Tensor:
    """Which keys each query sees through a cache of ``num_sinks`` sinks and a window of ``window``.

    ``True`` where key ``j`` is visible to query ``t``: ``j <= t`` and (``j < num_sinks`` or
    ``t - j < window``). ``window=None``: every earlier key (the full cache).

    Shape:
        output: ``(L, L)``, bool.
    """
    check_positive_int("length", length)
    check_int("num_sinks", num_sinks, minimum=0)
    t = torch.arange(length)[:, None]  # (L, 1): queries
    j = torch.arange(length)[None, :]  # (1, L): keys
    causal = j <= t
    if window is None:
        return causal  # (L, L)
    check_positive_int("window", window)
    return causal & ((j < num_sinks) | (t - j < window))  # (L, L)


def sink_query_positions(length: int, num_sinks: int, window: int) -> Tensor:
    """The position at which each query meets the sinks: its slot in the cache, ``min(t, k + W - 1)``.

    Shape:
        output: ``(L,)``, int64.
    """
    return torch.arange(length).clamp(max=num_sinks + window - 1)  # (L,)


def _attention(layer: torch.nn.Module, h: Tensor, cos: Tensor, sin: Tensor, mask: Tensor, num_sinks: int,
               sink_cos: Tensor | None, sink_sin: Tensor | None) -> Tensor:
    """One layer's attention under the cache's mask and distances (the readable path: scores, softmax)."""
    attention = layer.self_attn
    batch, length, _ = h.shape
    heads, kv_heads, e = attention.num_heads, attention.num_kv_heads, attention.head_dim
    q = attention.q_proj(h).view(batch, length, heads, e).transpose(1, 2)  # (B, H, L, E)
    k = attention.k_proj(h).view(batch, length, kv_heads, e).transpose(1, 2)  # (B, H_kv, L, E)
    v = attention.v_proj(h).view(batch, length, kv_heads, e).transpose(1, 2)  # (B, H_kv, L, E)
    q_text, k_text = apply_rotary_pos_emb(q, k, cos, sin)  # positions 0 .. L - 1
    k_text = repeat_kv(k_text, heads // kv_heads)  # (B, H, L, E)
    v = repeat_kv(v, heads // kv_heads)  # (B, H, L, E)
    scores = q_text @ k_text.transpose(-2, -1) / math.sqrt(e)  # (B, H, L, L)
    if num_sinks and sink_cos is not None and sink_sin is not None:
        q_sink, _ = apply_rotary_pos_emb(q, q[:, :1], sink_cos, sink_sin)  # each query at its slot in the cache
        scores[..., :num_sinks] = q_sink @ k_text[:, :, :num_sinks].transpose(-2, -1) / math.sqrt(e)  # (B, H, L, k)
    scores = scores.float().masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).to(v.dtype)  # (B, H, L, L)
    out = weights @ v  # (B, H, L, E)
    return attention.o_proj(out.transpose(1, 2).reshape(batch, length, heads * e))  # (B, L, D)


@torch.no_grad()
def cache_logits(model: LlamaForCausalLM, input_ids: Tensor, num_sinks: int = 0, window: int | None = None) -> Tensor:
    """The logits of decoding ``input_ids`` through a cache of ``num_sinks`` sinks and ``window`` recent tokens.

    The same logits as ``model(input_ids, caches=model.new_caches(lambda: SinkKVCache(num_sinks,
    window)))`` (token by token; tested), in one pass. ``window=None`` is the full cache (a plain
    causal pass); ``num_sinks=0`` the window alone.

    Args:
        model: the Llama.
        input_ids: the texts.
        num_sinks: ``k``, the first tokens always kept.
        window: ``W``, the latest tokens kept, the query's own included; ``None`` keeps all.

    Returns:
        The next-token logits at every position.

    Shape:
        input_ids: ``(B, L)``; output: ``(B, L, V)``.
    """
    if not isinstance(model, LlamaForCausalLM):
        raise TypeError(f"model must be a LlamaForCausalLM, got {type(model).__name__}")
    _, length = model._check_input_ids(input_ids)
    mask = cache_mask(length, num_sinks, window).to(input_ids.device)  # (L, L)
    cos, sin = model.rotary_emb(length)  # (1, L, E) each: positions in the text
    sink_cos = sink_sin = None
    if window is not None and num_sinks:
        sink_cos, sink_sin = model.rotary_emb(sink_query_positions(length, num_sinks, window).to(input_ids.device))
    x = model.embed_tokens(input_ids)  # (B, L, D)
    for layer in model.layers:
        x = x + _attention(layer, layer.input_layernorm(x), cos, sin, mask, num_sinks, sink_cos, sink_sin)
        x = x + layer.mlp(layer.post_attention_layernorm(x))  # (B, L, D)
    return model.lm_head(model.norm(x))  # (B, L, V)


def token_nll(logits: Tensor, input_ids: Tensor) -> Tensor:
    """The negative log-likelihood of each next token (nats): position ``t`` predicts token ``t + 1``.

    Shape:
        logits: ``(B, L, V)``; input_ids: ``(B, L)``; output: ``(B, L - 1)``.
    """
    return F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), input_ids[:, 1:].flatten(),
                           reduction="none").view(input_ids.size(0), -1)  # (B, L - 1)


@dataclass(frozen=True)
class CacheLoss:
    """The mean loss of one cache setting over the scored tokens.

    Attributes:
        name: e.g. ``"window 64"``, ``"4 sinks + 60"``, ``"full"``.
        num_sinks: ``k``.
        window: ``W`` (``None``: the full cache).
        nll: mean NLL per text over the scored tokens, nats ``(B,)``.
        per_token: the NLL of every next token, ``(B, L - 1)`` (position ``t`` predicts ``t + 1``).
    """

    name: str
    num_sinks: int
    window: int | None
    nll: Tensor
    per_token: Tensor

    @property
    def mean(self) -> float:
        """The mean over the texts."""
        return float(self.nll.mean())


def cache_losses(model: LlamaForCausalLM, input_ids: Tensor, cache_size: int, sinks: Sequence[int] = (0, 1, 4),
                 start: int | None = None, full: bool = True) -> list[CacheLoss]:
    """StreamingLLM in miniature: the loss of each text under the full cache and caches of ``cache_size`` keys.

    Each cache of ``cache_size`` keys holds ``k`` sinks and ``cache_size - k`` recent tokens, for
    each ``k`` of ``sinks`` (0: the window alone). The loss is the mean NLL of the tokens predicted
    at positions ``start`` and after (default ``2 * cache_size``: where every cache is full and has
    been for a while).

    Args:
        model: the Llama.
        input_ids: the texts.
        cache_size: keys in the cache.
        sinks: the numbers of sinks to try.
        start: the first position scored.
        full: also run the full cache (a plain causal pass), first.

    Returns:
        The full cache first (when ``full``), then one :class:`CacheLoss` a number of sinks.

    Shape:
        input_ids: ``(B, L)``.
    """
    check_positive_int("cache_size", cache_size)
    start = 2 * cache_size if start is None else start
    if not 0 <= start < input_ids.size(1) - 1:
        raise ValueError(f"start={start} must be a position before the last of {input_ids.size(1)} tokens")
    settings = [("full", 0, None)] * bool(full) + [
        (f"window {cache_size}" if k == 0 else f"{k} sink{'s' if k > 1 else ''} + {cache_size - k}", k, cache_size - k)
        for k in sinks]
    out = []
    for name, k, window in settings:
        nll = token_nll(cache_logits(model, input_ids, k, window), input_ids)  # (B, L - 1)
        out.append(CacheLoss(name, k, window, nll[:, start:].mean(-1), nll))
    return out
