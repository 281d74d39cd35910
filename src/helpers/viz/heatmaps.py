"""Heatmaps of attention: weights by layer and head, mask patterns, alignments during training.

Every weight heatmap shares one colour scale (``Viridis``) on a fixed 0 -> 1 range, so the
same colour means the same weight in every figure of the book. Rows are queries (the token
that attends), columns are keys (the tokens attended to), as in
:func:`torch.nn.functional.scaled_dot_product_attention`'s ``(L, S)``. Sliders and dropdowns
are Plotly's own (frames and restyle steps), so they work on the static site with no kernel.

Shape legend: ``layers`` x ``H`` (heads) x ``L`` (queries) x ``S`` (keys); ``T`` training steps.

Chapter: "How to read these figures" (``book/figures.md``); used in chapters 1, 4, 5 and 6.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .style import (
    MASK_COLORSCALE,
    WEIGHT_COLORSCALE,
    as_array,
    base_layout,
    check_weights,
    frame_step,
    names_for,
    slider,
    tick_layout,
    token_labels,
)

__all__ = ["attention_heatmap", "mask_gallery", "training_replay", "axis_labels"]

_HOVER = "query %{y} → key %{x}<br>weight %{z:.3f}<extra></extra>"


def _heatmap_height(rows: int, extra: int = 0) -> int:
    return int(min(720, max(360, 150 + 26 * rows))) + extra


def axis_labels(tokens: list[str]) -> list[str]:
    """Tokens as category labels: a repeated token gets zero-width spaces appended, so that it
    keeps its own row or column (Plotly merges equal categories) and still reads the same."""
    seen: dict[str, int] = {}
    labels = []
    for token in tokens:
        labels.append(token + "\u200b" * seen.get(token, 0))
        seen[token] = seen.get(token, 0) + 1
    return labels


def _token_axes(keys: list[str]) -> dict[str, Any]:
    angle, _ = tick_layout(keys)
    return dict(
        xaxis=dict(title=dict(text="key (attended to)"), type="category", showgrid=False, zeroline=False,
                   tickangle=angle),
        yaxis=dict(title=dict(text="query (attending)"), type="category", autorange="reversed", showgrid=False,
                   zeroline=False),
    )


def _weight_coloraxis() -> dict[str, Any]:
    return dict(colorscale=WEIGHT_COLORSCALE, cmin=0.0, cmax=1.0,
                colorbar=dict(title=dict(text="weight"), thickness=12, len=0.8))


def attention_heatmap(
    weights: torch.Tensor | np.ndarray,
    x_tokens: Sequence[str] | None = None,
    y_tokens: Sequence[str] | None = None,
    *,
    title: str | None = None,
    layer_names: Sequence[str] | None = None,
    head_names: Sequence[str] | None = None,
) -> go.Figure:
    """Attention weights as a heatmap, with a dropdown over heads and a slider over layers.

    Args:
        weights: Attention weights in [0, 1]: ``(L, S)`` for one head, ``(H, L, S)`` for the
            heads of one layer, or ``(layers, H, L, S)`` for a whole model (e.g. the
            ``output_attentions`` of a Hugging Face model stacked, batch removed).
        x_tokens: The ``S`` key tokens (columns); positions ``0 .. S-1`` when ``None``.
        y_tokens: The ``L`` query tokens (rows); ``x_tokens`` when ``None`` and ``L == S``.
        title: What the figure shows; a generic title when ``None``.
        layer_names: Names of the layers on the slider; ``"layer 0"``, ... when ``None``.
        head_names: Names of the heads in the dropdown; ``"head 0"``, ... when ``None``.

    Returns:
        A figure with one heatmap trace per head (only the selected one visible) and one
        frame per layer; ``z`` of trace ``h`` in frame ``l`` is ``weights[l, h]`` (as float32);
        ``x`` and ``y`` are the tokens (a repeated token carries invisible zero-width spaces,
        so that it keeps its own row or column).

    Shape:
        weights: ``(L, S)``, ``(H, L, S)`` or ``(layers, H, L, S)``.

    Raises:
        ValueError: If ``weights`` has another rank, values outside [0, 1], or tokens or
            names of the wrong length.
        TypeError: If tokens or names are not sequences of strings.
    """
    array = as_array(weights, "weights", ndim=(2, 3, 4))
    check_weights(array, "weights")
    full = array.reshape((1,) * (4 - array.ndim) + array.shape)  # (layers, H, L, S)
    n_layers, n_heads, n_queries, n_keys = full.shape
    keys = token_labels(x_tokens, n_keys, "x_tokens")
    if y_tokens is None and x_tokens is not None and n_queries == n_keys:
        queries = keys
    else:
        queries = token_labels(y_tokens, n_queries, "y_tokens")
    layers = names_for(layer_names, n_layers, "layer", "layer_names")
    heads = names_for(head_names, n_heads, "head", "head_names")
    x, y = axis_labels(keys), axis_labels(queries)
    full = full.astype(np.float32)  # float32 is what models compute; half the page size of float64

    fig = go.Figure(data=[
        go.Heatmap(z=full[0, h], x=x, y=y, hovertemplate=_HOVER, coloraxis="coloraxis",
                   visible=(h == 0), name=heads[h])
        for h in range(n_heads)
    ])
    default_title = "Attention weights: each row is a query's distribution over the keys"
    fig.update_layout(**base_layout(title or default_title,
                                    _heatmap_height(n_queries, 90 if n_layers > 1 else 0)),
                      coloraxis=_weight_coloraxis(), **_token_axes(x))
    if n_heads > 1:
        buttons = [dict(method="restyle", label=heads[h], args=[{"visible": [g == h for g in range(n_heads)]}])
                   for h in range(n_heads)]
        fig.update_layout(updatemenus=[dict(type="dropdown", buttons=buttons, active=0, x=1.0, xanchor="right",
                                            y=1.0, yanchor="bottom", pad=dict(b=6), showactive=True)])
    if n_layers > 1:
        fig.frames = [go.Frame(name=layers[layer], traces=list(range(n_heads)),
                               data=[go.Heatmap(z=full[layer, h]) for h in range(n_heads)])
                      for layer in range(n_layers)]
        fig.update_layout(sliders=[slider([frame_step(name, name) for name in layers], "",
                                          pad_top=tick_layout(x)[1] + 44)])
    return fig


def mask_gallery(
    masks: Mapping[str, torch.Tensor | np.ndarray],
    *,
    title: str | None = None,
    columns: int = 3,
) -> go.Figure:
    """Boolean attention masks side by side, with a dropdown to look at one of them alone.

    Args:
        masks: Name -> boolean mask ``(L, S)`` with ``True`` = may attend (PyTorch's
            convention, as built by :mod:`helpers.masks`).
        title: What the figure shows; a generic title when ``None``.
        columns: The most masks on one row; a square-ish grid is used below that (four masks
            make 2 x 2). Three stays readable at phone width for masks up to ~32 positions.

    Returns:
        A figure with one heatmap per mask (``z`` is the mask as 0/1) and a dropdown
        ("all masks", then each name).

    Raises:
        TypeError: If ``masks`` is not a mapping of names to boolean tensors or arrays.
        ValueError: If it is empty or a mask is not 2-D.
    """
    if not isinstance(masks, Mapping):
        raise TypeError(f"masks must be a dict of name -> boolean mask, got {type(masks).__name__}")
    if not masks:
        raise ValueError("masks must hold at least one mask, got an empty dict")
    if not isinstance(columns, int) or columns < 1:
        raise ValueError(f"columns must be a positive int, got {columns!r}")
    arrays: dict[str, np.ndarray] = {}
    for name, mask in masks.items():
        dtype = mask.dtype if isinstance(mask, (torch.Tensor, np.ndarray)) else None
        if dtype not in (torch.bool, np.bool_, np.dtype(bool)):
            raise TypeError(f"masks[{name!r}] must be boolean (True = may attend), got dtype {dtype}; "
                            "for an additive float mask pass `mask == 0`")
        arrays[str(name)] = as_array(mask, f"masks[{name!r}]", ndim=(2,), dtype=np.int8)
    names = list(arrays)
    n = len(names)
    cols = min(columns, n, math.ceil(math.sqrt(n)))
    rows = math.ceil(n / cols)
    # Two short lines per title, so that neighbouring titles do not run into each other on a phone.
    titles = [f"{name}<br>{int(a.sum())}/{a.size} allowed" for name, a in arrays.items()]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=0.08,
                        vertical_spacing=0.16 if rows > 1 else 0.0)
    for i, (name, a) in enumerate(arrays.items()):
        text = np.where(a.astype(bool), "allowed", "blocked")
        fig.add_trace(go.Heatmap(z=a, text=text, hovertemplate="query %{y} → key %{x}: %{text}<extra>%{meta}</extra>",
                                 meta=name, name=name,
                                 colorscale=MASK_COLORSCALE, zmin=0, zmax=1, showscale=False, xgap=1, ygap=1),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_yaxes(autorange="reversed", showgrid=False, zeroline=False)
    fig.update_xaxes(showgrid=False, zeroline=False)
    for i in range(n):
        row, col = i // cols + 1, i % cols + 1
        if col == 1:
            fig.update_yaxes(title_text="query", row=row, col=col)
        if i + cols >= n:
            fig.update_xaxes(title_text="key", row=row, col=col)
    fig.update_layout(**base_layout(title or "Attention masks: blue = may attend (True), grey = blocked",
                                    208 + 300 * rows),
                      # the menu sits above the two-line subplot titles, the figure's title above the menu
                      margin=dict(t=150, b=64))
    fig.update_annotations(font_size=12)

    layout = fig.layout.to_plotly_json()
    axes = [("xaxis" if i == 0 else f"xaxis{i + 1}", "yaxis" if i == 0 else f"yaxis{i + 1}") for i in range(n)]
    grid = {f"{ax}.{key}": layout[ax][key] for pair in axes for ax in pair for key in ("domain",)}
    grid.update({f"{ax}.visible": True for pair in axes for ax in pair})
    all_annotations = layout["annotations"]
    buttons = [dict(method="update", label="all masks",
                    args=[{"visible": [True] * n}, {**grid, "annotations": all_annotations}])]
    for i, name in enumerate(names):
        alone: dict[str, Any] = {}
        for j, (xa, ya) in enumerate(axes):
            alone[f"{xa}.visible"] = alone[f"{ya}.visible"] = i == j
            if i == j:
                alone[f"{xa}.domain"], alone[f"{ya}.domain"] = [0.0, 1.0], [0.0, 0.94]
        annotation = {**all_annotations[i], "x": 0.5, "y": 1.0, "xanchor": "center"}
        buttons.append(dict(method="update", label=name,
                            args=[{"visible": [j == i for j in range(n)]}, {**alone, "annotations": [annotation]}]))
    fig.update_layout(updatemenus=[dict(type="dropdown", buttons=buttons, active=0, x=1.0, xanchor="right",
                                        y=1.0, yanchor="bottom", pad=dict(b=40))])
    return fig


def training_replay(
    frames: torch.Tensor | np.ndarray | Sequence[torch.Tensor | np.ndarray],
    x_tokens: Sequence[str] | None = None,
    y_tokens: Sequence[str] | None = None,
    *,
    steps: Sequence[int] | None = None,
    losses: Sequence[float] | None = None,
    title: str = "Attention during training",
) -> go.Figure:
    """A slider over training steps: the attention (e.g. an alignment) captured at each step.

    Args:
        frames: Weights captured during training: ``(T, L, S)`` or a sequence of ``T``
            tensors ``(L, S)``.
        x_tokens: The ``S`` key (source) tokens; positions when ``None``.
        y_tokens: The ``L`` query (target) tokens; ``x_tokens`` when ``None`` and ``L == S``.
        steps: The training step of each frame; ``0 .. T-1`` when ``None``.
        losses: The loss at each frame, shown in the title of the frame.
        title: What the figure shows.

    Returns:
        A figure with one heatmap and one frame per step; frame ``t``'s ``z`` is ``frames[t]``.

    Shape:
        frames: ``(T, L, S)``.

    Raises:
        ValueError: If the frames differ in shape, or ``steps``/``losses`` have a length
            other than ``T``.
    """
    if isinstance(frames, (list, tuple)):
        arrays = [as_array(f, f"frames[{t}]", ndim=(2,)) for t, f in enumerate(frames)]
        shapes = {a.shape for a in arrays}
        if len(shapes) > 1:
            raise ValueError(f"frames must all have one shape (L, S), got shapes {sorted(shapes)}")
        if not arrays:
            raise ValueError("frames must hold at least one frame, got an empty sequence")
        stack = np.stack(arrays)
    else:
        stack = as_array(frames, "frames", ndim=(3,))
    check_weights(stack, "frames")
    n_frames, n_queries, n_keys = stack.shape
    step_values = list(range(n_frames)) if steps is None else [int(s) for s in steps]
    if len(step_values) != n_frames:
        raise ValueError(f"steps has {len(step_values)} values, but there are {n_frames} frames")
    if losses is not None and len(losses) != n_frames:
        raise ValueError(f"losses has {len(losses)} values, but there are {n_frames} frames")
    keys = token_labels(x_tokens, n_keys, "x_tokens")
    queries = keys if (y_tokens is None and x_tokens is not None and n_queries == n_keys) else \
        token_labels(y_tokens, n_queries, "y_tokens")

    def frame_title(t: int) -> str:
        loss = "" if losses is None else f", loss {float(losses[t]):.3f}"
        return f"{title} (step {step_values[t]}{loss})"

    stack = stack.astype(np.float32)
    x = axis_labels(keys)
    fig = go.Figure(go.Heatmap(z=stack[0], x=x, y=axis_labels(queries), hovertemplate=_HOVER,
                               coloraxis="coloraxis"))
    fig.update_layout(**base_layout(frame_title(0), _heatmap_height(n_queries, 90)),
                      coloraxis=_weight_coloraxis(), **_token_axes(x))
    names = [str(s) for s in step_values]
    fig.frames = [go.Frame(name=names[t], data=[go.Heatmap(z=stack[t])], traces=[0],
                           layout=dict(title=dict(text=frame_title(t))))
                  for t in range(n_frames)]
    fig.update_layout(sliders=[slider([frame_step(n, n) for n in names], "step ", pad_top=tick_layout(x)[1] + 44)])
    return fig
