"""Position encodings drawn: sinusoidal and RoPE values by position and dimension.

A heatmap shows the whole table (rows: positions, columns: features); a slider walks through
the frequency pairs, and the lower panel draws that pair's sine and cosine against position:
the first pairs turn fast (wavelength ~ 2 pi positions), the last ones barely move (wavelength
up to ``2 pi * base``). The tables come from :mod:`helpers.positional`, the same code the
models use.

Chapter 6 (position); how to read the figure: ``book/figures.md``.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..positional import RotaryEmbedding, sinusoidal_encoding
from .style import SIGNED_COLORSCALE, as_array, base_layout, frame_step, slider

__all__ = ["positional_encoding_explorer", "rope_table"]

_KINDS = ("sinusoidal", "rope")


def rope_table(num_positions: int, head_dim: int, *, base: float = 10000.0) -> torch.Tensor:
    """RoPE's rotation table ``[cos(p theta_i) | sin(p theta_i)]`` from :class:`helpers.positional.RotaryEmbedding`.

    Args:
        num_positions: Positions ``0 .. P-1``.
        head_dim: ``E``, even.
        base: The wavelength scale.

    Returns:
        ``(P, E)``: columns ``i < E/2`` hold ``cos(p theta_i)``, columns ``E/2 + i`` hold
        ``sin(p theta_i)`` (the half-split convention of :mod:`helpers.positional`).
    """
    cos, sin = RotaryEmbedding(head_dim, base=base)(num_positions)  # (1, P, E) each
    half = head_dim // 2
    return torch.cat((cos[0, :, :half], sin[0, :, :half]), dim=-1)  # (P, E)


def positional_encoding_explorer(
    kind: str = "sinusoidal",
    *,
    num_positions: int = 64,
    dim: int = 32,
    base: float = 10000.0,
    encoding: torch.Tensor | np.ndarray | None = None,
    title: str | None = None,
) -> go.Figure:
    """A position-encoding table as a heatmap, with a slider over its frequency pairs.

    Args:
        kind: ``"sinusoidal"`` (Vaswani et al.: sine on even features, cosine on odd ones) or
            ``"rope"`` (RoPE's ``cos | sin`` table, half-split).
        num_positions: Positions ``P`` to draw (ignored when ``encoding`` is given).
        dim: Features ``D`` (``head_dim`` for RoPE; ignored when ``encoding`` is given).
        base: The wavelength scale, 10000 in both papers.
        encoding: A precomputed ``(P, D)`` table laid out as ``kind`` says, drawn instead of
            computing one (e.g. ``helpers.positional.sinusoidal_encoding(128, 64)``).
        title: What the figure shows; a generic title when ``None``.

    Returns:
        A figure with traces ``0`` (heatmap of the table), ``1`` and ``2`` (the selected
        pair's first and second feature against position) and ``3`` (marker columns on the heatmap),
        and one frame per pair ``i`` (features ``(2i, 2i+1)`` for sinusoidal, ``(i, i+D/2)``
        for RoPE) updating traces 1-3.

    Shape:
        encoding: ``(P, D)`` with ``D`` even.

    Raises:
        ValueError: If ``kind`` is unknown or the table is not 2-D with an even ``D``.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    if encoding is None:
        if kind == "sinusoidal":
            encoding = sinusoidal_encoding(num_positions, dim, base=base)  # (P, D)
        else:
            encoding = rope_table(num_positions, dim, base=base)  # (P, D)
    table = as_array(encoding, "encoding", ndim=(2,))
    n_positions, n_dims = table.shape
    if n_dims % 2:
        raise ValueError(f"encoding must have an even number of features (pairs), got shape {table.shape}")
    n_pairs = n_dims // 2
    if kind == "sinusoidal":
        pairs = [(2 * i, 2 * i + 1) for i in range(n_pairs)]
        names = ("sin, feature 2i", "cos, feature 2i+1")
        lower = "the pair against position: sin (solid), cos (dotted)"
    else:
        pairs = [(i, i + n_pairs) for i in range(n_pairs)]
        names = ("cos(p·θᵢ), feature i", "sin(p·θᵢ), feature i+D/2")
        lower = "the pair against position: cos (solid), sin (dotted)"
    positions = np.arange(n_positions)
    limit = max(1.0, float(np.abs(table).max()))

    fig = make_subplots(rows=2, cols=1, row_heights=[0.58, 0.42], vertical_spacing=0.16,
                        subplot_titles=["the whole table: rows are positions, columns features", lower])
    fig.add_trace(go.Heatmap(z=table, colorscale=SIGNED_COLORSCALE, zmid=0.0, zmin=-limit, zmax=limit,
                             colorbar=dict(title=dict(text="value"), thickness=12, len=0.5, y=0.78),
                             hovertemplate="position %{y}, feature %{x}: %{z:.3f}<extra></extra>"), row=1, col=1)

    def pair_traces(i: int) -> list[go.Scatter]:
        first, second = pairs[i]
        wavelength = 2 * math.pi * base ** (2 * i / n_dims)
        return [
            go.Scatter(x=positions, y=table[:, first], mode="lines", name=names[0], line=dict(color="#2f7ed8"),
                       hovertemplate=f"feature {first}, position %{{x}}: %{{y:.3f}}<extra>wavelength "
                                     f"{wavelength:.1f}</extra>"),
            go.Scatter(x=positions, y=table[:, second], mode="lines", name=names[1],
                       line=dict(color="#e4572e", dash="dot"),
                       hovertemplate=f"feature {second}, position %{{x}}: %{{y:.3f}}<extra></extra>"),
            go.Scatter(x=[first, first, None, second, second], y=[-0.5, n_positions - 0.5, None, -0.5,
                                                                  n_positions - 0.5],
                       mode="lines", line=dict(color="#111111", width=2), name="selected pair", showlegend=False,
                       hoverinfo="skip", xaxis="x", yaxis="y"),
        ]

    first_traces = pair_traces(0)
    fig.add_trace(first_traces[0], row=2, col=1)
    fig.add_trace(first_traces[1], row=2, col=1)
    fig.add_trace(first_traces[2], row=1, col=1)
    fig.update_yaxes(title_text="position", range=[n_positions - 0.5, -0.5], row=1, col=1)
    fig.update_xaxes(range=[-0.5, n_dims - 0.5], row=1, col=1)  # the subplot title names the axes
    fig.update_xaxes(title_text="position", row=2, col=1)
    fig.update_yaxes(range=[-1.1 * limit, 1.1 * limit], title_text="value", row=2, col=1)
    fig.update_annotations(font_size=12)
    label = "Sinusoidal position encoding" if kind == "sinusoidal" else "RoPE rotation table"
    fig.update_layout(**base_layout(title or f"{label}: each feature pair turns at its own frequency", 640),
                      showlegend=False)  # the lower panel's title names its lines (a legend crowds phones)
    steps = [str(i) for i in range(n_pairs)]
    fig.frames = [go.Frame(name=steps[i], traces=[1, 2, 3], data=pair_traces(i)) for i in range(n_pairs)]
    fig.update_layout(sliders=[slider([frame_step(s, s) for s in steps], "frequency pair i = ")])
    return fig
