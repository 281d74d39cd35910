"""Chapter 4, "Why many heads": the mechanics of multi-head attention, traced and counted.

No training here (see :mod:`helpers.experiments.heads_training`): one input followed through
:class:`~helpers.multihead.MultiHeadAttention` with the shape at each step, the proof by numbers
that H heads are H independent single-head attentions on slices of the projections followed by
one output projection, and what the number of heads costs at fixed ``embed_dim`` (parameters and
FLOPs, counted from the modules; the rank of each head's score matrix).

Shape legend:
    B  batch size;  L  sequence length;  D  model dimension;  H  heads;  E  head dimension D / H
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.utils.flop_counter import FlopCounterMode

from ..attention import scaled_dot_product_attention
from ..checks import check_positive_int, check_positive_ints
from ..multihead import MultiHeadAttention

__all__ = ["ShapeStep", "trace_shapes", "per_head_reference", "single_head_reference", "HeadCost",
           "head_costs", "score_ranks"]


@dataclass(frozen=True)
class ShapeStep:
    """One step of the forward pass: what it does, the code, and the shape it produces."""

    step: str
    code: str
    shape: tuple[int, ...]


def trace_shapes(layer: MultiHeadAttention, x: Tensor) -> list[ShapeStep]:
    """Follow ``x`` through ``layer`` (self-attention, no GQA) and record each intermediate shape.

    The steps are those of :meth:`~helpers.multihead.MultiHeadAttention.forward`; the result of the last step is
    checked against ``layer(x)`` (a ``RuntimeError`` if they differ).

    Args:
        layer: A layer with ``num_kv_heads == num_heads``.
        x: The input.

    Returns:
        One :class:`ShapeStep` per step, input to output.

    Shape:
        x: ``(B, L, D)``.
    """
    if layer.num_kv_heads != layer.num_heads:
        raise ValueError("trace_shapes follows plain multi-head attention: use num_kv_heads == num_heads")
    batch, length, _ = x.shape
    heads, head_dim = layer.num_heads, layer.head_dim
    steps = [ShapeStep("input", "x", tuple(x.shape))]
    q = layer.q_proj(x)  # (B, L, D)
    steps.append(ShapeStep("project (queries; keys and values alike)", "q_proj(x)", tuple(q.shape)))
    q = q.view(batch, length, heads, head_dim)  # (B, L, H, E)
    steps.append(ShapeStep("split the features into heads", ".view(B, L, H, E)", tuple(q.shape)))
    q = q.transpose(1, 2)  # (B, H, L, E)
    steps.append(ShapeStep("heads become a batch dimension", ".transpose(1, 2)", tuple(q.shape)))
    k = layer.k_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    v = layer.v_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)  # (B, H, L, L)
    steps.append(ShapeStep("scores, one L x L matrix per head", "q @ k.transpose(-2, -1) / √E", tuple(scores.shape)))
    weights = scores.softmax(-1)  # (B, H, L, L)
    out = weights @ v  # (B, H, L, E)
    steps.append(ShapeStep("softmax, then weighted sum of the values", "softmax(scores) @ v", tuple(out.shape)))
    out = out.transpose(1, 2)  # (B, L, H, E)
    steps.append(ShapeStep("heads back next to each other", ".transpose(1, 2)", tuple(out.shape)))
    out = out.reshape(batch, length, heads * head_dim)  # (B, L, D)
    steps.append(ShapeStep("concatenate the heads", ".reshape(B, L, D)", tuple(out.shape)))
    out = layer.o_proj(out)  # (B, L, D)
    steps.append(ShapeStep("mix the heads: output projection W^O", "o_proj(...)", tuple(out.shape)))
    if not torch.allclose(out, layer(x)[0], rtol=1e-5, atol=1e-6):
        raise RuntimeError("the traced steps do not reproduce the layer's output")
    return steps


def per_head_reference(layer: MultiHeadAttention, x: Tensor) -> tuple[Tensor, list[Tensor]]:
    """Multi-head attention as H separate single-head attentions plus one output projection.

    Head ``h`` uses rows ``h E .. (h+1) E - 1`` of ``q_proj.weight``, ``k_proj.weight`` and
    ``v_proj.weight`` (three ``E x D`` matrices: its own small projections; PyTorch stores
    ``W^T``, so these are columns of ``W_Q`` in the ``x W`` convention of chapter 4) and columns
    ``h E .. (h+1) E - 1`` of ``o_proj.weight`` (rows of ``W^O``). Nothing is reshaped:
    ``Concat(head_1..head_H) W^O = sum_h head_h W^O_h``.

    Args:
        layer: A plain multi-head layer (no GQA).
        x: The input.

    Returns:
        ``(output, contributions)``: the sum over heads (plus the output bias), and each head's
        term ``head_h (W^O_h)^T``.

    Shape:
        x: ``(B, L, D)``; output and each contribution: ``(B, L, D)``.
    """
    e = layer.head_dim
    contributions = []
    for h in range(layer.num_heads):
        rows = slice(h * e, (h + 1) * e)

        def project(proj: torch.nn.Linear) -> Tensor:
            bias = None if proj.bias is None else proj.bias[rows]
            return torch.nn.functional.linear(x, proj.weight[rows], bias)  # (B, L, E): this head's projection

        q, k, v = project(layer.q_proj), project(layer.k_proj), project(layer.v_proj)  # (B, L, E) each
        head = scaled_dot_product_attention(q, k, v)  # (B, L, E): one head, plain attention
        contributions.append(head @ layer.o_proj.weight[:, rows].T)  # (B, L, E) x (E, D) -> (B, L, D)
    output = torch.stack(contributions).sum(0)
    if layer.o_proj.bias is not None:
        output = output + layer.o_proj.bias
    return output, contributions


def single_head_reference(layer: MultiHeadAttention, x: Tensor) -> Tensor:
    """``layer`` with one head is plain scaled dot-product attention between its projections.

    Returns:
        ``o_proj(Attention(x W_Q, x W_K, x W_V))``.

    Shape:
        x: ``(B, L, D)`` -> ``(B, L, D)``.
    """
    if layer.num_heads != 1:
        raise ValueError(f"single_head_reference needs num_heads == 1, got {layer.num_heads}")
    return layer.o_proj(scaled_dot_product_attention(layer.q_proj(x), layer.k_proj(x), layer.v_proj(x)))


@dataclass(frozen=True)
class HeadCost:
    """What one layer costs, for each number of heads at a fixed ``embed_dim``."""

    num_heads: list[int]
    head_dim: list[int]
    parameters: list[int]
    flops_projections: list[int]
    flops_attention: list[int]

    @property
    def flops(self) -> list[int]:
        return [a + b for a, b in zip(self.flops_projections, self.flops_attention)]


def _count(layer: MultiHeadAttention, x: Tensor) -> tuple[int, int]:
    """FLOPs of the four projections and of the attention products, counted by PyTorch."""
    with FlopCounterMode(display=False) as counter:
        layer(x, need_weights=True)  # the readable path: matmuls PyTorch can count
    per_op = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
    projections = sum(n for op, n in per_op.items() if "addmm" in op or op.endswith(".mm"))
    return projections, sum(per_op.values()) - projections


def head_costs(embed_dim: int, num_heads: Sequence[int], *, seq_len: int = 64) -> HeadCost:
    """Parameters and forward FLOPs of a :class:`~helpers.multihead.MultiHeadAttention` layer for each number of heads.

    Parameters are summed over ``layer.parameters()``; FLOPs are counted by
    :class:`torch.utils.flop_counter.FlopCounterMode` on one forward pass of a ``(1, seq_len,
    embed_dim)`` input (a multiply-add counts 2), split into the projections and the two attention
    products ``Q K^T`` and ``weights V``.

    Args:
        embed_dim: The model dimension, fixed.
        num_heads: Numbers of heads to measure (each must divide ``embed_dim``).
        seq_len: Sequence length of the counted forward pass.
    """
    check_positive_int("embed_dim", embed_dim)
    heads = check_positive_ints("num_heads", num_heads)
    check_positive_int("seq_len", seq_len)
    x = torch.zeros(1, seq_len, embed_dim)
    params, proj, attn = [], [], []
    for h in heads:
        layer = MultiHeadAttention(embed_dim, h)
        params.append(sum(p.numel() for p in layer.parameters()))
        a, b = _count(layer, x)
        proj.append(a)
        attn.append(b)
    return HeadCost(heads, [embed_dim // h for h in heads], params, proj, attn)


def score_ranks(embed_dim: int, num_heads: Sequence[int], *, seq_len: int = 32, seed: int = 0) -> dict[int, list[int]]:
    """Rank of each head's ``L x L`` score matrix ``Q_h K_h^T`` for a random layer and input.

    A head's scores are a product of an ``L x E`` and an ``E x L`` matrix, so their rank is at
    most ``E = embed_dim / H``: with more heads each head has a poorer score matrix
    (Bhojanapalli et al., 2020, "Low-Rank Bottleneck in Multi-head Attention Models").

    Returns:
        Number of heads -> the rank of each head's score matrix.
    """
    check_positive_int("embed_dim", embed_dim)
    torch.manual_seed(seed)
    x = torch.randn(1, seq_len, embed_dim)
    ranks = {}
    for h in check_positive_ints("num_heads", num_heads):
        layer = MultiHeadAttention(embed_dim, h)
        e = layer.head_dim
        q = layer.q_proj(x).view(1, seq_len, h, e).transpose(1, 2)  # (1, H, L, E)
        k = layer.k_proj(x).view(1, seq_len, h, e).transpose(1, 2)  # (1, H, L, E)
        scores = (q.double() @ k.double().transpose(-2, -1))[0]  # (H, L, L), in float64 for an exact rank
        ranks[h] = [int(torch.linalg.matrix_rank(s)) for s in scores]
    return ranks
