"""How fast is attention here? Fused kernel vs readable reference, our module vs PyTorch's.

Measures, side by side in one run, on CPU in float32 under ``torch.inference_mode``:

1. ``torch.nn.functional.scaled_dot_product_attention`` (PyTorch's fused kernel) against the
   book's readable ``helpers.scaled_dot_product_attention`` (ratio to fused);
2. ``helpers.MultiHeadAttention`` (its fast path: no weights asked for) against
   ``torch.nn.MultiheadAttention`` of the same size (ratio; target <= 1.1x).

Shapes: B=4, H=8, L=S in {256, 1024, 2048}, E=64 (embed_dim 512 for the modules), self-attention.
Every number is the median of several repeats after warm-up; the two sides of each ratio are
timed alternately, so that a change in machine load hits both.

Run: ``python benchmarks/sdpa_benchmark.py [--lengths 256 1024 2048] [--repeats 7]``
(about a minute or two on a 2-core CPU).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

import helpers

BATCH, HEADS, HEAD_DIM = 4, 8, 64
EMBED_DIM = HEADS * HEAD_DIM


def time_alternately(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 2) -> dict[str, float]:
    """Median seconds per call of each function, calling them in turn on every repeat."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(0)
    ours = helpers.MultiHeadAttention(EMBED_DIM, HEADS).eval()
    theirs = torch.nn.MultiheadAttention(EMBED_DIM, HEADS, batch_first=True).eval()
    with torch.no_grad():  # same weights, so that both compute the same function
        q_w, k_w, v_w = theirs.in_proj_weight.chunk(3)
        q_b, k_b, v_b = theirs.in_proj_bias.chunk(3)
        for linear, w, b in ((ours.q_proj, q_w, q_b), (ours.k_proj, k_w, k_b), (ours.v_proj, v_w, v_b)):
            linear.weight.copy_(w)
            linear.bias.copy_(b)
        ours.o_proj.load_state_dict(theirs.out_proj.state_dict())

    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} threads, float32, B={BATCH}, H={HEADS}, E={HEAD_DIM}, "
          f"median of {args.repeats} after warm-up")
    header = (f"{'L=S':>6} | {'fused sdpa':>11} | {'reference':>11} | {'ref/fused':>9} | "
              f"{'our MHA':>9} | {'torch MHA':>9} | {'ours/torch':>10}")
    print(header)
    print("-" * len(header))
    with torch.inference_mode():
        for length in args.lengths:
            q, k, v = (torch.randn(BATCH, HEADS, length, HEAD_DIM) for _ in range(3))  # (B, H, L, E)
            x = torch.randn(BATCH, length, EMBED_DIM)  # (B, L, D)
            torch.testing.assert_close(ours(x)[0], theirs(x, x, x, need_weights=False)[0], atol=1e-4, rtol=1e-4)
            kernels = time_alternately(
                {
                    "fused": lambda: F.scaled_dot_product_attention(q, k, v),
                    "reference": lambda: helpers.scaled_dot_product_attention(q, k, v),
                },
                repeats=args.repeats if length <= 1024 else max(3, args.repeats // 2),
            )
            modules = time_alternately(
                {
                    "ours": lambda: ours(x),
                    # need_weights=False lets torch take its own fused fast path
                    "torch": lambda: theirs(x, x, x, need_weights=False),
                },
                repeats=args.repeats,
            )
            print(
                f"{length:>6} | {kernels['fused'] * 1e3:>8.2f} ms | {kernels['reference'] * 1e3:>8.2f} ms | "
                f"{kernels['reference'] / kernels['fused']:>8.2f}x | {modules['ours'] * 1e3:>6.2f} ms | "
                f"{modules['torch'] * 1e3:>6.2f} ms | {modules['ours'] / modules['torch']:>9.2f}x"
            )


if __name__ == "__main__":
    main()
