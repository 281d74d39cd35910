"""Figures of chapter 6, section 2 ("Training that goes wrong"), from the results of
:mod:`helpers.experiments.training_failures`. Nothing here trains."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from ..experiments.training_failures import CHANCE, MonitoredRun, RunResult
from ..viz.style import BLUE, GREEN, NEUTRAL, ORANGE, PURPLE, VERMILLION, WEIGHT_COLORSCALE, base_layout

__all__ = ["grid_figure", "loss_curves_figure", "layer_norms_figure", "entropy_figure"]


def _capped(value: float) -> float:
    return min(value, 2 * CHANCE)


def grid_figure(grid: Mapping[tuple[bool, int, float], Sequence[RunResult]]) -> go.Figure:
    """Heatmap of the mean final loss (a diverged run counts as twice chance), one row per
    architecture and warm-up, one column per learning rate; the text gives the seeds' range and
    the number of failed runs."""
    rows = sorted({(nf, w) for nf, w, _ in grid}, key=lambda r: (r[0], r[1]))
    lrs = sorted({lr for _, _, lr in grid})
    names = [f"{'Pre-LN' if nf else 'Post-LN'}, warm-up {w}" for nf, w in rows]
    z, text = [], []
    for nf, w in rows:
        z_row, t_row = [], []
        for lr in lrs:
            runs = grid[(nf, w, lr)]
            losses = [_capped(r.final_loss) for r in runs]
            z_row.append(statistics.fmean(losses))
            t_row.append(f"{statistics.fmean(losses):.2f}<br>({min(losses):.2f}–{max(losses):.2f})"
                         f"<br>failed {sum(r.failed for r in runs)}/{len(runs)}")
        z.append(z_row)
        text.append(t_row)
    fig = go.Figure(go.Heatmap(z=z, x=[f"lr {lr:g}" for lr in lrs], y=names, text=text, texttemplate="%{text}",
                               colorscale=f"{WEIGHT_COLORSCALE}_r",
                               zmin=0, zmax=2 * CHANCE, colorbar=dict(title="final loss")))
    fig.update_layout(**base_layout("Final loss after training (mean of seeds; chance = ln 16 ≈ 2.77)", 420))
    fig.update_yaxes(autorange="reversed")
    return fig


def loss_curves_figure(runs: Mapping[str, Sequence[RunResult]], *, title: str) -> go.Figure:
    """Training loss per step, one line per run, one colour per setting."""
    fig = go.Figure()
    palette = [BLUE, VERMILLION, GREEN, PURPLE]
    for index, (name, group) in enumerate(runs.items()):
        for k, run in enumerate(group):
            fig.add_trace(go.Scatter(y=[_capped(v) if math.isfinite(v) else 2 * CHANCE for v in run.loss],
                                     mode="lines", name=name, legendgroup=name, showlegend=k == 0,
                                     line=dict(color=palette[index % len(palette)], width=1.5)))
    fig.add_hline(y=CHANCE, line=dict(dash="dot", color=NEUTRAL), annotation_text="chance")
    fig.update_layout(**base_layout(title, 420), xaxis_title="step", yaxis_title="training loss (nats)",
                      legend=dict(orientation="h", x=0.0, y=1.0, yanchor="bottom"))
    return fig


def layer_norms_figure(post: Sequence[Sequence[float]], pre: Sequence[Sequence[float]]) -> go.Figure:
    """Gradient norm per block at initialisation, mean of seeds with the seeds' range as error bars."""
    fig = go.Figure()
    for name, per_seed in (("Post-LN", post), ("Pre-LN", pre)):
        layers = list(zip(*per_seed))
        means = [statistics.fmean(v) for v in layers]
        fig.add_trace(go.Bar(x=[f"block {i}" for i in range(len(layers))], y=means, name=name,
                             error_y=dict(type="data", symmetric=False,
                                          array=[max(v) - m for v, m in zip(layers, means)],
                                          arrayminus=[m - min(v) for v, m in zip(layers, means)])))
    fig.update_layout(**base_layout("Gradient norm of each block at initialisation (6 blocks, 3 seeds)", 420),
                      yaxis_title="gradient norm", barmode="group", yaxis_type="log",
                      legend=dict(orientation="h", x=0.0, y=1.0, yanchor="bottom"))
    return fig


def entropy_figure(runs: Mapping[str, Sequence[MonitoredRun]], *, low: float, high: float) -> go.Figure:
    """Mean normalised head entropy at each probe, one line per run, with the two alarm thresholds."""
    fig = go.Figure()
    palette = [GREEN, VERMILLION, BLUE, ORANGE]
    for index, (name, group) in enumerate(runs.items()):
        for k, run in enumerate(group):
            fig.add_trace(go.Scatter(x=[max(s, 0) for s in run.probe_step], y=run.entropy_series("mean"),
                                     mode="lines+markers", name=name, legendgroup=name, showlegend=k == 0,
                                     marker=dict(size=4), line=dict(color=palette[index % len(palette)], width=1.5)))
    for y, label in ((low, "collapse alarm"), (high, "uniform alarm")):
        fig.add_hline(y=y, line=dict(dash="dot", color=NEUTRAL), annotation_text=label)
    fig.update_layout(**base_layout("Attention entropy during training (mean over layers and heads)", 440),
                      xaxis_title="step", yaxis_title="entropy / log(keys)", yaxis_range=[-0.02, 1.05],
                      legend=dict(orientation="h", x=0.0, y=1.0, yanchor="bottom"))
    return fig
