"""Chapter 2: what each score function computes, on a 2-D query and a handful of fixed keys.

- :func:`explorer_setup`, :func:`geometry_state`, :func:`geometry_grid`: a 2-D query that the
  reader rotates and stretches, five fixed keys, and for each score function of
  :mod:`helpers.attention` the scores and the softmax weights.
- :func:`sign_softmax_demo`: dot products against distances through the same softmax, and the
  same scores shifted by a constant (softmax does not change: orientation matters, sign does not).

Figures and the explorer: :mod:`helpers.figures.score_geometry`.

Shape legend::

    S   number of keys       A   hidden size of additive scoring

Explained in chapter 2 (``book/02-dot-product``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .. import seeding
from ..attention import masked_softmax
from ..scores import additive_scores, cosine_scores, dot_scores, general_scores, neg_euclidean_scores

__all__ = [
    "EXPLORER_ROWS", "GeometrySetup", "GeometryState", "GeometryGrid", "explorer_setup", "query_vector",
    "geometry_state", "geometry_grid", "SignSoftmaxDemo", "sign_softmax_demo",
]

EXPLORER_ROWS: dict[str, str] = {
    "dot": "dot q·k",
    "cosine": "cosine",
    "neg_euclidean": "−‖q−k‖²",
    "additive": "additive",
    "general": "general qᵀWk",
    "distance": "‖q−k‖²<br>(not negated)",
}
"""The explorer's rows, from score-function name to label. ``distance`` is the squared Euclidean
distance fed to softmax *without* the minus sign: oriented the wrong way (small = near), it
gives the most weight to the farthest key."""


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
    gen = seeding.generator(seed)
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

    Uses :func:`helpers.scores.dot_scores`, :func:`~helpers.scores.cosine_scores`,
    :func:`~helpers.scores.neg_euclidean_scores`, :func:`~helpers.scores.additive_scores`
    and :func:`~helpers.scores.general_scores`, and :func:`~helpers.attention.masked_softmax`
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



@dataclass(frozen=True)
class SignSoftmaxDemo:
    """Dot products and distances of one query against the explorer's keys, through softmax.

    Attributes:
        key_names: One label per key.
        dot: Dot-product scores, ``(S,)``.
        dot_weights: ``softmax(dot)``.
        log_mean_exp: ``log(mean(exp(dot)))``: a key gains weight (above ``uniform``) exactly
            when its score is above this, whatever the sign of the score.
        distance: Squared Euclidean distances, ``(S,)``; small means near.
        distance_weights: ``softmax(distance)``: the farthest key wins (wrong way round).
        neg_distance_weights: ``softmax(-distance)``: the nearest key wins.
        shift: A constant added to every score of the row.
        shifted_dot_weights: ``softmax(dot + shift)``, equal to ``dot_weights``.
        shifted_neg_distance_weights: ``softmax(-distance + shift)``, equal to ``neg_distance_weights``.
        uniform: ``1 / S``, the weight every key would get from equal scores.
    """

    key_names: tuple[str, ...]
    dot: np.ndarray
    dot_weights: np.ndarray
    log_mean_exp: float
    distance: np.ndarray
    distance_weights: np.ndarray
    neg_distance_weights: np.ndarray
    shift: float
    shifted_dot_weights: np.ndarray
    shifted_neg_distance_weights: np.ndarray
    uniform: float


def sign_softmax_demo(angle_deg: float = 30.0, norm: float = 1.5, setup: GeometrySetup | None = None, *,
                      shift: float = 100.0) -> SignSoftmaxDemo:
    """What softmax does with dot products and with distances: orientation matters, sign does not.

    Softmax is unchanged by adding one constant to every score of a row:
    ``w_j = exp(s_j) / sum_i exp(s_i)``, and ``exp(c)`` cancels. So neither a positive nor a
    negative score means anything on its own: a key gains weight (more than ``1/S``) exactly when
    its score is above the row's log-mean-exp, ``log(mean_i exp(s_i))``. What a score must get
    right is its *orientation*: larger for more relevant. A dot product is oriented that way;
    a squared distance is oriented the other way (small = near), so fed to softmax as it is it
    gives the most weight to the farthest key. Negated it works, and so does
    ``-distance + shift`` for any constant: the sign of the scores plays no part.

    Args:
        angle_deg: Direction of the query, degrees.
        norm: Length of the query.
        setup: Keys; :func:`explorer_setup` when ``None``.
        shift: The constant added to every score for the shifted weights.

    Returns:
        The scores and weights.
    """
    setup = explorer_setup() if setup is None else setup
    state = geometry_state(angle_deg, norm, setup)
    dot = state.scores["dot"]  # (S,)
    neg_distance = state.scores["neg_euclidean"]  # (S,)
    return SignSoftmaxDemo(
        key_names=setup.key_names,
        dot=dot.numpy(),
        dot_weights=state.weights["dot"].numpy(),
        log_mean_exp=float(torch.logsumexp(dot.double(), 0) - math.log(dot.numel())),
        distance=state.scores["distance"].numpy(),
        distance_weights=state.weights["distance"].numpy(),
        neg_distance_weights=state.weights["neg_euclidean"].numpy(),
        shift=shift,
        shifted_dot_weights=masked_softmax(dot + shift).numpy(),
        shifted_neg_distance_weights=masked_softmax(neg_distance + shift).numpy(),
        uniform=1.0 / len(setup.key_names),
    )
