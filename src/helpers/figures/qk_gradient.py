"""Chapter 3 figure of :mod:`helpers.experiments.qk_gradient`: gradient norms of ``W_Q``, ``W_V`` against ``d_k``."""

from __future__ import annotations

import plotly.graph_objects as go

from .. import viz
from ..experiments.qk_gradient import GradientSweep
from .style import dashed, legend_below, significant

__all__ = ["gradient_figure"]


def gradient_figure(scaled: GradientSweep, unscaled: GradientSweep) -> go.Figure:
    """Gradient norms at ``W_q``, ``W_k`` and ``W_v`` against ``d_k``, with and without the scale."""
    fig = viz.line_plot(
        scaled.d_k,
        {
            "W_Q, no scale": significant(unscaled.q_proj),
            "W_Q, scaled": significant(scaled.q_proj),
            "W_V, no scale": significant(unscaled.v_proj),
            "W_V, scaled": significant(scaled.v_proj),
        },
        x_title="d_k (one head, d_model = d_k)", y_title="gradient norm at init",
        log_x=True, log_y=True, title="Gradient reaching W_Q and W_V of one attention layer",
    )
    return legend_below(dashed(fig, "W_Q, scaled", "W_V, scaled"))

