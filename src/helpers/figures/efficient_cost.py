"""Figures and tables of chapters 5.3 and 5.4 (efficient attention), from :mod:`helpers.experiments.efficient_cost`
and :mod:`helpers.experiments.efficient_accuracy`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from helpers.experiments.efficient_cost import analytic_cost, fit_exponent
from helpers.figures.style import decimals, legend_below, significant
from helpers.viz.style import BLUE, GREEN, NEUTRAL, ORANGE, PURPLE, SKY, VERMILLION

__all__ = ["cost_figure", "load_benchmark", "benchmark_figure", "error_curve_figure", "cost_explorer",
           "EXPLORER_LENGTHS", "accuracy_figure", "comparison_markdown"]

_PALETTE = [NEUTRAL, BLUE, GREEN, VERMILLION, SKY, PURPLE, ORANGE]  # dense (the baseline) in grey, then Okabe-Ito


def _loglog_pair(title: str, left: str, right: str) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=[left, right], horizontal_spacing=0.12)
    fig.update_xaxes(type="log", title_text="sequence length n")
    fig.update_yaxes(type="log")
    fig.update_layout(title=title, height=460)
    return fig


def cost_figure(sizes: Sequence[int], cost: Mapping[str, Mapping[str, Sequence[float]]],
                fit: slice = slice(None), *, heads: int = 4, d: int = 32) -> go.Figure:
    """Measured time and peak memory against n, log-log, each exponent (fitted over ``sizes[fit]``) in the legend;
    ``heads`` and ``d`` (those given to :func:`~helpers.experiments.efficient_cost.measure_cost`) in the title."""
    fig = _loglog_pair(f"Cost measured while this page was built (1 thread, float32, {heads} heads, d = {d})",
                       "forward time (s)", "peak tensor memory (MiB)")
    for i, (name, entry) in enumerate(cost.items()):
        kt = fit_exponent(sizes[fit], entry["time_s"][fit])
        km = fit_exponent(sizes[fit], entry["peak_mib"][fit])
        color = _PALETTE[i % len(_PALETTE)]
        dash = "solid" if i < len(_PALETTE) else "dash"  # more methods than colours: the second round dashed
        fig.add_trace(go.Scatter(x=list(sizes), y=significant(entry["time_s"]), mode="lines+markers",
                                 name=f"{name} (time ∝ n^{kt:.2f}, memory ∝ n^{km:.2f})", legendgroup=name,
                                 line=dict(color=color, dash=dash)), row=1, col=1)
        fig.add_trace(go.Scatter(x=list(sizes), y=significant(entry["peak_mib"]), mode="lines+markers", name=name,
                                 legendgroup=name, showlegend=False, line=dict(color=color, dash=dash)), row=1, col=2)
    fig.update_layout(height=560)
    return legend_below(fig)


def load_benchmark(path: str | Path) -> dict:
    """The JSON written by ``benchmarks/attention_scaling.py``."""
    return json.loads(Path(path).read_text())


def benchmark_figure(bench: Mapping) -> go.Figure:
    """The benchmark's larger runs (n = 1k .. 16k), labelled with where and when they were measured."""
    env = bench["environment"]
    where = (f"{env['cpu']}, {env['cpu_count']} cores, {env['torch_threads']} thread, torch {env['torch']}, "
             f"{env['date'][:10]}")
    fig = _loglog_pair(f"benchmarks/attention_scaling.py, measured on {where}", "forward time (s)",
                       "peak tensor memory (MiB)")
    methods = list(dict.fromkeys(row["method"] for row in bench["rows"]))
    for i, method in enumerate(methods):
        rows = [r for r in bench["rows"] if r["method"] == method and not r["skipped"]]
        n = [r["n"] for r in rows]
        color = _PALETTE[i % len(_PALETTE)]
        kt, km = bench["time_exponents"][method], bench["memory_exponents"][method]
        fig.add_trace(go.Scatter(x=n, y=significant([r["time_s"] for r in rows]), mode="lines+markers",
                                 name=f"{method} (n^{kt:.2f}, n^{km:.2f})", legendgroup=method,
                                 line=dict(color=color)), row=1, col=1)
        fig.add_trace(go.Scatter(x=n, y=significant([r["peak_tracked_mib"] for r in rows]), mode="lines+markers",
                                 name=method, legendgroup=method, showlegend=False, line=dict(color=color)),
                      row=1, col=2)
    fig.update_layout(height=560)
    return legend_below(fig)


def error_curve_figure(x: Sequence[int], curves: Mapping[str, np.ndarray], *, x_title: str, title: str) -> go.Figure:
    """Error against a parameter, one line per curve (mean over seeds) with the seeds' range as error bars."""
    fig = go.Figure()
    for i, (name, values) in enumerate(curves.items()):
        values = np.atleast_2d(values)  # (seeds, len(x))
        mean = values.mean(axis=0)
        err = dict(type="data", symmetric=False, array=decimals(values.max(0) - mean, 4),
                   arrayminus=decimals(mean - values.min(0), 4)) if len(values) > 1 else None
        fig.add_trace(go.Scatter(x=list(x), y=decimals(mean, 4), error_y=err, mode="lines+markers", name=name,
                                 line=dict(color=_PALETTE[(i + 1) % len(_PALETTE)])))
    fig.add_trace(go.Scatter(x=[x[0], x[-1]], y=[1, 1], mode="lines", name="plain average of the values (error 1)",
                             line=dict(dash="dash", color=NEUTRAL)))
    fig.update_layout(title=title, height=440, xaxis=dict(type="log", title=x_title),
                      yaxis=dict(type="log", title="error / ‖exact − mean(v)‖"))
    return legend_below(fig)


_EXPLORED = {  # method -> (parameter name, values per slider level)
    "sliding window": ("window w", [8, 16, 32, 64, 128]),
    "BigBird": ("block b", [8, 16, 32, 64, 128]),
    "hierarchical": ("block b", [8, 16, 32, 64, 128]),
    "Performer": ("features m", [16, 32, 64, 128, 256]),
    "Linformer": ("projected length k", [16, 32, 64, 128, 256]),
    "linear (elu+1)": ("(m = d)", [0, 0, 0, 0, 0]),
}


EXPLORER_LENGTHS: tuple[int, int] = (64, 65536)
"""The smallest and the largest n on the axis of :func:`helpers.figures.efficient_cost.cost_explorer`."""


def cost_explorer(measured_sizes: Sequence[int], measured: Mapping[str, Mapping[str, Sequence[float]]],
                  *, dims: Sequence[int] = (32, 64, 128)) -> go.Figure:
    """Analytic FLOPs and memory of each variant against n, with the measured times beside them.

    A dropdown picks the variant; a slider picks (d, the variant's parameter). The measured
    points are times converted to FLOPs at this machine's dense rate (dense FLOPs / dense time
    at the largest measured n), so that they sit on the same axis; the annotation gives the
    analytic crossover with dense attention for the current setting.
    """
    n = np.unique(np.geomspace(*EXPLORER_LENGTHS, 25).astype(int))
    rate = analytic_cost("dense", measured_sizes[-1], 32, 0)[0] / measured["dense"]["time_s"][-1]  # FLOP/s
    methods = list(_EXPLORED)
    levels = range(5)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["FLOPs of one head", "score-sized memory (floats)"],
                        horizontal_spacing=0.12)
    fig.update_xaxes(type="log", title_text="sequence length n")
    fig.update_yaxes(type="log")
    steps = []
    for d in dims:
        for level in levels:
            ys, notes = [], []
            for method in methods:
                name, values = _EXPLORED[method]
                p = values[level]
                fl, mem = analytic_cost(method, n, d, p)
                dfl, dmem = analytic_cost("dense", n, d, 0)
                ys += [significant(dfl, 3), significant(fl, 3), significant(dmem, 3), significant(mem, 3)]
                cheaper = np.nonzero(fl < dfl)[0]
                notes.append(f"{method} ({name} {p})" if method != "linear (elu+1)" else method)
                notes[-1] += f": {'n ≥ ' + str(int(n[cheaper[0]])) if len(cheaper) else 'never'}"
            steps.append(dict(method="update", label=f"d={d}, level {level + 1}",
                              args=[{"y": ys},
                                    {"annotations[2].text": "FLOPs cross dense at<br>" + "<br>".join(notes)}]))
    d0, level0 = dims[0], 2
    for i, method in enumerate(methods):
        name, values = _EXPLORED[method]
        fl, mem = analytic_cost(method, n, d0, values[level0])
        dfl, dmem = analytic_cost("dense", n, d0, 0)
        visible = i == 0
        fig.add_trace(go.Scatter(x=n.tolist(), y=significant(dfl, 3), name="dense (analytic)", visible=visible,
                                 line=dict(color=NEUTRAL, dash="dash")), row=1, col=1)
        fig.add_trace(go.Scatter(x=n.tolist(), y=significant(fl, 3), name=f"{method} (analytic)", visible=visible,
                                 line=dict(color=BLUE)), row=1, col=1)
        fig.add_trace(go.Scatter(x=n.tolist(), y=significant(dmem, 3), name="dense memory", visible=visible,
                                 showlegend=False, line=dict(color=NEUTRAL, dash="dash")), row=1, col=2)
        fig.add_trace(go.Scatter(x=n.tolist(), y=significant(mem, 3), name=f"{method} memory", visible=visible,
                                 showlegend=False, line=dict(color=BLUE)), row=1, col=2)
    for i, method in enumerate(methods):  # measured points: not touched by the slider (measured at d = 32)
        as_flops = significant(np.asarray(measured[method]["time_s"]) * rate, 3)
        fig.add_trace(go.Scatter(x=list(measured_sizes), y=as_flops,
                                 mode="markers", name=f"{method}, measured here (d = 32, default parameter)",
                                 visible=i == 0, marker=dict(size=9, color=VERMILLION)), row=1, col=1)
    fig.add_trace(go.Scatter(x=list(measured_sizes), y=significant(np.asarray(measured["dense"]["time_s"]) * rate, 3),
                             mode="markers", name="dense, measured here", marker=dict(size=9, color=NEUTRAL),
                             visible=True), row=1, col=1)
    per = 4
    n_analytic = per * len(methods)
    buttons = []
    for i, method in enumerate(methods):
        visible = [j // per == i for j in range(n_analytic)] + [j == i for j in range(len(methods))] + [True]
        buttons.append(dict(method="restyle", label=method, args=[{"visible": visible}]))
    fig.update_layout(updatemenus=[dict(type="dropdown", buttons=buttons, active=0, x=1.0, xanchor="right",
                                        y=1.12, yanchor="bottom")])
    first = steps[len(levels) * 0 + level0]["args"][1]["annotations[2].text"]
    fig.add_annotation(text=first, xref="paper", yref="paper", x=0.0, y=-0.42, showarrow=False, align="left",
                       xanchor="left", yanchor="top", font=dict(size=11))
    # the slider restyles only the analytic traces (the first n_analytic), in the order they were added
    for step in steps:
        ys = step["args"][0]["y"]
        step["args"][0] = {"y": ys}
        step["args"].append(list(range(n_analytic)))
    fig.update_layout(sliders=[dict(active=level0, steps=steps, currentvalue=dict(prefix="setting: "),
                                    pad=dict(t=60), y=-0.12)],
                      height=720, margin=dict(b=260), title="Cost explorer: analytic FLOPs and memory against n")
    return legend_below(fig)


def accuracy_figure(results: Mapping[str, Mapping[str, Sequence[float]]]) -> go.Figure:
    """Held-out accuracy of each variant on the near and far lookup, every seed as a dot, mean as a bar."""
    fig = go.Figure()
    for i, (task, per_variant) in enumerate(results.items()):
        names = list(per_variant)
        means = [float(np.mean(v)) for v in per_variant.values()]
        seeds = len(next(iter(per_variant.values())))
        fig.add_trace(go.Bar(x=names, y=decimals(means, 3), name=f"{task}: mean of {seeds} seeds", offsetgroup=str(i),
                             marker_color=[GREEN, BLUE][i % 2], opacity=0.6))
        xs = [n for n, v in per_variant.items() for _ in v]
        ys = [a for v in per_variant.values() for a in v]
        fig.add_trace(go.Scatter(x=xs, y=decimals(ys, 3), mode="markers", name=f"{task}: each seed",
                                 offsetgroup=str(i), marker=dict(color=NEUTRAL, size=7)))
    fig.update_layout(title="Lookup accuracy: answer near the query, or anywhere", barmode="group",
                      scattermode="group", height=440, yaxis=dict(title="held-out accuracy", range=[0, 1.05]))
    return legend_below(fig)


def comparison_markdown(rows: Sequence[Mapping[str, str]]) -> str:
    """The closing comparison table as Markdown."""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)
