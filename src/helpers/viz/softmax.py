"""Softmax under a temperature: how the scale of the scores decides how peaked the weights are.

Attention divides its scores by a scale (``sqrt(d_k)``) before the softmax; dividing by a
temperature ``T`` is the same knob. Small ``T`` (large scores) pushes the softmax towards a
one-hot vector (entropy -> 0, vanishing gradients); large ``T`` flattens it towards uniform
(entropy -> ``log n``). The figure shows the scaled scores, the weights and the entropy while a
slider moves ``T``.

Chapter 3, "Why scale by sqrt(d_k)"; how to read the figure: ``book/figures.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .style import BLUE, PURPLE, VERMILLION, as_array, base_layout, frame_step, slider, token_labels

__all__ = ["softmax_temperature_explorer", "softmax_with_temperature"]


def softmax_with_temperature(scores: np.ndarray, temperatures: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Softmax weights and their entropy for each temperature (float64, via ``torch.softmax``).

    Args:
        scores: The scores ``(n,)``.
        temperatures: ``(T,)`` positive temperatures.

    Returns:
        ``(weights, entropy)``: ``(T, n)`` weights (each row sums to 1) and ``(T,)`` entropies
        in nats (``0`` for one-hot, ``log n`` for uniform).
    """
    s = torch.as_tensor(scores, dtype=torch.float64)
    t = torch.as_tensor(temperatures, dtype=torch.float64)
    weights = torch.softmax(s[None, :] / t[:, None], dim=-1)  # (T, n)
    entropy = -torch.special.xlogy(weights, weights).sum(-1)  # (T,), 0 log 0 = 0
    return weights.numpy(), entropy.numpy()


def _symmetric(values: np.ndarray) -> list[float]:
    limit = 1.1 * float(np.abs(values).max()) or 1.0
    return [-limit, limit]


def softmax_temperature_explorer(
    scores: torch.Tensor | np.ndarray | Sequence[float],
    temperatures: torch.Tensor | np.ndarray | Sequence[float],
    *,
    tokens: Sequence[str] | None = None,
    active: int | None = None,
    title: str | None = None,
) -> go.Figure:
    """Scaled scores, softmax weights and their entropy, with a slider over the temperature.

    Args:
        scores: Attention scores (logits) of one query over ``n`` keys.
        temperatures: The temperatures on the slider, positive; the weights are
            ``softmax(scores / T)``. ``T = sqrt(d_k)`` is what scaled dot-product attention uses.
        tokens: Names of the ``n`` keys; positions when ``None``.
        active: Index of the temperature shown first; the one closest to 1 when ``None``.
        title: What the figure shows; a generic title when ``None``.

    Returns:
        A figure with traces ``0`` (bars of ``scores / T``), ``1`` (bars of the weights),
        ``2`` (the entropy against ``T``), ``3`` (a marker at the current ``T``), ``4`` (the
        maximum entropy ``log n``), and one frame per temperature that updates traces 0, 1, 3.

    Shape:
        scores: ``(n,)``; temperatures: ``(T,)``.

    Raises:
        ValueError: If ``scores`` is not 1-D or not finite, or a temperature is not positive
            and finite, or ``active`` is out of range.
    """
    s = as_array(scores, "scores", ndim=(1,))
    if not np.isfinite(s).all():
        raise ValueError(f"scores must be finite, got {s.tolist()}")
    temps = as_array(temperatures, "temperatures", ndim=(1,))
    if not (np.isfinite(temps).all() and (temps > 0).all()):
        raise ValueError(f"temperatures must be positive and finite, got {temps.tolist()}")
    if active is None:
        active = int(np.argmin(np.abs(np.log(temps))))
    if not isinstance(active, (int, np.integer)) or not 0 <= active < len(temps):
        raise ValueError(f"active must be an index into temperatures (0..{len(temps) - 1}), got {active!r}")
    labels = token_labels(tokens, len(s), "tokens")
    weights, entropy = softmax_with_temperature(s, temps)  # (T, n), (T,)
    scaled = s[None, :] / temps[:, None]  # (T, n)
    x = list(range(len(s)))

    fig = make_subplots(rows=2, cols=2, specs=[[{}, {}], [{"colspan": 2}, None]], vertical_spacing=0.2,
                        horizontal_spacing=0.12,
                        subplot_titles=["scaled scores s / T", "weights softmax(s / T)",
                                        "entropy of the weights (nats)"])

    def bars(t: int) -> list[go.Bar]:
        return [go.Bar(x=x, y=scaled[t], name="s / T", marker_color=PURPLE,
                       hovertemplate="key %{x}: s/T = %{y:.3f}<extra></extra>"),
                go.Bar(x=x, y=weights[t], name="weight", marker_color=BLUE,
                       hovertemplate="key %{x}: weight %{y:.3f}<extra></extra>")]

    def marker(t: int) -> go.Scatter:
        return go.Scatter(x=[temps[t]], y=[entropy[t]], mode="markers", name="current T",
                          marker=dict(size=11, color=VERMILLION),
                          hovertemplate="T = %{x:.3g}<br>entropy %{y:.3f}<extra></extra>")

    scaled_bar, weight_bar = bars(active)
    fig.add_trace(scaled_bar, row=1, col=1)
    fig.add_trace(weight_bar, row=1, col=2)
    fig.add_trace(go.Scatter(x=temps, y=entropy, mode="lines", name="entropy", line=dict(color=BLUE),
                             hovertemplate="T = %{x:.3g}<br>entropy %{y:.3f}<extra></extra>"), row=2, col=1)
    fig.add_trace(marker(active), row=2, col=1)
    log_n = math.log(len(s))
    fig.add_trace(go.Scatter(x=[temps.min(), temps.max()], y=[log_n, log_n], mode="lines", name="log n (uniform)",
                             line=dict(dash="dash", color="#888888"), hoverinfo="skip"), row=2, col=1)
    fig.update_xaxes(tickmode="array", tickvals=x, ticktext=labels, row=1, col=1)
    fig.update_xaxes(tickmode="array", tickvals=x, ticktext=labels, row=1, col=2)
    fig.update_yaxes(range=_symmetric(scaled[active]), row=1, col=1)
    fig.update_yaxes(range=[0.0, 1.02], row=1, col=2)
    log_range = [math.log10(temps.min()), math.log10(temps.max())]
    fig.update_xaxes(type="log" if temps.max() / temps.min() > 20 else "linear",
                     range=log_range if temps.max() / temps.min() > 20 else None,
                     title_text="temperature T", row=2, col=1)
    fig.update_yaxes(range=[0.0, log_n * 1.08], row=2, col=1)
    fig.update_annotations(font_size=12)
    fig.update_layout(**base_layout(title or "Softmax with a temperature: small T sharpens, large T flattens", 560),
                      showlegend=False, bargap=0.15)
    names = [f"{t:.3g}" for t in temps]
    if len(set(names)) < len(names):
        names = [f"{t:.8g}" for t in temps]
        if len(set(names)) < len(names):
            raise ValueError(f"temperatures must be distinct, got {temps.tolist()}")
    # Each frame rescales the scores' axis: s / T keeps its shape and changes its size, which
    # the tick labels show, while the weights (fixed 0..1 axis) change shape.
    fig.frames = [go.Frame(name=names[t], traces=[0, 1, 3], data=[*bars(t), marker(t)],
                           layout=dict(yaxis=dict(range=_symmetric(scaled[t]))))
                  for t in range(len(temps))]
    fig.update_layout(sliders=[slider([frame_step(n, n) for n in names], "T = ", active=active)])
    return fig
