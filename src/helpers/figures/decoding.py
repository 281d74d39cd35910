"""Figures and tables of chapter 6.4 (decoding), from :mod:`helpers.experiments.decoding`. Nothing here trains."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch

from .. import viz
from ..experiments.decoding import MODEL_SHAPES, ModelShape, QualityRun, decode_cost, fit_slope
from ..memory import kv_cache_bytes
from ..viz.style import BLUE, GREEN, NEUTRAL, ORANGE, PURPLE, SKY, VERMILLION
from .style import dashed, legend_below, seed_spread_table, significant

__all__ = ["equivalence_table", "decode_time_figure", "cache_size_figure", "shape_table", "intensity_table",
           "kv_heads_figure", "kv_heads_table", "quality_table"]

_DTYPE_NAMES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16",
                torch.float8_e4m3fn: "float8"}


def equivalence_table(result: Mapping[str, Mapping[str, float]]) -> str:
    """Cached against uncached decoding, per position encoding, as Markdown."""
    rows = ["| positions | same greedy tokens | max abs logit difference | distinct tokens generated |",
            "|---|---|---|---|"]
    rows += [f"| {name} | {'yes' if r['same_tokens'] else 'NO'} | {r['max_logit_gap']:.1e} | "
             f"{int(r['distinct_tokens'])} |" for name, r in result.items()]
    return "\n".join(rows)


def decode_time_figure(times: Mapping[str, Sequence[float]]) -> go.Figure:
    """Milliseconds per generated token against its position, with and without the cache, and fitted lines."""
    x = np.asarray(times["positions"])
    curves: dict[str, list[float]] = {}
    for name in ("without cache", "with cache"):
        y = np.asarray(times[name]) * 1e3
        slope, intercept = fit_slope(x, y)
        curves[f"{name} (measured)"] = significant(y, 3)
        curves[f"{name} (fit: {slope * 1e3:.2g} µs per position)"] = significant(slope * x + intercept, 3)
    fig = viz.line_plot(x, curves, x_title="position of the generated token", y_title="ms per token (best of 7)",
                        title="Time to generate one token at position p, tiny GPT, one thread")
    dashed(fig, *[n for n in curves if "fit" in n])
    return legend_below(fig)


def cache_size_figure(lengths: Sequence[int], table: Mapping[tuple[int, torch.dtype], Mapping[str, Sequence[float]]],
                      gpu_gib: float = 80.0, *, kv_heads: Sequence[int] = (32, 8, 1),
                      shape: ModelShape | None = None) -> go.Figure:
    """KV cache in GiB against the context length: a slider over (batch, dtype), a menu over key/value heads.

    One curve per model of ``table``; the curve of ``shape`` (the first of
    :data:`~helpers.experiments.decoding.MODEL_SHAPES`, the 7B multi-head model, by default) is drawn
    once per entry of ``kv_heads`` (32: MHA, 8: GQA-8, 1: MQA), one at a time, and the menu picks
    which, so that the reader sees grouping move that curve down while the other models stay put.
    Every number is :func:`~helpers.memory.kv_cache_bytes` in GiB, to 3 significant digits.

    Args:
        lengths: The context lengths ``(n,)`` (tokens).
        table: ``{(batch, dtype): {model name: [GiB at each length]}}``, from
            :func:`~helpers.experiments.decoding.cache_size_table`; one slider step per key.
        gpu_gib: The memory of one large GPU, drawn as a dashed line.
        kv_heads: The numbers of key/value heads of ``shape`` offered by the menu, the first drawn
            first; each must divide ``shape.num_heads``.
        shape: The model whose key/value heads the menu changes.

    Returns:
        A figure with traces ``0 .. len(kv_heads) - 1`` (``shape`` with each number of key/value
        heads; only the menu's choice visible), then the other models of ``table``, then the GPU
        line; one frame per ``(batch, dtype)``; ``layout.sliders[0]`` over the frames and
        ``layout.updatemenus[0]`` over ``kv_heads``.

    Raises:
        ValueError: If ``kv_heads`` is empty or holds a number that does not divide ``shape.num_heads``.
    """
    shape = shape or next(iter(MODEL_SHAPES.values()))
    if not kv_heads or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 or shape.num_heads % h
                           for h in kv_heads):
        raise ValueError(f"kv_heads must be divisors of shape.num_heads = {shape.num_heads}, got {list(kv_heads)}")
    gpu = f"{gpu_gib:.0f} GiB (one large GPU)"

    def variant(h: int) -> str:
        if h == shape.num_heads:
            return shape.name
        kind = "MQA" if h == 1 else f"GQA-{h}"
        return f"{shape.name.split(',')[0]} with {h} K/V head{'s' * (h > 1)} ({kind})"

    curves = {}
    for (batch, dtype), per_model in table.items():
        sizes = {variant(h): significant([kv_cache_bytes(shape.num_layers, h, shape.head_dim, n, batch, dtype) / 2**30
                                          for n in lengths], 3) for h in kv_heads}
        sizes.update({name: significant(gib, 3) for name, gib in per_model.items() if name != shape.name})
        curves[f"batch {batch}, {_DTYPE_NAMES.get(dtype, str(dtype))}"] = {**sizes, gpu: [gpu_gib] * len(lengths)}
    active = next((k for k in curves if k.startswith("batch 1,") and "bfloat16" in k), None)
    fig = viz.line_sweep(np.asarray(lengths), curves, param_name="batch, dtype", x_title="context length (tokens)",
                         y_title="KV cache (GiB)", title="KV cache size of three real model shapes",
                         log_x=True, log_y=True, control="slider", active=active)
    dashed(fig, gpu)
    colors = iter([VERMILLION, GREEN, PURPLE, ORANGE, SKY])
    n_variants = len(kv_heads)
    for i, trace in enumerate(fig.data):  # one colour for the curve that the menu moves
        color = BLUE if i < n_variants else NEUTRAL if trace.name == gpu else next(colors, None)
        trace.update(line_color=color, marker_color=color)
        if 0 < i < n_variants:
            trace.visible = False  # the menu shows one number of key/value heads at a time
    buttons = [dict(method="restyle", label=f"{shape.name.split(',')[0]}: {h} K/V head{'s' * (h > 1)} "
                                            f"({'MHA' if h == shape.num_heads else 'MQA' if h == 1 else 'GQA'})",
                    args=[{"visible": [i == k for i in range(n_variants)]}, list(range(n_variants))])
               for k, h in enumerate(kv_heads)]
    # Inside the plot's top-left corner, which the rising curves leave empty. The top margin leaves room for
    # the legend above the plot when it wraps to four lines on a phone, under a title of two.
    fig.update_layout(updatemenus=[dict(type="dropdown", direction="down", buttons=buttons, active=0, x=0.01,
                                        xanchor="left", y=0.99, yanchor="top", showactive=True,
                                        font=dict(size=12))], margin=dict(t=120), height=540)
    return fig


def shape_table(shapes: Mapping[str, ModelShape], context: int | None = None) -> str:
    """The model shapes and their cache per token (bfloat16) as Markdown.

    With ``context``, one more column: the cache of one sequence of ``context`` tokens in GiB,
    capped by the model's sliding window (:meth:`~helpers.experiments.decoding.ModelShape.cache_tokens`).
    """
    extra = f" KV cache of {context:,} tokens (bf16) |" if context else ""
    rows = ["| model | layers | query heads | key/value heads | head dim | weights | KV cache per token (bf16) |"
            + extra, "|---|---|---|---|---|---|---|" + ("---|" if context else "")]
    for name, s in shapes.items():
        per_token = 2 * s.num_layers * s.num_kv_heads * s.head_dim * 2
        row = (f"| {name} | {s.num_layers} | {s.num_heads} | {s.num_kv_heads} | {s.head_dim} | "
               f"{s.params / 1e9:.1f} B | {per_token / 1024:.0f} KiB |")
        if context:
            row += f" {per_token * s.cache_tokens(context) / 2**30:.1f} GiB |"
        rows.append(row)
    return "\n".join(rows)


def intensity_table(shapes: Mapping[str, ModelShape], seq_len: int, batches: Sequence[int]) -> str:
    """Per decoding step: GB read, GFLOPs, FLOPs per byte (overall and attention alone), as Markdown."""
    rows = ["| model | batch | GB read per step | GFLOP per step | FLOP per byte | attention alone: FLOP per byte |",
            "|---|---|---|---|---|---|"]
    for name, s in shapes.items():
        for batch in batches:
            c = decode_cost(s, seq_len, batch)
            rows.append(f"| {name} | {batch} | {(c['weight_bytes'] + c['cache_bytes']) / 1e9:.1f} | "
                        f"{(c['weight_flops'] + c['attention_flops']) / 1e9:.0f} | {c['intensity']:.1f} | "
                        f"{c['attention_intensity']:.0f} |")
    return "\n".join(rows)


def kv_heads_figure(result: Mapping[str, Sequence[float]]) -> go.Figure:
    """Time of one attention decoding step against the number of key/value heads, three implementations."""
    x = np.asarray(result["kv_heads"])
    curves = {
        "grouped (each K/V head read once)": significant(np.asarray(result["grouped"]) * 1e3, 3),
        "repeat_kv + fused SDPA (K/V copied per query head)": significant(np.asarray(result["repeat_kv"]) * 1e3, 3),
        "fused SDPA, enable_gqa=True (the kernel shares)": significant(np.asarray(result["enable_gqa"]) * 1e3, 3),
    }
    fig = viz.line_plot(x, curves, x_title="key/value heads (8 query heads)", y_title="ms per decoding step",
                        title="Attention over a 4096-token cache, batch 4: time against key/value heads",
                        log_x=True, log_y=True)
    fig.update_xaxes(tickvals=x.tolist(), ticktext=[str(int(v)) for v in x])
    return legend_below(fig)


def kv_heads_table(result: Mapping[str, Sequence[float]]) -> str:
    """The timings of :func:`kv_heads_figure` as Markdown: one row per number of key/value heads.

    The first row (as many key/value heads as query heads) is multi-head attention, the baseline;
    the last column divides each ``enable_gqa`` time by that row's.
    """
    kv = [int(h) for h in result["kv_heads"]]
    rows = ["| key/value heads | cache (MiB) | grouped (ms) | repeat_kv + SDPA (ms) | SDPA, enable_gqa (ms) | "
            "enable_gqa / multi-head |", "|---|---|---|---|---|---|"]
    base = result["enable_gqa"][0]
    for i, h in enumerate(kv):
        name = f"{h} (multi-head)" if i == 0 else f"{h} (multi-query)" if h == 1 else f"{h} (grouped-query)"
        rows.append(f"| {name} | {result['cache_bytes'][i] / 2**20:.0f} | {result['grouped'][i] * 1e3:.2f} | "
                    f"{result['repeat_kv'][i] * 1e3:.2f} | {result['enable_gqa'][i] * 1e3:.2f} | "
                    f"{result['enable_gqa'][i] / base:.2f} |")
    return "\n".join(rows)


def quality_table(runs: Mapping[str, Sequence[QualityRun]]) -> str:
    """Held-out accuracy per variant: mean [min, max] over seeds, as Markdown."""
    return seed_spread_table({name: [r.accuracy for r in group] for name, group in runs.items()},
                             ("model", "held-out next-token accuracy: mean [min, max] over seeds"))
