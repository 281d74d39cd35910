"""Chapter 2 figures and table of :mod:`helpers.experiments.score_learning`: learning curves,
accuracy reached and cost of a step, per score function."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..experiments.recall import RecallRun
from ..viz.lines import moving_average
from ..viz.style import NEUTRAL, base_layout
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
        colour = SCORE_COLORS.get(score, NEUTRAL)
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


def learning_bars_figure(summary: list[dict[str, object]], *, steps: int | None = None) -> go.Figure:
    """Final held-out accuracy and steps to the threshold per score function: a bar for the mean
    over seeds and one dot per seed, so the spread is visible.

    Args:
        summary: The output of :func:`~helpers.experiments.score_learning.learning_summary`.
        steps: Training steps of the runs; a seed that never reached the threshold is drawn as a
            cross at this height (not drawn when ``None``).

    Returns:
        The Plotly figure.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, subplot_titles=(
        "held-out accuracy after training (bar: mean; dots: seeds)",
        "steps to 90% held-out accuracy (bar: mean; dots: seeds; ×: never reached)"))
    for r in summary:
        name = str(r["score"])
        label, colour = SCORE_LABELS.get(name, name), SCORE_COLORS.get(name, NEUTRAL)
        accs = list(r["accuracy_per_seed"])  # type: ignore[arg-type]
        fig.add_bar(x=[label], y=decimals([r["accuracy"]], 3), marker_color=colour, opacity=0.55, showlegend=False,
                    row=1, col=1, hovertemplate="%{x}: mean accuracy %{y:.3f}<extra></extra>")
        fig.add_scatter(x=[label] * len(accs), y=decimals(accs, 3), mode="markers", showlegend=False, row=1, col=1,
                        marker=dict(color=colour, size=9, line=dict(color="white", width=1)),
                        hovertemplate="%{x}: a seed's accuracy %{y:.3f}<extra></extra>")
        reached = [s for s in r["steps_per_seed"] if s is not None]  # type: ignore[union-attr]
        missed = len(r["steps_per_seed"]) - len(reached)  # type: ignore[arg-type]
        if r["steps_to_threshold"] is not None:
            fig.add_bar(x=[label], y=[round(float(r["steps_to_threshold"]), 1)], marker_color=colour, opacity=0.55,
                        showlegend=False, row=2, col=1, hovertemplate="%{x}: mean %{y:.0f} steps<extra></extra>")
        if reached:
            fig.add_scatter(x=[label] * len(reached), y=reached, mode="markers", showlegend=False, row=2, col=1,
                            marker=dict(color=colour, size=9, line=dict(color="white", width=1)),
                            hovertemplate="%{x}: a seed reached it after %{y} steps<extra></extra>")
        if missed and steps is not None:
            fig.add_scatter(x=[label] * missed, y=[steps] * missed, mode="markers", showlegend=False, row=2, col=1,
                            marker=dict(color=colour, size=11, symbol="x"),
                            hovertemplate=f"%{{x}}: not reached in {steps} steps<extra></extra>")
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=2, col=1)
    fig.update_layout(**base_layout("Accuracy reached, and how fast", 600), bargap=0.35)
    return fig


def learning_table(summary: list[dict[str, object]], threshold: float = 0.9) -> str:
    """:func:`~helpers.experiments.score_learning.learning_summary` as a Markdown table, with the
    spread over seeds of each number.

    Args:
        summary: The output of :func:`~helpers.experiments.score_learning.learning_summary`.
        threshold: The accuracy of the "steps to" column (as used for ``summary``).

    Returns:
        Markdown text.
    """
    lines = [
        f"| score function | factor on the scores | held-out accuracy: mean (worst–best seed) | "
        f"steps to {threshold:.0%}: mean (fastest–slowest seed) | training time (s) | fastest step (ms) | "
        "parameters |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in summary:
        n = r.get("num_seeds", len(r.get("steps_per_seed", [])))
        if r["steps_to_threshold"] is not None:
            steps = f"{r['steps_to_threshold']:.0f} ({r['steps_min']:.0f}–{r['steps_max']:.0f})"
        elif r["seeds_reaching_threshold"]:
            steps = f"{r['seeds_reaching_threshold']} of {n} seeds only"
        else:
            steps = "not reached"
        scale = r.get("scale")
        factor = "learned, from 1" if str(r["score"]).endswith("learned_scale") else (
            "—" if scale is None else f"{float(scale):.3g}")
        lines.append(
            f"| {SCORE_LABELS.get(str(r['score']), r['score'])} | {factor} | {r['accuracy']:.1%} "
            f"({r['accuracy_min']:.1%}–{r['accuracy_max']:.1%}) | {steps} | {r['wall_time']:.2f} | "
            f"{float(r['step_time']) * 1e3:.2f} | {r['num_parameters']:,} |"
        )
    return "\n".join(lines)
