"""Figures and tables of chapter 5.1 (self- and cross-attention), from :mod:`helpers.experiments.cross_attention`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

import helpers.viz as viz
from helpers.experiments.cross_attention import ReversalRun, alignment_mass
from helpers.figures.style import decimals

__all__ = ["shapes_markdown", "cross_attention_figure", "mass_figure"]


def shapes_markdown(rows: Sequence[tuple[str, str, str, str, str]]) -> str:
    """The Q/K/V sources and shapes as Markdown."""
    lines = ["| attention | Q from | K and V from | weights (B, H, L, S) | output |", "|---|---|---|---|---|"]
    lines += [f"| {k} | {q} | {kv} | {w} | {o} |" for k, q, kv, w, o in rows]
    return "\n".join(lines)


def cross_attention_figure(run: ReversalRun) -> go.Figure:
    """Cross-attention of every layer and head (averaged over held-out sequences), and the ideal map."""
    cross = run.cross.numpy()  # (N, H, L, S)
    n_layers, n_heads, length, source_len = cross.shape
    ideal = np.zeros((length, source_len))
    ideal[np.arange(length), source_len - 1 - np.arange(length)] = 1.0
    stacked = np.concatenate([cross, np.broadcast_to(ideal, (n_layers, 1, length, source_len))], axis=1)
    mass = alignment_mass(run.cross)
    heads = [f"head {h} ({float(mass[0, h]):.0%} on target)" for h in range(n_heads)] + ["expected alignment"]
    return viz.attention_heatmap(
        np.round(stacked, 3), x_tokens=[f"src {j}" for j in range(source_len)],
        y_tokens=[f"out {i}" for i in range(length)], head_names=heads,
        layer_names=[f"decoder layer {layer}" for layer in range(n_layers)],
        title="Cross-attention of the trained reverser: output i should read source S−1−i")


def mass_figure(runs: Sequence[ReversalRun]) -> go.Figure:
    """Share of attention mass on the aligned source position, per layer and head, for each seed."""
    fig = go.Figure()
    for run in runs:
        mass = run.mass.numpy()  # (N, H)
        labels = [f"layer {layer}, head {h}" for layer in range(mass.shape[0]) for h in range(mass.shape[1])]
        fig.add_trace(go.Bar(x=labels, y=decimals(mass.ravel(), 3), name=f"seed {run.seed}"))
    fig.update_layout(title="Attention mass on the aligned source position (uniform would be 1/S)", height=400,
                      barmode="group", yaxis=dict(title="mass on the right position", range=[0, 1]))
    return fig
