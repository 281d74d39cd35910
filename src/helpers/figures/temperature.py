"""Chapter 3 figure of :mod:`helpers.experiments.temperature`: a learned temperature during training."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from .. import viz
from ..experiments.recall import RecallRun
from .style import dashed, legend_below, significant

__all__ = ["temperature_figure"]


def temperature_figure(runs: Sequence[RecallRun]) -> go.Figure:
    """The learned factor on ``q . k`` during training, for runs with a learned temperature."""
    steps = len(runs[0].scale_trajectory)
    x = list(range(0, steps, 5))
    d_k = runs[0].d_k
    curves = {run.label: significant(run.scale_trajectory[::5]) for run in runs}
    prior = "1/√d_k (fixed prior)"
    curves[prior] = [1 / math.sqrt(d_k)] * len(x)
    fig = viz.line_plot(
        x, curves, x_title="training step", y_title="factor on q·k", log_y=True,
        title=f"A learned temperature at d_k = {d_k}",
    )
    return legend_below(dashed(fig, prior, color="#7f7f7f"))

