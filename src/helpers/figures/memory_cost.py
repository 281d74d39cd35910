"""Figures and tables of chapter 6.3 (memory), from :mod:`helpers.experiments.memory_cost`. Nothing here trains."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .. import viz
from .style import dashed, legend_below, significant

__all__ = ["layer_memory_figure", "chunked_memory_figure", "chunked_time_table", "checkpoint_table",
           "training_memory_figure"]

_MIB = 2**20


def layer_memory_figure(result: Mapping[str, Sequence[float]]) -> go.Figure:
    """Peak MiB of one attention layer's forward and backward against n, beside one H x n x n matrix."""
    x = np.asarray(result["n"])
    curves = {
        "forward, peak (measured)": significant(np.asarray(result["forward_peak"]) / _MIB, 3),
        "backward, peak (measured)": significant(np.asarray(result["backward_peak"]) / _MIB, 3),
        "one H × n × n float32 matrix (analytic)": significant(np.asarray(result["score_matrix_bytes"]) / _MIB, 3),
    }
    fig = viz.line_plot(x, curves, x_title="sequence length n", y_title="MiB",
                        title="One attention layer (4 heads, width 64), batch 1: memory against n",
                        log_x=True, log_y=True)
    dashed(fig, "one H × n × n float32 matrix (analytic)")
    return legend_below(fig)


def chunked_memory_figure(result: Mapping[str, Sequence[float]]) -> go.Figure:
    """Peak MiB of the forward against n: materialised softmax attention against the online-softmax loop."""
    x = np.asarray(result["n"])
    curves = {
        "materialised softmax": significant(np.asarray(result["materialised_bytes"]) / _MIB, 3),
        "online softmax, chunks of 256 keys": significant(np.asarray(result["chunked_bytes"]) / _MIB, 3),
    }
    fig = viz.line_plot(x, curves, x_title="sequence length n", y_title="peak MiB (forward)",
                        title="Exact attention, 4 heads of 64, batch 1: peak memory against n",
                        log_x=True, log_y=True)
    return legend_below(fig)


def chunked_time_table(result: Mapping[str, Sequence[float]]) -> str:
    """CPU milliseconds of the three attention implementations at each n, as Markdown."""
    rows = ["| n | materialised (ms) | chunked Python loop (ms) | PyTorch fused kernel (ms) |", "|---|---|---|---|"]
    for i, n in enumerate(result["n"]):
        rows.append(f"| {int(n)} | {result['materialised_seconds'][i] * 1e3:.1f} | "
                    f"{result['chunked_seconds'][i] * 1e3:.1f} | {result['fused_seconds'][i] * 1e3:.1f} |")
    return "\n".join(rows)


def checkpoint_table(result: Mapping[str, float]) -> str:
    """Peak memory and time of a training step with and without checkpointing, as Markdown."""
    rows = ["| training step | peak tracked memory (MiB) | CPU time (ms, best of 5) |", "|---|---|---|",
            f"| plain | {result['plain_bytes'] / _MIB:.1f} | {result['plain_seconds'] * 1e3:.0f} |",
            f"| every block checkpointed | {result['checkpointed_bytes'] / _MIB:.1f} | "
            f"{result['checkpointed_seconds'] * 1e3:.0f} |"]
    return "\n".join(rows)


def training_memory_figure(result: Mapping[str, Sequence[float]]) -> go.Figure:
    """Peak MiB of a forward and backward pass against n (materialised, autograd through the loop, recomputing)."""
    x = np.asarray(result["n"])
    curves = {
        "materialised softmax": significant(np.asarray(result["materialised_bytes"]) / _MIB, 3),
        "online softmax, autograd backward": significant(np.asarray(result["online_bytes"]) / _MIB, 3),
        "online softmax, recomputing backward": significant(np.asarray(result["recomputing_bytes"]) / _MIB, 3),
        "one H × n × n float32 matrix (analytic)": significant(np.asarray(result["score_matrix_bytes"]) / _MIB, 3),
    }
    fig = viz.line_plot(x, curves, x_title="sequence length n", y_title="peak MiB (forward + backward)",
                        title="Exact causal attention with gradients, 4 heads of 64, batch 1: peak memory against n",
                        log_x=True, log_y=True)
    dashed(fig, "one H × n × n float32 matrix (analytic)")
    return legend_below(fig)
