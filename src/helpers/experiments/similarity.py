"""Chapter 2 experiments: why a dot product? Score functions compared on geometry, cost,
stability at initialisation and learning.

Every score function used here comes from :mod:`helpers.attention`; this module only arranges
experiments around them and draws what they show:

1. **Geometry** (:func:`explorer_setup`, :func:`geometry_state`, :func:`geometry_grid`,
   :func:`geometry_explorer_figure`, :func:`geometry_explorer`): a 2-D query that the
   reader rotates and stretches, a handful of fixed keys, and for each score function the scores
   and the softmax weights.
2. **Sign and softmax** (:func:`sign_softmax_demo`): positive and negative dot products against
   always-positive distances, through the same softmax.
3. **Cost** (:func:`score_flops`, :func:`time_score_functions`): floating-point operations
   written out, and measured CPU time of all queries against all keys at growing sizes, for one
   matrix product, Python loops, and the other score functions.
4. **Stability at initialisation** (:func:`stability_at_init`): the spread of cosine and dot
   scores, of their gradients, and of their response to a fixed small perturbation, when the
   vectors are small.
5. **Learning** (:class:`RecallAttention`, :func:`train_recall`, :func:`compare_score_functions`):
   the same one-layer attention model trained on seeded associative recall with each score
   function.

Shape legend::

    L   number of queries            S   number of keys
    E   query/key feature size       A   hidden size of additive scoring
    N   number of samples            P   key-value pairs per recall sequence

Explained in chapter 2 (``book/02-dot-product``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import plotly.graph_objects as go
import torch
from torch import Tensor, nn

from helpers.viz._style import WEIGHT_COLORSCALE, base_layout, frame_step, slider
from helpers.attention import (
    additive_scores,
    cosine_scores,
    dot_scores,
    general_scores,
    masked_softmax,
    neg_euclidean_scores,
    scaled_dot_scores,
)

__all__ = [
    "EXPLORER_ROWS",
    "GeometrySetup",
    "GeometryState",
    "GeometryGrid",
    "explorer_setup",
    "query_vector",
    "geometry_state",
    "geometry_grid",
    "geometry_figure",
    "geometry_explorer_figure",
    "geometry_explorer",
    "SCORE_COLORS",
    "SignSoftmaxDemo",
    "sign_softmax_demo",
    "sign_softmax_figure",
    "score_flops",
    "flops_table",
    "loop_dot_scores_python",
    "loop_dot_scores_pairs",
    "loop_dot_scores_rows",
    "CostTable",
    "time_score_functions",
    "cost_figure",
    "StabilityResult",
    "stability_at_init",
    "stability_figure",
    "LEARNING_SCORES",
    "EXTRA_SCORES",
    "SCORE_LABELS",
    "RecallAttention",
    "RecallRun",
    "train_recall",
    "compare_score_functions",
    "learning_summary",
    "learning_table",
    "learning_curves_figure",
    "learning_bars_figure",
]

# The figures use the book's look (helpers.viz: the "book" template, its slider style and the
# weight colour scale); this palette is the template's default colour sequence, named so that
# one score function keeps one colour in every figure of the chapter.
_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"]
SCORE_COLORS: dict[str, str] = {
    "dot": _COLORS[0], "cosine": _COLORS[1], "neg_euclidean": _COLORS[2], "general": _COLORS[3],
    "additive": _COLORS[4], "cosine_learned_scale": _COLORS[6], "distance": _COLORS[5],
}
"""One colour per score function, shared by the chapter's figures."""


def _round(values: object, digits: int = 3) -> list:
    """Plain Python floats rounded to ``digits`` (keeps the page's JSON small)."""
    return np.round(np.asarray(values, dtype=float), digits).tolist()


# ============================================================================================
# 1. Geometry: a 2-D explorer
# ============================================================================================

EXPLORER_ROWS: dict[str, str] = {
    "dot": "dot q·k",
    "cosine": "cosine",
    "neg_euclidean": "−‖q−k‖²",
    "additive": "additive",
    "general": "general qᵀWk",
    "distance": "‖q−k‖²<br>(not negated)",
}
"""The explorer's rows, from score-function name to label. ``distance`` is the squared Euclidean
distance fed to softmax *without* the minus sign, to show why the sign matters."""


@dataclass(frozen=True)
class GeometrySetup:
    """The fixed part of the 2-D explorer: keys and the parameters of the learned scores.

    Attributes:
        keys: The keys, ``(S, 2)``.
        key_names: One label per key.
        general_weight: ``W`` of the general score ``q^T W k``, ``(2, 2)``.
        w_q: Query projection of additive scoring, ``(A, 2)``.
        w_k: Key projection of additive scoring, ``(A, 2)``.
        v: Scoring vector of additive scoring, ``(A,)``.
    """

    keys: Tensor
    key_names: tuple[str, ...]
    general_weight: Tensor
    w_q: Tensor
    w_k: Tensor
    v: Tensor


def explorer_setup(*, hidden_dim: int = 8, seed: int = 0) -> GeometrySetup:
    """The keys and (seeded, untrained) parameters of the 2-D explorer.

    Five keys: three of unit length (at 30, 120 and 210 degrees), a short one (length 0.4, at
    60 degrees, near k1's direction) and a long one (length 2.5, at 300 degrees). The unit keys
    show that the dot product equals the cosine when both vectors have length 1; the short and
    long keys show that the dot product also counts length and the cosine does not.

    Args:
        hidden_dim: Hidden size A of the additive score.
        seed: Seed of the random parameters of the general and additive scores.

    Returns:
        The setup.
    """
    angles = torch.tensor([30.0, 120.0, 210.0, 60.0, 300.0])
    lengths = torch.tensor([1.0, 1.0, 1.0, 0.4, 2.5])
    radians = torch.deg2rad(angles)
    keys = torch.stack([lengths * torch.cos(radians), lengths * torch.sin(radians)], dim=1)  # (S, 2)
    gen = torch.Generator().manual_seed(seed)
    general_weight = torch.randn(2, 2, generator=gen) / math.sqrt(2)  # (2, 2)
    w_q = torch.randn(hidden_dim, 2, generator=gen)  # (A, 2)
    w_k = torch.randn(hidden_dim, 2, generator=gen)  # (A, 2)
    v = torch.randn(hidden_dim, generator=gen) / math.sqrt(hidden_dim)  # (A,)
    names = ("k1", "k2", "k3", "k4 (short)", "k5 (long)")
    return GeometrySetup(keys, names, general_weight, w_q, w_k, v)


def query_vector(angle_deg: float, norm: float) -> Tensor:
    """The 2-D query of length ``norm`` at ``angle_deg`` degrees from the x axis, shape ``(2,)``."""
    radians = math.radians(angle_deg)
    return torch.tensor([norm * math.cos(radians), norm * math.sin(radians)])


@dataclass(frozen=True)
class GeometryState:
    """Everything the explorer draws for one query.

    Attributes:
        query: The query, ``(2,)``.
        scores: Score-function name -> scores against each key, ``(S,)``; names as in
            :data:`EXPLORER_ROWS`.
        weights: Score-function name -> softmax weights, ``(S,)``.
        projection: The foot of the perpendicular from the query onto k1's line, ``(2,)``;
            ``q . k1 = |k1| * (signed length of the projection)``.
    """

    query: Tensor
    scores: dict[str, Tensor]
    weights: dict[str, Tensor]
    projection: Tensor


def geometry_state(angle_deg: float, norm: float, setup: GeometrySetup | None = None) -> GeometryState:
    """Scores and softmax weights of one 2-D query against the explorer's keys.

    Uses :func:`helpers.attention.dot_scores`, :func:`~helpers.attention.cosine_scores`,
    :func:`~helpers.attention.neg_euclidean_scores`, :func:`~helpers.attention.additive_scores`
    and :func:`~helpers.attention.general_scores`, and :func:`~helpers.attention.masked_softmax`
    for the weights.

    Args:
        angle_deg: Direction of the query, degrees from the x axis.
        norm: Length of the query.
        setup: Keys and parameters; :func:`explorer_setup` when ``None``.

    Returns:
        The state.
    """
    setup = explorer_setup() if setup is None else setup
    query = query_vector(angle_deg, norm)
    q = query[None, :]  # (1, 2): one query
    keys = setup.keys  # (S, 2)
    scores = {
        "dot": dot_scores(q, keys)[0],  # (S,)
        "cosine": cosine_scores(q, keys)[0],
        "neg_euclidean": neg_euclidean_scores(q, keys)[0],
        "additive": additive_scores(q, keys, setup.w_q, setup.w_k, setup.v)[0],
        "general": general_scores(q, keys, setup.general_weight)[0],
    }
    scores["distance"] = -scores["neg_euclidean"]
    weights = {name: masked_softmax(s) for name, s in scores.items()}
    k1 = keys[0]
    projection = (query @ k1) / (k1 @ k1) * k1  # (2,)
    return GeometryState(query, scores, weights, projection)


@dataclass(frozen=True)
class GeometryGrid:
    """Scores and weights precomputed over a grid of query angles and lengths.

    Attributes:
        angles: Query angles in degrees, ``(n_angles,)``.
        norms: Query lengths, ``(n_norms,)``.
        rows: Score-function names, in the order of the third axis.
        scores: ``(n_angles, n_norms, n_rows, S)``.
        weights: ``(n_angles, n_norms, n_rows, S)``.
    """

    angles: np.ndarray
    norms: np.ndarray
    rows: tuple[str, ...]
    scores: np.ndarray
    weights: np.ndarray


def geometry_grid(
    angles: tuple[float, ...] | list[float], norms: tuple[float, ...] | list[float], setup: GeometrySetup | None = None
) -> GeometryGrid:
    """:func:`geometry_state` at every (angle, norm) of a grid, stacked into arrays.

    Args:
        angles: Query angles in degrees.
        norms: Query lengths.
        setup: Keys and parameters; :func:`explorer_setup` when ``None``.

    Returns:
        The grid.
    """
    setup = explorer_setup() if setup is None else setup
    rows = tuple(EXPLORER_ROWS)
    scores = np.zeros((len(angles), len(norms), len(rows), len(setup.key_names)))
    weights = np.zeros_like(scores)
    for i, angle in enumerate(angles):
        for j, norm in enumerate(norms):
            state = geometry_state(angle, norm, setup)
            scores[i, j] = np.stack([state.scores[r].numpy() for r in rows])
            weights[i, j] = np.stack([state.weights[r].numpy() for r in rows])
    return GeometryGrid(np.asarray(angles, float), np.asarray(norms, float), rows, scores, weights)


def _state_traces(state: GeometryState, setup: GeometrySetup, visible: bool = True) -> list[go.BaseTraceType]:
    """The three traces that move with the query: its arrow, its projection on k1, the heatmap.

    The one drawing function behind both the static explorer (one copy per query length, moved
    by frames) and the live explorer.
    """
    qx, qy = _round(state.query.tolist())
    px, py = _round(state.projection.tolist())
    arrow = go.Scatter(
        x=[0, qx], y=[0, qy], mode="lines+markers+text", text=["", "q"], textposition="top left",
        textfont=dict(size=16), line=dict(color="#444444", width=4),
        marker=dict(size=[0, 13], symbol="arrow", angleref="previous", color="#444444"),
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
        z=_round(weights, 3), x=[n.split(" ")[0] for n in setup.key_names], y=[EXPLORER_ROWS[r] for r in rows],
        text=text, texttemplate="%{text}", zmin=0, zmax=1, colorscale=WEIGHT_COLORSCALE, showscale=False,
        xgap=2, ygap=2, hovertemplate="%{y}, key %{x}<br>score, weight: %{text}<extra></extra>", visible=visible,
        xaxis="x2", yaxis="y2", textfont=dict(size=12),
    )
    return [arrow, projection, heatmap]


def _static_traces(setup: GeometrySetup) -> list[go.BaseTraceType]:
    """Traces that do not move: the unit circle and the keys."""
    theta = np.linspace(0, 2 * np.pi, 73)
    circle = go.Scatter(
        x=_round(np.cos(theta)), y=_round(np.sin(theta)), mode="lines", line=dict(color="#9aa3ae", width=1, dash="dash"),
        hoverinfo="skip", showlegend=False, xaxis="x", yaxis="y",
    )
    traces: list[go.BaseTraceType] = [circle]
    for i, (name, key) in enumerate(zip(setup.key_names, setup.keys.tolist())):
        kx, ky = _round(key)
        colour = _COLORS[(i + 2) % len(_COLORS)]
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
        setup: Keys and parameters; :func:`explorer_setup` when ``None``.

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
        setup: Keys and parameters; :func:`explorer_setup` when ``None``.
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
        setup: Keys and parameters; :func:`explorer_setup` when ``None``.

    Returns:
        A :class:`helpers.viz.Explorer` with controls ``"angle"`` and ``"norm"``.
    """
    from helpers.viz import Explorer

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
# ============================================================================================


@dataclass(frozen=True)
class SignSoftmaxDemo:
    """Dot products and distances of one query against the explorer's keys, through softmax.

    Attributes:
        key_names: One label per key.
        dot: Dot-product scores, positive and negative, ``(S,)``.
        dot_weights: ``softmax(dot)``.
        distance: Squared Euclidean distances, all ``>= 0``, ``(S,)``.
        distance_weights: ``softmax(distance)``: the farthest key wins (wrong way round).
        neg_distance_weights: ``softmax(-distance)``: the nearest key wins.
        uniform: ``1 / S``, the weight every key would get from equal scores.
    """

    key_names: tuple[str, ...]
    dot: np.ndarray
    dot_weights: np.ndarray
    distance: np.ndarray
    distance_weights: np.ndarray
    neg_distance_weights: np.ndarray
    uniform: float


def sign_softmax_demo(angle_deg: float = 30.0, norm: float = 1.5, setup: GeometrySetup | None = None) -> SignSoftmaxDemo:
    """What softmax does with signed dot products and with always-positive distances.

    Softmax turns scores into weights through ``exp``: a positive score gets a factor above 1,
    a negative one a factor below 1, so keys pointing with the query are amplified and keys
    pointing against it suppressed. Squared distances are never negative and *small* means
    *near*, so fed to softmax as they are they give the most weight to the farthest key; negated,
    they work.

    Args:
        angle_deg: Direction of the query, degrees.
        norm: Length of the query.
        setup: Keys; :func:`explorer_setup` when ``None``.

    Returns:
        The scores and weights.
    """
    setup = explorer_setup() if setup is None else setup
    state = geometry_state(angle_deg, norm, setup)
    return SignSoftmaxDemo(
        key_names=setup.key_names,
        dot=state.scores["dot"].numpy(),
        dot_weights=state.weights["dot"].numpy(),
        distance=state.scores["distance"].numpy(),
        distance_weights=state.weights["distance"].numpy(),
        neg_distance_weights=state.weights["neg_euclidean"].numpy(),
        uniform=1.0 / len(setup.key_names),
    )


def sign_softmax_figure(demo: SignSoftmaxDemo) -> go.Figure:
    """Two panels: the scores (dot products, distances, negated distances) and their softmax weights.

    Args:
        demo: The output of :func:`sign_softmax_demo`.

    Returns:
        The Plotly figure; the dashed line is the uniform weight ``1/S``.
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
        fig.add_bar(x=names, y=_round(scores, 3), name=label, marker_color=colour, legendgroup=label, row=1, col=1,
                    hovertemplate=f"{label}<br>key %{{x}}: score %{{y:.2f}}<extra></extra>")
        fig.add_bar(x=names, y=_round(weights, 3), name=label, marker_color=colour, legendgroup=label,
                    showlegend=False, row=2, col=1, hovertemplate=f"{label}<br>key %{{x}}: weight %{{y:.2f}}<extra></extra>")
    fig.add_hline(y=demo.uniform, line=dict(color="#9aa3ae", dash="dash", width=1), row=2, col=1,
                  annotation_text="uniform 1/S", annotation_position="top right")
    fig.update_layout(**base_layout("One softmax, three kinds of scores", 600), barmode="group",
                      legend=dict(orientation="h", x=0.0, y=-0.08, yanchor="top"))
    fig.update_layout(margin=dict(b=110))
    fig.update_yaxes(range=[0, 1], row=2, col=1)
    return fig


# ============================================================================================
# 3. Cost: FLOPs written out, and measured time
# ============================================================================================


def score_flops(name: str, L: int, S: int, E: int, A: int | None = None) -> dict[str, object]:
    """Floating-point operations of one score function, all ``L`` queries against all ``S`` keys.

    A multiply and an add count as two operations; ``tanh``, ``sqrt`` and a division as one
    each (a ``tanh`` really costs several). The count is written out term by term in
    ``formula``, with the memory of the largest intermediate tensor in floats.

    Args:
        name: ``"dot"``, ``"scaled_dot"``, ``"cosine"``, ``"neg_euclidean"``, ``"general"`` or
            ``"additive"``.
        L: Number of queries.
        S: Number of keys.
        E: Query/key feature size.
        A: Hidden size of additive scoring (default ``E``).

    Returns:
        ``{"name", "formula", "flops", "largest_tensor", "largest_tensor_formula"}``.
    """
    A = E if A is None else A
    table: dict[str, tuple[str, int, str, int]] = {
        "dot": ("2·L·S·E  (Q Kᵀ)", 2 * L * S * E, "L·S", L * S),
        "scaled_dot": ("2·L·S·E + L·S  (Q Kᵀ, then × 1/√E)", 2 * L * S * E + L * S, "L·S", L * S),
        "cosine": (
            "2·L·S·E + 3·(L+S)·E + (L+S)  (Q̂ K̂ᵀ; norms: square, sum, √; divide)",
            2 * L * S * E + 3 * (L + S) * E + (L + S), "L·S", L * S,
        ),
        "neg_euclidean": (
            "2·L·S·E + 2·(L+S)·E + 3·L·S  (‖q‖² − 2 q·k + ‖k‖², negated)",
            2 * L * S * E + 2 * (L + S) * E + 3 * L * S, "L·S", L * S,
        ),
        "general": ("2·L·E² + 2·L·S·E  ((Q W) Kᵀ)", 2 * L * E * E + 2 * L * S * E, "L·S", L * S),
        "additive": (
            "2·(L+S)·E·A + L·S·A + L·S·A + 2·L·S·A  (W_q q, W_k k; add; tanh; · v)",
            2 * (L + S) * E * A + 4 * L * S * A, "L·S·A", L * S * A,
        ),
    }
    if name not in table:
        raise ValueError(f"name must be one of {sorted(table)}, got {name!r}")
    formula, flops, mem_formula, mem = table[name]
    return {"name": name, "formula": formula, "flops": flops, "largest_tensor": mem,
            "largest_tensor_formula": mem_formula}


def flops_table(L: int, S: int, E: int, A: int | None = None) -> list[dict[str, object]]:
    """:func:`score_flops` for every score function, plus the ratio to the dot product.

    Args:
        L: Number of queries.
        S: Number of keys.
        E: Feature size.
        A: Hidden size of additive scoring (default ``E``).

    Returns:
        One dict per score function, with an extra key ``"vs_dot"``.
    """
    names = ("dot", "scaled_dot", "cosine", "neg_euclidean", "general", "additive")
    rows = [score_flops(n, L, S, E, A) for n in names]
    base = rows[0]["flops"]
    for row in rows:
        row["vs_dot"] = row["flops"] / base
    return rows


def loop_dot_scores_python(query: Tensor, key: Tensor) -> Tensor:
    """Dot-product scores with three nested Python loops over plain floats (the slowest way).

    The same arithmetic as :func:`helpers.attention.dot_scores`: ``2 L S E`` operations, each
    one a Python bytecode round trip.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    q_rows, k_rows = query.tolist(), key.tolist()
    scores = [[sum(a * b for a, b in zip(q, k)) for k in k_rows] for q in q_rows]
    return torch.tensor(scores, dtype=query.dtype)


def loop_dot_scores_pairs(query: Tensor, key: Tensor) -> Tensor:
    """Dot-product scores with a Python loop over (query, key) pairs, one ``torch.dot`` each.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    L, S = query.size(0), key.size(0)
    scores = torch.empty(L, S, dtype=query.dtype)
    for i in range(L):
        for j in range(S):
            scores[i, j] = torch.dot(query[i], key[j])
    return scores


def loop_dot_scores_rows(query: Tensor, key: Tensor) -> Tensor:
    """Dot-product scores with a Python loop over queries, one matrix-vector product each.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    return torch.stack([key @ q for q in query])  # L x ((S, E) x (E,) -> (S,)) -> (L, S)


@dataclass
class CostTable:
    """Measured time of computing all ``L x S`` scores, ``L = S = n``.

    Attributes:
        sizes: The sizes ``n``.
        dim: Feature size E.
        hidden_dim: Hidden size A of additive scoring.
        seconds: Method label -> seconds per call at each size (``nan`` where not measured).
        threads: Number of PyTorch threads used while timing.
    """

    sizes: list[int]
    dim: int
    hidden_dim: int
    seconds: dict[str, list[float]]
    threads: int

    def ratio(self, method: str, to: str = "dot (one matmul)") -> list[float]:
        """Time of ``method`` divided by time of ``to``, at each size."""
        return [a / b for a, b in zip(self.seconds[method], self.seconds[to])]

    def to_markdown(self, unit: str = "ms") -> str:
        """The table as Markdown: one row per method, one column per size, times in ``unit``."""
        scale = {"s": 1.0, "ms": 1e3, "µs": 1e6}[unit]
        head = "| method | " + " | ".join(f"n = {n}" for n in self.sizes) + " |"
        sep = "|---|" + "---:|" * len(self.sizes)
        lines = [head, sep]
        for method, times in self.seconds.items():
            cells = ["—" if math.isnan(t) else _format_time(t * scale) for t in times]
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _format_time(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.1f}"
    return f"{value:.3f}"


def _best_time(fn: Callable[[], object], repeats: int, budget_s: float) -> float:
    """Fastest of ``repeats`` timed calls (after one warm-up), each call repeated until it lasts
    ~2 ms so that the timer's resolution does not matter; stops early past ``budget_s``."""
    start = time.perf_counter()
    fn()  # warm-up
    once = time.perf_counter() - start
    number = max(1, int(2e-3 / max(once, 1e-7)))
    best = math.inf
    spent = once
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - t0
        best = min(best, elapsed / number)
        spent += elapsed
        if spent > budget_s:
            break
    return best


def time_score_functions(
    sizes: tuple[int, ...] = (16, 32, 64, 128, 256, 512),
    *,
    dim: int = 64,
    hidden_dim: int = 64,
    python_max: int = 64,
    pairs_max: int = 128,
    repeats: int = 5,
    threads: int = 1,
    budget_s: float = 0.5,
    seed: int = 0,
) -> CostTable:
    """Measure the time of all-queries-against-all-keys scores at growing ``L = S = n``.

    Methods: dot products as one matrix product (:func:`helpers.attention.dot_scores`), with a
    Python loop over queries, over pairs and over plain floats (:func:`loop_dot_scores_rows`,
    :func:`loop_dot_scores_pairs`, :func:`loop_dot_scores_python`), and the other score functions
    of :mod:`helpers.attention` (cosine, negative squared Euclidean, general, additive). Each time
    is the fastest of ``repeats`` runs (the least disturbed by other processes), on ``threads``
    PyTorch threads; the slow loops are only run up to ``python_max`` / ``pairs_max``.

    Args:
        sizes: The values of ``n``.
        dim: Feature size E.
        hidden_dim: Hidden size A of additive scoring.
        python_max: Largest ``n`` for the pure-Python loop.
        pairs_max: Largest ``n`` for the loop over pairs.
        repeats: Timed runs per method and size.
        threads: PyTorch intra-op threads while timing (restored afterwards).
        budget_s: Stop repeating one measurement after this many seconds.
        seed: Seed of the random inputs.

    Returns:
        The measured :class:`CostTable`.
    """
    gen = torch.Generator().manual_seed(seed)
    weight = torch.randn(dim, dim, generator=gen) / math.sqrt(dim)  # (E, E)
    w_q = torch.randn(hidden_dim, dim, generator=gen) / math.sqrt(dim)  # (A, E)
    w_k = torch.randn(hidden_dim, dim, generator=gen) / math.sqrt(dim)  # (A, E)
    v = torch.randn(hidden_dim, generator=gen) / math.sqrt(hidden_dim)  # (A,)
    methods: dict[str, tuple[Callable[[Tensor, Tensor], Tensor], int]] = {
        "dot (one matmul)": (dot_scores, max(sizes)),
        "dot (loop over queries)": (loop_dot_scores_rows, max(sizes)),
        "dot (loop over pairs)": (loop_dot_scores_pairs, pairs_max),
        "dot (pure Python loops)": (loop_dot_scores_python, python_max),
        "scaled dot": (scaled_dot_scores, max(sizes)),
        "cosine": (cosine_scores, max(sizes)),
        "neg. squared Euclidean": (neg_euclidean_scores, max(sizes)),
        "general": (lambda q, k: general_scores(q, k, weight), max(sizes)),
        "additive": (lambda q, k: additive_scores(q, k, w_q, w_k, v), max(sizes)),
    }
    seconds: dict[str, list[float]] = {m: [] for m in methods}
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with torch.inference_mode():
            for n in sizes:
                query = torch.randn(n, dim, generator=gen)  # (L, E)
                key = torch.randn(n, dim, generator=gen)  # (S, E)
                for method, (fn, limit) in methods.items():
                    if n > limit:
                        seconds[method].append(float("nan"))
                        continue
                    seconds[method].append(_best_time(lambda: fn(query, key), repeats, budget_s))
    finally:
        torch.set_num_threads(old_threads)
    return CostTable(list(sizes), dim, hidden_dim, seconds, threads)


def cost_figure(table: CostTable) -> go.Figure:
    """Log-log plot of measured time against ``n`` (``L = S = n``), one line per method.

    Drawn here rather than with :func:`helpers.viz.line_plot` because the loops are measured at
    the small sizes only (a curve may stop early).

    Args:
        table: The output of :func:`time_score_functions`.

    Returns:
        The Plotly figure.
    """
    fig = go.Figure()
    styles = {
        "dot (one matmul)": (SCORE_COLORS["dot"], "solid", 4),
        "dot (loop over queries)": (SCORE_COLORS["dot"], "dot", 2),
        "dot (loop over pairs)": (SCORE_COLORS["dot"], "dash", 2),
        "dot (pure Python loops)": ("#7f7f7f", "longdash", 2),  # grey: not even PyTorch
        "scaled dot": ("#17becf", "solid", 2),
        "cosine": (SCORE_COLORS["cosine"], "solid", 2),
        "neg. squared Euclidean": (SCORE_COLORS["neg_euclidean"], "solid", 2),
        "general": (SCORE_COLORS["general"], "solid", 2),
        "additive": (SCORE_COLORS["additive"], "solid", 3),
    }
    for method, times in table.seconds.items():
        xs = [n for n, t in zip(table.sizes, times) if not math.isnan(t)]
        ys = [float(f"{t * 1e3:.4g}") for t in times if not math.isnan(t)]
        colour, dash, width = styles.get(method, ("#7f7f7f", "solid", 2))
        fig.add_scatter(x=xs, y=ys, name=method, mode="lines+markers", line=dict(color=colour, dash=dash, width=width),
                        marker=dict(size=6), hovertemplate=f"{method}<br>n = %{{x}}: %{{y:.4g}} ms<extra></extra>")
    threads = f"{table.threads} thread{'s' if table.threads > 1 else ''}"
    fig.update_layout(
        **base_layout("Time for all n × n scores", 560),
        xaxis=dict(type="log", title=dict(text=f"n queries and n keys (E = {table.dim}, A = {table.hidden_dim}, "
                                                f"{threads})"), tickvals=table.sizes),
        yaxis=dict(type="log", title=dict(text="ms per call (log)"), exponentformat="power", dtick=1),
        legend=dict(orientation="h", x=0.0, y=-0.18, yanchor="top"),
    )
    fig.update_layout(margin=dict(b=150))
    return fig


# ============================================================================================
# 4. Stability at initialisation
# ============================================================================================


@dataclass
class StabilityResult:
    """Scores and gradients of random vectors of a given length, per score function.

    All statistics are over ``num_pairs`` independent random (q, k) pairs whose entries are
    drawn with standard deviation ``norm / sqrt(E)`` (so ``|q|`` and ``|k|`` are close to
    ``norm``).

    Attributes:
        norms: The vector lengths.
        dim: Feature size E.
        noise: Size of the fixed perturbation used for ``sensitivity``.
        score_std: Name -> standard deviation of the scores at each norm.
        grad_norm: Name -> mean of ``|d score / d q|`` at each norm.
        sensitivity: Name -> mean ``|score(q + delta, k) - score(q, k)|`` for a random ``delta`` of
            length ``noise``, at each norm.
    """

    norms: list[float]
    dim: int
    noise: float
    score_std: dict[str, list[float]]
    grad_norm: dict[str, list[float]]
    sensitivity: dict[str, list[float]]


def stability_at_init(
    norms: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0),
    *,
    dim: int = 16,
    num_pairs: int = 2000,
    noise: float = 1e-3,
    seed: int = 0,
) -> StabilityResult:
    """How dot-product and cosine scores behave when the vectors are small, as at initialisation.

    For each length ``r``: draw pairs ``(q, k)`` with ``|q|, |k| ~ r``; measure the spread of the
    scores, the size of the gradient ``d score / d q`` (by autograd through
    :func:`helpers.attention.dot_scores` and :func:`helpers.attention.cosine_scores`), and how
    far a score moves when ``q`` is nudged by a random vector of fixed length ``noise``.
    Theory: ``d(q.k)/dq = k`` has length ``|k| ~ r``; ``d cos/dq = (k_hat - cos q_hat) / |q|`` has
    length ``sin(angle) / |q| ~ 1/r``. The cosine normalises by the small norm and so divides
    the noise by it.

    Args:
        norms: The vector lengths ``r``.
        dim: Feature size E.
        num_pairs: Number of random pairs per length.
        noise: Length of the perturbation of ``q`` for the sensitivity measurement.
        seed: Seed.

    Returns:
        The measured :class:`StabilityResult`.
    """
    gen = torch.Generator().manual_seed(seed)
    functions = {"dot": dot_scores, "cosine": cosine_scores}
    score_std: dict[str, list[float]] = {n: [] for n in functions}
    grad_norm: dict[str, list[float]] = {n: [] for n in functions}
    sensitivity: dict[str, list[float]] = {n: [] for n in functions}
    for r in norms:
        q = torch.randn(num_pairs, 1, dim, generator=gen, dtype=torch.float64) * (r / math.sqrt(dim))  # (N, 1, E)
        k = torch.randn(num_pairs, 1, dim, generator=gen, dtype=torch.float64) * (r / math.sqrt(dim))  # (N, 1, E)
        delta = torch.randn(num_pairs, 1, dim, generator=gen, dtype=torch.float64)
        delta = delta / delta.norm(dim=-1, keepdim=True) * noise  # (N, 1, E), each of length `noise`
        for name, fn in functions.items():
            q_leaf = q.clone().requires_grad_(True)
            scores = fn(q_leaf, k)  # (N, 1, 1): one score per pair
            (grad,) = torch.autograd.grad(scores.sum(), q_leaf)  # (N, 1, E): d score_n / d q_n
            with torch.no_grad():
                moved = fn(q + delta, k)  # (N, 1, 1)
            score_std[name].append(float(scores.detach().std()))
            grad_norm[name].append(float(grad.norm(dim=-1).mean()))
            sensitivity[name].append(float((moved - scores.detach()).abs().mean()))
    return StabilityResult(list(norms), dim, noise, score_std, grad_norm, sensitivity)


def stability_figure(result: StabilityResult) -> go.Figure:
    """Three stacked log-log panels against the vector length: score spread, gradient size and
    the score's response to a fixed small nudge of ``q``, for dot product and cosine.

    Args:
        result: The output of :func:`stability_at_init`.

    Returns:
        The Plotly figure.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.08, subplot_titles=(
        "spread of the scores (standard deviation)", "size of the gradient |∂score/∂q|",
        f"change of the score when q moves by |δ| = {result.noise:g}"))
    for row, stats in enumerate((result.score_std, result.grad_norm, result.sensitivity), start=1):
        for name, values in stats.items():
            fig.add_scatter(x=result.norms, y=[float(f"{v:.4g}") for v in values], name=name, mode="lines+markers",
                            line=dict(color=SCORE_COLORS[name], width=3), legendgroup=name, showlegend=(row == 1),
                            row=row, col=1, hovertemplate=f"{name}<br>|q| ≈ %{{x}}: %{{y:.3g}}<extra></extra>")
    fig.update_xaxes(type="log", exponentformat="power", dtick=1)
    fig.update_xaxes(title_text="length of the vectors |q| ≈ |k| (log)", row=3, col=1)
    fig.update_yaxes(type="log", exponentformat="power", dtick=2)
    fig.update_layout(**base_layout(f"Small random vectors, E = {result.dim}", 720),
                      legend=dict(orientation="h", x=0.0, y=1.04, yanchor="bottom"))
    fig.update_layout(margin=dict(t=100))
    return fig


# ============================================================================================
# 5. Learning: the same attention model with each score function
# ============================================================================================

LEARNING_SCORES: tuple[str, ...] = ("dot", "cosine", "neg_euclidean", "general", "additive")
"""Score functions compared in :func:`compare_score_functions`."""

EXTRA_SCORES: tuple[str, ...] = ("cosine_learned_scale",)
"""Further choices of :class:`RecallAttention`: the cosine times a learned scale ``exp(s)``."""


class RecallAttention(nn.Module):
    """One attention layer that answers associative recall, with a choice of score function.

    The input is ``k_1 v_1 ... k_P v_P q`` (:func:`helpers.tasks.associative_recall_task`).
    Memory slot ``t`` (every position but the last) is looked up by its own token and returns
    the token after it: the pairing "key, then its value" is given, as a previous-token layer
    would give it, so the one thing left to learn is the lookup itself: which slot matches the
    query? Only the score function changes between the models compared in chapter 2:

    - ``"dot"``: :func:`~helpers.attention.scaled_dot_scores` (``q.k / sqrt(E)``)
    - ``"cosine"``: :func:`~helpers.attention.cosine_scores`
    - ``"neg_euclidean"``: :func:`~helpers.attention.neg_euclidean_scores`
    - ``"general"``: :func:`~helpers.attention.general_scores` with a learned ``W``
    - ``"additive"``: :func:`~helpers.attention.additive_scores` with learned ``W_q, W_k, v``
    - ``"cosine_learned_scale"``: the cosine times a learned ``exp(s)`` (``s`` starts at 0), the
      temperature that bounded cosine scores need to become sharp

    Args:
        vocab_size: Number of token ids.
        score: One of :data:`LEARNING_SCORES`.
        dim: Embedding and query/key/value size E.
        hidden_dim: Hidden size A of additive scoring.

    Shape:
        tokens ``(B, T)`` -> logits ``(B, vocab_size)``, weights ``(B, 1, T - 1)``.
    """

    def __init__(self, vocab_size: int, score: str = "dot", *, dim: int = 32, hidden_dim: int = 32) -> None:
        super().__init__()
        if score not in LEARNING_SCORES + EXTRA_SCORES:
            raise ValueError(f"score must be one of {LEARNING_SCORES + EXTRA_SCORES}, got {score!r}")
        self.score = score
        self.embed = nn.Embedding(vocab_size, dim)
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, vocab_size)
        if score == "general":
            self.general_weight = nn.Parameter(torch.eye(dim) + torch.randn(dim, dim) / dim)  # W, (E, E)
        if score == "cosine_learned_scale":
            self.log_scale = nn.Parameter(torch.zeros(()))  # s, the scale is exp(s)
        if score == "additive":
            self.additive_w_q = nn.Parameter(torch.randn(hidden_dim, dim) / math.sqrt(dim))  # (A, E)
            self.additive_w_k = nn.Parameter(torch.randn(hidden_dim, dim) / math.sqrt(dim))  # (A, E)
            self.additive_v = nn.Parameter(torch.randn(hidden_dim) / math.sqrt(hidden_dim))  # (A,)

    def scores(self, query: Tensor, key: Tensor) -> Tensor:
        """The chosen score function, ``(B, L, E), (B, S, E) -> (B, L, S)``."""
        if self.score == "dot":
            return scaled_dot_scores(query, key)
        if self.score == "cosine":
            return cosine_scores(query, key)
        if self.score == "cosine_learned_scale":
            return cosine_scores(query, key) * self.log_scale.exp()
        if self.score == "neg_euclidean":
            return neg_euclidean_scores(query, key)
        if self.score == "general":
            return general_scores(query, key, self.general_weight)
        return additive_scores(query, key, self.additive_w_q, self.additive_w_k, self.additive_v)

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(logits, weights)`` for the value paired with the last token."""
        x = self.embed(tokens)  # (B, T, E)
        query = self.q_proj(x[:, -1:])  # (B, 1, E): the query key
        key = self.k_proj(x[:, :-1])  # (B, S, E), S = T - 1: slot t is found by token t ...
        value = self.v_proj(x[:, 1:])  # (B, S, E): ... and returns token t + 1
        weights = masked_softmax(self.scores(query, key))  # (B, 1, S)
        out = weights @ value  # (B, 1, S) x (B, S, E) -> (B, 1, E)
        return self.o_proj(out[:, 0]), weights  # (B, V), (B, 1, S)


@dataclass
class RecallRun:
    """One training run of :class:`RecallAttention` on associative recall.

    Attributes:
        score: The score function.
        seed: Seed of the initialisation and the training batches.
        eval_steps: Steps (0-based) at which the held-out accuracy was measured.
        test_accuracy: Held-out accuracy at those steps.
        loss: Training loss at every step.
        wall_time: Seconds of training (evaluation excluded).
        step_time: Seconds of the fastest training step (forward, backward, update): the cost
            of a step with the least disturbance from other processes.
        num_parameters: Trainable parameters of the model.
    """

    score: str
    seed: int
    eval_steps: list[int]
    test_accuracy: list[float]
    loss: list[float]
    wall_time: float
    step_time: float
    num_parameters: int

    @property
    def final_accuracy(self) -> float:
        """Held-out accuracy after the last step."""
        return self.test_accuracy[-1]

    def steps_to(self, accuracy: float) -> int | None:
        """Number of steps after which the held-out accuracy first reached ``accuracy`` (or ``None``)."""
        for step, acc in zip(self.eval_steps, self.test_accuracy):
            if acc >= accuracy:
                return step + 1
        return None


def train_recall(
    score: str = "dot",
    *,
    num_pairs: int = 12,
    num_keys: int = 32,
    num_values: int = 32,
    dim: int = 16,
    hidden_dim: int = 16,
    steps: int = 300,
    batch_size: int = 64,
    lr: float = 3e-3,
    eval_every: int = 20,
    num_test: int = 1000,
    seed: int = 0,
) -> RecallRun:
    """Train one :class:`RecallAttention` on seeded associative recall and measure it.

    Batches come from :func:`helpers.tasks.associative_recall_task` (a fresh seeded batch per
    step), training from :func:`helpers.train.train` (AdamW), and the accuracy is measured on
    ``num_test`` held-out sequences whose seed no training batch uses. PyTorch runs on one
    thread meanwhile (restored afterwards): for tensors this small more threads only add
    synchronisation, and on a shared machine they can make a run many times slower.

    Args:
        score: The score function (:data:`LEARNING_SCORES` or :data:`EXTRA_SCORES`).
        num_pairs: Key-value pairs P per sequence (the model chooses among ``2 P`` slots).
        num_keys: Distinct key tokens.
        num_values: Distinct value tokens.
        dim: Model size E.
        hidden_dim: Hidden size A of additive scoring.
        steps: Optimisation steps.
        batch_size: Sequences per step.
        lr: Learning rate.
        eval_every: Held-out accuracy every this many steps (and after the last).
        num_test: Held-out sequences.
        seed: Seed of the initialisation and of the training batches.

    Returns:
        The :class:`RecallRun`.
    """
    from helpers.tasks import associative_recall_task
    from helpers.train import set_seed, token_accuracy, train

    test_tokens, test_target = associative_recall_task(num_test, num_pairs, num_keys, num_values, seed=2**31 - 1)

    def make_batch(step: int) -> tuple[Tensor, Tensor]:
        return associative_recall_task(batch_size, num_pairs, num_keys, num_values, seed=seed * 1_000_003 + step)

    def evaluate(model: nn.Module) -> dict[str, float]:
        return {"accuracy": token_accuracy(model(test_tokens)[0], test_target)}

    set_seed(seed)
    model = RecallAttention(num_keys + num_values, score, dim=dim, hidden_dim=hidden_dim)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        history = train(model, make_batch, steps=steps, lr=lr, eval_fn=evaluate, eval_every=eval_every, seed=seed)
    finally:
        torch.set_num_threads(old_threads)
    step_times = np.diff([0.0, *history.wall_time])
    return RecallRun(
        score=score,
        seed=seed,
        eval_steps=list(history.eval_step),
        test_accuracy=history.eval_series("accuracy"),
        loss=list(history.loss),
        wall_time=history.wall_time[-1],
        step_time=float(step_times.min()),
        num_parameters=sum(p.numel() for p in model.parameters() if p.requires_grad),
    )


def compare_score_functions(
    scores: tuple[str, ...] = LEARNING_SCORES, seeds: tuple[int, ...] = (0, 1, 2), **kwargs: object
) -> dict[str, list[RecallRun]]:
    """:func:`train_recall` for every score function and seed, all else equal.

    Args:
        scores: Score functions to compare.
        seeds: Seeds; every score function is trained once per seed.
        **kwargs: Passed to :func:`train_recall` (task size, steps, learning rate...).

    Returns:
        Score function -> its runs, one per seed.
    """
    return {score: [train_recall(score, seed=seed, **kwargs) for seed in seeds] for score in scores}


def learning_summary(runs: dict[str, list[RecallRun]], threshold: float = 0.9) -> list[dict[str, object]]:
    """One row per score function: accuracy (mean, min, max over seeds), steps to ``threshold``,
    wall time and parameter count.

    Args:
        runs: The output of :func:`compare_score_functions`.
        threshold: Accuracy for the "steps to" column.

    Returns:
        Rows of a table, in the order of ``runs``.
    """
    rows = []
    for score, group in runs.items():
        accs = [r.final_accuracy for r in group]
        reached = [r.steps_to(threshold) for r in group]
        rows.append({
            "score": score,
            "accuracy": float(np.mean(accs)),
            "accuracy_min": float(np.min(accs)),
            "accuracy_max": float(np.max(accs)),
            "steps_to_threshold": None if any(s is None for s in reached) else float(np.mean(reached)),
            "seeds_reaching_threshold": sum(s is not None for s in reached),
            "wall_time": float(np.mean([r.wall_time for r in group])),
            "step_time": float(np.min([r.step_time for r in group])),
            "num_parameters": group[0].num_parameters,
        })
    return rows


SCORE_LABELS: dict[str, str] = {
    "dot": "dot (scaled)", "cosine": "cosine", "neg_euclidean": "−‖q−k‖²", "general": "general qᵀWk",
    "additive": "additive", "cosine_learned_scale": "cosine × learned scale",
}
"""Display names of the score functions of the learning experiment."""


def _smooth(values: list[float], window: int) -> np.ndarray:
    """Trailing moving average (the first points average what is there so far)."""
    x = np.asarray(values, dtype=float)
    cumulative = np.cumsum(np.insert(x, 0, 0.0))
    idx = np.arange(1, len(x) + 1)
    lo = np.maximum(0, idx - window)
    return (cumulative[idx] - cumulative[lo]) / (idx - lo)


def learning_curves_figure(runs: dict[str, list[RecallRun]], *, smooth: int = 10, every: int = 5) -> go.Figure:
    """Held-out accuracy and training loss against the step, with a dropdown over score functions.

    "all" shows the mean over seeds of every score function; picking one shows its mean (thick)
    and each seed (thin).

    Args:
        runs: The output of :func:`compare_score_functions`.
        smooth: Window of the moving average of the training loss, in steps.
        every: Plot the loss every this many steps (keeps the page small).

    Returns:
        The Plotly figure.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=("accuracy on held-out sequences", f"training loss ({smooth}-step average)"))
    groups: list[tuple[str, bool]] = []  # (score, is_mean) for every trace, in order
    for score, group in runs.items():
        colour = SCORE_COLORS.get(score, "#7f7f7f")
        label = SCORE_LABELS.get(score, score)
        steps = [s + 1 for s in group[0].eval_steps]
        accuracy = np.mean([r.test_accuracy for r in group], axis=0)
        losses = np.stack([_smooth(r.loss, smooth) for r in group])  # (seeds, steps)
        loss_steps = np.arange(1, losses.shape[1] + 1)[every - 1::every]
        fig.add_scatter(x=steps, y=_round(accuracy, 3), name=label, legendgroup=score, mode="lines",
                        line=dict(color=colour, width=3), row=1, col=1,
                        hovertemplate=f"{label}<br>step %{{x}}: accuracy %{{y:.3f}}<extra></extra>")
        fig.add_scatter(x=loss_steps.tolist(), y=_round(losses.mean(0)[every - 1::every], 3), name=label,
                        legendgroup=score, showlegend=False, mode="lines", line=dict(color=colour, width=3), row=2,
                        col=1, hovertemplate=f"{label}<br>step %{{x}}: loss %{{y:.3f}}<extra></extra>")
        groups += [(score, True), (score, True)]
        for run, loss in zip(group, losses):
            fig.add_scatter(x=steps, y=_round(run.test_accuracy, 3), name=f"seed {run.seed}", legendgroup=score,
                            showlegend=False, mode="lines", line=dict(color=colour, width=1, dash="dot"),
                            visible=False, row=1, col=1,
                            hovertemplate=f"{label}, seed {run.seed}<br>step %{{x}}: %{{y:.3f}}<extra></extra>")
            fig.add_scatter(x=loss_steps.tolist(), y=_round(loss[every - 1::every], 3), name=f"seed {run.seed}",
                            legendgroup=score, showlegend=False, mode="lines",
                            line=dict(color=colour, width=1, dash="dot"), visible=False, row=2, col=1,
                            hovertemplate=f"{label}, seed {run.seed}<br>step %{{x}}: %{{y:.3f}}<extra></extra>")
            groups += [(score, False), (score, False)]
    n_seeds = len(next(iter(runs.values())))
    buttons = [dict(method="restyle", label=f"all (mean of {n_seeds} seed{'s' if n_seeds != 1 else ''})",
                    args=[{"visible": [is_mean for _, is_mean in groups]}])]
    for score in runs:
        buttons.append(dict(method="restyle", label=f"{SCORE_LABELS.get(score, score)}: each seed",
                            args=[{"visible": [s == score for s, _ in groups]}]))
    fig.update_layout(**base_layout("Associative recall: learning curves", 640),
                      legend=dict(orientation="h", x=0.0, y=-0.1, yanchor="top"),
                      updatemenus=[dict(type="dropdown", buttons=buttons, x=0.0, xanchor="left", y=1.0,
                                        yanchor="bottom", pad=dict(b=28), showactive=True)])
    fig.update_layout(margin=dict(t=120, b=110))
    fig.update_yaxes(range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(type="log", row=2, col=1, exponentformat="power", dtick=1)
    fig.update_xaxes(title_text="training step", row=2, col=1)
    return fig


def learning_bars_figure(summary: list[dict[str, object]]) -> go.Figure:
    """Final held-out accuracy (mean over seeds, bars from the worst to the best seed) and the
    fastest training step, per score function.

    Args:
        summary: The output of :func:`learning_summary`.

    Returns:
        The Plotly figure.
    """
    from plotly.subplots import make_subplots

    labels = [SCORE_LABELS.get(str(r["score"]), str(r["score"])) for r in summary]
    colours = [SCORE_COLORS.get(str(r["score"]), "#7f7f7f") for r in summary]
    acc = np.array([r["accuracy"] for r in summary], dtype=float)
    low = acc - np.array([r["accuracy_min"] for r in summary], dtype=float)
    high = np.array([r["accuracy_max"] for r in summary], dtype=float) - acc
    step_ms = [float(r["step_time"]) * 1e3 for r in summary]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, subplot_titles=(
        "held-out accuracy (whiskers: worst and best seed)",
        "fastest training step (ms)"))
    fig.add_bar(x=labels, y=_round(acc, 3), marker_color=colours, showlegend=False, row=1, col=1,
                error_y=dict(type="data", symmetric=False, array=_round(high, 3), arrayminus=_round(low, 3)),
                hovertemplate="%{x}: accuracy %{y:.3f}<extra></extra>")
    fig.add_bar(x=labels, y=_round(step_ms, 3), marker_color=colours, showlegend=False, row=2, col=1,
                hovertemplate="%{x}: %{y:.3f} ms per step<extra></extra>")
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    fig.update_layout(**base_layout("Accuracy reached, and cost of a step", 560))
    return fig


def learning_table(summary: list[dict[str, object]], threshold: float = 0.9) -> str:
    """:func:`learning_summary` as a Markdown table.

    Args:
        summary: The output of :func:`learning_summary`.
        threshold: The accuracy of the "steps to" column (as used for ``summary``).

    Returns:
        Markdown text.
    """
    lines = [
        f"| score function | held-out accuracy: mean (worst–best seed) | steps to {threshold:.0%} | "
        "training time (s) | fastest step (ms) | parameters |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in summary:
        steps = "not reached" if r["steps_to_threshold"] is None else f"{r['steps_to_threshold']:.0f}"
        if r["steps_to_threshold"] is None and r["seeds_reaching_threshold"]:
            steps = f"{r['seeds_reaching_threshold']} seed(s) only"
        lines.append(
            f"| {SCORE_LABELS.get(str(r['score']), r['score'])} | {r['accuracy']:.1%} "
            f"({r['accuracy_min']:.1%}–{r['accuracy_max']:.1%}) | {steps} | {r['wall_time']:.2f} | "
            f"{float(r['step_time']) * 1e3:.2f} | {r['num_parameters']:,} |"
        )
    return "\n".join(lines)
