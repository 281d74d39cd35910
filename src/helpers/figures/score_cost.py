"""Chapter 2 figure and table of :mod:`helpers.experiments.score_cost`: measured time of the score functions."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from ..experiments.score_cost import CostTable
from ..viz.style import NEUTRAL, SKY, base_layout
from .score_style import SCORE_COLORS

__all__ = ["cost_figure", "cost_table"]


def cost_table(table: CostTable, unit: str = "ms") -> str:
    """A :class:`~helpers.experiments.score_cost.CostTable` as Markdown: one row per method, one
    column per size, times in ``unit`` (``"s"``, ``"ms"`` or ``"µs"``); ``—`` where not measured.

    Args:
        table: The output of :func:`~helpers.experiments.score_cost.time_score_functions`.
        unit: Time unit of the cells.

    Returns:
        Markdown text.
    """
    scale = {"s": 1.0, "ms": 1e3, "µs": 1e6}[unit]
    head = "| method | " + " | ".join(f"n = {n}" for n in table.sizes) + " |"
    sep = "|---|" + "---:|" * len(table.sizes)
    lines = [head, sep]
    for method, times in table.seconds.items():
        cells = ["—" if math.isnan(t) else _format_time(t * scale) for t in times]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _format_time(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.1f}"
    return f"{value:.3f}"


def cost_figure(table: CostTable) -> go.Figure:
    """Log-log plot of measured time against ``n`` (``L = S = n``), one line per method.

    Drawn here rather than with :func:`helpers.viz.line_plot` because the loops are measured at
    the small sizes only (a curve may stop early).

    Args:
        table: The output of :func:`~helpers.experiments.score_cost.time_score_functions`.

    Returns:
        The Plotly figure.
    """
    fig = go.Figure()
    styles = {
        "dot (one matmul)": (SCORE_COLORS["dot"], "solid", 4),
        "dot (loop over queries)": (SCORE_COLORS["dot"], "dot", 2),
        "dot (loop over pairs)": (SCORE_COLORS["dot"], "dash", 2),
        "dot (pure Python loops)": (NEUTRAL, "longdash", 2),  # grey: not even PyTorch
        "scaled dot": (SKY, "solid", 2),
        "cosine": (SCORE_COLORS["cosine"], "solid", 2),
        "neg. squared Euclidean": (SCORE_COLORS["neg_euclidean"], "solid", 2),
        "general": (SCORE_COLORS["general"], "solid", 2),
        "additive": (SCORE_COLORS["additive"], "solid", 3),
    }
    for method, times in table.seconds.items():
        xs = [n for n, t in zip(table.sizes, times) if not math.isnan(t)]
        ys = [float(f"{t * 1e3:.4g}") for t in times if not math.isnan(t)]
        colour, dash, width = styles.get(method, (NEUTRAL, "solid", 2))
        fig.add_scatter(x=xs, y=ys, name=method, mode="lines+markers", line=dict(color=colour, dash=dash, width=width),
                        marker=dict(size=6), hovertemplate=f"{method}<br>n = %{{x}}: %{{y:.4g}} ms<extra></extra>")
    threads = f"{table.threads} thread{'s' if table.threads > 1 else ''}"
    fig.update_layout(
        **base_layout("Time for all n × n scores", 560),
        xaxis=dict(type="log", title=dict(text=f"n queries and n keys (E = {table.dim}, A = {table.hidden_dim}, "
                                                f"{threads})"), tickvals=table.sizes),
        yaxis=dict(type="log", title=dict(text="ms per call (log)"), exponentformat="power", dtick=1),
        legend=dict(orientation="h", x=0.0, y=-0.18, yanchor="top"),
    )
    fig.update_layout(margin=dict(b=150))
    return fig


