"""Chapter 4, "Why many heads": the mechanics of multi-head attention, traced and counted.

No training here (see :mod:`helpers.experiments.heads_training`): one input followed through
:class:`~helpers.multihead.MultiHeadAttention` with the shape at each step, the proof by numbers
that H heads are H independent single-head attentions on slices of the projections followed by
one output projection, and what the number of heads costs at fixed ``embed_dim`` (parameters and
matmul FLOPs, counted from the modules, which do not change; the score tensor, its softmax and the
wall time, measured, which grow with H; the rank of each head's score matrix).

Shape legend:
    B  batch size;  L  sequence length;  D  model dimension;  H  heads;  E  head dimension D / H
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.utils.flop_counter import FlopCounterMode

from .. import seeding
from ..attention import scaled_dot_product_attention
from ..checks import check_positive_int, check_positive_ints, check_tensor
from ..multihead import MultiHeadAttention
from ..train import num_threads

__all__ = ["ShapeStep", "trace_shapes", "multihead_core", "per_head_reference", "single_head_reference", "HeadCost",
           "head_costs", "ScoreCost", "score_costs", "score_ranks"]


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


def _check_core(x: Tensor, weights: dict[str, Tensor], num_heads: int) -> None:
    """The checks of :func:`multihead_core`, kept out of its listing."""
    check_tensor("x", x)
    if x.dim() != 3:
        raise ValueError(f"x must have shape (B, L, D), got {tuple(x.shape)}")
    check_positive_int("num_heads", num_heads)
    d = x.size(-1)
    if d % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide the model dimension D={d} of x")
    for name, w in weights.items():
        check_tensor(name, w)
        if w.shape != (d, d):
            raise ValueError(f"{name} must have shape (D, D) = {(d, d)}, got {tuple(w.shape)}")


def multihead_core(x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, w_o: Tensor, num_heads: int) -> Tensor:
    """The core of multi-head self-attention in ten lines, without biases, masks or dropout.

    What :class:`~helpers.multihead.MultiHeadAttention` computes once its options are stripped
    (chapter 4, "Why many heads"). The matrices act on the right, ``x W`` (the chapter's
    convention): ``W`` has shape ``(D_in, D_out)``. A :class:`torch.nn.Linear` computes
    ``x @ weight.T``, so ``W = linear.weight.T``: pass ``layer.q_proj.weight.T`` and so on. Head
    ``h`` owns columns ``h E .. (h+1) E - 1`` of ``w_q``, ``w_k``, ``w_v`` (rows of the Linear's
    ``weight``) and rows ``h E .. (h+1) E - 1`` of ``w_o`` (columns of ``o_proj.weight``).

    Args:
        x: The tokens.
        w_q: Query projection ``W_Q``.
        w_k: Key projection ``W_K``.
        w_v: Value projection ``W_V``.
        w_o: Output projection ``W^O``, which mixes the concatenated heads.
        num_heads: Number of heads H; must divide D.

    Returns:
        ``Concat(head_1, ..., head_H) W^O`` with ``head_h = softmax(Q_h K_h^T / √E) V_h``.

    Raises:
        TypeError: a non-tensor or non-float input; ``num_heads`` not an int.
        ValueError: ``x`` not 3-D, a weight not ``(D, D)``, ``num_heads`` not dividing D.

    Shape:
        x: ``(B, L, D)``; each weight: ``(D, D)``; output: ``(B, L, D)``.
    """
    _check_core(x, {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o}, num_heads)
    B, L, D = x.shape  # batch, tokens, model width
    H, E = num_heads, D // num_heads  # heads, head size
    q = (x @ w_q).view(B, L, H, E).transpose(1, 2)  # (B, H, L, E)
    k = (x @ w_k).view(B, L, H, E).transpose(1, 2)  # (B, H, L, E)
    v = (x @ w_v).view(B, L, H, E).transpose(1, 2)  # (B, H, L, E)
    scores = q @ k.transpose(-2, -1) / math.sqrt(E)  # (B, H, L, L): one L x L matrix per head
    weights = scores.softmax(dim=-1)  # (B, H, L, L)
    heads = weights @ v  # (B, H, L, E)
    concat = heads.transpose(1, 2).reshape(B, L, D)  # (B, L, H, E) -> (B, L, D): heads side by side
    return concat @ w_o  # (B, L, D)


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
        term ``head_h W^O_h`` (``W^O_h``: rows ``h E .. (h+1) E - 1`` of ``W^O``).

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


@dataclass(frozen=True)
class ScoreCost:
    """The score tensor of each number of heads at a fixed ``embed_dim``, and the time it costs.

    One list entry per number of heads, in the order of ``num_heads``.

    Attributes:
        embed_dim: The model dimension D.
        batch_size: B of the timed input.
        seq_len: L of the timed input.
        num_heads: The numbers of heads H.
        score_bytes: Bytes of the float32 ``(B, H, L, L)`` weights the readable path returned.
        score_elements: ``B H L^2``, the entries the scaling and the softmax go through.
        readable_ms: Median milliseconds of one forward pass with ``need_weights=True``.
        fused_ms: Median milliseconds of one forward pass with ``need_weights=False``.
        repeats: Timed passes per measurement (after one warm-up).
        threads: PyTorch threads while timing.
    """

    embed_dim: int
    batch_size: int
    seq_len: int
    num_heads: list[int]
    score_bytes: list[int]
    score_elements: list[int]
    readable_ms: list[float]
    fused_ms: list[float]
    repeats: int
    threads: int

    @property
    def score_mib(self) -> list[float]:
        """``score_bytes`` in MiB (2^20 bytes)."""
        return [b / 2**20 for b in self.score_bytes]


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time in ms of ``repeats`` calls of ``fn``, after one untimed warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def score_costs(embed_dim: int, num_heads: Sequence[int], *, batch_size: int = 8, seq_len: int = 256,
                repeats: int = 3, threads: int = 1, seed: int = 0) -> ScoreCost:
    """Measure what grows with the number of heads, the score tensor, its softmax and the wall time.

    At fixed ``embed_dim`` the parameters and the matmul FLOPs do not depend on H
    (:func:`head_costs`), but every head has its own ``L x L`` scores: the ``(B, H, L, L)``
    tensor, its scaling and its softmax grow like ``H L^2`` (chapter 4, "Why many heads").
    :class:`torch.utils.flop_counter.FlopCounterMode` counts matrix products only, so this
    elementwise work is missing from :func:`head_costs`'s FLOPs; here it is counted as
    ``B H L^2`` entries and timed.

    For each H, one :class:`~helpers.multihead.MultiHeadAttention` ``(embed_dim, H)`` runs on a
    random ``(B, L, embed_dim)`` input under :func:`torch.no_grad`, with ``threads`` threads:
    on the readable path (``need_weights=True``, :func:`helpers.attention.scaled_dot_product_attention`,
    which materialises the weights) and on the fused path (``need_weights=False``,
    :func:`torch.nn.functional.scaled_dot_product_attention`). Each time is the median of
    ``repeats`` passes after one warm-up. The bytes are read from the weights the readable path
    returned and checked against ``B H L^2 x 4`` (a ``RuntimeError`` if they differ).

    Args:
        embed_dim: The model dimension D, fixed.
        num_heads: Numbers of heads to measure (each must divide ``embed_dim``).
        batch_size: B of the input.
        seq_len: L of the input.
        repeats: Timed passes per path and H.
        threads: PyTorch intra-op threads while timing.
        seed: Seed of the layers' initialisation and of the input.

    Returns:
        A :class:`ScoreCost`, one entry per H.

    Raises:
        TypeError: a size that is not an int.
        ValueError: a size below 1, or an H that does not divide ``embed_dim``.
    """
    for name, value in (("embed_dim", embed_dim), ("batch_size", batch_size), ("seq_len", seq_len),
                        ("repeats", repeats), ("threads", threads)):
        check_positive_int(name, value)
    heads = check_positive_ints("num_heads", num_heads)
    for h in heads:
        if embed_dim % h:
            raise ValueError(f"num_heads={h} must divide embed_dim={embed_dim}")
    seeding.manual_seed(seed)
    x = torch.randn(batch_size, seq_len, embed_dim)  # (B, L, D)
    nbytes, elements, readable, fused = [], [], [], []
    with num_threads(threads), torch.no_grad():
        for h in heads:
            layer = MultiHeadAttention(embed_dim, h).eval()
            _, weights = layer(x, need_weights=True)  # (B, H, L, L)
            expected = batch_size * h * seq_len * seq_len
            if weights is None or weights.shape != (batch_size, h, seq_len, seq_len) or weights.dtype != torch.float32:
                raise RuntimeError(f"the readable path did not return (B, H, L, L) float32 weights for H={h}")
            size = weights.numel() * weights.element_size()
            if size != expected * 4:
                raise RuntimeError(f"score tensor of {size} bytes for H={h}, expected B·H·L·L·4 = {expected * 4}")
            nbytes.append(size)
            elements.append(weights.numel())
            readable.append(_median_ms(lambda: layer(x, need_weights=True), repeats))
            fused.append(_median_ms(lambda: layer(x, need_weights=False), repeats))
    return ScoreCost(embed_dim, batch_size, seq_len, heads, nbytes, elements, readable, fused, repeats, threads)


def score_ranks(embed_dim: int, num_heads: Sequence[int], *, seq_len: int = 32, seed: int = 0) -> dict[int, list[int]]:
    """Rank of each head's ``L x L`` score matrix ``Q_h K_h^T`` for a random layer and input.

    A head's scores are a product of an ``L x E`` and an ``E x L`` matrix, so their rank is at
    most ``E = embed_dim / H``: with more heads each head has a poorer score matrix
    (Bhojanapalli et al., 2020, "Low-Rank Bottleneck in Multi-head Attention Models").

    Returns:
        Number of heads -> the rank of each head's score matrix.
    """
    check_positive_int("embed_dim", embed_dim)
    seeding.manual_seed(seed)
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
