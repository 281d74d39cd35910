"""Chapter 3 figures of :mod:`helpers.experiments.scale_training`, :mod:`~helpers.experiments.temperature`
and :mod:`~helpers.experiments.scale_bug`: training results over several seeds, one dot per seed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from ..experiments.recall import RecallRun
from ..experiments.scale_training import LearningRateSweep, seed_summary, steps_or_cap
from ..viz.style import NEUTRAL, PALETTE, base_layout
from .style import legend_below, significant

__all__ = ["seed_dots", "training_figure", "training_table", "learning_rate_figure", "learning_rate_steps_figure",
           "steps_figure", "score_std_figure"]

_COLORS = PALETTE[:6]


def seed_dots(
    categories: Sequence[str],
    values: Mapping[str, Sequence[Sequence[float]]],
    *,
    y_title: str,
    title: str,
    missed: Mapping[str, Sequence[Sequence[bool]]] | None = None,
    missed_name: str = "never reached (plotted at the budget)",
    log_y: bool = False,
) -> go.Figure:
    """One dot per seed and a bar for the mean, per category and series.

    Args:
        categories: The x categories (e.g. ``"d_k = 16"``).
        values: Series name -> per category, the values of each seed.
        y_title: The y axis title.
        title: What the figure shows.
        missed: Series name -> per category, per seed, whether the value is a budget (drawn ``x``).
        missed_name: Legend text of the ``x`` markers.
        log_y: Log scale on y.

    Returns:
        A figure with, per series, a dot trace (seeds) and a mean trace.
    """
    fig = go.Figure()
    series = list(values)
    width = 0.6 / max(1, len(series))
    for s, name in enumerate(series):
        color = _COLORS[s % len(_COLORS)]
        offset = (s - (len(series) - 1) / 2) * width
        xs, ys, symbols, text = [], [], [], []
        for c, per_seed in enumerate(values[name]):
            for i, value in enumerate(per_seed):
                xs.append(c + offset + (i - (len(per_seed) - 1) / 2) * width / 4)
                ys.append(value)
                was_missed = bool(missed and missed[name][c][i])
                symbols.append("x" if was_missed else "circle")
                text.append(f"seed {i}" + (f": {missed_name}" if was_missed else ""))
        if not xs:
            continue
        fig.add_trace(go.Scatter(x=xs, y=significant(ys, 4), mode="markers", name=f"{name} (one dot per seed)",
                                 marker=dict(color=color, size=8, symbol=symbols, line=dict(width=1, color="white")),
                                 text=text, hovertemplate="%{text}: %{y}<extra>" + name + "</extra>",
                                 legendgroup=name))
        means = [seed_summary(per_seed)[0] for per_seed in values[name]]
        fig.add_trace(go.Scatter(x=[c + offset for c in range(len(categories))], y=significant(means, 4),
                                 mode="markers", name=f"{name}, mean", legendgroup=name, showlegend=False,
                                 marker=dict(color=color, size=22, symbol="line-ew-open", line=dict(width=3)),
                                 hovertemplate="mean: %{y}<extra>" + name + "</extra>"))
    fig.update_layout(**base_layout(title, 420))
    fig.update_xaxes(tickvals=list(range(len(categories))), ticktext=list(categories),
                     range=[-0.5, len(categories) - 0.5])
    fig.update_yaxes(title_text=y_title, type="log" if log_y else "linear")
    return legend_below(fig)


def _by(runs: Sequence[RecallRun], key: object, label: str) -> list[RecallRun]:
    return [run for run in runs if run.d_k == key and run.label == label]


def training_figure(runs: Sequence[RecallRun], *, title: str | None = None) -> go.Figure:
    """Steps to the target accuracy against ``d_k``, with and without the scale, one dot per seed."""
    sizes = sorted({run.d_k for run in runs})
    labels = list(dict.fromkeys(run.label for run in runs))
    target, budget = runs[0].target, runs[0].config.steps
    return seed_dots(
        [f"d_k = {d}" for d in sizes],
        {label: [[steps_or_cap(r) for r in _by(runs, d, label)] for d in sizes] for label in labels},
        missed={label: [[r.steps_to_target is None for r in _by(runs, d, label)] for d in sizes] for label in labels},
        y_title=f"steps to {target:.0%} accuracy (budget {budget})",
        title=title or f"Associative recall, one head, Adam at lr {runs[0].lr:g}: steps to {target:.0%}",
    )


def training_table(runs: Sequence[RecallRun], *, final_accuracy: bool = True) -> str:
    """A Markdown table per ``d_k`` and scale: steps to the target per seed, and either the final accuracy over
    seeds (``final_accuracy``) or the mean steps (a run that never reached the target counted as the budget)."""
    target = runs[0].target
    last = "final accuracy, mean (min–max)" if final_accuracy else "mean steps (never = the budget)"
    rows = [f"| d_k | scale | steps to {target:.0%}, per seed | {last} |", "|---:|---|---|---:|"]
    for d_k in sorted({run.d_k for run in runs}):
        for label in dict.fromkeys(run.label for run in runs):
            group = _by(runs, d_k, label)
            steps = ", ".join("never" if r.steps_to_target is None else str(r.steps_to_target) for r in group)
            if final_accuracy:
                mean, low, high = seed_summary([r.final_accuracy for r in group])
                rows.append(f"| {d_k} | {label} | {steps} | {mean:.1%} ({low:.1%}–{high:.1%}) |")
            else:
                rows.append(f"| {d_k} | {label} | {steps} | {seed_summary([steps_or_cap(r) for r in group])[0]:.0f} |")
    return "\n".join(rows)


def learning_rate_figure(sweep: LearningRateSweep) -> go.Figure:
    """Final accuracy against the learning rate, with and without the scale, one dot per seed, and the threshold."""
    fig = seed_dots(
        [f"{lr:.0e}" for lr in sweep.lrs],
        {label: sweep.final_accuracy_by_seed(label) for label in ("scaled", "no scale")},
        y_title="final accuracy (mean of the last 50 steps)",
        title=f"Which Adam learning rates work at d_k = {sweep.d_k}",
    )
    fig.add_hline(y=sweep.threshold, line=dict(dash="dash", color=NEUTRAL, width=1),
                  annotation_text=f"usable: every seed ≥ {sweep.threshold:.0%}", annotation_position="bottom left")
    fig.update_xaxes(title_text="learning rate (Adam)")
    return fig


def learning_rate_steps_figure(*sweeps: LearningRateSweep, title: str | None = None) -> go.Figure:
    """Steps to the target against the learning rate, one dot per seed, for every series of ``sweeps``.

    Each sweep may cover some of the learning rates only (a control run at the ends of the grid): the x axis
    is the union of their learning rates, and a series has no dots where its sweep did not run.
    """
    lrs = sorted({lr for sweep in sweeps for lr in sweep.lrs})
    values: dict[str, list[list[float]]] = {}
    missed: dict[str, list[list[bool]]] = {}
    for sweep in sweeps:
        for label, per_lr in sweep.runs.items():
            runs_at = dict(zip(sweep.lrs, per_lr))
            values[label] = [[steps_or_cap(r) for r in runs_at.get(lr, [])] for lr in lrs]
            missed[label] = [[r.steps_to_target is None for r in runs_at.get(lr, [])] for lr in lrs]
    first = sweeps[0].runs[next(iter(sweeps[0].runs))][0][0]
    fig = seed_dots(
        [f"{lr:.0e}" for lr in lrs], values, missed=missed, log_y=True,
        y_title=f"steps to {sweeps[0].threshold:.0%} accuracy (budget {first.config.steps}, log scale)",
        title=title or f"Steps to {sweeps[0].threshold:.0%} against the Adam learning rate, d_k = {sweeps[0].d_k}",
    )
    fig.update_xaxes(title_text="learning rate (Adam)")
    return fig


def steps_figure(groups: Mapping[str, Sequence[RecallRun]], *, title: str) -> go.Figure:
    """Steps to the target for a few settings, one dot per seed (``x``: never reached within the budget)."""
    runs = [run for group in groups.values() for run in group]
    target, budget = runs[0].target, max(run.config.steps for run in runs)
    return seed_dots(
        list(groups),
        {"steps to target": [[steps_or_cap(r) for r in group] for group in groups.values()]},
        missed={"steps to target": [[r.steps_to_target is None for r in group] for group in groups.values()]},
        y_title=f"steps to {target:.0%} accuracy (budget {budget})", title=title,
    )


def score_std_figure(groups: Mapping[str, Sequence[RecallRun]], *, title: str) -> go.Figure:
    """The spread of the attention logits within a row during training, one line per seed, log scale."""
    fig = go.Figure()
    for g, (name, runs) in enumerate(groups.items()):
        color = _COLORS[g % len(_COLORS)]
        for i, run in enumerate(runs):
            fig.add_trace(go.Scatter(x=run.score_std_steps, y=significant(run.score_std, 3), mode="lines",
                                     name=name, legendgroup=name, showlegend=i == 0,
                                     line=dict(color=color, width=1.5, dash="solid" if g % 2 == 0 else "dot"),
                                     hovertemplate=f"seed {run.seed}: " + "%{y}<extra>" + name + "</extra>"))
    fig.update_layout(**base_layout(title, 420))
    fig.update_xaxes(title_text="training step")
    fig.update_yaxes(title_text="std of the scaled scores within a row", type="log")
    return legend_below(fig)
