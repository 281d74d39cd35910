"""Experiments of chapters 5.3 and 5.4: what efficient attention costs, and what it loses in accuracy.

- :func:`variant_functions`: every variant as ``f(q, k, v)`` with its own parameter.
- :func:`measure_cost`: forward time (best of a few calls, one thread) and peak tensor memory
  (:class:`~helpers.memory.TensorMemoryTracker`) against the length ``n``.
- :func:`fit_exponent`, :func:`crossover_length`: the slope of a log-log fit, and where a
  variant's measured time falls below dense attention's.
- :func:`analytic_cost`: multiply-add FLOPs and score-memory of each variant by formula (the
  cost explorer of the chapter).
- :func:`approximation_errors`, :func:`performer_error_curve`, :func:`linformer_error_curve`:
  the error against exact attention on the same inputs; :func:`effective_keys`: how spread the
  exact attention is on those inputs.
- :func:`exponent_spread`: the time exponent fitted on each repeat separately, to show how far
  noisy timings let one trust it.
- :func:`performer_bias`: each kernel entry of Performer is unbiased, the normalised output is
  not; and the kernel's variance against Lemma 2 of the paper, ``(exp(|q + k|^2) - 1) / F``.
- :func:`linformer_rank_d_output`, :func:`projection_inflation`: a rank-``d`` attention matrix
  that gives the exact output, and how much a ``N(0, 1/k)`` projection inflates keys and values.
- :func:`reordering_check`: ``(Q K^T) V == Q (K^T V)`` and the FLOPs of each order.
- :func:`linformer_limits`: Linformer is tied to one length, and it is not causal.

Shape legend: B batch, H heads, n (= L = S) length, d head size, F features, k projected length.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from helpers.chunked import chunked_attention
from helpers.efficient import bigbird_attention, hierarchical_attention, sliding_window_attention
from helpers.efficient_linear import LinformerAttention, linear_attention, performer_attention
from helpers.memory import TensorMemoryTracker
from helpers.train import num_threads

from .. import seeding

__all__ = ["dense_attention", "sdpa_attention", "linformer_random_projection", "exponent_spread", "effective_keys",
           "performer_bias", "linformer_rank_d_output", "projection_inflation", "variant_functions", "DEFAULTS",
           "measure_cost",
           "fit_exponent", "crossover_length", "analytic_cost", "approximation_errors", "performer_error_curve",
           "linformer_error_curve", "reordering_check", "linformer_limits", "random_qkv"]

Attention = Callable[[Tensor, Tensor, Tensor], Tensor]

DEFAULTS = {"window": 32, "bigbird_block": 32, "hier_block": 32, "features": 64, "linformer_k": 64}
"""The variants' own parameters for the cost measurements (chosen for n = 256 .. 2048)."""


def dense_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """Softmax attention with the ``n x n`` matrix materialised (the reference)."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * q.shape[-1] ** -0.5  # (B, H, n, n)
    return torch.matmul(torch.softmax(scores, dim=-1), v)  # (B, H, n, n) x (B, H, n, d)


def sdpa_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """PyTorch's fused ``scaled_dot_product_attention``, exact, the second dense baseline."""
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)  # (B, H, n, d)


def linformer_random_projection(q: Tensor, k: Tensor, v: Tensor, proj: Tensor, proj_v: Tensor | None = None
                                ) -> Tensor:
    """Linformer's attention with fixed projections ``E = proj`` (keys) and ``F = proj_v`` (values).

    Keys and values are mixed along the sequence down to ``k`` rows, then ordinary softmax
    attention. ``proj_v=None`` shares one matrix (``E = F``, the paper's key-value sharing).

    Args:
        q: Queries.
        k: Keys.
        v: Values.
        proj: ``E``, of shape ``(k, n)``.
        proj_v: ``F``, of shape ``(k, n)``; ``None`` for ``F = E``.

    Returns:
        The output, of the queries' shape ``(B, H, n, d)``.
    """
    k_small = torch.matmul(proj, k)  # (k, n) x (B, H, n, d) -> (B, H, k, d)
    v_small = torch.matmul(proj if proj_v is None else proj_v, v)  # (B, H, k, d)
    return dense_attention(q, k_small, v_small)


def variant_functions(n: int, *, params: dict[str, int] | None = None, seed: int = 0) -> dict[str, Attention]:
    """Every variant of the chapter as ``f(q, k, v)`` for self-attention over ``n`` tokens."""
    p = {**DEFAULTS, **(params or {})}
    gen = lambda: seeding.generator(seed)  # noqa: E731 - the same random blocks/features every call
    proj = torch.randn(p["linformer_k"], n, generator=gen()) / math.sqrt(p["linformer_k"])  # (k, n)
    return {
        "dense": dense_attention,
        "dense (fused SDPA)": sdpa_attention,
        "sliding window": lambda q, k, v: sliding_window_attention(q, k, v, p["window"]),
        "BigBird": lambda q, k, v: bigbird_attention(q, k, v, block_size=p["bigbird_block"], num_global=1,
                                                     window_blocks=3, num_random=2, generator=gen()),
        "hierarchical": lambda q, k, v: hierarchical_attention(q, k, v, block_size=p["hier_block"]),
        "linear (elu+1)": lambda q, k, v: linear_attention(q, k, v),
        "Performer": lambda q, k, v: performer_attention(q, k, v, num_features=p["features"], generator=gen()),
        "Linformer": lambda q, k, v: linformer_random_projection(q, k, v, proj),
        "chunked (exact)": lambda q, k, v: chunked_attention(q, k, v, chunk_size=128),
    }


def random_qkv(n: int, d: int = 32, *, heads: int = 1, score_std: float = 1.0, seed: int = 0
               ) -> tuple[Tensor, Tensor, Tensor]:
    """Random queries, keys and values; the scaled scores ``q . k / sqrt(d)`` have std ``score_std``."""
    gen = seeding.generator(seed)
    q = torch.randn(1, heads, n, d, generator=gen) * math.sqrt(score_std)
    k = torch.randn(1, heads, n, d, generator=gen) * math.sqrt(score_std)
    v = torch.randn(1, heads, n, d, generator=gen)
    return q, k, v


@torch.no_grad()
def measure_cost(sizes: Sequence[int], *, methods: Sequence[str] | None = None, d: int = 32, heads: int = 4,
                 repeats: int = 3) -> dict[str, dict[str, list[float]]]:
    """Forward time and peak tensor memory of each variant for each length, on one thread.

    Time is the CPU time of the calling thread (``time.thread_time``: with one intra-op thread,
    all the work), the best of ``repeats`` calls after one warm-up call. CPU time rather than wall
    time, because on a shared machine other jobs stretch the wall time of a call by whatever share
    of the core they take, while its CPU time stays what the call needs; the variants are also
    interleaved at each size, so that what remains of a change of load hits all of them. Memory is
    the peak of live tensor bytes allocated during one call
    (:class:`~helpers.memory.TensorMemoryTracker`): inputs excluded, fused kernels' scratch invisible.

    Returns:
        ``{method: {"time_s": [...], "peak_mib": [...], "repeats_s": [[...], ...]}}``, one entry
        per size; ``repeats_s[i]`` holds every repeat's time at ``sizes[i]`` (for
        :func:`exponent_spread`), ``time_s[i]`` their minimum.
    """
    result: dict[str, dict[str, list[float]]] = {}
    with num_threads(1):
        for n in sizes:
            q, k, v = random_qkv(n, d, heads=heads)
            fns = variant_functions(n)
            names = list(methods or fns)
            each: dict[str, list[float]] = {m: [] for m in names}
            for m in names:
                fns[m](q, k, v)  # warm-up
            for r in range(repeats):
                for m in names[r % len(names):] + names[: r % len(names)]:  # rotate the order
                    start = time.thread_time()
                    fns[m](q, k, v)
                    each[m].append(time.thread_time() - start)
            for m in names:
                with TensorMemoryTracker() as tracker:
                    out = fns[m](q, k, v)
                del out
                entry = result.setdefault(m, {"time_s": [], "peak_mib": [], "repeats_s": []})
                entry["time_s"].append(min(each[m]))
                entry["repeats_s"].append(each[m])
                entry["peak_mib"].append(tracker.peak_bytes / 2**20)
    return result


def fit_exponent(sizes: Sequence[float], values: Sequence[float]) -> float:
    """Slope of the least-squares line through ``(log n, log value)``: ``value ~ n^slope``."""
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def exponent_spread(sizes: Sequence[float], repeats_s: Sequence[Sequence[float]]) -> np.ndarray:
    """The exponent fitted on each repeat on its own, to show how much noisy timings move it.

    Args:
        sizes: The lengths.
        repeats_s: ``repeats_s[i][r]``, the time of repeat ``r`` at ``sizes[i]`` (as
            :func:`measure_cost` returns it).

    Returns:
        One fitted exponent per repeat, shape ``(R,)``.
    """
    times = np.asarray(repeats_s, dtype=float)  # (len(sizes), R)
    if times.ndim != 2 or times.shape[0] != len(sizes):
        raise ValueError(f"repeats_s must be (len(sizes)={len(sizes)}, R), got shape {times.shape}")
    return np.array([fit_exponent(sizes, times[:, r]) for r in range(times.shape[1])])


def crossover_length(sizes: Sequence[float], dense: Sequence[float], variant: Sequence[float]
                     ) -> tuple[float, str]:
    """The length from which ``variant`` costs less than ``dense``.

    Measured when the two curves cross inside ``sizes`` (log-log interpolation between the two
    sizes around the crossing); otherwise extrapolated from the two power-law fits.

    Returns:
        ``(n, how)`` with ``how`` one of ``"measured"``, ``"extrapolated"``, ``"always cheaper"``
        (cheaper at every measured size and also by the fits), ``"never"`` (the fits do not cross
        above the measured sizes).
    """
    ratio = np.log(np.asarray(variant)) - np.log(np.asarray(dense))  # < 0: the variant is cheaper
    logn = np.log(np.asarray(sizes, dtype=float))
    for i in range(1, len(ratio)):
        if ratio[i - 1] >= 0 > ratio[i]:
            t = ratio[i - 1] / (ratio[i - 1] - ratio[i])
            return float(np.exp(logn[i - 1] + t * (logn[i] - logn[i - 1]))), "measured"
    kd, cd = np.polyfit(logn, np.log(dense), 1)
    kv, cv = np.polyfit(logn, np.log(variant), 1)
    if (ratio < 0).all():
        return float(sizes[0]), "always cheaper"
    if kd <= kv:
        return math.inf, "never"
    n_star = float(np.exp((cv - cd) / (kd - kv)))
    return (n_star, "extrapolated") if n_star > sizes[-1] else (math.inf, "never")


def analytic_cost(method: str, n: np.ndarray | float, d: int, param: int) -> tuple[np.ndarray, np.ndarray]:
    """Multiply-add FLOPs (2 per multiply-add) and score-sized memory (floats) of one head.

    ``param`` is the variant's own parameter: window ``w`` (keys ``2w - 1`` per query), BigBird
    block size ``b`` (1 global + 3 window + 2 random blocks), hierarchical block size, number of
    features ``F`` (Performer; linear attention uses ``F = d``), Linformer's ``k``. Memory counts
    the largest intermediate: the score matrix, or the feature matrices.
    """
    n = np.asarray(n, dtype=float)
    if method == "dense":
        keys = n
    elif method == "sliding window":
        keys = np.minimum(n, 2 * param - 1)
    elif method == "BigBird":
        keys = np.minimum(n, 6 * param)
    elif method == "hierarchical":
        keys = np.minimum(n, param + n / param)
    elif method in ("linear (elu+1)", "Performer"):
        f = d if method.startswith("linear") else param
        # phi(K)^T V and phi(Q) (.), plus the random features of q and k for Performer
        flops = 4 * n * f * d + (0 if method.startswith("linear") else 4 * n * d * f)
        return flops, n * f + f * d
    elif method == "Linformer":
        return 4 * param * n * d + 4 * n * param * d, n * param  # project K and V, then n x k attention
    else:
        raise ValueError(f"unknown method {method!r}")
    return 4 * n * keys * d, n * keys  # Q K^T and P V over `keys` keys per query


@torch.no_grad()
def approximation_errors(n: int = 512, d: int = 32, *, seed: int = 0, params: dict[str, int] | None = None
                         ) -> dict[str, float]:
    """Error of every variant against exact attention on the same random inputs.

    The error is ``||out - exact|| / ||exact - mean(v)||``: 1 means no better than giving every
    query the plain average of all values, 0 is exact.
    """
    q, k, v = random_qkv(n, d, seed=seed)
    exact = dense_attention(q, k, v)
    signal = (exact - v.mean(dim=-2, keepdim=True)).norm()
    errors = {"uniform average (baseline)": 1.0}
    for name, fn in variant_functions(n, params=params, seed=seed).items():
        if name != "dense":
            errors[name] = ((fn(q, k, v) - exact).norm() / signal).item()
    return errors


@torch.no_grad()
def performer_error_curve(features: Sequence[int], *, n: int = 512, d: int = 32, seeds: Sequence[int] = (0, 1, 2),
                          orthogonal: bool = True, score_std: float = 1.0) -> np.ndarray:
    """Performer's error (as in :func:`approximation_errors`) for each number of features and seed.

    Returns: ``(len(seeds), len(features))``.
    """
    q, k, v = random_qkv(n, d, score_std=score_std)
    exact = dense_attention(q, k, v)
    signal = (exact - v.mean(dim=-2, keepdim=True)).norm()
    return np.array([[((performer_attention(q, k, v, num_features=f, orthogonal=orthogonal,
                                            generator=seeding.generator(s)) - exact).norm() / signal).item()
                      for f in features] for s in seeds])


@torch.no_grad()
def linformer_error_curve(ks: Sequence[int], *, n: int = 512, d: int = 32, seeds: Sequence[int] = (0, 1, 2)
                          ) -> dict[str, np.ndarray]:
    """Linformer's error (as in :func:`approximation_errors`) with random projections, for each ``k``.

    Three kinds of fixed random projection: ``E = F`` with entries ``N(0, 1/k)``; ``E`` and
    ``F`` drawn independently, ``N(0, 1/k)``; and ``E = F`` with entries ``N(0, 1/n)``, whose
    projected keys keep the length of a key (:func:`projection_inflation`).

    Returns:
        ``{name: (len(seeds), len(ks))}`` errors.
    """
    q, k_, v = random_qkv(n, d)
    exact = dense_attention(q, k_, v)
    signal = (exact - v.mean(dim=-2, keepdim=True)).norm()
    curves = {"E = F, entries N(0, 1/k)": [], "E, F independent, N(0, 1/k)": [], "E = F, entries N(0, 1/n)": []}
    for s in seeds:
        rows = {name: [] for name in curves}
        for k in ks:
            gen = seeding.generator(s)
            e, f = torch.randn(k, n, generator=gen), torch.randn(k, n, generator=gen)  # (k, n) each
            for name, out in (("E = F, entries N(0, 1/k)", linformer_random_projection(q, k_, v, e / math.sqrt(k))),
                              ("E, F independent, N(0, 1/k)",
                               linformer_random_projection(q, k_, v, e / math.sqrt(k), f / math.sqrt(k))),
                              ("E = F, entries N(0, 1/n)", linformer_random_projection(q, k_, v, e / math.sqrt(n)))):
                rows[name].append(((out - exact).norm() / signal).item())
        for name in curves:
            curves[name].append(rows[name])
    return {name: np.array(c) for name, c in curves.items()}


@torch.no_grad()
def linformer_rank_d_output(n: int = 512, d: int = 32, *, seed: int = 0) -> dict[str, float]:
    """A rank-``d`` attention matrix with exactly the right output, ``P' = P V V^+``.

    ``P' V = P V V^+ V = P V`` because ``V^+ V = I`` for a full-column-rank ``V`` ``(n, d)``, and
    ``rank(P') <= d``. So no bound on the output error follows from the truncated SVD of ``P``
    (which minimises the error of ``P``, not of ``P V``): once ``k >= d``, some rank-``k`` matrix
    is exact. Computed in float64.

    Returns:
        ``rank`` (numerical rank of ``P'``), ``error`` (``||P' V - P V|| / ||P V||``) and
        ``rank_p`` (numerical rank of ``P`` itself).
    """
    q, k, v = (t[0, 0].double() for t in random_qkv(n, d, seed=seed))  # (n, d) each
    p = torch.softmax(q @ k.T * d ** -0.5, dim=-1)  # (n, n)
    p_low = p @ v @ torch.linalg.pinv(v)  # (n, d) x (d, n) -> (n, n), rank <= d
    return {"rank": int(torch.linalg.matrix_rank(p_low)), "rank_p": int(torch.linalg.matrix_rank(p)),
            "error": ((p_low @ v - p @ v).norm() / (p @ v).norm()).item()}


@torch.no_grad()
def projection_inflation(ks: Sequence[int], *, n: int = 512, d: int = 32, seeds: Sequence[int] = (0, 1, 2)
                         ) -> np.ndarray:
    """How much a projection with ``N(0, 1/k)`` entries lengthens keys, ``mean |E k| / mean |k|``.

    Each projected key sums ``n`` keys with weights of variance ``1/k``, so its length is about
    ``sqrt(n / k)`` times a key's: the scores grow by that factor (sharper softmax) and the
    values too (a larger output).

    Returns:
        ``(len(seeds), len(ks))`` ratios.
    """
    _, keys, _ = random_qkv(n, d)
    base = keys.norm(dim=-1).mean()
    return np.array([[(torch.matmul(torch.randn(k, n, generator=seeding.generator(s)) / math.sqrt(k),
                                    keys).norm(dim=-1).mean() / base).item() for k in ks] for s in seeds])


@torch.no_grad()
def effective_keys(n: int = 512, d: int = 32, *, score_std: float = 1.0, seed: int = 0) -> float:
    """The mean effective number of keys ``1 / sum_j p_ij^2`` of exact attention on :func:`random_qkv`.

    ``n`` for uniform weights, 1 for one-hot: how spread the attention that an approximation
    has to match is.
    """
    q, k, _ = random_qkv(n, d, score_std=score_std, seed=seed)
    p = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * d ** -0.5, dim=-1)  # (1, 1, n, n)
    return (1 / p.pow(2).sum(-1)).mean().item()


@torch.no_grad()
def performer_bias(*, n: int = 16, d: int = 8, num_features: int = 8, draws: int = 20000, score_std: float = 0.5,
                   seed: int = 0) -> dict[str, float]:
    """Performer's estimates averaged over many draws of i.i.d. features, against the exact values.

    The kernel entries ``phi(q) . phi(k)`` average to ``exp(q . k / sqrt(d))`` (Lemma 1 of the
    paper: unbiased); the normalised output ``sum_j K_ij v_j / sum_j K_ij``, a ratio of two
    estimates, does not average to the exact output. Each is measured in standard errors of its
    own mean over ``draws``: an unbiased estimate gives ``|z|`` of about 0.8 on average (the mean
    of a half-normal), a biased one grows with ``sqrt(draws)``. The kernel's variance is checked
    against Lemma 2, ``MSE = exp(q . k)^2 (exp(|q + k|^2) - 1) / F`` (scaled q, k).

    Args:
        n: Tokens.
        d: Head size.
        num_features: ``F``.
        draws: Independent draws of the projection.
        score_std: Standard deviation of the scaled scores.
        seed: Seed of the inputs (the draws use ``seed + 1``).

    Returns:
        ``kernel_z`` and ``output_z`` (mean ``|z|``), ``kernel_bias`` and ``output_bias``
        (``||mean - exact|| / ||exact||``), ``variance_ratio`` (median over pairs of the measured
        relative variance of a kernel entry over Lemma 2's), ``variance_ratio_sum_norms`` (the
        same with ``exp(|q|^2 + |k|^2) - 1`` in place of ``exp(|q + k|^2) - 1``), and
        ``spread_lemma2``, ``spread_sum_norms``: the standard deviation over pairs of the log of
        each ratio (0 when the formula tracks every pair).
    """
    gen = seeding.generator(seed)
    q, k, v = (torch.randn(n, d, generator=gen, dtype=torch.float64) for _ in range(3))  # (n, d) each
    root = d ** -0.25  # q' . k' = q . k / sqrt(d)
    q, k = q * math.sqrt(score_std) * root, k * math.sqrt(score_std) * root
    kernel = torch.exp(q @ k.T)  # (n, n)
    exact = (kernel / kernel.sum(-1, keepdim=True)) @ v  # (n, d)
    w = torch.randn(draws, num_features, d, generator=seeding.generator(seed + 1),
                    dtype=torch.float64)  # (draws, F, d): i.i.d. N(0, I) rows

    def phi(x: Tensor) -> Tensor:  # (n, d) -> (draws, n, F)
        return torch.exp(x @ w.transpose(-1, -2) - x.pow(2).sum(-1, keepdim=True) / 2) / math.sqrt(num_features)

    estimate = phi(q) @ phi(k).transpose(-1, -2)  # (draws, n, n)
    output = (estimate / estimate.sum(-1, keepdim=True)) @ v  # (draws, n, d)
    root_draws = math.sqrt(draws)
    kernel_z = ((estimate.mean(0) - kernel) / (estimate.std(0) / root_draws)).abs().mean().item()
    output_z = ((output.mean(0) - exact) / (output.std(0) / root_draws)).abs().mean().item()
    measured = estimate.var(0) / kernel.pow(2)  # (n, n) relative variance
    lemma2 = torch.expm1((q[:, None] + k[None]).pow(2).sum(-1)) / num_features  # (n, n)
    sum_norms = torch.expm1(q.pow(2).sum(-1)[:, None] + k.pow(2).sum(-1)[None]) / num_features  # (n, n)
    return {"kernel_z": kernel_z, "output_z": output_z,
            "kernel_bias": ((estimate.mean(0) - kernel).norm() / kernel.norm()).item(),
            "output_bias": ((output.mean(0) - exact).norm() / exact.norm()).item(),
            "variance_ratio": (measured / lemma2).median().item(),
            "variance_ratio_sum_norms": (measured / sum_norms).median().item(),
            "spread_lemma2": (measured / lemma2).log().std().item(),
            "spread_sum_norms": (measured / sum_norms).log().std().item()}


def reordering_check(n: int = 256, d: int = 16, *, seed: int = 0) -> dict[str, float]:
    """``(phi(Q) phi(K)^T) V`` against ``phi(Q) (phi(K)^T V)``: the same numbers, different FLOPs.

    Returns: the max difference, and the multiply-add FLOPs of each order (2 per multiply-add).
    """
    gen = seeding.generator(seed)
    phi = lambda x: torch.nn.functional.elu(x) + 1  # noqa: E731 - Katharopoulos' feature map
    q, k, v = (torch.randn(n, d, generator=gen, dtype=torch.float64) for _ in range(3))
    left = (phi(q) @ phi(k).T) @ v  # (n, n) x (n, d): 2 n^2 d + 2 n^2 d
    right = phi(q) @ (phi(k).T @ v)  # (d, n) x (n, d) -> (d, d); (n, d) x (d, d): 2 n d^2 + 2 n d^2
    return {"max_difference": (left - right).abs().max().item(), "flops_left": 4.0 * n * n * d,
            "flops_right": 4.0 * n * d * d}


@torch.no_grad()
def linformer_limits(seq_len: int = 64, k: int = 16, embed_dim: int = 32) -> dict[str, object]:
    """What Linformer's fixed ``(k, n)`` projection implies: one maximum length, and no causality.

    Returns:
        ``error_longer``: the message a longer input raises; ``future_change``: max change of
        the *first* output when only the *last* token changes (a causal layer gives 0).
    """
    seeding.manual_seed(0)
    layer = LinformerAttention(seq_len, k, embed_dim, 2)
    x = torch.randn(1, seq_len, embed_dim)
    try:
        layer(torch.randn(1, seq_len + 16, embed_dim))
        error = ""
    except ValueError as exc:
        error = str(exc)
    x2 = x.clone()
    x2[:, -1] += 1.0
    change = (layer(x)[:, 0] - layer(x2)[:, 0]).abs().max().item()
    return {"error_longer": error, "future_change": change}
