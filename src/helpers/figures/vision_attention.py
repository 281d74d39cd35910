"""Figures and tables of chapter 5.5 (vision), from :mod:`helpers.experiments.vision_attention`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from helpers.experiments.vision_attention import ChannelRun, SpatialRun
from helpers.figures.style import decimals, legend_below
from helpers.viz.style import BLUE, NEUTRAL, VERMILLION, WEIGHT_COLORSCALE

__all__ = ["channel_weights_figure", "accuracy_markdown", "spatial_map_figure", "STUCK_LOSS", "never_left_chance"]


def _split(values: np.ndarray, informative: np.ndarray) -> tuple[float, float]:
    mask = np.zeros(len(values), dtype=bool)
    mask[informative] = True
    return float(values[mask].mean()), float(values[~mask].mean())


def channel_weights_figure(se_runs: Sequence[ChannelRun], plain_runs: Sequence[ChannelRun]) -> go.Figure:
    """SE's gate per input channel (each dot a channel, per seed), and the plain CNN's first-layer weight norms."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["SE gate of each input channel", "plain CNN: ‖conv1 weights‖ "
                                                        "per input channel (÷ mean)"], horizontal_spacing=0.12)
    for col, runs, values in ((1, se_runs, lambda r: r.input_weights.numpy()),
                              (2, plain_runs, lambda r: (r.conv_norms / r.conv_norms.mean()).numpy())):
        for kind, color in (("informative", BLUE), ("decoy", NEUTRAL)):
            xs, ys = [], []
            for run in runs:
                v = values(run)
                mask = np.zeros(len(v), dtype=bool)
                mask[run.informative.numpy()] = True
                chosen = v[mask] if kind == "informative" else v[~mask]
                xs += [f"seed {run.seed}"] * len(chosen)
                ys += decimals(chosen, 3)
            fig.add_trace(go.Box(x=xs, y=ys, name=f"{kind} channels", boxpoints="all", jitter=0.4, pointpos=0,
                                 marker=dict(color=color), line=dict(color=color), legendgroup=kind,
                                 showlegend=col == 1), row=1, col=col)
    fig.update_layout(boxmode="group", height=440, title="Which input channels does the model rely on?")
    return legend_below(fig)


STUCK_LOSS = 0.65
"""A run whose training loss ends above this (chance is ln 2 = 0.693 for two classes) and whose held-out
accuracy is under 0.6 never left chance (:func:`never_left_chance`)."""


def never_left_chance(run: ChannelRun | SpatialRun) -> bool:
    """Whether a run ended where it started: training loss still near ln 2 and held-out accuracy near chance."""
    loss = getattr(run, "final_loss", None)
    return loss is not None and loss > STUCK_LOSS and run.accuracy < 0.6


def accuracy_markdown(results: Mapping[str, Sequence[ChannelRun | SpatialRun]], params: Mapping[str, int], *,
                      per_seed: bool = False) -> str:
    """Accuracy per model (mean, min–max over seeds) and its parameter count, as Markdown.

    With ``per_seed``, each seed's accuracy instead of the range, and a column counting the runs that
    never left chance (:func:`never_left_chance`).
    """
    count = len(next(iter(results.values())))
    if per_seed:
        lines = [f"| model | parameters | held-out accuracy of each of {count} seeds | mean | "
                 "runs whose training loss never left chance |", "|---|---|---|---|---|"]
    else:
        lines = [f"| model | parameters | held-out accuracy: mean (min–max over {count} seeds) |", "|---|---|---|"]
    for name, runs in results.items():
        acc = [r.accuracy for r in runs]
        if per_seed:
            stuck = sum(never_left_chance(r) for r in runs)
            lines.append(f"| {name} | {params[name]:,} | {', '.join(f'{a:.1%}' for a in acc)} | {np.mean(acc):.1%} | "
                         f"{stuck} |")
        else:
            lines.append(f"| {name} | {params[name]:,} | {np.mean(acc):.1%} ({min(acc):.1%}–{max(acc):.1%}) |")
    return "\n".join(lines)


def spatial_map_figure(runs: Mapping[str, SpatialRun]) -> go.Figure:
    """For each task: the image, the marker channel (if any), and CBAM's spatial map, object outlined."""
    names = list(runs)
    fig = make_subplots(rows=len(names), cols=3, horizontal_spacing=0.06, vertical_spacing=0.12,
                        subplot_titles=[t for n in names for t in (f"{n}: image", f"{n}: marker channel",
                                                                   f"{n}: CBAM spatial map")])
    for row, name in enumerate(names, start=1):
        run = runs[name]
        image = run.example_image.numpy()
        marker = image[1] if image.shape[0] > 1 else np.zeros_like(image[0])
        target = run.example_target.numpy()
        rows_, cols_ = np.nonzero(target)
        box = dict(x0=cols_.min() - 0.5, x1=cols_.max() + 0.5, y0=rows_.min() - 0.5, y1=rows_.max() + 0.5)
        maps = ((1, image[0], "Greys"), (2, marker, "Greys"), (3, run.example_map.numpy(), WEIGHT_COLORSCALE))
        for col, z, scale in maps:
            fig.add_trace(go.Heatmap(z=decimals(z, 3), colorscale=scale, showscale=False,
                                     hovertemplate="row %{y}, col %{x}: %{z}<extra></extra>"), row=row, col=col)
            fig.add_shape(type="rect", **box, line=dict(color=VERMILLION, width=2), row=row, col=col)
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(height=330 * len(names), title="The object that decides the label (red box) and CBAM's map")
    return fig
