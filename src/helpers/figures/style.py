"""Small drawing helpers shared by the chapters' figure modules: rounding for the page, dashed
reference lines, a legend under the plot.

Figures are stored in the page as JSON: rounding what they carry keeps each page small (the
book's budget is 1 MB of its own per page) without changing what a reader can see.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

__all__ = ["significant", "decimals", "legend_below", "dashed"]


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
