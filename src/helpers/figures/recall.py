"""Figures of :mod:`helpers.experiments.recall` shared by chapters 2 and 3: training curves of recall runs."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from .. import viz
from ..experiments.recall import RecallRun
from ..viz.lines import moving_average
from .style import legend_below, significant

__all__ = ["accuracy_figure"]


def accuracy_figure(runs: Sequence[RecallRun], *, title: str, every: int = 5, window: int = 20) -> go.Figure:
    """Training accuracy (moving average) of several runs on one plot."""
    steps = len(runs[0].history.accuracy)
    x = list(range(0, steps, every))
    fig = viz.line_plot(
        x, {run.label: significant(moving_average(run.history.accuracy, window)[::every], 3) for run in runs},
        x_title="training step", y_title=f"batch accuracy ({window}-step average)", title=title,
    )
    return legend_below(fig)
