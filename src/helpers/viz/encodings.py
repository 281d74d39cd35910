"""Position encodings drawn, one explorer each, from :mod:`helpers.positional` (the code the models use).

- :func:`positional_encoding_explorer`: the sinusoidal or RoPE table as a heatmap (rows:
  positions, columns: features); a slider walks through the frequency pairs, and the lower panel
  draws that pair's sine and cosine against position: the first pairs turn fast (wavelength
  ~ 2 pi positions), the last ones barely move (wavelength up to ``2 pi * base``).
- :func:`learned_position_explorer`: a trained table of position vectors as cosine similarities,
  with a slider over the reference position: rows past the training length were never trained.
- :func:`t5_bucket_explorer`: a T5 head's bias as an ``(L, S)`` matrix, with a slider over the
  number of buckets: the cells of one bucket share one learned number.
- :func:`alibi_explorer`: ALiBi's bias for each head next to the weights it alone produces
  (every key with the same content), with a slider over the heads: the steeper the slope, the
  narrower the window (:func:`recent_window`).

Static Plotly figures (frames and a slider), so they work on the site with no kernel.

Chapter 6.5 (position); how to read the figures: ``book/figures.md``.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .. import seeding
from ..checks import check_positive_int
from ..positional import RotaryEmbedding, alibi_bias, alibi_slopes, relative_position_bucket, sinusoidal_encoding
from .style import BLUE, SIGNED_COLORSCALE, VERMILLION, WEIGHT_COLORSCALE, as_array, base_layout, frame_step, slider

__all__ = ["positional_encoding_explorer", "rope_table", "learned_position_explorer", "t5_bucket_explorer",
           "alibi_explorer", "recent_window"]

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
            go.Scatter(x=positions, y=table[:, first], mode="lines", name=names[0], line=dict(color=BLUE),
                       hovertemplate=f"feature {first}, position %{{x}}: %{{y:.3f}}<extra>wavelength "
                                     f"{wavelength:.1f}</extra>"),
            go.Scatter(x=positions, y=table[:, second], mode="lines", name=names[1],
                       line=dict(color=VERMILLION, dash="dot"),
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


def _rounded(values: np.ndarray, digits: int) -> list:
    """Nested lists rounded for the page, with ``None`` (a gap in a heatmap) where a value is not finite."""
    rounded = np.round(values.astype(float), digits)
    return np.where(np.isfinite(rounded), rounded, None).tolist()


def learned_position_explorer(
    table: torch.Tensor | np.ndarray,
    *,
    trained_positions: int | None = None,
    stride: int | None = None,
    title: str | None = None,
) -> go.Figure:
    """A learned position table as cosine similarities, with a slider over the reference position.

    The upper panel holds ``cos(p_a, p_b)`` for every pair of position vectors; the lower one the
    row of the slider's reference position, with the positions a model never trained on shaded.
    A vector that received gradient looks like its neighbours; one that did not is still its
    random initialisation, nearly orthogonal to everything (``|cos|`` about ``1/sqrt(D)``).

    Args:
        table: The position vectors, e.g. ``model.stack.position_embedding.weight``.
        trained_positions: Positions ``0 .. T-1`` were seen in training; the rest is shaded.
            ``None`` shades nothing.
        stride: Slider steps at every ``stride``-th position; by default at most 32 steps.
        title: What the figure shows; a generic title when ``None``.

    Returns:
        A figure with traces ``0`` (heatmap of cosine similarities), ``1`` (the reference
        position's row against position) and ``2`` (the reference row marked on the heatmap), and
        one frame per reference position updating traces 1-2.

    Shape:
        table: ``(P, D)``.

    Raises:
        ValueError: If ``table`` is not 2-D, has a zero row, or ``trained_positions``/``stride``
            are out of range.
    """
    weights = as_array(table, "table", ndim=(2,))
    n_positions = weights.shape[0]
    norms = np.linalg.norm(weights, axis=1)
    if (norms == 0).any():
        raise ValueError(f"table has an all-zero row at position {int(np.argmin(norms))}: no direction to compare")
    if trained_positions is not None and not 0 < trained_positions <= n_positions:
        raise ValueError(f"trained_positions must lie in [1, {n_positions}], got {trained_positions}")
    stride = stride if stride is not None else max(1, math.ceil(n_positions / 32))
    check_positive_int("stride", stride)
    unit = weights / norms[:, None]
    cosine = unit @ unit.T  # (P, P)
    positions = np.arange(n_positions)

    fig = make_subplots(rows=2, cols=1, row_heights=[0.58, 0.42], vertical_spacing=0.14,
                        subplot_titles=["cosine of every pair of position vectors", "cos(reference, position p)"])
    fig.add_trace(go.Heatmap(z=_rounded(cosine, 3), colorscale=SIGNED_COLORSCALE, zmid=0.0, zmin=-1.0, zmax=1.0,
                             colorbar=dict(title=dict(text="cos"), thickness=12, len=0.5, y=0.78),
                             hovertemplate="positions %{y} and %{x}: cos %{z:.2f}<extra></extra>"), row=1, col=1)

    def reference_traces(ref: int) -> list[go.Scatter]:
        return [
            go.Scatter(x=positions, y=np.round(cosine[ref], 3), mode="lines+markers", marker=dict(size=4),
                       line=dict(color=BLUE), name=f"cos(position {ref}, p)",
                       hovertemplate=f"cos(position {ref}, position %{{x}}) = %{{y:.2f}}<extra></extra>"),
            go.Scatter(x=[-0.5, n_positions - 0.5], y=[ref, ref], mode="lines", line=dict(color="#111111", width=2),
                       hoverinfo="skip", showlegend=False, xaxis="x", yaxis="y"),
        ]

    first = reference_traces(0)
    fig.add_trace(first[0], row=2, col=1)
    fig.add_trace(first[1], row=1, col=1)
    if trained_positions is not None and trained_positions < n_positions:
        fig.add_vrect(x0=trained_positions - 0.5, x1=n_positions - 0.5, fillcolor="#888888", opacity=0.18,
                      line_width=0, row=2, col=1, annotation_text="never trained", annotation_position="top right")
    fig.update_yaxes(title_text="position", range=[n_positions - 0.5, -0.5], row=1, col=1)
    fig.update_xaxes(range=[-0.5, n_positions - 0.5], row=1, col=1)
    fig.update_xaxes(title_text="position p", range=[-0.5, n_positions - 0.5], row=2, col=1)
    fig.update_yaxes(title_text="cosine", range=[-1.05, 1.05], row=2, col=1)
    fig.update_annotations(font_size=12)
    fig.update_layout(**base_layout(title or "Learned position vectors: which positions look alike", 680),
                      showlegend=False)
    steps = [str(ref) for ref in range(0, n_positions, stride)]
    fig.frames = [go.Frame(name=step, traces=[1, 2], data=reference_traces(int(step))) for step in steps]
    fig.update_layout(sliders=[slider([frame_step(step, step) for step in steps], "reference position = ")])
    return fig


def t5_bucket_explorer(
    length: int = 48,
    num_buckets: tuple[int, ...] = (8, 16, 32, 64),
    *,
    max_distance: int = 32,
    bidirectional: bool = True,
    seed: int = 0,
    title: str | None = None,
) -> go.Figure:
    """One T5 head's relative bias as a matrix, with a slider over the number of buckets.

    A T5 head adds one learned number per bucket of the offset ``j - i``
    (:func:`helpers.positional.relative_position_bucket`): every cell of a bucket holds the same
    bias, so distances that share a bucket cannot be told apart. Here each bucket gets a random
    (seeded) bias, as in an untrained head, so that the buckets show as bands; the lower panel
    draws the bucket of each offset, with dotted lines at ``±max_distance``.

    Args:
        length: Queries and keys ``L = S``, at positions ``0 .. L-1``.
        num_buckets: The slider's steps (T5 uses 32).
        max_distance: Offsets at or past this distance share the last bucket (T5 uses 128).
        bidirectional: ``True`` for an encoder (keys after the query get their own buckets),
            ``False`` for a causal decoder.
        seed: Seed of the random bias per bucket.
        title: What the figure shows; a generic title when ``None``.

    Returns:
        A figure with traces ``0`` (heatmap of the bias, ``(L, L)``) and ``1`` (bucket against the
        offset ``j - i``), and one frame per entry of ``num_buckets`` updating both.

    Raises:
        ValueError: If ``num_buckets`` is empty or a value is invalid for
            :func:`~helpers.positional.relative_position_bucket`.
    """
    check_positive_int("length", length)
    if not num_buckets:
        raise ValueError("num_buckets must hold at least one number of buckets, got an empty sequence")
    offsets = torch.arange(length)[None, :] - torch.arange(length)[:, None]  # (L, S): j - i
    line = torch.arange(-(length - 1), length)  # (2L - 1,): every offset
    gen = seeding.generator(seed)
    steps = {}
    for n in num_buckets:
        bias = torch.randn(n, generator=gen)  # (n,): one number per bucket, as a head learns
        bucket = relative_position_bucket(offsets, bidirectional, n, max_distance)  # (L, S)
        steps[n] = (bias[bucket].numpy(), relative_position_bucket(line, bidirectional, n, max_distance).numpy())

    fig = make_subplots(rows=2, cols=1, row_heights=[0.62, 0.38], vertical_spacing=0.14,
                        subplot_titles=["bias added to score(i, j), one head", "bucket of each offset j − i"])

    def traces(n: int) -> list[go.BaseTraceType]:
        bias, buckets = steps[n]
        return [
            go.Heatmap(z=np.round(bias, 2), colorscale=SIGNED_COLORSCALE, zmid=0.0, zmin=-3.0, zmax=3.0,
                       colorbar=dict(title=dict(text="bias"), thickness=12, len=0.5, y=0.8),
                       hovertemplate="query %{y}, key %{x}: bias %{z:.2f}<extra></extra>"),
            go.Scatter(x=line.numpy(), y=buckets, mode="lines", line=dict(shape="hv", color=BLUE),
                       hovertemplate="offset %{x}: bucket %{y}<extra></extra>"),
        ]

    first = traces(num_buckets[0])
    fig.add_trace(first[0], row=1, col=1)
    fig.add_trace(first[1], row=2, col=1)
    fig.update_xaxes(title_text="key j", range=[-0.5, length - 0.5], row=1, col=1)
    fig.update_yaxes(title_text="query i", range=[length - 0.5, -0.5], row=1, col=1)
    fig.update_xaxes(title_text="offset j − i (tokens)", row=2, col=1)
    fig.update_yaxes(title_text="bucket", range=[-1, max(num_buckets)], row=2, col=1)
    for edge in (-max_distance, max_distance):
        if edge < length:
            fig.add_vline(x=edge, line_dash="dot", line_color="#555", row=2, col=1)
    fig.update_annotations(font_size=12)
    kind = "encoder" if bidirectional else "decoder"
    fig.update_layout(**base_layout(title or f"T5 relative bias ({kind}, {length} tokens, offsets from "
                                    f"{max_distance} on share one bucket)", 700), showlegend=False)
    labels = [str(n) for n in num_buckets]
    fig.frames = [go.Frame(name=label, traces=[0, 1], data=traces(n)) for label, n in zip(labels, num_buckets)]
    fig.update_layout(sliders=[slider([frame_step(label, label) for label in labels], "buckets = ")])
    return fig


def recent_window(weights: torch.Tensor | np.ndarray, coverage: float = 0.9) -> np.ndarray:
    """For each query, how many of the most recent keys hold ``coverage`` of its attention.

    Counting back from the key at the query's own position (the diagonal ``j = i``) to ``j = 0``:
    the smallest ``n`` such that keys ``i, i-1, .., i-n+1`` hold at least ``coverage`` of row
    ``i``'s weight. A measure of how far back a causal head effectively looks (ALiBi's window).

    Args:
        weights: Causal attention weights, rows summing to 1.
        coverage: The share of the weight, in ``(0, 1]``.

    Returns:
        ``(L,)`` integers, between 1 and ``i + 1`` for row ``i``.

    Shape:
        weights: ``(L, L)``.

    Raises:
        ValueError: If ``weights`` is not square or ``coverage`` is outside ``(0, 1]``.
    """
    rows = as_array(weights, "weights", ndim=(2,))
    if rows.shape[0] != rows.shape[1]:
        raise ValueError(f"weights must be square (L, L), got shape {rows.shape}")
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must lie in (0, 1], got {coverage}")
    windows = []
    for i, row in enumerate(rows):
        recent = np.cumsum(row[: i + 1][::-1])  # weight of the last 1, 2, ..., i + 1 keys
        windows.append(int(np.searchsorted(recent, coverage * recent[-1] - 1e-12) + 1))
    return np.array(windows)


def alibi_explorer(num_heads: int = 8, length: int = 32, *, coverage: float = 0.9,
                   title: str | None = None) -> go.Figure:
    """ALiBi's bias for each head next to the attention it alone produces, with a slider over the heads.

    Top: the bias ``-m_h (i - j)`` of :func:`helpers.positional.alibi_bias` (causal, keys after
    the query blank). Below: ``softmax`` of that bias, which is what a query attends with when all
    keys have the same content (equal ``q . k``): the position preference of the head on its own.
    The dashed line marks, for every query, the :func:`recent_window` holding ``coverage`` of its
    weight: a head with slope 1/2 looks a few tokens back, one with slope 1/256 almost uniformly.

    Paper: Press et al., 2022 (ALiBi), section 3. Explained in chapter 6.5.

    Args:
        num_heads: ``H``; the slopes are :func:`~helpers.positional.alibi_slopes`.
        length: Queries and keys ``L``.
        coverage: The share of a query's weight its window holds.
        title: What the figure shows; a generic title when ``None``.

    Returns:
        A figure with traces ``0`` (bias heatmap, ``(L, L)``), ``1`` (weights heatmap) and ``2``
        (the window's left edge for each query), and one frame per head, in the order of the
        slopes (steepest first), updating all three and the title.
    """
    check_positive_int("num_heads", num_heads)
    check_positive_int("length", length)
    bias = alibi_bias(num_heads, length, length, is_causal=True, dtype=torch.float64)[0]  # (H, L, L)
    weights = torch.softmax(bias, dim=-1).numpy()  # (H, L, L): equal q.k for every key
    future = np.triu(np.ones((length, length), dtype=bool), k=1)  # (L, L): keys after the query, masked
    slopes = alibi_slopes(num_heads, dtype=torch.float64).tolist()
    order = sorted(range(num_heads), key=lambda h: -slopes[h])  # steepest first (6 heads: not head order)
    floor = -max(slopes) * (length - 1)
    queries = np.arange(length)

    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.12,
                        subplot_titles=["bias −m·(i − j) added to the score", "softmax of the bias alone"])

    def traces(h: int) -> list[go.BaseTraceType]:
        window = recent_window(weights[h], coverage)
        return [
            go.Heatmap(z=_rounded(bias[h].numpy(), 2), colorscale="Blues_r", zmin=floor, zmax=0.0,
                       colorbar=dict(title=dict(text="bias"), thickness=10, len=0.4, y=0.8),
                       hovertemplate="query %{y}, key %{x}: bias %{z:.2f}<extra></extra>"),
            go.Heatmap(z=_rounded(np.where(future, np.nan, weights[h]), 3), colorscale=WEIGHT_COLORSCALE,
                       zmin=0.0, zmax=1.0,
                       colorbar=dict(title=dict(text="weight"), thickness=10, len=0.4, y=0.22),
                       hovertemplate="query %{y}, key %{x}: weight %{z:.3f}<extra></extra>", xaxis="x2", yaxis="y2"),
            go.Scatter(x=queries - window + 0.5, y=queries, mode="lines", line=dict(color="#ffffff", dash="dash",
                       width=2), hovertemplate=f"query %{{y}}: {coverage:.0%} of its weight on the last "
                                               "%{customdata} keys<extra></extra>",
                       customdata=window, xaxis="x2", yaxis="y2"),
        ]

    def frame_title(h: int) -> str:
        window = recent_window(weights[h], coverage)[-1]
        return (f"{title or 'ALiBi, one head at a time'}; slope m = 1/{1 / slopes[h]:.3g}: the last query puts "
                f"{coverage:.0%} of its weight on its last {window} keys")

    first = traces(order[0])
    fig.add_trace(first[0], row=1, col=1)
    fig.add_trace(first[1], row=2, col=1)
    fig.add_trace(first[2], row=2, col=1)
    fig.update_xaxes(title_text="key j", range=[-0.5, length - 0.5])
    fig.update_yaxes(title_text="query i", range=[length - 0.5, -0.5])
    fig.update_annotations(font_size=12)
    fig.update_layout(**base_layout(frame_title(order[0]), 720), showlegend=False)
    labels = [f"1/{1 / slopes[h]:.3g}" for h in order]
    fig.frames = [go.Frame(name=label, traces=[0, 1, 2], data=traces(h),
                           layout=dict(title=dict(text=frame_title(h))))
                  for label, h in zip(labels, order)]
    fig.update_layout(sliders=[slider([frame_step(label, label) for label in labels], "slope m = ")])
    return fig
