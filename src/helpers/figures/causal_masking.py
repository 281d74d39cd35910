"""Figures and tables of chapter 5.2 (masks), drawn from :mod:`helpers.experiments.causal_masking`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
import torch

import helpers.viz as viz
from helpers.experiments.causal_masking import ChainRun
from helpers.figures.style import decimals, legend_below
from helpers.viz.style import BLUE, NEUTRAL, VERMILLION, WEIGHT_COLORSCALE

__all__ = ["jacobian_figure", "training_figure", "mask_value_markdown", "padding_markdown"]


def jacobian_figure(causal: torch.Tensor, bidirectional: torch.Tensor) -> go.Figure:
    """The ``(L, L)`` Jacobian norms of a causal and a bidirectional block, side by side."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=["causal block", "no mask"], horizontal_spacing=0.12)
    top = float(max(causal.max(), bidirectional.max()))
    for col, jac in ((1, causal), (2, bidirectional)):
        fig.add_trace(go.Heatmap(z=decimals(jac, 3), coloraxis="coloraxis",
                                 hovertemplate="output %{y}, input %{x}: %{z}<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text="input position j", row=1, col=col)
    fig.update_yaxes(autorange="reversed", title_text="output position i", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_layout(title="‖∂y_i / ∂x_j‖ of one Transformer block", height=420,
                      coloraxis=dict(colorscale=WEIGHT_COLORSCALE, cmin=0, cmax=top))
    return fig


def training_figure(runs: Mapping[str, Sequence[ChainRun]], window: int = 10) -> go.Figure:
    """Training loss of every run (moving average), with the no-peeking floor dashed."""
    fig = go.Figure()
    colors = {"with causal mask": BLUE, "without mask": VERMILLION}
    for name, group in runs.items():
        for i, run in enumerate(group):
            y = viz.lines.moving_average(run.losses, window)
            fig.add_trace(go.Scatter(x=list(range(len(y))), y=decimals(y, 3), mode="lines", name=name,
                                     legendgroup=name, showlegend=i == 0, line=dict(color=colors.get(name))))
    floor = next(iter(runs.values()))[0].floor
    steps = len(next(iter(runs.values()))[0].losses)
    fig.add_trace(go.Scatter(x=[0, steps], y=[floor, floor], mode="lines", name="floor without peeking (chain entropy)",
                             line=dict(dash="dash", color=NEUTRAL)))
    fig.update_layout(title="Next-token training loss, 3 seeds each", height=420,
                      xaxis_title="training step", yaxis_title="loss (nats)")
    return legend_below(fig)


def mask_value_markdown(rows: Sequence[Mapping[str, object]]) -> str:
    """The mask-value table as Markdown (one row per method and dtype, the fully masked rows as columns)."""
    lines = ["| how the mask is applied | dtype | masked score stored as | partly masked rows "
             "| fully masked: [2, 1, 3, 0.5] | fully masked: [-20, -30, -25, -17] | fully masked: [-20, -30, 5, -17] |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['dtype']} | `{r['fill']}` | {'correct' if r['partial_ok'] else 'WRONG'} "
                     f"| {r['full']} | {r['full_negative']} | {r['full_one_positive']} |")
    return "\n".join(lines)


def padding_markdown(result: object) -> str:
    """The padding-broadcast comparison as Markdown."""
    lines = ["| mask | real tokens' outputs move when padding content changes (max) | "
             "loss moves when padded further | NaN rows |", "|---|---|---|---|"]
    for name in result.real_change:
        lines.append(f"| {name} | {result.real_change[name]:.3g} | {result.loss_change[name]:.3g} | "
                     f"{result.nan_rows[name]} |")
    return "\n".join(lines)
