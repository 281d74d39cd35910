"""Figures and tables of chapter 6.6 (long context in practice). Nothing here trains.

One module for the section's two experiments (:mod:`helpers.experiments.rope_extrapolation` and
:mod:`helpers.experiments.attention_sinks`) and its rolling-cache figure, which has no experiment module.

- :func:`angle_coverage_figure`: RoPE's rotation angle of every pair at every distance, and the
  angles training never swept, with a menu over the scaling rules
  (:func:`helpers.experiments.rope_extrapolation.angle_coverage`).
- :func:`scaling_figure` and :func:`scaling_table`: accuracy against position of each rule, without
  and with a short fine-tune, and past the fine-tune's length
  (:func:`helpers.experiments.rope_extrapolation.rope_scaling_runs`).
- :func:`reach_figure`: which input positions reach the last token through a stack of
  sliding-window layers, with a slider over the number of layers.
- :func:`sink_figure` and :func:`sink_table`: loss against position for the full, window and sink
  caches (:func:`helpers.experiments.attention_sinks.sink_runs`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch

from ..experiments.attention_sinks import SinkRun
from ..experiments.rope_extrapolation import METHOD_NAMES, AngleCoverage, ScalingRun
from ..viz.style import BLUE, GREEN, NEUTRAL, ORANGE, PURPLE, VERMILLION, frame_step
from .style import decimals, legend_below

__all__ = ["angle_coverage_figure", "scaling_figure", "scaling_table", "reach_figure", "sink_figure", "sink_table"]

_COLORS = (NEUTRAL, VERMILLION, ORANGE, GREEN, BLUE, PURPLE)


def _pair_labels(inv_freq: torch.Tensor) -> list[str]:
    return [f"pair {i} (θ = {float(t):.3g})" for i, t in enumerate(inv_freq)]


def angle_coverage_figure(coverages: Mapping[str, AngleCoverage]) -> go.Figure:
    """Every pair's angle (in turns) at every distance under each rule; a cross marks an angle never trained.

    Args:
        coverages: ``{method: AngleCoverage}``, e.g. one
            :func:`~helpers.experiments.rope_extrapolation.angle_coverage` per method.

    Returns:
        The figure. Its first trace is a heatmap (distance on x, pair on y, ``angle / 2 pi`` on a
        cyclic colour scale), its second a scatter of crosses at the ``(distance, pair)`` cells whose angle the
        trained model never met; one frame per method and a dropdown over them; a dashed line
        after the longest trained distance.
    """
    if not coverages:
        raise ValueError("coverages must hold at least one method")
    methods = list(coverages)
    first = coverages[methods[0]]
    labels = _pair_labels(first.trained_inv_freq)

    def traces(method: str) -> list[go.BaseTraceType]:
        cov = coverages[method]
        turns = (cov.angles / (2 * math.pi)).T  # (E/2, P)
        new = (~cov.covered).T.nonzero().tolist()  # [(pair, distance)]
        heat = go.Heatmap(z=decimals(turns, 3), x=cov.distances.tolist(), y=labels, colorscale="Twilight",
                          zmin=0.0, zmax=1.0, colorbar=dict(title=dict(text="angle (turns)"), thickness=12),
                          hovertemplate="distance %{x}, %{y}: %{z:.3f} turn<extra></extra>")
        crosses = go.Scatter(x=[d for _, d in new], y=[labels[i] for i, _ in new], mode="markers",
                             marker=dict(symbol="x-thin", size=7, line=dict(width=1.5, color="black")),
                             name="angle never met in training", hoverinfo="skip")
        return [heat, crosses]

    fig = go.Figure(traces(methods[0]))
    fig.add_vline(x=first.max_trained_distance + 0.5, line_dash="dash", line_color=NEUTRAL,
                  annotation_text="longest trained distance", annotation_position="top right")
    fig.frames = [go.Frame(name=m, traces=[0, 1], data=traces(m)) for m in methods]
    fig.update_layout(
        title="Angle d·θ_i (in turns) of each rotated pair; ×: never seen in training",
        height=420, xaxis_title="distance d between query and key (tokens)", yaxis_title="rotated pair",
        updatemenus=[dict(type="dropdown", direction="up", active=0, x=0.0, xanchor="left", y=0.0, yanchor="top",
                          pad=dict(t=56), buttons=[frame_step(m, METHOD_NAMES.get(m, m)) for m in methods])],
        margin=dict(b=110), showlegend=False)  # the title explains the crosses; the menu sits below the plot
    return fig


def _band(fig: go.Figure, x: np.ndarray, values: np.ndarray, name: str, color: str, group: str,
          show: bool, **where: int) -> None:
    """Mean line and min..max band over the rows of ``values`` (seeds)."""
    fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]).tolist(),
                             y=decimals(np.concatenate([values.max(0), values.min(0)[::-1]]), 3),
                             fill="toself", fillcolor=color, opacity=0.18, line=dict(width=0), hoverinfo="skip",
                             showlegend=False, legendgroup=group), **where)
    fig.add_trace(go.Scatter(x=x.tolist(), y=decimals(values.mean(0), 3), mode="lines", name=name,
                             line=dict(color=color), legendgroup=group, showlegend=show), **where)


def scaling_figure(runs: Mapping[tuple[str, int], Sequence[ScalingRun]], train_len: int) -> go.Figure:
    """Accuracy against position of every rule, without (left) and with (middle) the fine-tune.

    Where the fine-tuned runs were also evaluated on longer sequences
    (``ScalingRun.long_per_position``), a third panel
    draws that test, past the length of the fine-tune.

    Args:
        runs: The output of :func:`~helpers.experiments.rope_extrapolation.rope_scaling_runs`.
        train_len: The training length (a dashed line just before it).

    Returns:
        Two or three panels; per method, a min..max band over seeds then the mean line (in that
        order, left panel first).
    """
    from plotly.subplots import make_subplots

    steps = sorted({s for _, s in runs})
    methods = list(dict.fromkeys(m for m, _ in runs))
    test_len = len(next(iter(runs.values()))[0].per_position) + 1
    panels = [(s, "per_position") for s in steps]
    tuned = [s for s in steps if s > 0 and all(r.long_per_position is not None for m in methods for r in runs[(m, s)])]
    panels += [(s, "long_per_position") for s in tuned]
    titles = []
    for s, field in panels:
        if field == "long_per_position":
            length = len(runs[(methods[0], s)][0].long_per_position) + 1
            titles.append(f"after {s} steps, tested on {length} tokens")
        else:
            titles.append("no fine-tuning" if s == 0 else f"after {s} fine-tuning steps at {test_len} tokens")
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.05)
    for col, (s, field) in enumerate(panels, start=1):
        for method, color in zip(methods, _COLORS):
            acc = np.array([getattr(r, field) for r in runs[(method, s)]])  # (seeds, T - 1)
            x = np.arange(1, acc.shape[1] + 1)  # target position
            _band(fig, x, acc, METHOD_NAMES.get(method, method), color, method, col == 1, row=1, col=col)
        fig.add_vline(x=train_len - 0.5, line_dash="dash", line_color=NEUTRAL, row=1, col=col)
        if field == "long_per_position":
            fig.add_vline(x=test_len - 0.5, line_dash="dot", line_color=NEUTRAL, row=1, col=col)
    seeds = len(next(iter(runs.values())))
    fig.update_xaxes(title_text="position t")  # short: three panels side by side on a phone
    fig.update_yaxes(title_text=f"accuracy (mean of {seeds} seeds; band: min–max)", range=[0, 1.05], col=1)
    fig.update_layout(title=f"RoPE's scaling rules on the 6.5 toy: trained on {train_len} tokens, tested on "
                            f"{test_len}", height=480)
    return legend_below(fig)


def scaling_table(runs: Mapping[tuple[str, int], Sequence[ScalingRun]], spans: Sequence[tuple[int, int]]) -> str:
    """Accuracy over spans of positions per rule and fine-tune, as mean [min, max] over seeds, in Markdown.

    A span past the test length reads the longer test; a run without one shows "—" there.
    """
    head = "| rule | fine-tuning steps | " + " | ".join(f"positions {a}–{b - 1}" for a, b in spans) + " |"
    rows = [head, "|---|---|" + "---|" * len(spans)]
    for (method, steps), group in runs.items():
        cells = []
        for a, b in spans:
            if b - 1 > len(group[0].per_position) and any(r.long_per_position is None for r in group):
                cells.append("—")
                continue
            values = [r.accuracy(a, b) for r in group]
            cells.append(f"{statistics.fmean(values):.2f} [{min(values):.2f}, {max(values):.2f}]")
        rows.append(f"| {METHOD_NAMES.get(method, method)} | {steps} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def reach_figure(sensitivity: torch.Tensor, window: int) -> go.Figure:
    """How strongly each input position moves the last token's output, after 1, 2, ... window layers.

    Args:
        sensitivity: ``(layers, L)``; row ``l`` holds, for a stack of ``l + 1`` layers, the norm of
            the gradient of the last position's output with respect to each input position
            (0 where no path exists).
        window: ``W``, the keys each query sees (for the title).

    Returns:
        One bar trace of ``log10`` of the sensitivity (positions with none left out), one frame
        per number of layers and a slider over them.
    """
    if not isinstance(sensitivity, torch.Tensor) or sensitivity.dim() != 2:
        raise ValueError(f"sensitivity must be a (layers, L) tensor, got {sensitivity!r}")
    layers, length = sensitivity.shape
    positions = np.arange(length)

    def bars(row: int) -> go.Bar:
        values = sensitivity[row].double().numpy()
        reached = values > 0
        return go.Bar(x=positions[reached].tolist(), y=decimals(np.log10(values[reached]), 2), marker_color=BLUE,
                      name="reached", hovertemplate="input %{x}: log10 gradient norm %{y:.2f}<extra></extra>")

    fig = go.Figure([bars(0)])
    fig.frames = [go.Frame(name=str(n + 1), traces=[0], data=[bars(n)]) for n in range(layers)]
    fig.update_layout(
        title=f"Which inputs reach the last token through sliding-window layers (W = {window})",
        height=420, xaxis=dict(title="input position", range=[-0.5, length - 0.5]),
        yaxis=dict(title="log10 ‖∂ output / ∂ input‖"),
        sliders=[dict(active=0, currentvalue=dict(prefix="layers: "), pad=dict(t=48),
                      steps=[frame_step(str(n + 1), str(n + 1)) for n in range(layers)])])
    return fig


def sink_figure(runs: Sequence[SinkRun], kinds: Sequence[str], train_length: int, cache_size: int) -> go.Figure:
    """Mean loss per bin of positions for each cache kind (mean over seeds, band min..max).

    Returns:
        Per kind, a band then a mean line, over the first position of each bin; dashed lines at
        the cache size (the window drops position 0 after it) and at the training length.
    """
    if not runs:
        raise ValueError("runs must not be empty")
    fig = go.Figure()
    x = np.asarray(runs[0].bins)
    for kind, color in zip(kinds, _COLORS):
        loss = np.array([r.loss[kind] for r in runs])  # (seeds, bins)
        _band(fig, x, loss, kind, color, kind, True)
    fig.add_vline(x=cache_size + 0.5, line_dash="dot", line_color=NEUTRAL, annotation_text="cache full",
                  annotation_position="bottom right")
    fig.add_vline(x=train_length - 0.5, line_dash="dash", line_color=NEUTRAL, annotation_text="training length",
                  annotation_position="top right")
    fig.update_layout(title=f"Decoding past the window: {len(runs)} seeds, caches of {cache_size} keys "
                            "(full: every key)", height=460,
                      xaxis_title="first target position of the bin",
                      yaxis_title=f"loss per token (mean of {len(runs)} seeds; band: min–max)")
    return legend_below(fig)


def sink_table(runs: Sequence[SinkRun], kinds: Sequence[str]) -> str:
    """Loss and copy accuracy per kind, as mean [min, max] over seeds, in Markdown.

    Columns: the loss once the cache is full, the accuracy on the copies once the cache is full and
    past the training length (where the runs recorded it). A last row gives the language's own floor
    of the loss on the same tokens (``SinkRun.floor_loss``),
    where the runs recorded it.
    """
    def cell(values: Sequence[float], digits: int) -> str:
        return f"{statistics.fmean(values):.{digits}f} [{min(values):.{digits}f}, {max(values):.{digits}f}]"

    past = all(r.past_length_accuracy for r in runs)
    head = "| cache | loss once the cache is full | accuracy on the copies |"
    rule = "|---|---|---|"
    if past:
        head, rule = head + " accuracy on the copies past the training length |", rule + "---|"
    rows = [head, rule]
    for kind in kinds:
        row = (f"| {kind} | {cell([r.mean_loss[kind] for r in runs], 3)} | "
               f"{cell([r.mean_accuracy[kind] for r in runs], 2)} |")
        if past:
            row += f" {cell([r.past_length_accuracy[kind] for r in runs], 2)} |"
        rows.append(row)
    floors = [r.floor_loss for r in runs]
    if all(math.isfinite(f) for f in floors):
        rows.append(f"| the language's floor | {cell(floors, 3)} | — |" + (" — |" if past else ""))
    return "\n".join(rows)
