"""Experiments of chapter 6.3: memory and long sequences.

- :func:`attention_layer_memory`: peak bytes of one attention layer's forward and backward against
  the length ``n`` (recorded by :class:`~helpers.memory.TensorMemoryTracker`), beside the analytic
  size of one ``H x n x n`` float32 score matrix.
- :func:`checkpointing_trade`: peak memory and time of a small model's training step with and
  without gradient checkpointing of its blocks.
- :func:`chunked_exactness`, :func:`chunked_memory`: the online-softmax loop equals softmax
  attention, and its largest tensor grows like ``n`` instead of ``n^2``.
- :func:`training_memory`, :func:`recomputing_gradients`: memory *with gradients* against ``n`` for
  materialised attention, autograd through the online softmax, and the backward pass that
  recomputes its blocks (:func:`helpers.flash_backward.recomputing_attention`); the last one's
  gradients against dense attention's.
- :func:`precision_memory`: the same attention in float32 and bfloat16, memory and error.
- :func:`softmax_precision`: where 16-bit arithmetic actually breaks softmax attention (the
  logits in float16, the running sum in bfloat16), not its exponentials.

All seeded and sized for a 2-core CPU (one thread).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from helpers.attention import scaled_dot_product_attention
from helpers.chunked import online_softmax_attention
from helpers.flash_backward import recomputing_attention
from helpers.memory import TensorMemoryTracker, checkpointed
from helpers.models import TinyConfig, TinyGPT
from helpers.multihead import MultiHeadAttention
from helpers.train import cross_entropy_loss, num_threads

from .. import seeding

__all__ = [
    "attention_layer_memory",
    "checkpointing_trade",
    "chunked_exactness",
    "chunked_memory",
    "precision_memory",
    "training_memory",
    "recomputing_gradients",
    "growth_exponent",
    "softmax_precision",
]


def attention_layer_memory(
    lengths: Sequence[int] = (128, 256, 512, 1024), *, embed_dim: int = 64, num_heads: int = 4, seed: int = 0,
) -> dict[str, list[float]]:
    """Peak bytes allocated by one attention layer's forward and backward (readable path), batch 1.

    The layer runs with ``need_weights=True``, the path that builds the score matrix as a tensor
    (what a framework without a fused kernel does). ``score_matrix_bytes`` is the analytic size of
    one ``H x n x n`` float32 matrix; ``peak / score_matrix_bytes`` says how many such matrices are
    alive at the worst moment.

    Returns:
        ``{"n", "forward_peak", "backward_peak", "score_matrix_bytes"}`` (bytes).
    """
    seeding.manual_seed(seed)
    layer = MultiHeadAttention(embed_dim, num_heads)
    out: dict[str, list[float]] = {"n": [], "forward_peak": [], "backward_peak": [], "score_matrix_bytes": []}
    with num_threads(1):
        for n in lengths:
            x = torch.randn(1, n, embed_dim, requires_grad=True)  # (B, L, D)
            with TensorMemoryTracker() as fwd:
                y, _ = layer(x, is_causal=True, need_weights=True)
            with TensorMemoryTracker() as bwd:
                y.sum().backward()
            before_backward = fwd.current_bytes  # what the forward left alive for the backward
            out["n"].append(float(n))
            out["forward_peak"].append(float(fwd.peak_bytes))
            out["backward_peak"].append(float(before_backward + bwd.peak_bytes))
            out["score_matrix_bytes"].append(float(num_heads * n * n * 4))
            del y, x
    return out


def _peak_and_time(model: TinyGPT, tokens: torch.Tensor, repeats: int) -> tuple[float, float]:
    """Peak tracked bytes of one training step (forward, loss, backward) and its best CPU time."""
    def step() -> None:
        model.zero_grad(set_to_none=True)
        logits = model(tokens[:, :-1]).output  # (B, L, V)
        cross_entropy_loss(logits, tokens[:, 1:]).backward()

    step()  # warm-up, and the gradients' buffers exist from here on
    model.zero_grad(set_to_none=True)
    with TensorMemoryTracker() as tracker:
        step()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        step()
        best = min(best, time.process_time() - start)
    return float(tracker.peak_bytes), best


def checkpointing_trade(
    *, num_layers: int = 8, embed_dim: int = 64, seq_len: int = 256, batch: int = 8, repeats: int = 5, seed: int = 0,
) -> dict[str, float]:
    """One training step of a tiny GPT with every block checkpointed, against the plain model.

    Returns:
        ``{"plain_bytes", "checkpointed_bytes", "plain_seconds", "checkpointed_seconds", "max_grad_gap"}``:
        tracked peak bytes of a step, its best CPU time, and the largest difference between the
        gradients of the two models (checkpointing recomputes; it must not change the result).
    """
    seeding.manual_seed(seed)
    config = TinyConfig(vocab_size=32, embed_dim=embed_dim, num_heads=4, num_layers=num_layers,
                        max_positions=seq_len, positional="learned")
    plain = TinyGPT(config)
    wrapped = TinyGPT(config)
    wrapped.load_state_dict(plain.state_dict())
    wrapped.stack.blocks = torch.nn.ModuleList(checkpointed(block) for block in wrapped.stack.blocks)
    tokens = torch.randint(0, 32, (batch, seq_len + 1), generator=seeding.generator(seed))
    with num_threads(1):
        plain_bytes, plain_seconds = _peak_and_time(plain, tokens, repeats)
        ckpt_bytes, ckpt_seconds = _peak_and_time(wrapped, tokens, repeats)
    gap = max((a.grad - b.grad).abs().max().item()
              for a, b in zip(plain.parameters(), wrapped.parameters()) if a.grad is not None)
    return {"plain_bytes": plain_bytes, "checkpointed_bytes": ckpt_bytes, "plain_seconds": plain_seconds,
            "checkpointed_seconds": ckpt_seconds, "max_grad_gap": gap}


@torch.no_grad()
def chunked_exactness(*, n: int = 1024, head_dim: int = 64, chunk_size: int = 128, seed: int = 0) -> dict[str, float]:
    """Max absolute difference between the online-softmax loop and softmax attention (float32 and float64)."""
    gen = seeding.generator(seed)
    q, k, v = (torch.randn(1, 4, n, head_dim, generator=gen, dtype=torch.float64) for _ in range(3))
    out = {}
    for name, dtype in (("float32", torch.float32), ("float64", torch.float64)):
        qd, kd, vd = q.to(dtype), k.to(dtype), v.to(dtype)
        reference = scaled_dot_product_attention(qd, kd, vd, is_causal=True)  # (B, H, L, E)
        chunked = online_softmax_attention(qd, kd, vd, chunk_size=chunk_size, is_causal=True)  # (B, H, L, E)
        out[name] = (chunked - reference).abs().max().item()
    return out


@torch.no_grad()
def chunked_memory(
    lengths: Sequence[int] = (256, 512, 1024, 2048, 4096), *, head_dim: int = 64, num_heads: int = 4,
    chunk_size: int = 256, seed: int = 0,
) -> dict[str, list[float]]:
    """Forward only, batch 1: peak tracked bytes and CPU time of three ways to compute attention.

    ``materialised``: the readable softmax attention (:func:`helpers.attention.scaled_dot_product_attention`);
    ``chunked loop``: :func:`helpers.chunked.online_softmax_attention`; ``fused``: PyTorch's fused
    kernel, whose scratch buffers the tracker cannot see (so only its time is reported).
    """
    gen = seeding.generator(seed)
    out: dict[str, list[float]] = {"n": [], "materialised_bytes": [], "chunked_bytes": [],
                                   "materialised_seconds": [], "chunked_seconds": [], "fused_seconds": []}
    with num_threads(1):
        for n in lengths:
            q, k, v = (torch.randn(1, num_heads, n, head_dim, generator=gen) for _ in range(3))
            runs = {
                "materialised": lambda: scaled_dot_product_attention(q, k, v, is_causal=True),
                "chunked": lambda: online_softmax_attention(q, k, v, chunk_size=chunk_size, is_causal=True),
                "fused": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
            }
            out["n"].append(float(n))
            for name, fn in runs.items():
                if name != "fused":
                    with TensorMemoryTracker() as tracker:
                        fn()
                    out[f"{name}_bytes"].append(float(tracker.peak_bytes))
                start = time.process_time()
                fn()
                out[f"{name}_seconds"].append(time.process_time() - start)
    return out


@torch.no_grad()
def precision_memory(*, n: int = 1024, head_dim: int = 64, num_heads: int = 4, seed: int = 0) -> dict[str, float]:
    """The readable attention in float32 and in bfloat16 (softmax kept in float32): bytes and error.

    Returns:
        ``{"qkv_bytes_float32", "qkv_bytes_bfloat16", "peak_float32", "peak_bfloat16", "max_error_bfloat16",
        "weights_dtype_bfloat16"}``: the inputs' bytes, the tracked peak of the forward, the largest
        difference of the bfloat16 output from the float32 one, and the dtype of the returned weights.
    """
    gen = seeding.generator(seed)
    q, k, v = (torch.randn(1, num_heads, n, head_dim, generator=gen) for _ in range(3))
    out: dict[str, float] = {}
    results = {}
    for name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
        qd, kd, vd = q.to(dtype), k.to(dtype), v.to(dtype)
        with TensorMemoryTracker() as tracker:
            result, weights = scaled_dot_product_attention(qd, kd, vd, is_causal=True, need_weights=True)
        results[name] = result
        out[f"qkv_bytes_{name}"] = float(qd.nbytes + kd.nbytes + vd.nbytes)
        out[f"peak_{name}"] = float(tracker.peak_bytes)
        if name == "bfloat16":
            out["weights_itemsize_bfloat16"] = float(weights.element_size())
    out["max_error_bfloat16"] = (results["bfloat16"].float() - results["float32"]).abs().max().item()
    return out


def growth_exponent(lengths: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of ``log(values)`` against ``log(lengths)`` (1 for linear growth, 2 for quadratic).

    Args:
        lengths: The sequence lengths (at least two, positive).
        values: What was measured at each length (positive).

    Returns:
        The fitted exponent ``p`` of ``values ~ c * lengths**p``.
    """
    if len(lengths) != len(values) or len(lengths) < 2:
        raise ValueError(f"lengths and values need the same length, at least 2; got {len(lengths)} and {len(values)}")
    x = torch.log(torch.tensor(lengths, dtype=torch.float64))
    y = torch.log(torch.tensor(values, dtype=torch.float64))
    x = x - x.mean()
    return float((x * (y - y.mean())).sum() / (x * x).sum())


def training_memory(
    lengths: Sequence[int] = (256, 512, 1024, 2048), *, head_dim: int = 64, num_heads: int = 4,
    block_size: int = 128, seed: int = 0,
) -> dict[str, list[float]]:
    """Peak tracked bytes of one forward *and backward* pass of causal attention, batch 1, against n.

    Three exact ways to compute the same attention: ``materialised`` (the readable softmax
    attention, :func:`helpers.attention.scaled_dot_product_attention`), ``online`` (autograd
    through the online-softmax loop, :func:`helpers.chunked.online_softmax_attention`, which keeps
    every block it computed for the backward pass) and ``recomputing``
    (:func:`helpers.flash_backward.recomputing_attention`, whose backward recomputes each block
    from the saved log-sum-exp). The peak counts the inputs, their gradients and everything
    alive in between.

    Args:
        lengths: Sequence lengths ``n``.
        head_dim: Head size ``E``.
        num_heads: Heads ``H``.
        block_size: Keys per block of the two loops.
        seed: Seed of the random queries, keys and values.

    Returns:
        ``{"n", "materialised_bytes", "online_bytes", "recomputing_bytes", "score_matrix_bytes"}``;
        the last is the analytic size of one ``H x n x n`` float32 matrix.
    """
    check_lengths = [int(n) for n in lengths]
    if not check_lengths or min(check_lengths) < 1:
        raise ValueError(f"lengths must be positive integers; got {list(lengths)}")
    ways = {
        "materialised": lambda q, k, v: scaled_dot_product_attention(q, k, v, is_causal=True),
        "online": lambda q, k, v: online_softmax_attention(q, k, v, chunk_size=block_size, is_causal=True),
        "recomputing": lambda q, k, v: recomputing_attention(q, k, v, block_size=block_size, is_causal=True),
    }
    out: dict[str, list[float]] = {"n": [], "score_matrix_bytes": [], **{f"{w}_bytes": [] for w in ways}}
    with num_threads(1):
        for n in check_lengths:
            out["n"].append(float(n))
            out["score_matrix_bytes"].append(float(num_heads * n * n * 4))
            for name, attend in ways.items():
                gen = seeding.generator(seed)
                q, k, v = (torch.randn(1, num_heads, n, head_dim, generator=gen, requires_grad=True)
                           for _ in range(3))  # (B, H, n, E)
                with TensorMemoryTracker() as tracker:
                    attend(q, k, v).sum().backward()
                out[f"{name}_bytes"].append(float(tracker.peak_bytes))
                del q, k, v
    return out


def recomputing_gradients(
    *, n: int = 256, head_dim: int = 64, num_heads: int = 4, num_kv_heads: int = 2, block_size: int = 64,
    seed: int = 0,
) -> dict[str, tuple[torch.Tensor, ...]]:
    """Output and gradients of causal attention, dense against the recomputing backward (float64).

    Args:
        n: Sequence length.
        head_dim: Head size ``E``.
        num_heads: Query heads ``H``.
        num_kv_heads: Key/value heads (grouped-query attention when fewer than ``num_heads``).
        block_size: Keys per block of the recomputing loop.
        seed: Seed of the inputs and of the upstream gradient.

    Returns:
        ``{"dense": (out, dq, dk, dv), "recomputing": (out, dq, dk, dv)}``.
    """
    gen = seeding.generator(seed)
    shapes = [(1, num_heads, n, head_dim), (1, num_kv_heads, n, head_dim), (1, num_kv_heads, n, head_dim)]
    q, k, v = (torch.randn(s, generator=gen, dtype=torch.float64, requires_grad=True) for s in shapes)
    upstream = torch.randn(1, num_heads, n, head_dim, generator=gen, dtype=torch.float64)  # dL/dO
    result = {}
    for name, attend in (
        ("dense", lambda: scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)),
        ("recomputing", lambda: recomputing_attention(q, k, v, block_size=block_size, is_causal=True)),
    ):
        o = attend()  # (B, H, n, E)
        grads = torch.autograd.grad(o, (q, k, v), upstream)
        result[name] = (o.detach(), *grads)
    return result


@torch.no_grad()
def softmax_precision(*, n: int = 4096, head_dim: int = 64, seed: int = 0) -> dict[str, float]:
    """Where 16-bit arithmetic breaks softmax attention (the logits and the running sum, not ``exp``).

    Three measurements:

    - ``max_exp``: the largest ``exp(s - max(s))`` over rows of float32 scores with a range of
      hundreds; after the maximum is subtracted every exponential is at most 1, whatever the scores.
    - ``float16_logit_inf``: whether ``q . k`` computed in float16 overflows (returns ``inf``) for
      query and key entries of 40 and ``head_dim`` terms (true value ``1600 * head_dim``, above
      float16's 65504), and ``float16_output_nan`` whether softmax of those logits gives NaN.
    - ``bfloat16_sum`` against ``n``: the running sum ``l`` of the online softmax for ``n`` equal
      scores (each ``exp(s - m) = 1``), accumulated one key at a time in bfloat16. Its 8-bit
      significand stops the sum at 256; in float32 it is exactly ``n``.

    Args:
        n: Keys in the running-sum experiment.
        head_dim: Terms of the overflowing dot product.
        seed: Seed of the random scores.

    Returns:
        ``{"max_exp", "score_range", "float16_logit_inf", "float16_output_nan", "bfloat16_sum",
        "float32_sum", "n", "logit_true"}``.
    """
    gen = seeding.generator(seed)
    scores = 100 * torch.randn(8, n, generator=gen)  # (rows, n): scores spread over hundreds
    shifted = torch.exp(scores - scores.amax(dim=-1, keepdim=True))  # (rows, n)
    q = torch.full((1, head_dim), 40.0)  # (1, E)
    k = torch.full((3, head_dim), 40.0)  # (3, E)
    logits16 = q.half() @ k.half().T  # (1, 3): computed and stored in float16
    weights16 = torch.softmax(logits16.float(), dim=-1)  # even a float32 softmax cannot repair an inf
    one = torch.ones(1, dtype=torch.bfloat16)
    running_bf16 = torch.zeros(1, dtype=torch.bfloat16)
    running_f32 = torch.zeros(1, dtype=torch.float32)
    for _ in range(n):  # l += exp(s_j - m) = 1, one key at a time
        running_bf16 = running_bf16 + one
        running_f32 = running_f32 + 1.0
    return {"max_exp": shifted.max().item(), "score_range": (scores.amax() - scores.amin()).item(),
            "float16_logit_inf": float(torch.isinf(logits16).all().item()),
            "float16_output_nan": float(torch.isnan(weights16).all().item()),
            "logit_true": float(40 * 40 * head_dim),
            "bfloat16_sum": running_bf16.item(), "float32_sum": running_f32.item(), "n": float(n)}
