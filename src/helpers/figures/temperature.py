"""Chapter 3 figure of :mod:`helpers.experiments.temperature`: a learned temperature during training."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from ..experiments.recall import RecallRun
from ..viz.style import BLUE, GREEN, NEUTRAL, ORANGE, VERMILLION, base_layout
from .style import legend_below, significant

__all__ = ["temperature_figure"]

_COLORS = (VERMILLION, ORANGE, BLUE, GREEN)


def temperature_figure(runs: Sequence[RecallRun]) -> go.Figure:
    """The learned factor on ``q . k`` during training, one line per run (seeds share a colour), and the prior."""
    d_k = runs[0].d_k
    labels = list(dict.fromkeys(run.label for run in runs))
    fig = go.Figure()
    for g, label in enumerate(labels):
        group = [run for run in runs if run.label == label]
        for i, run in enumerate(group):
            steps = list(range(1, len(run.scale_trajectory) + 1))
            fig.add_trace(go.Scatter(x=steps[::2], y=significant(run.scale_trajectory[::2]), mode="lines", name=label,
                                     legendgroup=label, showlegend=i == 0,
                                     line=dict(color=_COLORS[g % len(_COLORS)], width=1.5),
                                     hovertemplate=f"seed {run.seed}: " + "%{y}<extra>" + label + "</extra>"))
    longest = max(len(run.scale_trajectory) for run in runs)
    fig.add_trace(go.Scatter(x=[1, longest], y=[1 / math.sqrt(d_k)] * 2, mode="lines", name="1/√d_k (the fixed prior)",
                             line=dict(color=NEUTRAL, dash="dash", width=1)))
    fig.update_layout(**base_layout(f"A learned temperature at d_k = {d_k} (one line per seed)", 420))
    fig.update_xaxes(title_text="training step")
    fig.update_yaxes(title_text="factor on q·k", type="log")
    return legend_below(fig)
