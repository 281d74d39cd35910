"""Chapter 2 figures of :mod:`helpers.experiments.score_geometry`: the 2-D explorer and the sign demo.

- :func:`geometry_figure`, :func:`geometry_explorer_figure`, :func:`geometry_explorer`: the
  explorer for one query, with precomputed sliders (static page), and with live sliders (kernel).
- :func:`sign_softmax_figure`: scores and softmax weights of dot products and distances.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..experiments.score_geometry import (
    EXPLORER_ROWS,
    GeometrySetup,
    GeometryState,
    SignSoftmaxDemo,
    explorer_setup,
    geometry_state,
)
from ..viz import WEIGHT_COLORSCALE, Explorer
from ..viz.style import NEUTRAL, base_layout, frame_step, slider
from .score_style import PALETTE, SCORE_COLORS
from .style import decimals

__all__ = ["geometry_figure", "geometry_explorer_figure", "geometry_explorer", "sign_softmax_figure"]


def _state_traces(state: GeometryState, setup: GeometrySetup, visible: bool = True) -> list[go.BaseTraceType]:
    """The three traces that move with the query: its arrow, its projection on k1, the heatmap.

    The one drawing function behind both the static explorer (one copy per query length, moved
    by frames) and the live explorer.
    """
    qx, qy = decimals(state.query.tolist())
    px, py = decimals(state.projection.tolist())
    arrow = go.Scatter(
        x=[0, qx], y=[0, qy], mode="lines+markers+text", text=["", "q"], textposition="top left",
        textfont=dict(size=16), line=dict(color=NEUTRAL, width=4),
        marker=dict(size=[0, 13], symbol="arrow", angleref="previous", color=NEUTRAL),
        hovertemplate="q = (%{x}, %{y})<extra></extra>", showlegend=False, visible=visible, xaxis="x", yaxis="y",
    )
    projection = go.Scatter(
        x=[qx, px, None, 0, px], y=[qy, py, None, 0, py], mode="lines",
        line=dict(color=SCORE_COLORS["dot"], width=2, dash="dot"), hoverinfo="skip", showlegend=False,
        visible=visible, xaxis="x", yaxis="y",
    )
    rows = list(EXPLORER_ROWS)
    scores = np.stack([state.scores[r].numpy() for r in rows]).round(2) + 0.0  # (rows, S); + 0.0: no "-0.00"
    weights = np.stack([state.weights[r].numpy() for r in rows])  # (rows, S)
    text = [[f"{s:.2f}<br><b>{w:.0%}</b>" for s, w in zip(srow, wrow)] for srow, wrow in zip(scores, weights)]
    heatmap = go.Heatmap(
        z=decimals(weights, 3), x=[n.split(" ")[0] for n in setup.key_names], y=[EXPLORER_ROWS[r] for r in rows],
        text=text, texttemplate="%{text}", zmin=0, zmax=1, colorscale=WEIGHT_COLORSCALE, showscale=False,
        xgap=2, ygap=2, hovertemplate="%{y}, key %{x}<br>score, weight: %{text}<extra></extra>", visible=visible,
        xaxis="x2", yaxis="y2", textfont=dict(size=12),
    )
    return [arrow, projection, heatmap]


def _static_traces(setup: GeometrySetup) -> list[go.BaseTraceType]:
    """Traces that do not move: the unit circle and the keys."""
    theta = np.linspace(0, 2 * np.pi, 73)
    circle = go.Scatter(
        x=decimals(np.cos(theta)), y=decimals(np.sin(theta)), mode="lines",
        line=dict(color=NEUTRAL, width=1, dash="dash"), hoverinfo="skip", showlegend=False, xaxis="x", yaxis="y",
    )
    traces: list[go.BaseTraceType] = [circle]
    for i, (name, key) in enumerate(zip(setup.key_names, setup.keys.tolist())):
        kx, ky = decimals(key)
        colour = PALETTE[(i + 2) % len(PALETTE)]
        traces.append(go.Scatter(
            x=[0, kx], y=[0, ky], mode="lines+markers+text", text=["", name.split(" ")[0]],
            textposition="bottom right", textfont=dict(color=colour, size=14), line=dict(color=colour, width=3),
            marker=dict(size=[0, 11], symbol="arrow", angleref="previous", color=colour), showlegend=False,
            hovertemplate=f"{name} = (%{{x}}, %{{y}}), length {math.hypot(kx, ky):.2f}<extra></extra>",
            xaxis="x", yaxis="y",
        ))
    return traces


_EXPLORER_TITLE = "Scores (top) and softmax weights (bold) of q"


def _explorer_layout(fig: go.Figure, limit: float, height: int, heatmap_bottom: float) -> None:
    fig.update_layout(
        **base_layout(_EXPLORER_TITLE, height),
        xaxis=dict(domain=[0, 1], range=[-limit, limit], showgrid=False, zeroline=True, fixedrange=True,
                   constrain="domain"),
        yaxis=dict(domain=[0.56, 1], range=[-limit, limit], scaleanchor="x", scaleratio=1, showgrid=False,
                   zeroline=True, fixedrange=True, constrain="domain"),
        xaxis2=dict(domain=[0, 1], anchor="y2", side="top", showgrid=False, fixedrange=True),
        yaxis2=dict(domain=[heatmap_bottom, 0.49], anchor="x2", autorange="reversed", showgrid=False,
                    fixedrange=True),
    )
    fig.update_layout(margin=dict(l=8, r=8, t=56, b=8))


def geometry_figure(angle_deg: float = 30.0, norm: float = 1.0, setup: GeometrySetup | None = None) -> go.Figure:
    """The explorer for one query, without sliders: what the live explorer redraws.

    Args:
        angle_deg: Direction of the query, degrees.
        norm: Length of the query.
        setup: Keys and parameters; :func:`~helpers.experiments.score_geometry.explorer_setup` when ``None``.

    Returns:
        A figure of the plane with the keys, the query and its projection on k1's line (dotted;
        ``q . k1 = |k1|`` times its signed length), above a heatmap whose rows are score
        functions and whose columns are keys (text: the score, then the weight).
    """
    setup = explorer_setup() if setup is None else setup
    state = geometry_state(angle_deg, norm, setup)
    fig = go.Figure(_static_traces(setup) + _state_traces(state, setup))
    _explorer_layout(fig, limit=max(2.8, 1.15 * norm), height=700, heatmap_bottom=0.0)
    return fig


def geometry_explorer_figure(
    angles: tuple[float, ...] = tuple(range(0, 360, 30)),
    norms: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 3.0),
    setup: GeometrySetup | None = None,
    *,
    start_angle: float = 0.0,
    start_norm: float = 1.0,
) -> go.Figure:
    """The 2-D explorer with two sliders, the query's angle and length, that work in a static page.

    Precomputed: one copy of the moving traces (drawn by the same function as
    :func:`geometry_figure`) per query length, of which the length slider shows one (a
    ``restyle`` of ``visible``), and one frame per angle that moves every copy at once (an
    ``animate``). The two sliders therefore commute, with no kernel.

    Args:
        angles: Query angles of the angle slider, degrees.
        norms: Query lengths of the length slider.
        setup: Keys and parameters; :func:`~helpers.experiments.score_geometry.explorer_setup` when ``None``.
        start_angle: Initial angle (one of ``angles``).
        start_norm: Initial length (one of ``norms``).

    Returns:
        The Plotly figure. Traces ``0 .. S`` are the circle and the keys; then, for each length
        in ``norms``, the query's arrow, its projection and the heatmap.
    """
    setup = explorer_setup() if setup is None else setup
    angles, norms = tuple(angles), tuple(norms)
    if start_angle not in angles or start_norm not in norms:
        raise ValueError(f"start_angle ({start_angle}) must be one of angles {angles} and start_norm "
                         f"({start_norm}) one of norms {norms}")
    a0, n0 = angles.index(start_angle), norms.index(start_norm)
    static = _static_traces(setup)
    per_norm = 3
    moving: list[go.BaseTraceType] = []
    for j, norm in enumerate(norms):
        moving += _state_traces(geometry_state(start_angle, norm, setup), setup, visible=(j == n0))
    fig = go.Figure(static + moving)
    moving_ids = list(range(len(static), len(static) + per_norm * len(norms)))
    frames = []
    for angle in angles:
        data: list[go.BaseTraceType] = []
        for norm in norms:
            arrow, projection, heatmap = _state_traces(geometry_state(angle, norm, setup), setup)
            data += [go.Scatter(x=arrow.x, y=arrow.y), go.Scatter(x=projection.x, y=projection.y),
                     go.Heatmap(z=heatmap.z, text=heatmap.text)]
        frames.append(go.Frame(name=f"{angle:g}", data=data, traces=moving_ids))
    fig.frames = frames
    norm_steps = []
    for j, norm in enumerate(norms):
        visible = [k // per_norm == j for k in range(per_norm * len(norms))]
        norm_steps.append(dict(method="restyle", label=f"{norm:g}", args=[{"visible": visible}, moving_ids]))
    _explorer_layout(fig, limit=max(2.8, 1.15 * max(norms)), height=920, heatmap_bottom=0.24)
    angle_slider = slider([frame_step(f"{a:g}", f"{a:g}°") for a in angles], "angle of q: ", active=a0, y=0.2)
    norm_slider = slider(norm_steps, "length |q|: ", active=n0, y=0.1)
    fig.update_layout(sliders=[angle_slider, norm_slider])
    return fig


def geometry_explorer(setup: GeometrySetup | None = None):
    """The 2-D explorer for a live kernel: two ipywidgets sliders redrawing :func:`geometry_figure`.

    Built on :class:`helpers.viz.Explorer`: in JupyterLab or Colab the sliders move the query
    continuously (any angle, any length); while the book is built, it shows
    :func:`geometry_explorer_figure` (precomputed steps, Plotly's own sliders) instead.

    Args:
        setup: Keys and parameters; :func:`~helpers.experiments.score_geometry.explorer_setup` when ``None``.

    Returns:
        A :class:`helpers.viz.Explorer` with controls ``"angle"`` and ``"norm"``.
    """

    setup = explorer_setup() if setup is None else setup

    def controls(values: dict[str, float]) -> dict[str, object]:
        import ipywidgets as widgets

        style = {"description_width": "initial"}
        return {
            "angle": widgets.FloatSlider(value=values["angle"], min=0.0, max=360.0, step=5.0,
                                         description="angle of q (°)", style=style, continuous_update=True),
            "norm": widgets.FloatSlider(value=values["norm"], min=0.05, max=3.0, step=0.05,
                                        description="length |q|", style=style, continuous_update=True),
        }

    def draw(values: dict[str, float]) -> go.Figure:
        return geometry_figure(values["angle"], values["norm"], setup)

    def static(values: dict[str, float]) -> go.Figure:
        return geometry_explorer_figure(setup=setup)

    return Explorer({"angle": 30.0, "norm": 1.0}, controls, draw, static,
                    "Each row is one score function; text: score, then softmax weight.")


# ============================================================================================
# 2. Sign and softmax


def sign_softmax_figure(demo: SignSoftmaxDemo) -> go.Figure:
    """Two panels: the scores (dot products, distances, negated distances) and their softmax weights.

    Args:
        demo: The output of :func:`~helpers.experiments.score_geometry.sign_softmax_demo`.

    Returns:
        The Plotly figure; the dashed line is the uniform weight ``1/S``, the dotted one the
        log-mean-exp of the dot scores (a dot score above it gets more than ``1/S``).
    """
    from plotly.subplots import make_subplots

    names = [n.split(" ")[0] for n in demo.key_names]
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.16, shared_xaxes=True,
                        subplot_titles=("scores", "softmax weights (each colour sums to 1)"))
    series = [
        ("dot product q·k", demo.dot, demo.dot_weights, SCORE_COLORS["dot"]),
        ("distance ‖q−k‖², as is", demo.distance, demo.distance_weights, SCORE_COLORS["distance"]),
        ("−‖q−k‖² (negated)", -demo.distance, demo.neg_distance_weights, SCORE_COLORS["neg_euclidean"]),
    ]
    for label, scores, weights, colour in series:
        fig.add_bar(x=names, y=decimals(scores, 3), name=label, marker_color=colour, legendgroup=label, row=1, col=1,
                    hovertemplate=f"{label}<br>key %{{x}}: score %{{y:.2f}}<extra></extra>")
        fig.add_bar(x=names, y=decimals(weights, 3), name=label, marker_color=colour, legendgroup=label,
                    showlegend=False, row=2, col=1,
                    hovertemplate=f"{label}<br>key %{{x}}: weight %{{y:.2f}}<extra></extra>")
    fig.add_hline(y=demo.log_mean_exp, line=dict(color=SCORE_COLORS["dot"], dash="dot", width=1), row=1, col=1,
                  annotation_text="log-mean-exp of the dot scores", annotation_position="top right")
    fig.add_hline(y=demo.uniform, line=dict(color=NEUTRAL, dash="dash", width=1), row=2, col=1,
                  annotation_text="uniform 1/S", annotation_position="top right")
    fig.update_layout(**base_layout("One softmax, three kinds of scores", 600), barmode="group",
                      legend=dict(orientation="h", x=0.0, y=-0.08, yanchor="top"))
    fig.update_layout(margin=dict(b=110))
    fig.update_yaxes(range=[0, 1], row=2, col=1)
    return fig

