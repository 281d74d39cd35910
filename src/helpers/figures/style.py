"""Small drawing helpers shared by the chapters' figure modules: rounding for the page, dashed
reference lines, a legend under the plot, a table of per-seed results.

Figures are stored in the page as JSON: rounding what they carry keeps each page small (the
book's budget is 1 MB of its own per page) without changing what a reader can see.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

__all__ = ["significant", "decimals", "legend_below", "dashed", "seed_spread_table"]


def significant(values: Sequence[float] | np.ndarray, digits: int = 4) -> list[float]:
    """``values`` as plain Python floats with ``digits`` significant digits."""
    return [float(f"{v:.{digits}g}") for v in values]


def decimals(values: object, digits: int = 3) -> list:
    """``values`` (any array-like, any rank) as nested lists of floats rounded to ``digits`` decimals."""
    return np.round(np.asarray(values, dtype=float), digits).tolist()


def legend_below(fig: go.Figure) -> go.Figure:
    """Put the legend under the plot, where it can wrap on a narrow screen without covering the title."""
    fig.update_layout(legend=dict(orientation="h", x=0.0, xanchor="left", y=-0.22, yanchor="top"),
                      margin=dict(b=40))
    return fig


def dashed(fig: go.Figure, *names: str, color: str | None = None) -> go.Figure:
    """Draw the named traces dashed (reference lines: closed forms, thresholds, priors)."""
    for trace in fig.data:
        if trace.name in names:
            trace.line.dash = "dash"
            if color is not None:
                trace.line.color = color
                trace.marker.color = color
    return fig


def seed_spread_table(values: Mapping[str, Sequence[float]], header: tuple[str, str]) -> str:
    """A Markdown table of one result per row name: its mean and ``[min, max]`` over seeds.

    Args:
        values: ``{row name: the per-seed values}``.
        header: The two column titles.

    Returns:
        The table, one row per name, e.g. ``| rope | 0.912 [0.880, 0.950] |``.
    """
    rows = [f"| {header[0]} | {header[1]} |", "|---|---|"]
    for name, group in values.items():
        rows.append(f"| {name} | {statistics.fmean(group):.3f} [{min(group):.3f}, {max(group):.3f}] |")
    return "\n".join(rows)
