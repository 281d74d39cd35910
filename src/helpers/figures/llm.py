"""Figures and tables of chapter 7, "One real LLM, every why", from the results of the ``llm_*`` experiments
(:mod:`helpers.experiments.llm_context`, :mod:`~helpers.experiments.llm_scores`,
:mod:`~helpers.experiments.llm_heads`, :mod:`~helpers.experiments.llm_streaming`). Nothing here runs the model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .. import viz
from ..experiments.llm_context import Reading
from ..experiments.llm_heads import Ablation, HeadScores
from ..experiments.llm_scores import ScoreSpread
from ..viz.style import base_layout
from .style import dashed, decimals, legend_below

__all__ = ["reading_figure", "reading_table", "spread_figure", "heads_figure", "ablation_table", "sink_figure",
           "streaming_figure", "streaming_table"]


def reading_figure(readings: Sequence[Reading]) -> go.Figure:
    """The last token's attention (mean over heads) to each token of its prompt, layer by layer, one panel a prompt,
    one above the other (side by side, the prompts' titles ran into each other at phone width)."""
    fig = make_subplots(rows=len(readings), cols=1, vertical_spacing=0.2,
                        subplot_titles=[" ".join(t.strip() for t in r.tokens) for r in readings])
    layers = readings[0].weights.size(0)
    for row, r in enumerate(readings, start=1):
        labels = [f"{i}:{t.strip() or '␣'}" for i, t in enumerate(r.tokens)]
        fig.add_trace(go.Heatmap(z=decimals(r.weights, 3), x=labels, y=list(range(layers)), coloraxis="coloraxis",
                                 hovertemplate="layer %{y}, key %{x}: %{z}<extra></extra>"), row=row, col=1)
        fig.update_yaxes(title_text="layer", row=row, col=1, autorange="reversed")
        # slanted to end at their tick: slanted the other way, the last one ran under the colour bar on a phone
        fig.update_xaxes(tickangle=-45, row=row, col=1)
    fig.update_layout(**base_layout("Where the last token, ' apple', looks, layer by layer (mean over the 9 heads)",
                                    300 * len(readings)),
                      coloraxis=dict(colorscale="Blues", cmin=0, cmax=1, colorbar=dict(title="weight")))
    return fig


def reading_table(readings: Mapping[str, Reading]) -> str:
    """The five likeliest next tokens and the fruit and company probabilities of each reading, as Markdown."""
    rows = ["| prompt | five likeliest next tokens | P(fruit word) | P(company word) |", "|---|---|---:|---:|"]
    for name, r in readings.items():
        top = ", ".join(f"`{t!r}` {p:.2f}" for t, p in r.top)
        rows.append(f"| {name} | {top} | {r.fruit:.3f} | {r.company:.3f} |")
    return "\n".join(rows)


def spread_figure(spread: ScoreSpread) -> go.Figure:
    """The spread of each layer's scaled scores: the median head, the lowest and the highest, against 1."""
    std = spread.std
    layers = list(range(std.size(0)))
    fig = viz.line_plot(layers, {
        "highest head": decimals(std.max(1).values), "median head": decimals(std.median(1).values),
        "lowest head": decimals(std.min(1).values), "chapter 3's assumption (1)": [1.0] * len(layers)},
        x_title="layer", y_title="standard deviation of q·k/√E",
        title="How widely each layer's scaled scores spread on real text (first token apart)")
    return legend_below(dashed(fig, "chapter 3's assumption (1)", color="#888"))


def heads_figure(scores: HeadScores) -> go.Figure:
    """Every head's induction and previous-token scores, as layer x head maps (slider: score)."""
    stacked = torch.stack([scores.induction, scores.previous])[:, None]  # (2, 1, N, H)
    layers, heads = stacked.shape[-2:]
    return viz.attention_heatmap(stacked, [f"h{h}" for h in range(heads)], [f"layer {i}" for i in range(layers)],
                                 title="SmolLM2-135M, every head on repeated random tokens (slider: score)",
                                 layer_names=["induction (weight on the token after the earlier copy)",
                                              "previous token (weight on t − 1)"],
                                 head_names=["heads"])


def ablation_table(result: Ablation) -> str:
    """The loss on the second copy with every head, without the induction heads and without random heads."""
    def names(heads: Sequence[tuple[int, int]]) -> str:
        return ", ".join(f"{layer}.{head}" for layer, head in heads)

    rows = ["| heads removed | loss on the second copy (nats), mean over sequences |", "|---|---:|",
            f"| none (first copy, for reference: nothing to copy) | {float(result.first_copy.mean()):.2f} |",
            f"| none | {float(result.full.mean()):.2f} |",
            f"| the {len(result.removed)} top induction heads ({names(result.removed)}) | "
            f"{float(result.without_induction.mean()):.2f} |"]
    for heads, loss in zip(result.random_sets, result.without_random):
        rows.append(f"| {len(heads)} random heads ({names(heads)}) | {float(loss.mean()):.2f} |")
    return "\n".join(rows)


def sink_figure(share: torch.Tensor) -> go.Figure:
    """The weight on the first token per layer: mean over heads (bars) and the heads' range (markers)."""
    layers = [str(i) for i in range(share.size(0))]
    fig = viz.bar(layers, decimals(share.mean(1)), y_title="mean weight on the first token",
                  title="How much of each layer's attention goes to the text's first token")
    fig.add_trace(go.Scatter(x=layers, y=decimals(share.max(1).values), mode="markers", name="most sink-bound head",
                             marker=dict(size=7, symbol="triangle-up")))
    fig.add_trace(go.Scatter(x=layers, y=decimals(share.min(1).values), mode="markers", name="least sink-bound head",
                             marker=dict(size=7, symbol="triangle-down")))
    fig.update_xaxes(title_text="layer")
    fig.update_yaxes(range=[0, 1])
    return legend_below(fig)


def _moving_average(values: np.ndarray, window: int) -> np.ndarray:
    kernel = np.ones(window) / window
    return np.convolve(values, kernel, mode="valid")


def streaming_figure(nll: Mapping[str, torch.Tensor], cache_size: int, smooth: int = 16) -> go.Figure:
    """The loss per position under each cache (mean over the texts, moving average), with the cache's size marked."""
    curves = {name: _moving_average(values.mean(0).numpy(), smooth) for name, values in nll.items()}
    length = len(next(iter(curves.values())))
    x = [i + smooth for i in range(length)]  # the position of the last token averaged (1-based next-token index)
    fig = viz.line_plot(x, {name: decimals(c, 3) for name, c in curves.items()},
                        x_title="position of the token predicted",
                        y_title=f"loss (nats), moving average of {smooth}",
                        title=f"A cache of {cache_size} keys: the window alone, with sinks, and the full cache")
    fig.add_vline(x=cache_size, line_dash="dot", line_color="#888")
    return legend_below(fig)


def streaming_table(losses: Mapping[str, torch.Tensor], start: int) -> str:
    """The mean loss of each cache over the scored tokens: per text and overall."""
    count = next(iter(losses.values())).numel()
    texts = " | ".join(f"text {i + 1}" for i in range(count))
    rows = [f"| cache | mean loss from token {start} (nats) | {texts} |",
            "|---|---:|" + "---:|" * count]
    for name, values in losses.items():
        cells = " | ".join(f"{v:.2f}" for v in values.tolist())
        rows.append(f"| {name} | {float(values.mean()):.2f} | {cells} |")
    return "\n".join(rows)
