"""What SmolLM2-135M's attention scores look like on real text: their spread, and the weight on the first token.

Chapter 3 divided ``q·k`` by ``sqrt(d_k)`` on an assumption: the entries of ``q`` and ``k`` are
independent, with mean 0 and variance 1, so that ``q·k`` has variance ``d_k`` and ``q·k/sqrt(d_k)``
variance 1. A trained model owes that assumption nothing: its projections set the size of ``q``
and ``k``. :func:`score_spread` measures, for every layer and head, the standard deviation of the
scaled scores ``q·k/sqrt(E)`` over the pairs a causal head compares (query ``t``, key ``j <= t``),
and that of the query's and key's entries; :func:`first_token_share` the mean weight a layer's
queries put on the text's first token, the "attention sink" of Xiao et al. (2024), which chapter
6.6 met on a toy.

Shape legend:
    B     texts
    N     layers; H query heads; H_kv key/value heads; E head size
    L     tokens
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from ..attention import repeat_kv
from ..llama import LlamaForCausalLM
from ..positional import apply_rotary_pos_emb

__all__ = ["ScoreSpread", "layer_queries_keys", "score_spread", "first_token_share"]


@dataclass(frozen=True)
class ScoreSpread:
    """The spread of every head's scaled scores on some texts.

    Attributes:
        std: ``(N, H)``: standard deviation of ``q·k/sqrt(E)`` over the causal pairs ``j <= t``
            with ``j >= 1`` (the first token, whose scores are a class of their own, apart).
        std_first: ``(N, H)``: the same over the scores of the first token, ``j = 0``, ``t >= 1``.
        mean_first_gap: ``(N, H)``: mean of (score of the first token minus the mean score of the
            other keys) over the queries ``t >= 1``.
        q_std: ``(N, H)``: standard deviation of the queries' entries (after RoPE).
        k_std: ``(N, H_kv)``: the same for the keys.
        head_dim: ``E``.
    """

    std: Tensor
    std_first: Tensor
    mean_first_gap: Tensor
    q_std: Tensor
    k_std: Tensor
    head_dim: int


def layer_queries_keys(model: LlamaForCausalLM, layer: int, hidden: Tensor) -> tuple[Tensor, Tensor]:
    """The queries and keys of one layer, rotated, from the residual stream entering it.

    Args:
        model: the Llama.
        layer: its index.
        hidden: the residual stream entering the layer (``run(..., output_hidden_states=True)``).

    Returns:
        ``(q, k)``, as the layer's attention computes them.

    Shape:
        hidden: ``(B, L, D)``; q: ``(B, H, L, E)``; k: ``(B, H_kv, L, E)``.
    """
    block = model.layers[layer]
    attention = block.self_attn
    batch, length, _ = hidden.shape
    h = block.input_layernorm(hidden)  # (B, L, D)
    q = attention.q_proj(h).view(batch, length, attention.num_heads, attention.head_dim).transpose(1, 2)
    k = attention.k_proj(h).view(batch, length, attention.num_kv_heads, attention.head_dim).transpose(1, 2)
    cos, sin = model.rotary_emb(length)  # (1, L, E)
    return apply_rotary_pos_emb(q, k, cos, sin)  # (B, H, L, E), (B, H_kv, L, E)


@torch.no_grad()
def score_spread(model: LlamaForCausalLM, hidden_states: list[Tensor]) -> ScoreSpread:
    """The spread of every head's scaled scores ``q·k/sqrt(E)`` on the texts that gave ``hidden_states``.

    Args:
        model: the Llama.
        hidden_states: the residual stream entering each layer
            (``model.run(ids, output_hidden_states=True).hidden_states``).

    Returns:
        A :class:`ScoreSpread`.
    """
    stds, firsts, gaps, q_stds, k_stds = [], [], [], [], []
    e = model.config.head_dim
    for index in range(len(model.layers)):
        q, k = layer_queries_keys(model, index, hidden_states[index])
        heads, kv_heads = q.size(1), k.size(1)
        scores = q @ repeat_kv(k, heads // kv_heads).transpose(-2, -1) / math.sqrt(e)  # (B, H, L, L)
        length = scores.size(-1)
        t = torch.arange(length)[:, None]
        j = torch.arange(length)[None, :]
        others = (j <= t) & (j >= 1)  # (L, L): the causal pairs, first token apart
        stds.append(scores[..., others].std(dim=(0, -1) if scores.dim() == 4 else -1))  # (H,)
        firsts.append(scores[..., 1:, 0].std(dim=(0, -1)))  # (H,)
        mean_others = (scores * others).sum(-1)[..., 1:] / others.sum(-1)[1:]  # (B, H, L - 1)
        gaps.append((scores[..., 1:, 0] - mean_others).mean(dim=(0, -1)))  # (H,)
        q_stds.append(q.transpose(0, 1).flatten(1).std(-1))  # (H,)
        k_stds.append(k.transpose(0, 1).flatten(1).std(-1))  # (H_kv,)
    return ScoreSpread(torch.stack(stds), torch.stack(firsts), torch.stack(gaps), torch.stack(q_stds),
                       torch.stack(k_stds), e)


def first_token_share(attentions: dict[int, Tensor], skip: int = 1) -> Tensor:
    """The mean weight each layer's heads put on the first token, over the queries ``skip`` and after.

    The first query has only the first token to look at (its weight there is 1): ``skip`` leaves
    out that many queries.

    Args:
        attentions: ``{layer: weights (B, H, L, L)}`` (``model.run(ids, need_weights=True).attentions``).
        skip: the first queries left out.

    Returns:
        ``(N, H)``, the layers in increasing order.
    """
    return torch.stack([attentions[i][:, :, skip:, 0].mean(dim=(0, 2)) for i in sorted(attentions)])  # (N, H)
