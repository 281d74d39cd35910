"""Chapter 2 figure of :mod:`helpers.experiments.score_stability`: small vectors, dot product against cosine."""

from __future__ import annotations

import plotly.graph_objects as go

from ..experiments.score_stability import StabilityResult
from ..viz.style import base_layout
from .score_style import SCORE_COLORS

__all__ = ["stability_figure"]


def stability_figure(result: StabilityResult) -> go.Figure:
    """Three stacked log-log panels against the vector length: score spread, gradient size and
    the score's response to a fixed small nudge of ``q``, for dot product and cosine.

    Args:
        result: The output of :func:`stability_at_init`.

    Returns:
        The Plotly figure.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.08, subplot_titles=(
        "spread of the scores (standard deviation)", "size of the gradient |∂score/∂q|",
        f"change of the score when q moves by |δ| = {result.noise:g}"))
    for row, stats in enumerate((result.score_std, result.grad_norm, result.sensitivity), start=1):
        for name, values in stats.items():
            fig.add_scatter(x=result.norms, y=[float(f"{v:.4g}") for v in values], name=name, mode="lines+markers",
                            line=dict(color=SCORE_COLORS[name], width=3), legendgroup=name, showlegend=(row == 1),
                            row=row, col=1, hovertemplate=f"{name}<br>|q| ≈ %{{x}}: %{{y:.3g}}<extra></extra>")
    fig.update_xaxes(type="log", exponentformat="power", dtick=1)
    fig.update_xaxes(title_text="length of the vectors |q| ≈ |k| (log)", row=3, col=1)
    fig.update_yaxes(type="log", exponentformat="power", dtick=2)
    fig.update_layout(**base_layout(f"Small random vectors, E = {result.dim}", 720),
                      legend=dict(orientation="h", x=0.0, y=1.04, yanchor="bottom"))
    fig.update_layout(margin=dict(t=100))
    return fig

