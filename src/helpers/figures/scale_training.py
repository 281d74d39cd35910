"""Chapter 3 figures of :mod:`helpers.experiments.scale_training`: training with and without the scale."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from .. import viz
from ..experiments.recall import RecallRun
from ..experiments.scale_training import LearningRateSweep
from ..viz.lines import moving_average
from .style import dashed, legend_below, significant

__all__ = ["training_figure", "training_table", "learning_rate_figure"]


def training_figure(runs: Sequence[RecallRun], *, every: int = 5, window: int = 20) -> go.Figure:
    """Training accuracy (moving average) with and without the scale, with a slider over ``d_k``."""
    sizes = sorted({run.d_k for run in runs})
    steps = len(runs[0].history.accuracy)
    x = list(range(0, steps, every))
    curves = {}
    for d_k in sizes:
        curves[d_k] = {
            run.label: significant(moving_average(run.history.accuracy, window)[::every], 3) for run in runs if run.d_k == d_k
        }
    return viz.line_sweep(
        x, curves, param_name="d_k", x_title="training step", y_title=f"batch accuracy ({window}-step average)",
        title="Associative recall, one attention head (menu: d_k)", control="dropdown",
    )


def training_table(runs: Sequence[RecallRun]) -> str:
    """A Markdown table of steps to the target accuracy and final accuracy, per run."""
    target = runs[0].target
    rows = [f"| d_k | scale | steps to {target:.0%} | final accuracy |", "|---:|---|---:|---:|"]
    for run in runs:
        reached = "never" if run.steps_to_target is None else str(run.steps_to_target)
        rows.append(f"| {run.d_k} | {run.label} | {reached} | {run.final_accuracy:.1%} |")
    return "\n".join(rows)


def learning_rate_figure(sweep: LearningRateSweep) -> go.Figure:
    """Final accuracy against the learning rate, with and without the scale, and the usable threshold."""
    threshold = f"usable: ≥ {sweep.threshold:.0%}"
    fig = viz.line_plot(
        sweep.lrs,
        {
            "scaled": significant(sweep.final_accuracy("scaled"), 3),
            "no scale": significant(sweep.final_accuracy("no scale"), 3),
            threshold: [sweep.threshold] * len(sweep.lrs),
        },
        x_title="learning rate (AdamW)", y_title="final accuracy (last 50 steps)", log_x=True,
        title=f"Which learning rates work at d_k = {sweep.d_k}",
    )
    fig.update_xaxes(tickvals=sweep.lrs, ticktext=[f"{lr:.0e}" for lr in sweep.lrs])
    return legend_below(dashed(fig, threshold, color="#7f7f7f"))

