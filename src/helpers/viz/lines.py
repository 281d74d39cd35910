"""Measured curves: a family with a slider over a parameter, plain line plots and bar charts.

``line_sweep`` is for "the same measurement at several values of a knob": e.g. the softmax
saturation against the score scale for ``d_k`` = 16, 64, 256 -- the slider moves ``d_k`` and
the axes stay fixed, so what changes on screen is the measurement, not the zoom.

Chapters 1-6 (every measured curve); how to read the figures: ``book/figures.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch

from ..checks import check_positive_int
from .style import BLUE, as_array, base_layout, finite_range, frame_step, slider

__all__ = ["line_sweep", "line_plot", "bar", "moving_average"]

ArrayLike = torch.Tensor | np.ndarray | Sequence[float]


def moving_average(values: ArrayLike, window: int) -> np.ndarray:
    """Trailing moving average: point ``i`` is the mean of ``values[i - window + 1 : i + 1]``.

    The first ``window - 1`` points average what there is so far, so the curve starts at the
    first value instead of being shorter. Used to draw noisy training curves (chapters 2 and 3).

    Args:
        values: The series ``(n,)``.
        window: Number of points averaged (``>= 1``).

    Returns:
        The smoothed series ``(n,)``, float64.
    """
    check_positive_int("window", window)
    x = as_array(values, "values", ndim=(1,))
    cumulative = np.cumsum(np.insert(x, 0, 0.0))  # (n + 1,)
    end = np.arange(1, len(x) + 1)
    start = np.maximum(0, end - window)
    return (cumulative[end] - cumulative[start]) / (end - start)


def _curves(x: np.ndarray, ys: Mapping[str, ArrayLike], arg: str) -> dict[str, np.ndarray]:
    if not isinstance(ys, Mapping) or not ys:
        raise TypeError(f"{arg} must be a non-empty dict of name -> values, got {type(ys).__name__}"
                        + (" (empty)" if isinstance(ys, Mapping) else ""))
    out = {}
    for name, y in ys.items():
        values = as_array(y, f"{arg}[{name!r}]", ndim=(1,))
        if len(values) != len(x):
            raise ValueError(f"{arg}[{name!r}] has {len(values)} values, but x has {len(x)}")
        out[str(name)] = values
    return out


def _axis_range(arrays: list[np.ndarray], log: bool) -> list[float]:
    if not log:
        return finite_range(*arrays)
    positive = np.concatenate([a[a > 0] for a in arrays])
    if positive.size == 0:
        raise ValueError("a log axis needs positive values, got none")
    low, high = np.log10(positive.min()), np.log10(positive.max())
    pad = 0.05 * (high - low or 1.0)
    return [float(low - pad), float(high + pad)]


def _axis(title: str, arrays: list[np.ndarray], log: bool, *, fixed_range: bool) -> dict[str, Any]:
    """An axis in the book's style; a log axis over two decades or more labels only powers of ten."""
    axis: dict[str, Any] = dict(title=dict(text=title), type="log" if log else "linear")
    if fixed_range:
        axis["range"] = _axis_range(arrays, log)
    if log:
        low, high = _axis_range(arrays, True)
        if high - low >= 2:
            axis.update(dtick=1, exponentformat="power")  # 10^0, 10^1, ... instead of 2, 5, 10, 2, 5, 100
    return axis


def line_sweep(
    x: ArrayLike,
    curves: Mapping[Any, Mapping[str, ArrayLike]],
    *,
    param_name: str = "parameter",
    x_title: str = "x",
    y_title: str = "y",
    title: str | None = None,
    log_x: bool = False,
    log_y: bool = False,
    control: str = "slider",
    active: Any = None,
) -> go.Figure:
    """A family of measured curves with a slider (or a dropdown) over a parameter (e.g. ``d_k``).

    Args:
        x: The common x values ``(n,)``.
        curves: Parameter value -> {curve name -> y values ``(n,)``}; every parameter value
            must have the same curve names (e.g. ``{16: {"measured": ..., "theory": ...}, 64: ...}``).
        param_name: The parameter's name on the slider, e.g. ``"d_k"``.
        x_title: The x axis title, with units.
        y_title: The y axis title, with units.
        title: What the figure shows; a generic title when ``None``.
        log_x: Log scale on x.
        log_y: Log scale on y.
        control: ``"slider"`` for an ordered parameter (``d_k``), ``"dropdown"`` for a few
            unordered choices (a hidden size, a score function).
        active: The parameter value drawn first (a key of ``curves``); the first one when ``None``.

    Returns:
        A figure with one trace per curve name (drawn for the ``active`` parameter value), one
        frame per parameter value and a slider (or dropdown) with one step per frame; the axis
        ranges are fixed to cover every frame.

    Shape:
        x: ``(n,)``; each curve ``(n,)``.

    Raises:
        TypeError: If ``curves`` is not a non-empty dict of dicts.
        ValueError: If the curve names differ between parameter values, a curve has the
            wrong length, ``control`` is unknown or ``active`` is not a parameter value.
    """
    if control not in ("slider", "dropdown"):
        raise ValueError(f"control must be 'slider' or 'dropdown', got {control!r}")
    xs = as_array(x, "x", ndim=(1,))
    if not isinstance(curves, Mapping) or not curves:
        raise TypeError(f"curves must be a non-empty dict of parameter -> {{name: y}}, got {type(curves).__name__}")
    family = {param: _curves(xs, ys, f"curves[{param!r}]") for param, ys in curves.items()}
    names = list(next(iter(family.values())))
    for param, ys in family.items():
        if list(ys) != names:
            raise ValueError(f"curves[{param!r}] has curves {list(ys)}, but the first parameter value has {names}")
    labels = [str(p) for p in family]
    if len(set(labels)) < len(labels):
        raise ValueError(f"parameter values must print differently, got {labels}")
    params = list(family)
    if active is not None and active not in family:
        raise ValueError(f"active must be one of the parameter values {params}, got {active!r}")
    start = 0 if active is None else params.index(active)
    first = family[params[start]]
    fig = go.Figure([go.Scatter(x=xs, y=first[name], mode="lines+markers", name=name, marker=dict(size=5))
                     for name in names])
    all_y = [y for ys in family.values() for y in ys.values()]
    fig.update_layout(**base_layout(title or f"{y_title} against {x_title}, for each {param_name}", 480),
                      legend=dict(orientation="h", x=0.0, y=1.0, yanchor="bottom"),
                      xaxis=_axis(x_title, [xs], log_x, fixed_range=True),
                      yaxis=_axis(y_title, all_y, log_y, fixed_range=True))
    fig.frames = [go.Frame(name=label, traces=list(range(len(names))),
                           data=[go.Scatter(x=xs, y=ys[name]) for name in names])
                  for label, ys in zip(labels, family.values())]
    steps = [frame_step(label, label) for label in labels]
    if control == "slider":
        fig.update_layout(sliders=[slider(steps, f"{param_name} = ", active=start)])
    else:
        buttons = [dict(step, label=f"{param_name} = {step['label']}") for step in steps]
        # Under the plot, where a slider would be, opening upwards: clear of the title and of a
        # legend that wraps on a phone.
        fig.update_layout(updatemenus=[dict(type="dropdown", direction="up", buttons=buttons, active=start,
                                            x=0.0, xanchor="left", y=0.0, yanchor="top", pad=dict(t=64))])
    return fig


def line_plot(
    x: ArrayLike,
    ys: Mapping[str, ArrayLike],
    *,
    x_title: str = "x",
    y_title: str = "y",
    title: str | None = None,
    log_x: bool = False,
    log_y: bool = False,
) -> go.Figure:
    """Several named curves over a common x, in the book's style.

    Args:
        x: The x values ``(n,)``.
        ys: Curve name -> y values ``(n,)``.
        x_title: The x axis title, with units.
        y_title: The y axis title, with units.
        title: What the figure shows; a generic title when ``None``.
        log_x: Log scale on x.
        log_y: Log scale on y.

    Returns:
        A figure with one line trace per curve, in the order of ``ys``.

    Raises:
        TypeError: If ``ys`` is not a non-empty dict.
        ValueError: If a curve's length differs from ``x``'s.
    """
    xs = as_array(x, "x", ndim=(1,))
    curves = _curves(xs, ys, "ys")
    fig = go.Figure([go.Scatter(x=xs, y=y, mode="lines+markers", name=name, marker=dict(size=5))
                     for name, y in curves.items()])
    fig.update_layout(**base_layout(title or f"{y_title} against {x_title}", 420),
                      legend=dict(orientation="h", x=0.0, y=1.0, yanchor="bottom"),
                      xaxis=_axis(x_title, [xs], log_x, fixed_range=False),
                      yaxis=_axis(y_title, list(curves.values()), log_y, fixed_range=False))
    return fig


def bar(
    labels: Sequence[str],
    values: ArrayLike,
    *,
    errors: ArrayLike | None = None,
    y_title: str = "value",
    title: str | None = None,
) -> go.Figure:
    """A bar chart of named measurements, with optional error bars.

    Args:
        labels: One name per bar.
        values: One value per bar.
        errors: Half-widths of the error bars (e.g. a standard deviation over seeds).
        y_title: The y axis title, with units.
        title: What the figure shows; a generic title when ``None``.

    Returns:
        A figure with one bar trace.

    Raises:
        TypeError: If ``labels`` is not a sequence of strings.
        ValueError: If the lengths of ``labels``, ``values`` and ``errors`` differ.
    """
    if isinstance(labels, str) or not isinstance(labels, Sequence) or not all(isinstance(s, str) for s in labels):
        raise TypeError(f"labels must be a sequence of strings, got {labels!r}")
    heights = as_array(values, "values", ndim=(1,))
    if len(heights) != len(labels):
        raise ValueError(f"values has {len(heights)} entries, but labels has {len(labels)}")
    error_y = None
    if errors is not None:
        half = as_array(errors, "errors", ndim=(1,))
        if len(half) != len(labels):
            raise ValueError(f"errors has {len(half)} entries, but labels has {len(labels)}")
        error_y = dict(type="data", array=half, visible=True)
    fig = go.Figure(go.Bar(x=list(labels), y=heights, error_y=error_y, marker_color=BLUE,
                           hovertemplate="%{x}: %{y:.4g}<extra></extra>"))
    fig.update_layout(**base_layout(title or y_title, 400), yaxis=dict(title=dict(text=y_title)))
    return fig
