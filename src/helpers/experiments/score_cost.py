"""Chapter 2: what the score functions cost, counted (FLOPs written out) and measured (CPU time).

- :func:`score_flops`, :func:`flops_table`: floating-point operations and the largest
  intermediate tensor of each score function, term by term.
- :func:`time_score_functions`: measured time of all queries against all keys at growing sizes,
  for one matrix product, Python loops (:func:`loop_dot_scores_rows`,
  :func:`loop_dot_scores_pairs`, :func:`loop_dot_scores_python`) and the other score functions.
- :func:`additive_time_breakdown`: where additive scoring's time goes, step by step.

Figures and tables: :mod:`helpers.figures.score_cost`.

Shape legend::

    L   number of queries            S   number of keys
    E   query/key feature size       A   hidden size of additive scoring

Explained in chapter 2 (``book/02-dot-product``, "What does each score cost?").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from .. import seeding
from ..checks import check_positive_int
from ..scores import (
    additive_scores,
    cosine_scores,
    dot_scores,
    general_scores,
    neg_euclidean_scores,
    scaled_dot_scores,
)
from ..train import num_threads

__all__ = [
    "CLOCKS", "clock_function", "score_flops", "flops_table", "loop_dot_scores_python", "loop_dot_scores_pairs",
    "loop_dot_scores_rows",
    "CostTable", "time_score_functions", "ADDITIVE_STEPS", "additive_time_breakdown",
]


def score_flops(name: str, L: int, S: int, E: int, A: int | None = None) -> dict[str, object]:
    """Floating-point operations of one score function, all ``L`` queries against all ``S`` keys.

    A multiply and an add count as two operations; ``tanh``, ``sqrt`` and a division as one
    each (a ``tanh`` really costs several). The count is written out term by term in
    ``formula``, with the memory of the largest intermediate tensor in floats.

    Args:
        name: ``"dot"``, ``"scaled_dot"``, ``"cosine"``, ``"neg_euclidean"``, ``"general"`` or
            ``"additive"``.
        L: Number of queries.
        S: Number of keys.
        E: Query/key feature size.
        A: Hidden size of additive scoring (default ``E``).

    Returns:
        ``{"name", "formula", "flops", "largest_tensor", "largest_tensor_formula"}``.
    """
    A = E if A is None else A
    table: dict[str, tuple[str, int, str, int]] = {
        "dot": ("2·L·S·E  (Q Kᵀ)", 2 * L * S * E, "L·S", L * S),
        "scaled_dot": ("2·L·S·E + L·S  (Q Kᵀ, then × 1/√E)", 2 * L * S * E + L * S, "L·S", L * S),
        "cosine": (
            "2·L·S·E + 3·(L+S)·E + (L+S)  (Q̂ K̂ᵀ; norms: square, sum, √; divide)",
            2 * L * S * E + 3 * (L + S) * E + (L + S), "L·S", L * S,
        ),
        "neg_euclidean": (
            "2·L·S·E + 2·(L+S)·E + 3·L·S  (‖q‖² − 2 q·k + ‖k‖², negated)",
            2 * L * S * E + 2 * (L + S) * E + 3 * L * S, "L·S", L * S,
        ),
        "general": ("2·L·E² + 2·L·S·E  ((Q W) Kᵀ)", 2 * L * E * E + 2 * L * S * E, "L·S", L * S),
        "additive": (
            "2·(L+S)·E·A + L·S·A + L·S·A + 2·L·S·A  (W_q q, W_k k; add; tanh; · v)",
            2 * (L + S) * E * A + 4 * L * S * A, "L·S·A", L * S * A,
        ),
    }
    if name not in table:
        raise ValueError(f"name must be one of {sorted(table)}, got {name!r}")
    formula, flops, mem_formula, mem = table[name]
    return {"name": name, "formula": formula, "flops": flops, "largest_tensor": mem,
            "largest_tensor_formula": mem_formula}


def flops_table(L: int, S: int, E: int, A: int | None = None) -> list[dict[str, object]]:
    """:func:`score_flops` for every score function, plus the ratio to the dot product.

    Args:
        L: Number of queries.
        S: Number of keys.
        E: Feature size.
        A: Hidden size of additive scoring (default ``E``).

    Returns:
        A list with one dict per score function, with an extra key ``"vs_dot"``.
    """
    names = ("dot", "scaled_dot", "cosine", "neg_euclidean", "general", "additive")
    rows = [score_flops(n, L, S, E, A) for n in names]
    base = rows[0]["flops"]
    for row in rows:
        row["vs_dot"] = row["flops"] / base
    return rows


def loop_dot_scores_python(query: Tensor, key: Tensor) -> Tensor:
    """Dot-product scores with three nested Python loops over plain floats (the slowest way).

    The same arithmetic as :func:`helpers.scores.dot_scores`: ``2 L S E`` operations, each
    one a Python bytecode round trip.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    q_rows, k_rows = query.tolist(), key.tolist()
    scores = [[sum(a * b for a, b in zip(q, k)) for k in k_rows] for q in q_rows]
    return torch.tensor(scores, dtype=query.dtype)


def loop_dot_scores_pairs(query: Tensor, key: Tensor) -> Tensor:
    """Dot-product scores with a Python loop over (query, key) pairs, one ``torch.dot`` each.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    L, S = query.size(0), key.size(0)
    scores = torch.empty(L, S, dtype=query.dtype)
    for i in range(L):
        for j in range(S):
            scores[i, j] = torch.dot(query[i], key[j])
    return scores


def loop_dot_scores_rows(query: Tensor, key: Tensor) -> Tensor:
    """Dot-product scores with a Python loop over queries, one matrix-vector product each.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    return torch.stack([key @ q for q in query])  # L x ((S, E) x (E,) -> (S,)) -> (L, S)


@dataclass
class CostTable:
    """Measured time of computing all ``L x S`` scores, ``L = S = n``.

    Attributes:
        sizes: The sizes ``n``.
        dim: Feature size E.
        hidden_dim: Hidden size A of additive scoring.
        seconds: Method label -> seconds per call at each size (``nan`` where not measured).
        threads: Number of PyTorch threads used while timing.
        clock: The clock read (:data:`CLOCKS`): ``"wall"`` or ``"cpu"``.
    """

    sizes: list[int]
    dim: int
    hidden_dim: int
    seconds: dict[str, list[float]]
    threads: int
    clock: str = "wall"

    def ratio(self, method: str, to: str = "dot (one matmul)") -> list[float]:
        """Time of ``method`` divided by time of ``to``, at each size."""
        return [a / b for a, b in zip(self.seconds[method], self.seconds[to])]


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
"""The clocks a timing can read — ``"wall"``, the time that passes (``time.perf_counter``), and ``"cpu"``, the
CPU time of this process, all its threads together (``time.process_time``). On one thread of an idle machine the
two agree; on a machine shared with other programs the wall clock also counts the time the process waits for a
core, and the CPU clock does not (a busy machine still slows the process's memory accesses). With several
PyTorch threads the CPU clock adds up the threads' time, waiting included, which is not a duration:
:func:`clock_function` then reads the wall clock."""


def clock_function(clock: str) -> Callable[[], float]:
    """The function that reads ``clock`` now: the CPU clock only while PyTorch runs on one thread.

    Args:
        clock: ``"wall"`` or ``"cpu"`` (:data:`CLOCKS`).

    Returns:
        A function of no argument that returns seconds.

    Raises:
        ValueError: ``clock`` is not one of :data:`CLOCKS`.
    """
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {sorted(CLOCKS)}, got {clock!r}")
    if clock == "cpu" and torch.get_num_threads() > 1:
        return CLOCKS["wall"]
    return CLOCKS[clock]


_clock = clock_function


def _best_time(fn: Callable[[], object], repeats: int, budget_s: float, clock: str = "wall") -> float:
    """Fastest of ``repeats`` timed calls (after one warm-up), each call repeated until it lasts
    ~2 ms so that the timer's resolution does not matter; stops early past ``budget_s`` (on the wall clock)."""
    now = _clock(clock)
    begun = time.perf_counter()
    start = now()
    fn()  # warm-up
    once = now() - start
    number = max(1, int(2e-3 / max(once, 1e-7)))
    best = math.inf
    for _ in range(repeats):
        t0 = now()
        for _ in range(number):
            fn()
        elapsed = now() - t0
        best = min(best, elapsed / number)
        if time.perf_counter() - begun > budget_s:
            break
    return best


def time_score_functions(
    sizes: tuple[int, ...] = (16, 32, 64, 128, 256, 512),
    *,
    dim: int = 64,
    hidden_dim: int = 64,
    python_max: int = 64,
    pairs_max: int = 128,
    repeats: int = 5,
    threads: int = 1,
    budget_s: float = 0.5,
    seed: int = 0,
    clock: str = "wall",
) -> CostTable:
    """Measure the time of all-queries-against-all-keys scores at growing ``L = S = n``.

    Methods: dot products as one matrix product (:func:`helpers.scores.dot_scores`), with a
    Python loop over queries, over pairs and over plain floats (:func:`loop_dot_scores_rows`,
    :func:`loop_dot_scores_pairs`, :func:`loop_dot_scores_python`), and the other score functions
    of :mod:`helpers.attention` (cosine, negative squared Euclidean, general, additive). Each time
    is the fastest of ``repeats`` runs (the least disturbed by other processes), on ``threads``
    PyTorch threads, read on ``clock`` (:data:`CLOCKS`; ``"cpu"`` leaves out the time spent waiting for a core
    on a shared machine); the slow loops are only run up to ``python_max`` / ``pairs_max``.

    Args:
        sizes: The values of ``n``.
        dim: Feature size E.
        hidden_dim: Hidden size A of additive scoring.
        python_max: Largest ``n`` for the pure-Python loop.
        pairs_max: Largest ``n`` for the loop over pairs.
        repeats: Timed runs per method and size.
        threads: PyTorch intra-op threads while timing (restored afterwards).
        budget_s: Stop repeating one measurement after this many seconds.
        seed: Seed of the random inputs.
        clock: ``"wall"`` or ``"cpu"`` (:data:`CLOCKS`).

    Returns:
        The measured :class:`CostTable`.
    """
    _clock(clock)
    gen = seeding.generator(seed)
    weight = torch.randn(dim, dim, generator=gen) / math.sqrt(dim)  # (E, E)
    w_q = torch.randn(hidden_dim, dim, generator=gen) / math.sqrt(dim)  # (A, E)
    w_k = torch.randn(hidden_dim, dim, generator=gen) / math.sqrt(dim)  # (A, E)
    v = torch.randn(hidden_dim, generator=gen) / math.sqrt(hidden_dim)  # (A,)
    methods: dict[str, tuple[Callable[[Tensor, Tensor], Tensor], int]] = {
        "dot (one matmul)": (dot_scores, max(sizes)),
        "dot (loop over queries)": (loop_dot_scores_rows, max(sizes)),
        "dot (loop over pairs)": (loop_dot_scores_pairs, pairs_max),
        "dot (pure Python loops)": (loop_dot_scores_python, python_max),
        "scaled dot": (scaled_dot_scores, max(sizes)),
        "cosine": (cosine_scores, max(sizes)),
        "neg. squared Euclidean": (neg_euclidean_scores, max(sizes)),
        "general": (lambda q, k: general_scores(q, k, weight), max(sizes)),
        "additive": (lambda q, k: additive_scores(q, k, w_q, w_k, v), max(sizes)),
    }
    seconds: dict[str, list[float]] = {m: [] for m in methods}
    with num_threads(threads), torch.inference_mode():
        for n in sizes:
            query = torch.randn(n, dim, generator=gen)  # (L, E)
            key = torch.randn(n, dim, generator=gen)  # (S, E)
            for method, (fn, limit) in methods.items():
                if n > limit:
                    seconds[method].append(float("nan"))
                    continue
                seconds[method].append(_best_time(lambda: fn(query, key), repeats, budget_s, clock))
    return CostTable(list(sizes), dim, hidden_dim, seconds, threads, clock)



ADDITIVE_STEPS: tuple[str, ...] = ("projections", "broadcast add", "tanh", "reduction with v")
"""The steps of :func:`helpers.scores.additive_scores`, in order — ``Q W_q^T`` and ``K W_k^T``
(two small matrix products), their sum broadcast to an ``(L, S, A)`` tensor, ``tanh`` of that
tensor, and its product with ``v`` down to ``(L, S)``."""


def additive_time_breakdown(
    n: int = 512, *, dim: int = 64, hidden_dim: int = 64, repeats: int = 5, threads: int = 1,
    budget_s: float = 1.0, seed: int = 0, clock: str = "wall",
) -> dict[str, float]:
    """Time each step of additive scoring separately, with ``L = S = n`` (chapter 2, "What does each score cost?").

    Every step of :data:`ADDITIVE_STEPS` is timed on its own inputs, computed beforehand, as the fastest
    of ``repeats`` runs; the steps take turns within each repeat, so a busy spell of the machine
    slows them alike. ``"whole"`` is :func:`helpers.scores.additive_scores` in one call,
    ``"dot (one matmul)"`` the dot product's :func:`helpers.scores.dot_scores`, for scale, and
    ``"cheap pass"`` a multiplication of the ``(L, S, A)`` tensor by 2: reading and writing the
    tensor once with almost no arithmetic, what any element-wise step costs at least.

    Args:
        n: Queries and keys, ``L = S = n``.
        dim: Feature size E.
        hidden_dim: Hidden size A.
        repeats: Timed runs per step.
        threads: PyTorch intra-op threads while timing (restored afterwards).
        budget_s: Stop repeating one step after this many seconds in all.
        seed: Seed of the random inputs.
        clock: ``"wall"`` or ``"cpu"`` (:data:`CLOCKS`).

    Returns:
        Step -> seconds per call, for the steps of :data:`ADDITIVE_STEPS`, ``"whole"``,
        ``"dot (one matmul)"`` and ``"cheap pass"``.
    """
    for name, value in (("n", n), ("dim", dim), ("hidden_dim", hidden_dim), ("repeats", repeats)):
        check_positive_int(name, value)
    _clock(clock)
    gen = seeding.generator(seed)
    query = torch.randn(n, dim, generator=gen)  # (L, E)
    key = torch.randn(n, dim, generator=gen)  # (S, E)
    w_q = torch.randn(hidden_dim, dim, generator=gen) / math.sqrt(dim)  # (A, E)
    w_k = torch.randn(hidden_dim, dim, generator=gen) / math.sqrt(dim)  # (A, E)
    v = torch.randn(hidden_dim, generator=gen) / math.sqrt(hidden_dim)  # (A,)
    with num_threads(threads), torch.inference_mode():
        q_hidden, k_hidden = query @ w_q.T, key @ w_k.T  # (L, A), (S, A)
        summed = q_hidden.unsqueeze(-2) + k_hidden.unsqueeze(-3)  # (L, S, A)
        features = torch.tanh(summed)  # (L, S, A)
        steps: dict[str, Callable[[], object]] = {
            "projections": lambda: (query @ w_q.T, key @ w_k.T),
            "broadcast add": lambda: q_hidden.unsqueeze(-2) + k_hidden.unsqueeze(-3),
            "tanh": lambda: torch.tanh(summed),
            "reduction with v": lambda: features @ v,
            "whole": lambda: additive_scores(query, key, w_q, w_k, v),
            "dot (one matmul)": lambda: dot_scores(query, key),
            "cheap pass": lambda: summed * 2.0,
        }
        best = {name: math.inf for name in steps}
        for _ in range(repeats):  # the steps take turns within each repeat
            for name, fn in steps.items():
                best[name] = min(best[name], _best_time(fn, 1, budget_s / repeats, clock))
    return best
