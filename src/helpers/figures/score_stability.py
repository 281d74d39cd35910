"""Chapter 2 figure of :mod:`helpers.experiments.score_stability`: small vectors, every score function."""

from __future__ import annotations

import plotly.graph_objects as go

from ..experiments.score_stability import StabilityResult
from ..viz.style import NEUTRAL, base_layout
from .score_style import SCORE_COLORS, SCORE_LABELS

__all__ = ["stability_figure"]


def stability_figure(result: StabilityResult, *, model_norm: float | None = None) -> go.Figure:
    """Two stacked log-log panels against the vector length: score spread and gradient size,
    one line per score function.

    Args:
        result: The output of :func:`~helpers.experiments.score_stability.stability_at_init`.
        model_norm: When given, a vertical line at this length (e.g. ``|q|`` measured in the
            chapter's model at initialisation).

    Returns:
        The Plotly figure.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1, subplot_titles=(
        "spread of the scores (standard deviation)", "size of the gradient |∂score/∂q|"))
    for row, stats in enumerate((result.score_std, result.grad_norm), start=1):
        for name, values in stats.items():
            label = "dot q·k (no scale)" if name == "dot" else SCORE_LABELS.get(name, name)  # measured unscaled
            fig.add_scatter(x=result.norms, y=[float(f"{v:.4g}") for v in values], name=label, mode="lines+markers",
                            line=dict(color=SCORE_COLORS[name], width=3 if name in ("dot", "cosine") else 2),
                            legendgroup=name, showlegend=(row == 1), row=row, col=1,
                            hovertemplate=f"{label}<br>|q| ≈ %{{x}}: %{{y:.3g}}<extra></extra>")
    if model_norm is not None:
        for row in (1, 2):
            fig.add_vline(x=model_norm, line=dict(color=NEUTRAL, dash="dash", width=1), row=row, col=1)
        fig.add_annotation(x=0.0, y=1.0, xref="x domain", yref="y domain", showarrow=False, xanchor="left",
                           text=f"dashed: |q| in the chapter's model at initialisation ≈ {model_norm:.1f}")
    fig.update_xaxes(type="log", exponentformat="power", dtick=1)
    fig.update_xaxes(title_text="length of the vectors |q| ≈ |k| (log)", row=2, col=1)
    fig.update_yaxes(type="log", exponentformat="power", dtick=2)
    fig.update_layout(**base_layout(f"Small random vectors, E = {result.dim}", 620),
                      legend=dict(orientation="h", x=0.0, y=1.06, yanchor="bottom"))
    fig.update_layout(margin=dict(t=110))
    return fig
