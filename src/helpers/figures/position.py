"""Figures and tables of chapter 6.5 (position), from :mod:`helpers.experiments.position`. Nothing here trains."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch

from .. import viz
from ..experiments.position import ExtrapolationRun, OrderRun, mean_spread
from ..positional import alibi_bias, relative_position_bucket
from ..viz.style import BLUE, GREEN, NEUTRAL, ORANGE, PURPLE, SIGNED_COLORSCALE, VERMILLION, frame_step
from .style import decimals, legend_below, seed_spread_table

__all__ = ["gaps_table", "order_table", "relative_bias_figure", "transformer_xl_figure", "rope_decay_figure",
           "extrapolation_figure", "extrapolation_table"]


def gaps_table(gaps: Mapping[str, float]) -> str:
    """The permutation test as Markdown: what was shuffled, max ``|f(x)[perm] - f(x[perm])|``."""
    rows = ["| model | max abs(f(x)[perm] − f(x[perm])) |", "|---|---|"]
    rows += [f"| {name} | {gap:.1e} |" for name, gap in gaps.items()]
    return "\n".join(rows)


def order_table(runs: Mapping[str, Sequence[OrderRun]]) -> str:
    """Reversal accuracy per positional option: mean and range over seeds."""
    return seed_spread_table({name: [r.accuracy for r in group] for name, group in runs.items()},
                             ("positions", "held-out token accuracy: mean [min, max] over seeds"))


def relative_bias_figure(num_heads: int = 8, length: int = 128) -> go.Figure:
    """T5's bucket index and ALiBi's per-head bias against the distance to the key (causal)."""
    from plotly.subplots import make_subplots

    distance = torch.arange(length)
    buckets = relative_position_bucket(-distance, bidirectional=False, num_buckets=32, max_distance=128)  # (length,)
    last_query = alibi_bias(num_heads, 1, length, is_causal=True, query_offset=length - 1)  # (1, H, 1, length)
    bias = last_query[0, :, 0].flip(-1)  # (H, length): distance 0 first
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14, subplot_titles=[
        "T5: distance → learned bucket (causal, 32 buckets)", f"ALiBi: bias −m_h·distance, {num_heads} heads"])
    fig.add_trace(go.Scatter(x=distance.tolist(), y=buckets.tolist(), mode="lines", name="T5 bucket",
                             line=dict(shape="hv")), row=1, col=1)
    for h in range(num_heads):
        fig.add_trace(go.Scatter(x=distance.tolist(), y=decimals(bias[h], 3), mode="lines",
                                 name=f"ALiBi head {h} (m = 1/{2 ** (h + 1)})"), row=1, col=2)
    fig.update_xaxes(title_text="distance query − key (tokens)")
    fig.update_yaxes(title_text="bucket index", row=1, col=1)
    fig.update_yaxes(title_text="bias added to the score", row=1, col=2)
    fig.update_layout(title="Relative positions as a bias on the scores", height=460)
    return legend_below(fig)


def transformer_xl_figure(terms: Mapping[str, Mapping[str, torch.Tensor]], memory: int) -> go.Figure:
    """Transformer-XL's four score terms as heatmaps, with a menu over sets of inputs.

    Args:
        terms: ``{menu label: {term name: (L, S) tensor}}``, e.g. from
            :func:`helpers.experiments.position.transformer_xl_terms` with and without ``shared_query``.
        memory: Cached keys before the queries' segment: query ``i`` sits at position ``memory + i``,
            and keys after it are left blank (masked, as in the model).

    Returns:
        A 2 x 2 grid of heatmaps (traces 0-3, one per term, one colour scale), one frame per
        entry of ``terms`` and a dropdown over them.
    """
    from plotly.subplots import make_subplots

    labels = list(terms)
    names = list(terms[labels[0]])
    length, keys = terms[labels[0]][names[0]].shape
    future = torch.arange(keys)[None, :] > memory + torch.arange(length)[:, None]  # (L, S): masked keys
    limit = max(float(t.abs().max()) for group in terms.values() for t in group.values())
    fig = make_subplots(rows=2, cols=2, subplot_titles=names, horizontal_spacing=0.08, vertical_spacing=0.16)

    def heatmaps(label: str) -> list[go.Heatmap]:
        return [go.Heatmap(z=decimals(terms[label][name].masked_fill(future, float("nan")), 2),
                           coloraxis="coloraxis", y=list(range(memory, memory + length)),
                           hovertemplate="query at %{y}, key %{x}: %{z:.2f}<extra></extra>") for name in names]

    for k, trace in enumerate(heatmaps(labels[0])):
        fig.add_trace(trace, row=k // 2 + 1, col=k % 2 + 1)
    fig.update_xaxes(title_text="key j", range=[-0.5, keys - 0.5], row=2)
    fig.update_xaxes(range=[-0.5, keys - 0.5], row=1)
    fig.update_yaxes(title_text="query i", autorange="reversed", col=1)
    fig.update_yaxes(autorange="reversed", col=2)
    fig.update_annotations(font_size=12)
    fig.add_vline(x=memory - 0.5, line_dash="dot", line_color=NEUTRAL, row="all", col="all")  # cache | segment
    fig.update_layout(title="Transformer-XL's score, term by term (one head; blank: keys after the query)",
                      height=560, coloraxis=dict(colorscale=SIGNED_COLORSCALE, cmid=0.0, cmin=-limit, cmax=limit,
                                                 colorbar=dict(title=dict(text="score"), thickness=12)))
    fig.frames = [go.Frame(name=label, traces=list(range(len(names))), data=heatmaps(label)) for label in labels]
    fig.update_layout(updatemenus=[dict(type="dropdown", direction="up", active=0, x=0.0, xanchor="left", y=0.0,
                                        yanchor="top", pad=dict(t=56),
                                        buttons=[frame_step(label, label) for label in labels])],
                      margin=dict(b=96))
    return fig


def rope_decay_figure(offsets: Sequence[int], with_rope: Sequence[float], without: Sequence[float]) -> go.Figure:
    """Mean ``<R_m q, R_n q>/E`` against ``m - n``: RoPE's score for a matching key decays with distance."""
    curves = {"with RoPE": decimals(with_rope, 4), "without RoPE": decimals(without, 4)}
    fig = viz.line_plot(np.asarray(offsets), curves, x_title="offset m − n (tokens)", y_title="mean score / head_dim",
                        title="A key equal to the query, rotated by RoPE, at growing distance")
    return fig


def extrapolation_figure(runs: Mapping[str, Sequence[ExtrapolationRun]], train_len: int) -> go.Figure:
    """Per-position accuracy (mean over seeds, band = min..max) for each encoding."""
    fig = go.Figure()
    palette = [NEUTRAL, VERMILLION, ORANGE, GREEN, BLUE, PURPLE]
    for (name, group), color in zip(runs.items(), palette):
        acc = np.array([r.per_position for r in group])  # (seeds, T - 1)
        x = np.arange(1, acc.shape[1] + 1)  # target position t of x_t (predicted from x_0 .. x_{t-1})
        fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]).tolist(),
                                 y=decimals(np.concatenate([acc.max(0), acc.min(0)[::-1]]), 3),
                                 fill="toself", fillcolor=color, opacity=0.18, line=dict(width=0),
                                 hoverinfo="skip", showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(x=x.tolist(), y=decimals(acc.mean(0), 3), mode="lines", name=name,
                                 line=dict(color=color), legendgroup=name))
    fig.add_vline(x=train_len - 0.5, line_dash="dash", line_color=NEUTRAL,
                  annotation_text="longest training sequence", annotation_position="top right")
    fig.update_layout(title="Train on 16 tokens, test on 64: next-token accuracy at each position",
                      height=480, xaxis_title="position t of the predicted token",
                      yaxis_title="accuracy (mean of 3 seeds; band: min–max)", yaxis_range=[0, 1.05])
    return legend_below(fig)


def extrapolation_table(runs: Mapping[str, Sequence[ExtrapolationRun]], spans: Sequence[tuple[int, int]]) -> str:
    """Accuracy over spans of positions: mean [min, max] over seeds."""
    head = "| encoding | " + " | ".join(f"positions {a}–{b - 1}" for a, b in spans) + " |"
    rows = [head, "|---|" + "---|" * len(spans)]
    for name, group in runs.items():
        cells = []
        for a, b in spans:
            mean, low, high = mean_spread([r.accuracy(a, b) for r in group])
            cells.append(f"{mean:.2f} [{low:.2f}, {high:.2f}]")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
