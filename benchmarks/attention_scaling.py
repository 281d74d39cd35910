"""How attention's cost grows with sequence length: time and peak memory, side by side, on CPU.

Measures, for n = 1k .. 16k (d = 64, B = 1, one head, float32, forward only, no autograd):

    dense            softmax(Q K^T / sqrt(d)) V, the n x n matrix materialised
    sdpa             torch.nn.functional.scaled_dot_product_attention (PyTorch's fused kernel)
    sliding_window   helpers.sliding_window_attention, window 128 (|i - j| < 128: 255 keys)
    bigbird          helpers.bigbird_attention, blocks of 64, 2 global, 3 window, 3 random
    hierarchical     helpers.hierarchical_attention, blocks of 128 (fine + mean-pooled coarse)
    linear           helpers.efficient_linear.linear_attention, elu + 1
    performer        helpers.efficient_linear.performer_attention, 256 orthogonal features
    chunked          helpers.chunked_attention, chunks of 1024 (online softmax, exact)

Timing: all methods in one fresh Python process, interleaved -- at each size one warm-up call
per method, then 2-5 rounds of one call per method in rotating order -- so that a change of load
on a shared machine hits every method alike. ``time_s`` is the best call, ``time_median_s`` the
median. Memory: each method in a fresh process of its own (so one method's allocations cannot
hide another's), run with glibc's ``MALLOC_MMAP_THRESHOLD_`` fixed at 64 KiB so that every freed
block goes back to the OS (which would slow timings with page faults, hence separate processes).
Peak memory is measured two ways:

- ``peak_tracked_mib``: the largest total of live tensor bytes allocated during the call, from
  :class:`helpers.memory.TensorMemoryTracker` (a TorchDispatchMode; it cannot see scratch
  buffers that a fused kernel allocates inside itself);
- ``peak_rss_mib``: the rise of the process's resident-set high-water mark (``VmHWM``, reset
  before each call through ``/proc/self/clear_refs``) over its resident set before the call --
  everything the call touched, fused kernels' scratch included.

The exponent ``k`` of ``time ~ n^k`` is a least-squares fit of log time on log n per method.
Dense attention is skipped at a size whose two n x n float32 matrices would need more than 40%
of the memory available at start; the table says so. Default one thread: on a shared machine
it makes times reproducible (pass ``--threads 0`` for PyTorch's default).

Run: ``python benchmarks/attention_scaling.py`` (a few minutes); writes
``benchmarks/results/attention_scaling.json`` and ``.csv`` and prints the table.
Explained in chapters 5 and 6.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

RESULTS = Path(__file__).resolve().parent / "results"
METHODS = ["dense", "sdpa", "sliding_window", "bigbird", "hierarchical", "linear", "performer", "chunked"]
SIZES = [1024, 2048, 4096, 8192, 16384]
HEAD_DIM = 64
MIB = 2**20


# ----------------------------------------------------------------------------------------------
# Worker: one method, all sizes, in a fresh process
# ----------------------------------------------------------------------------------------------
def _method(name: str) -> Callable:
    import torch
    import torch.nn.functional as F

    from helpers.chunked import chunked_attention
    from helpers.efficient import bigbird_attention, hierarchical_attention, sliding_window_attention
    from helpers.efficient_linear import linear_attention, performer_attention

    def dense(q, k, v):
        scores = torch.matmul(q * q.shape[-1] ** -0.5, k.transpose(-1, -2))  # (B, H, n, n)
        return torch.matmul(torch.softmax(scores, dim=-1), v)  # (B, H, n, n) x (B, H, n, d)

    seeded = lambda: torch.Generator().manual_seed(0)  # noqa: E731
    return {
        "dense": dense,
        "sdpa": F.scaled_dot_product_attention,
        "sliding_window": lambda q, k, v: sliding_window_attention(q, k, v, 128),
        "bigbird": lambda q, k, v: bigbird_attention(
            q, k, v, block_size=64, num_global=2, window_blocks=3, num_random=3, generator=seeded()
        ),
        "hierarchical": lambda q, k, v: hierarchical_attention(q, k, v, block_size=128),
        "linear": lambda q, k, v: linear_attention(q, k, v),
        "performer": lambda q, k, v: performer_attention(q, k, v, num_features=256, generator=seeded()),
        "chunked": lambda q, k, v: chunked_attention(q, k, v, chunk_size=1024),
    }[name]


def _proc_status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _rss_peak_bytes(fn: Callable[[], object]) -> tuple[float, int | None]:
    """Run ``fn`` once; return its wall time and the rise of VmHWM over the RSS before it."""
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        before = _proc_status_kib("VmRSS")
    except OSError:
        before = None
    start = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - start
    peak = None if before is None else (_proc_status_kib("VmHWM") - before) * 1024
    del out
    return elapsed, peak


def _skip_reason(name: str, n: int) -> str:
    available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if name == "dense" and 2 * n * n * 4 > 0.4 * available:
        return f"two {n}x{n} float32 matrices need {2 * n * n * 4 / MIB:.0f} MiB > 40% of available memory"
    return ""


def _setup(names: list[str], threads: int) -> dict[str, Callable]:
    import torch

    if threads > 0:
        torch.set_num_threads(threads)
    fns = {name: _method(name) for name in names}
    with torch.no_grad():  # first-call costs (lazy library loads, kernel selection) out of the numbers
        warm_inputs = torch.randn(3, 1, 1, 256, HEAD_DIM, generator=torch.Generator().manual_seed(0))
        for fn in fns.values():
            fn(*warm_inputs)
    return fns


def _inputs(n: int) -> tuple:
    import torch

    g = torch.Generator().manual_seed(n)
    return tuple(torch.randn(1, 1, n, HEAD_DIM, generator=g) for _ in range(3))  # q, k, v: (B, H, n, d)


def memory_worker(name: str, sizes: list[int], threads: int, time_limit_s: float) -> list[dict]:
    """Peak memory of one method at every size (run with the 64 KiB mmap threshold)."""
    import torch

    from helpers.memory import TensorMemoryTracker

    fn = _setup([name], threads)[name]
    rows, too_slow = [], False
    for n in sizes:
        row: dict = {"method": name, "n": n, "skipped": _skip_reason(name, n)}
        if not row["skipped"] and too_slow:
            row["skipped"] = f"the previous size took over {time_limit_s:.0f} s"
        if not row["skipped"]:
            q, k, v = _inputs(n)
            with torch.no_grad():
                first, rss = _rss_peak_bytes(lambda: fn(q, k, v))
                with TensorMemoryTracker() as tracker:
                    fn(q, k, v)
            row.update(
                peak_tracked_mib=tracker.peak_bytes / MIB,
                largest_tensor_numel=tracker.max_numel,
                peak_rss_mib=None if rss is None else rss / MIB,
            )
            too_slow = first > time_limit_s
        rows.append(row)
    return rows


def time_worker(names: list[str], sizes: list[int], threads: int, time_limit_s: float) -> list[dict]:
    """Forward time of all methods, interleaved: at each size, rounds of one call per method.

    Interleaving makes a load change on a shared machine hit every method alike, so ratios
    between methods stay meaningful. Per size: one warm-up call each, then 2-5 rounds.
    """
    import torch

    fns = _setup(names, threads)
    rows, too_slow = [], set()
    for n in sizes:
        q, k, v = _inputs(n)
        active, times = [], {}
        for name in names:
            row: dict = {"method": name, "n": n, "skipped": _skip_reason(name, n)}
            if not row["skipped"] and name in too_slow:
                row["skipped"] = f"the previous size took over {time_limit_s:.0f} s"
            rows.append(row)
            if not row["skipped"]:
                active.append(name)
        warm = {}
        with torch.no_grad():
            for name in active:
                start = time.perf_counter()
                fns[name](q, k, v)
                warm[name] = time.perf_counter() - start
                times[name] = []
            rounds = max(2, min(5, int(20.0 / max(sum(warm.values()), 1e-3))))
            for r in range(rounds):
                for name in active[r % len(active):] + active[: r % len(active)]:  # rotate the order
                    start = time.perf_counter()
                    fns[name](q, k, v)
                    times[name].append(time.perf_counter() - start)
        for row in rows[-len(names):]:
            if row["method"] in times:
                t = times[row["method"]]
                row.update(time_s=min(t), time_median_s=statistics.median(t), repeats=len(t))
        too_slow |= {name for name in active if warm[name] > time_limit_s}
    return rows


# ----------------------------------------------------------------------------------------------
# Driver: one timing process for all methods, one memory process per method; fits, targets
# ----------------------------------------------------------------------------------------------
def fit_exponent(rows: list[dict], key: str = "time_s") -> float | None:
    """Least-squares slope of log(key) on log(n) over the measured sizes."""
    pts = [(math.log(r["n"]), math.log(r[key])) for r in rows if not r["skipped"] and r.get(key)]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def _run_worker(names: list[str], args: argparse.Namespace, phase: str) -> list[dict]:
    env = dict(os.environ)
    if phase == "memory":  # every freed block >= 64 KiB returns to the OS: the RSS high-water mark is honest
        env.update(MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="0")
    cmd = [sys.executable, __file__, "--phase", phase, "--worker", *names, "--threads", str(args.threads),
           "--time-limit", str(args.time_limit), "--sizes", *map(str, args.sizes)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        why = f"{phase} worker failed: {done.stderr.strip()[-300:]}"
        return [{"method": m, "n": n, "skipped": why} for n in args.sizes for m in names]
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(args: argparse.Namespace) -> list[dict]:
    """Time all methods in one process, then each method's memory in a fresh process of its own."""
    rows = _run_worker(args.methods, args, "time")
    memory = {(r["method"], r["n"]): r for m in args.methods for r in _run_worker([m], args, "memory")}
    for row in rows:
        mem = memory[(row["method"], row["n"])]
        skipped = row["skipped"] or mem["skipped"]
        row.update(mem)
        row["skipped"] = skipped
    return sorted(rows, key=lambda r: (args.methods.index(r["method"]), r["n"]))


def _at(rows: list[dict], method: str, n: int) -> dict | None:
    return next((r for r in rows if r["method"] == method and r["n"] == n and not r["skipped"]), None)


def check_targets(rows: list[dict], exponents: dict[str, float | None], n_max: int) -> list[dict]:
    targets = []
    for m in ("sliding_window", "linear", "performer"):
        k = exponents.get(m)
        targets.append({"target": f"{m} time exponent <= 1.2", "value": k, "met": k is not None and k <= 1.2})
    k = exponents.get("dense")
    targets.append(
        {"target": "dense time exponent about 2 (1.7 .. 2.3)", "value": k, "met": k is not None and 1.7 <= k <= 2.3}
    )
    dense, chunk, sdpa = _at(rows, "dense", n_max), _at(rows, "chunked", n_max), _at(rows, "sdpa", n_max)
    if dense and chunk:
        for key in ("peak_tracked_mib", "peak_rss_mib"):
            if dense.get(key) and chunk.get(key) is not None:
                ratio = chunk[key] / dense[key]
                targets.append(
                    {"target": f"chunked {key} at n={n_max} <= 10% of dense", "value": ratio, "met": ratio <= 0.10}
                )
        ratio = chunk["time_s"] / dense["time_s"]
        targets.append({"target": f"chunked time at n={n_max} <= 2x dense", "value": ratio, "met": ratio <= 2.0})
    if sdpa and chunk:
        ratio = chunk["time_s"] / sdpa["time_s"]
        targets.append(
            {"target": f"(stretch) chunked time at n={n_max} <= 2x fused SDPA", "value": ratio, "met": ratio <= 2.0}
        )
    return targets


def _fmt(x: object, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def print_table(rows: list[dict], exponents: dict, mem_exponents: dict, targets: list[dict]) -> None:
    print(f"{'method':<15}{'n':>7}{'time s':>10}{'tracked MiB':>13}{'RSS MiB':>10}   note")
    for r in rows:
        if r["skipped"]:
            print(f"{r['method']:<15}{r['n']:>7}{'-':>10}{'-':>13}{'-':>10}   skipped: {r['skipped']}")
        else:
            print(f"{r['method']:<15}{r['n']:>7}{r['time_s']:>10.4f}{r['peak_tracked_mib']:>13.1f}"
                  f"{_fmt(r['peak_rss_mib'], '.1f'):>10}")
    print("\nexponent k in time ~ n^k (memory ~ n^k, tracked):")
    for m in METHODS:
        if m in exponents:
            print(f"  {m:<15} time {_fmt(exponents[m], '.2f'):>5}   memory {_fmt(mem_exponents.get(m), '.2f'):>5}")
    print("\ntargets:")
    for t in targets:
        print(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {_fmt(t['value'], '.3f')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    parser.add_argument("--threads", type=int, default=1, help="torch threads; 0 = PyTorch's default")
    parser.add_argument("--time-limit", type=float, default=30.0, help="skip larger sizes after a call this slow (s)")
    parser.add_argument("--out", type=Path, default=RESULTS / "attention_scaling.json")
    parser.add_argument("--worker", nargs="+", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--phase", choices=["time", "memory"], default="time", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        if args.phase == "time":
            print(json.dumps(time_worker(args.worker, args.sizes, args.threads, args.time_limit)))
        else:
            print(json.dumps(memory_worker(args.worker[0], args.sizes, args.threads, args.time_limit)))
        return

    started = time.time()
    load_before = os.getloadavg()
    rows = measure(args)
    exponents = {m: fit_exponent([r for r in rows if r["method"] == m]) for m in args.methods}
    mem_exponents = {m: fit_exponent([r for r in rows if r["method"] == m], "peak_tracked_mib") for m in args.methods}
    targets = check_targets(rows, exponents, max(args.sizes))
    import torch

    result = {
        "description": "Forward time and peak memory of attention variants against sequence length (CPU, float32, "
        f"B=1, one head, d={HEAD_DIM}, no autograd). See benchmarks/attention_scaling.py.",
        "memory_methods": {
            "peak_tracked_mib": "peak live tensor bytes allocated during the call "
            "(TensorMemoryTracker, a TorchDispatchMode)",
            "peak_rss_mib": "rise of VmHWM (reset via /proc/self/clear_refs) over VmRSS before the call, "
            "fresh process per method",
        },
        "environment": {
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
            "cpu": next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                         if ln.startswith("model name")), platform.processor()),
            "cpu_count": os.cpu_count(), "torch_threads": args.threads or "default",
            "load_average_before": load_before, "load_average_after": os.getloadavg(),
            "wall_s": round(time.time() - started, 1),
        },
        "rows": rows,
        "time_exponents": exponents,
        "memory_exponents": mem_exponents,
        "targets": targets,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    fields = ["method", "n", "time_s", "time_median_s", "repeats", "peak_tracked_mib", "peak_rss_mib",
              "largest_tensor_numel", "skipped"]
    with args.out.with_suffix(".csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    print_table(rows, exponents, mem_exponents, targets)
    print(f"\nwrote {args.out} and {args.out.with_suffix('.csv')} in {result['environment']['wall_s']} s")


if __name__ == "__main__":
    main()
