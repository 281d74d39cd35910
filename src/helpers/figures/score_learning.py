"""Chapter 2 figures and table of :mod:`helpers.experiments.score_learning`: learning curves,
accuracy reached and cost of a step, per score function."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..experiments.recall import RecallRun
from ..viz.style import base_layout
from ..viz.lines import moving_average
from .score_style import SCORE_COLORS, SCORE_LABELS
from .style import decimals

__all__ = ["learning_curves_figure", "learning_bars_figure", "learning_table"]


def learning_curves_figure(runs: dict[str, list[RecallRun]], *, smooth: int = 10, every: int = 5) -> go.Figure:
    """Held-out accuracy and training loss against the step, with a dropdown over score functions.

    "all" shows the mean over seeds of every score function; picking one shows its mean (thick)
    and each seed (thin).

    Args:
        runs: The output of :func:`~helpers.experiments.score_learning.compare_score_functions`.
        smooth: Window of the moving average of the training loss, in steps.
        every: Plot the loss every this many steps (keeps the page small).

    Returns:
        The Plotly figure.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=("accuracy on held-out sequences", f"training loss ({smooth}-step average)"))
    groups: list[tuple[str, bool]] = []  # (score, is_mean) for every trace, in order
    for score, group in runs.items():
        colour = SCORE_COLORS.get(score, "#7f7f7f")
        label = SCORE_LABELS.get(score, score)
        steps = [s + 1 for s in group[0].eval_steps]
        accuracy = np.mean([r.test_accuracy for r in group], axis=0)
        losses = np.stack([moving_average(r.history.loss, smooth) for r in group])  # (seeds, steps)
        loss_steps = np.arange(1, losses.shape[1] + 1)[every - 1::every]
        fig.add_scatter(x=steps, y=decimals(accuracy, 3), name=label, legendgroup=score, mode="lines",
                        line=dict(color=colour, width=3), row=1, col=1,
                        hovertemplate=f"{label}<br>step %{{x}}: accuracy %{{y:.3f}}<extra></extra>")
        fig.add_scatter(x=loss_steps.tolist(), y=decimals(losses.mean(0)[every - 1::every], 3), name=label,
                        legendgroup=score, showlegend=False, mode="lines", line=dict(color=colour, width=3), row=2,
                        col=1, hovertemplate=f"{label}<br>step %{{x}}: loss %{{y:.3f}}<extra></extra>")
        groups += [(score, True), (score, True)]
        for run, loss in zip(group, losses):
            fig.add_scatter(x=steps, y=decimals(run.test_accuracy, 3), name=f"seed {run.seed}", legendgroup=score,
                            showlegend=False, mode="lines", line=dict(color=colour, width=1, dash="dot"),
                            visible=False, row=1, col=1,
                            hovertemplate=f"{label}, seed {run.seed}<br>step %{{x}}: %{{y:.3f}}<extra></extra>")
            fig.add_scatter(x=loss_steps.tolist(), y=decimals(loss[every - 1::every], 3), name=f"seed {run.seed}",
                            legendgroup=score, showlegend=False, mode="lines",
                            line=dict(color=colour, width=1, dash="dot"), visible=False, row=2, col=1,
                            hovertemplate=f"{label}, seed {run.seed}<br>step %{{x}}: %{{y:.3f}}<extra></extra>")
            groups += [(score, False), (score, False)]
    n_seeds = len(next(iter(runs.values())))
    buttons = [dict(method="restyle", label=f"all (mean of {n_seeds} seed{'s' if n_seeds != 1 else ''})",
                    args=[{"visible": [is_mean for _, is_mean in groups]}])]
    for score in runs:
        buttons.append(dict(method="restyle", label=f"{SCORE_LABELS.get(score, score)}: each seed",
                            args=[{"visible": [s == score for s, _ in groups]}]))
    fig.update_layout(**base_layout("Associative recall: learning curves", 640),
                      legend=dict(orientation="h", x=0.0, y=-0.1, yanchor="top"),
                      updatemenus=[dict(type="dropdown", buttons=buttons, x=0.0, xanchor="left", y=1.0,
                                        yanchor="bottom", pad=dict(b=28), showactive=True)])
    fig.update_layout(margin=dict(t=120, b=110))
    fig.update_yaxes(range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(type="log", row=2, col=1, exponentformat="power", dtick=1)
    fig.update_xaxes(title_text="training step", row=2, col=1)
    return fig


def learning_bars_figure(summary: list[dict[str, object]]) -> go.Figure:
    """Final held-out accuracy (mean over seeds, bars from the worst to the best seed) and the
    fastest training step, per score function.

    Args:
        summary: The output of :func:`~helpers.experiments.score_learning.learning_summary`.

    Returns:
        The Plotly figure.
    """
    from plotly.subplots import make_subplots

    labels = [SCORE_LABELS.get(str(r["score"]), str(r["score"])) for r in summary]
    colours = [SCORE_COLORS.get(str(r["score"]), "#7f7f7f") for r in summary]
    acc = np.array([r["accuracy"] for r in summary], dtype=float)
    low = acc - np.array([r["accuracy_min"] for r in summary], dtype=float)
    high = np.array([r["accuracy_max"] for r in summary], dtype=float) - acc
    step_ms = [float(r["step_time"]) * 1e3 for r in summary]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, subplot_titles=(
        "held-out accuracy (whiskers: worst and best seed)",
        "fastest training step (ms)"))
    fig.add_bar(x=labels, y=decimals(acc, 3), marker_color=colours, showlegend=False, row=1, col=1,
                error_y=dict(type="data", symmetric=False, array=decimals(high, 3), arrayminus=decimals(low, 3)),
                hovertemplate="%{x}: accuracy %{y:.3f}<extra></extra>")
    fig.add_bar(x=labels, y=decimals(step_ms, 3), marker_color=colours, showlegend=False, row=2, col=1,
                hovertemplate="%{x}: %{y:.3f} ms per step<extra></extra>")
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    fig.update_layout(**base_layout("Accuracy reached, and cost of a step", 560))
    return fig


def learning_table(summary: list[dict[str, object]], threshold: float = 0.9) -> str:
    """:func:`~helpers.experiments.score_learning.learning_summary` as a Markdown table.

    Args:
        summary: The output of :func:`~helpers.experiments.score_learning.learning_summary`.
        threshold: The accuracy of the "steps to" column (as used for ``summary``).

    Returns:
        Markdown text.
    """
    lines = [
        f"| score function | held-out accuracy: mean (worst–best seed) | steps to {threshold:.0%} | "
        "training time (s) | fastest step (ms) | parameters |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in summary:
        steps = "not reached" if r["steps_to_threshold"] is None else f"{r['steps_to_threshold']:.0f}"
        if r["steps_to_threshold"] is None and r["seeds_reaching_threshold"]:
            steps = f"{r['seeds_reaching_threshold']} seed(s) only"
        lines.append(
            f"| {SCORE_LABELS.get(str(r['score']), r['score'])} | {r['accuracy']:.1%} "
            f"({r['accuracy_min']:.1%}–{r['accuracy_max']:.1%}) | {steps} | {r['wall_time']:.2f} | "
            f"{float(r['step_time']) * 1e3:.2f} | {r['num_parameters']:,} |"
        )
    return "\n".join(lines)
