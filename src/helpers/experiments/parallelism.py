"""Parallelism: what must run one step after another, counted and timed.

A recurrent network's state at step ``t`` needs the state at ``t - 1``: ``n`` tokens make a
chain of ``n`` dependent matrix products that no hardware can run side by side. Self-attention
computes every position with the same few matrix products, at the price of ``O(n^2 d)`` work.
Chapter 1 shows both sides:

- :func:`operation_profile`, :func:`operation_profiles` -- counted: how many matrix products a
  GRU and a self-attention layer run over ``n`` tokens, and the longest chain of them that must
  run one after another (seen at PyTorch's dispatcher);
- :func:`layer_multiply_adds` -- the arithmetic of both, counted term by term (the cost per layer of
  Vaswani et al., 2017, Table 1: ``O(n d^2)`` for a recurrent layer, ``O(n^2 d)`` for self-attention);
- :func:`sequential_vs_parallel_time` -- timed: wall-clock time of both in their fastest PyTorch
  form on the machine at hand.

Shape legend::

    B     batch size
    n     sequence length
    d     model width

The counts are seeded and deterministic; the timings are measurements and vary by machine and
load. Explained in chapter 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from ..checks import check_positive_int, check_positive_ints
from ..multihead import MultiHeadAttention
from ..train import num_threads, set_seed

__all__ = [
    "OperationProfile",
    "operation_profile",
    "operation_profiles",
    "layer_multiply_adds",
    "sequential_vs_parallel_time",
]


# --------------------------------------------------------------------------------------------
# Counted: matrix products and the longest chain of them
# --------------------------------------------------------------------------------------------

_MATMUL_OPS = frozenset({"aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm", "aten.addbmm", "aten.mv",
                         "aten.addmv", "aten.dot"})


class _DependencyCounter(TorchDispatchMode):
    """Counts the ATen operations a computation runs and its chains of matrix products.

    Every tensor is given a depth: the largest number of matrix products on any path from the
    inputs to it. A matrix product's output has the depth of its deepest input plus one; any
    other operation passes on the depth of its deepest input (in-place operations included).
    """

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()
        self.depth = WeakIdKeyDictionary()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = str(func.overloadpacket)
        self.ops[name] += 1
        inputs = [t for t in _flat(args) + _flat(list(kwargs.values())) if isinstance(t, Tensor)]
        depth = max((self.depth.get(t, 0) for t in inputs), default=0) + (name in _MATMUL_OPS)
        out = func(*args, **kwargs)
        for t in _flat([out]):
            if isinstance(t, Tensor):
                self.depth[t] = max(depth, self.depth.get(t, 0))
        if name.endswith("_") and inputs:  # in-place: the first argument is the output
            self.depth[inputs[0]] = max(depth, self.depth.get(inputs[0], 0))
        return out


def _flat(items: Any) -> list[Any]:
    """Flatten nested lists and tuples (of an operation's arguments or outputs) into one list."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(_flat(item))
        else:
            out.append(item)
    return out


@dataclass(frozen=True)
class OperationProfile:
    """What one forward computation ran.

    Attributes:
        ops: Number of ATen operations (every kernel call, views included).
        matmuls: Number of matrix products (``mm``, ``addmm``, ``bmm``, ...).
        matmul_depth: The longest chain of matrix products in which each needs the previous
            one's result: the products that must run one after another, however many
            processors there are.
        op_names: Count of each ATen operation.
    """

    ops: int
    matmuls: int
    matmul_depth: int
    op_names: dict[str, int]


@torch.no_grad()
def operation_profile(fn: Callable[..., Any], *args: Any) -> OperationProfile:
    """Run ``fn(*args)`` once and count its operations and its chain of matrix products.

    Counting happens at PyTorch's dispatcher (a ``TorchDispatchMode``), so the operations
    inside a fused module such as :class:`torch.nn.GRU` are seen one by one. Explained in
    chapter 1.

    Args:
        fn: The computation, e.g. a module.
        *args: Its inputs.

    Returns:
        An :class:`OperationProfile`.
    """
    counter = _DependencyCounter()
    with counter:
        out = fn(*args)
    outputs = [t for t in _flat([out]) if isinstance(t, Tensor)]
    depth = max((counter.depth.get(t, 0) for t in outputs), default=0)
    ops = dict(counter.ops)
    return OperationProfile(ops=sum(ops.values()), matmuls=sum(c for k, c in ops.items() if k in _MATMUL_OPS),
                            matmul_depth=int(depth), op_names=ops)


def operation_profiles(
    lengths: Sequence[int], embed_dim: int = 32, *, batch_size: int = 1, seed: int = 0
) -> list[dict[str, int]]:
    """Matrix products of a GRU over ``n`` steps and of one self-attention layer over ``n`` tokens.

    The GRU is :class:`torch.nn.GRU` (one layer, width ``embed_dim``); the self-attention layer is
    :class:`~helpers.multihead.MultiHeadAttention` with one head (its readable path:
    projections, ``Q K^T``, softmax, weights times ``V``, output projection). For each length
    the table gives both models' number of matrix products and their longest dependent chain
    (:func:`operation_profile`). The GRU's chain grows with ``n``: step ``t`` needs the state of
    step ``t - 1``. Attention's does not: every token is computed by the same few products at
    once. Explained in chapter 1.

    Args:
        lengths: Sequence lengths n.
        embed_dim: Model width d.
        batch_size: Batch size.
        seed: Seed of the weights and inputs.

    Returns:
        A list with one dict per length, with the keys ``seq_len``, ``gru_ops``, ``gru_matmuls``,
        ``gru_depth``, ``attention_ops``, ``attention_matmuls`` and ``attention_depth``.

    Shape:
        the inputs of both models are ``(batch_size, n, embed_dim)``.
    """
    lengths = check_positive_ints("lengths", lengths)
    set_seed(seed)
    gru = nn.GRU(embed_dim, embed_dim, batch_first=True)
    attention = MultiHeadAttention(embed_dim, num_heads=1)

    def self_attention(x: Tensor) -> Tensor:
        return attention(x, need_weights=True)[0]  # (B, n, d)

    rows = []
    with num_threads(1):
        for n in lengths:
            x = torch.randn(batch_size, n, embed_dim)  # (B, n, d)
            rnn = operation_profile(lambda inputs: gru(inputs)[0], x)
            att = operation_profile(self_attention, x)
            rows.append({"seq_len": n, "gru_ops": rnn.ops, "gru_matmuls": rnn.matmuls, "gru_depth": rnn.matmul_depth,
                         "attention_ops": att.ops, "attention_matmuls": att.matmuls,
                         "attention_depth": att.matmul_depth})
    return rows


# --------------------------------------------------------------------------------------------
# Counted: the arithmetic of each layer (Vaswani et al., 2017, Table 1)
# --------------------------------------------------------------------------------------------


def layer_multiply_adds(seq_len: int, embed_dim: int) -> dict[str, int]:
    """Multiply-adds of the two layers that :func:`sequential_vs_parallel_time` times, for one sequence.

    - GRU (``nn.GRU(d, d)``): three gates, each with an input weight ``(d, d)`` and a hidden weight
      ``(d, d)``: ``6 n d^2`` (the input half is one product over all tokens, the hidden half ``n``
      dependent products).
    - Self-attention as timed there: one projection to ``Q, K, V`` (``3 n d^2``), then ``Q K^T``
      (``n^2 d``) and the weights times ``V`` (``n^2 d``): ``3 n d^2 + 2 n^2 d``.

    Biases, gates' element-wise work and the softmax (``O(n d)`` and ``O(n^2)``) are left out, as in
    Vaswani et al. (2017, Table 1), whose self-attention entry ``O(n^2 d)`` also leaves out the
    projections. The two counts are equal at ``n = 1.5 d``; below it attention does less arithmetic.
    Explained in chapter 1.

    Args:
        seq_len: Sequence length n.
        embed_dim: Model width d.

    Returns:
        The counts under the keys ``gru`` (6 n d^2), ``attention`` (3 n d^2 + 2 n^2 d),
        ``attention_projections`` (3 n d^2) and ``attention_scores`` (2 n^2 d).
    """
    n, d = check_positive_int("seq_len", seq_len), check_positive_int("embed_dim", embed_dim)
    return {"gru": 6 * n * d * d, "attention": 3 * n * d * d + 2 * n * n * d,
            "attention_projections": 3 * n * d * d, "attention_scores": 2 * n * n * d}


# --------------------------------------------------------------------------------------------
# Timed: a GRU over n steps against one self-attention layer over n tokens
# --------------------------------------------------------------------------------------------


@torch.no_grad()
def sequential_vs_parallel_time(
    lengths: Sequence[int], embed_dim: int = 64, *, batch_size: int = 8, repeats: int = 5, threads: int = 1,
    clock: str = "wall", statistic: str = "median",
) -> list[dict[str, float | int]]:
    """Wall time of a GRU over n steps against one self-attention layer over n tokens.

    Both in their fastest PyTorch form: ``nn.GRU`` (a fused loop, but its n steps must run one
    after another) and ``torch.nn.functional.scaled_dot_product_attention`` after one QKV
    projection (``O(n^2 d)`` work in a few large matrix products that no step has to wait for).
    What parallel hardware can exploit is the number of sequential steps, n against 1; on one
    CPU thread (the default) nothing runs in parallel, so the times compare the total work, and
    attention's ``n^2`` eventually costs more. Median (or fastest) of ``repeats`` runs after a warm-up run, the two
    models timed in turn within each repeat, on the wall clock or on the process's CPU clock
    (:data:`helpers.experiments.score_cost.CLOCKS`: the CPU clock leaves out the time spent waiting for a core on
    a machine shared with other programs; with several threads the wall clock is read).
    Timings are measurements, not seeded numbers: they vary by machine and load. Explained in
    chapter 1.

    Args:
        lengths: Sequence lengths n.
        embed_dim: Model width d.
        batch_size: Batch size.
        repeats: Timed runs per length.
        threads: Intra-op threads.
        clock: ``"wall"`` or ``"cpu"``.
        statistic: ``"median"`` or ``"min"`` (the fastest run, the least disturbed by other programs).

    Returns:
        A list with one dict per length, holding ``seq_len``, ``gru_ms``, ``attention_ms``, and the
        number of sequential steps ``gru_sequential_steps`` (n) and ``attention_sequential_steps`` (1).

    Shape:
        the inputs of both models are ``(batch_size, n, embed_dim)``.
    """
    from .score_cost import CLOCKS, clock_function  # noqa: PLC0415 (a sibling experiment)

    lengths = check_positive_ints("lengths", lengths)
    check_positive_int("repeats", repeats)
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {sorted(CLOCKS)}, got {clock!r}")
    if statistic not in ("median", "min"):
        raise ValueError(f"statistic must be 'median' or 'min', got {statistic!r}")
    rows: list[dict[str, float | int]] = []
    with num_threads(threads):
        now = clock_function(clock)  # the CPU clock on one thread only (with more, it adds up the threads' time)
        set_seed(0)
        gru = nn.GRU(embed_dim, embed_dim, batch_first=True)
        qkv = nn.Linear(embed_dim, 3 * embed_dim)

        def run_attention(x: Tensor) -> Tensor:
            q, k, v = qkv(x).chunk(3, dim=-1)  # (B, n, 3d) -> 3 x (B, n, d)
            return F.scaled_dot_product_attention(q, k, v)  # (B, n, n) weights -> (B, n, d)

        for seq_len in lengths:
            x = torch.randn(batch_size, seq_len, embed_dim)  # (B, n, d)
            runs = {"gru_ms": lambda: gru(x), "attention_ms": lambda: run_attention(x)}
            samples: dict[str, list[float]] = {name: [] for name in runs}
            for fn in runs.values():
                fn()  # warm-up
            for _ in range(repeats):  # in turn: a busy spell of the machine slows both alike
                for name, fn in runs.items():
                    start = now()
                    fn()
                    samples[name].append((now() - start) * 1000)
            timings = {name: sorted(values)[len(values) // 2] if statistic == "median" else min(values)
                       for name, values in samples.items()}
            rows.append(
                {"seq_len": seq_len, **timings, "gru_sequential_steps": seq_len, "attention_sequential_steps": 1}
            )
    return rows
