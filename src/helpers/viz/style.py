"""The book's look for figures, and the input checks every figure function shares.

One colour scale for attention weights (``Viridis`` on a fixed 0 -> 1 range), one diverging
scale for signed values, one two-colour scale for masks, one qualitative palette for lines and
bars, a transparent Plotly template that reads on the light and the dark theme of the site, and
the conversions from tensors to NumPy with errors that name the argument.

Colours are chosen for readers with a colour-vision deficiency. Lines and bars take the
Okabe-Ito palette (Okabe and Ito, 2008, "Color Universal Design"), which stays distinct under
protanopia, deuteranopia and tritanopia, in an order whose first four colours (blue, vermillion,
bluish green, reddish purple) each have a contrast of at least 3:1 (WCAG 1.4.11, graphical
objects) against both the page's white and its dark-theme background (``#14181e``); yellow,
unreadable on white, and black, unreadable on the dark theme, are left out, and a mid grey
(``NEUTRAL``) that reads on both marks reference lines. Heatmaps use Viridis, designed to be
perceptually uniform and readable in colour-blind vision and in grey scale; signed values use
ColorBrewer's red-blue diverging scale, which ColorBrewer marks colour-blind safe.

How to read the figures: the page "How to read these figures" (``book/figures.md``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import torch

__all__ = [
    "PALETTE",
    "BLUE",
    "VERMILLION",
    "GREEN",
    "PURPLE",
    "ORANGE",
    "SKY",
    "NEUTRAL",
    "to_rgb",
    "contrast_ratio",
    "WEIGHT_COLORSCALE",
    "SIGNED_COLORSCALE",
    "MASK_COLORSCALE",
    "TEMPLATE_NAME",
    "book_template",
    "theme_patch",
    "base_layout",
    "slider",
    "frame_step",
    "as_array",
    "check_weights",
    "token_labels",
    "names_for",
    "tick_layout",
    "finite_range",
]

BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY = "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"
"""The Okabe-Ito colours the book uses, by name."""

NEUTRAL = "#7f7f7f"
"""Mid grey for reference lines, thresholds and "other" series (contrast 4.0 to 1 on white, 4.5 to 1 on dark)."""

PALETTE: tuple[str, ...] = (BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, NEUTRAL)
"""The colour sequence of every figure (the template's ``colorway``), Okabe-Ito, strongest first.

The first four read at 3:1 or more on both themes of the site; orange and sky blue at 2.3:1 on
white (8:1 on the dark theme), so a figure with more than four series also tells them apart by
dash, marker or legend order.
"""

WEIGHT_COLORSCALE = "Viridis"
"""Colour scale of every attention-weight heatmap, always on ``zmin=0, zmax=1``."""

SIGNED_COLORSCALE = "RdBu_r"
"""Colour scale of signed values (positional encodings, scores), centred on 0."""

MASK_COLORSCALE: list[list[Any]] = [[0.0, "rgba(128, 128, 128, 0.16)"], [1.0, BLUE]]
"""Two colours for boolean masks, blocked (faint grey) and allowed (blue)."""

TEMPLATE_NAME = "book"

# Text at 15:1 (light) and 13:1 (dark) on the page; the controls' borders and the tool bar's
# icons at 4.5:1 or more (WCAG 1.4.11 asks 3:1 of the parts of a control that identify it).
_LIGHT = {"font": "#212529", "grid": "rgba(0, 0, 0, 0.10)", "line": "rgba(0, 0, 0, 0.35)",
          "control_bg": "#f3f4f6", "control_active": "#d0d7e2", "control_border": "#6c757d",
          "modebar": "#6c757d", "modebar_active": "#212529"}
_DARK = {"font": "#e3e6ea", "grid": "rgba(255, 255, 255, 0.14)", "line": "rgba(255, 255, 255, 0.40)",
         "control_bg": "#2b2f36", "control_active": "#4a5360", "control_border": "#9ca4af",
         "modebar": "#9ca4af", "modebar_active": "#e3e6ea"}


def to_rgb(colour: str) -> tuple[int, int, int]:
    """``(r, g, b)`` of a colour written as ``#rrggbb``, ``#rgb``, ``rgb(...)`` or ``rgba(...)`` (alpha ignored).

    Raises:
        ValueError: If ``colour`` is in none of these forms.
    """
    text = colour.strip().lower() if isinstance(colour, str) else ""
    if re.fullmatch(r"#[0-9a-f]{3}|#[0-9a-f]{6}", text):
        digits = text[1:] if len(text) == 7 else "".join(c * 2 for c in text[1:])
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    match = re.fullmatch(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*(,\s*[\d.]+\s*)?\)", text)
    if match:
        return round(float(match.group(1))), round(float(match.group(2))), round(float(match.group(3)))
    raise ValueError(f"colour must be #rrggbb, #rgb, rgb(...) or rgba(...), got {colour!r}")


def contrast_ratio(first: str, second: str) -> float:
    """The WCAG 2 contrast ratio of two colours, from 1 (the same) to 21 (black on white).

    Args:
        first: A colour, in any form :func:`to_rgb` reads.
        second: Another.

    Returns:
        ``(L1 + 0.05) / (L2 + 0.05)``, ``L1`` the larger relative luminance.
    """
    def luminance(colour: str) -> float:
        linear = [v / 255 / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in to_rgb(colour)]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def book_template() -> go.layout.Template:
    """The Plotly template of the book: transparent backgrounds, readable grid, no fixed width.

    Returns:
        A template registered in ``plotly.io.templates`` under the name ``"book"``.
    """
    axis = dict(gridcolor=_LIGHT["grid"], zerolinecolor=_LIGHT["line"], linecolor=_LIGHT["line"],
                showline=False, ticks="", automargin=True, title=dict(standoff=10))
    return go.layout.Template(layout=dict(
        colorway=list(PALETTE),
        paper_bgcolor="rgba(0, 0, 0, 0)",
        plot_bgcolor="rgba(0, 0, 0, 0)",
        font=dict(family="system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif",
                  size=13, color=_LIGHT["font"]),
        title=dict(x=0.0, xanchor="left", pad=dict(l=6), font=dict(size=15)),
        margin=dict(l=64, r=16, t=64, b=48),
        autosize=True,
        hovermode="closest",
        hoverlabel=dict(font=dict(size=12)),
        xaxis=axis,
        yaxis=axis,
        coloraxis=dict(colorbar=dict(outlinewidth=0, ticks="")),
    ))


pio.templates[TEMPLATE_NAME] = book_template()


def theme_patch(fig: go.Figure | dict[str, Any], dark: bool) -> dict[str, Any]:
    """The relayout that puts a figure in the light or the dark theme of the site.

    The figure itself is drawn with transparent backgrounds; only text, grid lines, the
    controls (sliders, dropdowns) and the tool bar's icons change colour. The page's script applies this patch before
    drawing and again whenever the reader switches the theme.

    Args:
        fig: The figure, already complete (axes, sliders, menus), or its layout as a dict.
        dark: ``True`` for the dark theme.

    Returns:
        A ``Plotly.relayout`` update, keys in Plotly's dotted notation.
    """
    colors = _DARK if dark else _LIGHT
    patch: dict[str, Any] = {"font.color": colors["font"], "modebar.color": colors["modebar"],
                             "modebar.activecolor": colors["modebar_active"], "modebar.bgcolor": "rgba(0, 0, 0, 0)"}
    layout = fig.layout.to_plotly_json() if isinstance(fig, go.Figure) else fig
    for key in layout:
        if key.startswith(("xaxis", "yaxis")):
            patch[f"{key}.gridcolor"] = colors["grid"]
            patch[f"{key}.zerolinecolor"] = colors["line"]
            patch[f"{key}.linecolor"] = colors["line"]
    for i, _ in enumerate(layout.get("sliders", [])):
        patch[f"sliders[{i}].font.color"] = colors["font"]
        patch[f"sliders[{i}].currentvalue.font.color"] = colors["font"]
        patch[f"sliders[{i}].bgcolor"] = colors["control_bg"]
        patch[f"sliders[{i}].activebgcolor"] = colors["control_active"]
        patch[f"sliders[{i}].bordercolor"] = colors["control_border"]
        patch[f"sliders[{i}].tickcolor"] = colors["line"]
    for i, _ in enumerate(layout.get("updatemenus", [])):
        patch[f"updatemenus[{i}].font.color"] = colors["font"]
        patch[f"updatemenus[{i}].bgcolor"] = colors["control_bg"]
        patch[f"updatemenus[{i}].bordercolor"] = colors["control_border"]
    return patch


def base_layout(title: str, height: int) -> dict[str, Any]:
    """Layout keys every figure of the book starts from (template, title, height, no drag-zoom)."""
    return dict(template=TEMPLATE_NAME, title=dict(text=title), height=height, autosize=True,
                dragmode=False)


def slider(steps: list[dict[str, Any]], prefix: str, *, active: int = 0, y: float = 0.0,
           pad_top: int = 72) -> dict[str, Any]:
    """A slider in the book's style: current value shown above the rail, compact step labels.

    Args:
        steps: Plotly slider steps (``method``, ``args``, ``label``).
        prefix: Text before the current value, e.g. ``"Layer: "``.
        active: The step shown first.
        y: Vertical position of the slider's top in paper coordinates (0 = the plot's bottom).
        pad_top: Pixels between ``y`` and the slider: room for the x tick labels and title.

    Returns:
        One entry of ``layout.sliders``.
    """
    return dict(active=active, steps=steps, x=0.0, len=1.0, xanchor="left", y=y, yanchor="top",
                pad=dict(t=pad_top, b=8), currentvalue=dict(prefix=prefix, visible=True, xanchor="left"),
                font=dict(size=11), transition=dict(duration=0))


def frame_step(name: str, label: str) -> dict[str, Any]:
    """A slider step that jumps to frame ``name`` at once (no transition: heatmaps redraw)."""
    return dict(method="animate", label=label,
                args=[[name], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                   transition=dict(duration=0))])


def as_array(value: Any, name: str, *, ndim: Sequence[int] | None = None, dtype: Any = np.float64) -> np.ndarray:
    """Converts a tensor, array or nested list to a NumPy array and checks its rank.

    Args:
        value: A ``torch.Tensor``, ``np.ndarray`` or nested sequence of numbers.
        name: The argument's name, for error messages.
        ndim: Accepted numbers of dimensions, or ``None`` for any.
        dtype: The NumPy dtype of the result.

    Returns:
        A NumPy array (a copy, detached from autograd, on the CPU).

    Raises:
        TypeError: If ``value`` is not numeric.
        ValueError: If its rank is not one of ``ndim``, or it holds NaN.
    """
    if isinstance(value, torch.Tensor):
        if value.is_complex():
            raise TypeError(f"{name} must be real, got a complex tensor of dtype {value.dtype}")
        tensor = value.detach().cpu()
        if tensor.dtype in (torch.bfloat16, torch.float16):
            tensor = tensor.float()
        array = tensor.numpy()
    elif isinstance(value, (np.ndarray, list, tuple)):
        array = np.asarray(value)
        if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
            raise TypeError(f"{name} must hold numbers, got an array of dtype {array.dtype}")
    else:
        raise TypeError(f"{name} must be a torch.Tensor, np.ndarray or nested list, got {type(value).__name__}")
    array = np.array(array, dtype=dtype)
    if ndim is not None and array.ndim not in ndim:
        wanted = " or ".join(str(n) for n in ndim)
        raise ValueError(f"{name} must have {wanted} dimensions, got shape {tuple(array.shape)}")
    if array.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(array.shape)}")
    if np.issubdtype(array.dtype, np.floating) and np.isnan(array).any():
        raise ValueError(f"{name} holds NaN at {np.argwhere(np.isnan(array))[0].tolist()}")
    return array


def check_weights(weights: np.ndarray, name: str) -> None:
    """Raises ``ValueError`` if ``weights`` holds values outside [0, 1] (beyond rounding)."""
    low, high = float(weights.min()), float(weights.max())
    if low < -1e-6 or high > 1 + 1e-6:
        raise ValueError(f"{name} must hold attention weights in [0, 1], got values in [{low:.4g}, {high:.4g}]")


def token_labels(tokens: Sequence[str] | None, n: int, name: str) -> list[str]:
    """Token labels for an axis of length ``n``: the given tokens, or ``0 .. n-1``.

    Raises:
        TypeError: If ``tokens`` is a string or holds non-strings.
        ValueError: If it has the wrong length.
    """
    if tokens is None:
        return [str(i) for i in range(n)]
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{name} must be a sequence of strings, got {type(tokens).__name__}")
    labels = list(tokens)
    if not all(isinstance(t, str) for t in labels):
        raise TypeError(f"{name} must hold strings, got {[type(t).__name__ for t in labels][:5]}")
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} tokens, but the weights have {n} positions on that axis")
    return labels


def names_for(names: Sequence[str] | None, n: int, prefix: str, arg: str) -> list[str]:
    """Names for ``n`` items (``"head 0"``, ...) or the given ones, checked for length."""
    if names is None:
        return [f"{prefix} {i}" for i in range(n)]
    if isinstance(names, str):
        raise TypeError(f"{arg} must be a sequence of strings, got a string")
    labels = [str(x) for x in names]
    if len(labels) != n:
        raise ValueError(f"{arg} has {len(labels)} names, but there are {n} {prefix}s")
    return labels


def tick_layout(labels: list[str]) -> tuple[int, int]:
    """The tick angle for an axis of token labels, and the pixels its labels take below the axis.

    Labels are slanted (-45 degrees) when there are many or long ones, so that they stay
    readable at phone width; the height lets a slider sit below them instead of on them.
    """
    longest = max((len(label.strip("\u200b")) for label in labels), default=1)
    if len(labels) > 6 or longest * len(labels) > 40:
        return -45, int(0.71 * 7.5 * longest) + 14
    return 0, 20


def finite_range(*arrays: np.ndarray, pad: float = 0.05) -> list[float]:
    """A fixed axis range covering every array, padded, so motion across frames is visible."""
    low = min(float(np.nanmin(a)) for a in arrays)
    high = max(float(np.nanmax(a)) for a in arrays)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"values must be finite to draw them, got range [{low}, {high}]")
    span = high - low or max(abs(high), 1.0)
    return [low - pad * span, high + pad * span]
