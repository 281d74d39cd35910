"""Tests of helpers.experiments.score_geometry and its figures (chapter 2): the 2-D explorer and the sign demo."""

import math

import numpy as np
import pytest
import torch

from helpers.experiments import score_geometry
from helpers.figures import score_geometry as geometry_figures
from helpers.scores import cosine_scores, dot_scores

# --------------------------------------------------------------------------------------------
# 1. Geometry
# --------------------------------------------------------------------------------------------


def test_explorer_keys_have_the_documented_lengths_and_angles():
    setup = score_geometry.explorer_setup()
    lengths = setup.keys.norm(dim=1)
    angles = torch.rad2deg(torch.atan2(setup.keys[:, 1], setup.keys[:, 0])) % 360
    torch.testing.assert_close(lengths, torch.tensor([1.0, 1.0, 1.0, 0.4, 2.5]))
    torch.testing.assert_close(angles, torch.tensor([30.0, 120.0, 210.0, 60.0, 300.0]), atol=1e-4, rtol=0)


def test_query_vector_is_polar_coordinates():
    torch.testing.assert_close(score_geometry.query_vector(90.0, 2.0), torch.tensor([0.0, 2.0]), atol=1e-6, rtol=0)
    torch.testing.assert_close(score_geometry.query_vector(210.0, 1.0), torch.tensor([-math.sqrt(3) / 2, -0.5]))


@pytest.mark.parametrize("angle", [0.0, 45.0, 200.0])
@pytest.mark.parametrize("norm", [0.5, 1.0, 3.0])
def test_dot_score_is_projection_length_times_key_length(angle, norm):
    setup = score_geometry.explorer_setup()
    state = score_geometry.geometry_state(angle, norm, setup)
    k1 = setup.keys[0]
    # signed length of the projection of q on k1's direction, from the drawn foot of the perpendicular
    signed = float(state.projection @ k1 / k1.norm())
    assert state.scores["dot"][0].item() == pytest.approx(signed * k1.norm().item(), abs=1e-5)
    # and q.k = |q| |k| cos(angle between them), for every key
    key_angles = torch.atan2(setup.keys[:, 1], setup.keys[:, 0])
    expected = norm * setup.keys.norm(dim=1) * torch.cos(torch.deg2rad(torch.tensor(angle)) - key_angles)
    torch.testing.assert_close(state.scores["dot"], expected, atol=1e-5, rtol=1e-5)


def test_dot_equals_cosine_for_a_unit_query_and_unit_keys_only():
    state = score_geometry.geometry_state(75.0, 1.0)
    unit = slice(0, 3)  # k1, k2, k3 have length 1
    torch.testing.assert_close(state.scores["dot"][unit], state.scores["cosine"][unit])
    # the short key (0.4) and the long key (2.5): the dot product scales with length, the cosine does not
    torch.testing.assert_close(state.scores["dot"][3:], state.scores["cosine"][3:] * torch.tensor([0.4, 2.5]))
    stretched = score_geometry.geometry_state(75.0, 3.0)
    torch.testing.assert_close(stretched.scores["cosine"], state.scores["cosine"])
    torch.testing.assert_close(stretched.scores["dot"], 3.0 * state.scores["dot"], atol=1e-5, rtol=1e-5)


def test_every_row_comes_from_the_helper_and_distance_is_the_unnegated_squared_distance():
    setup = score_geometry.explorer_setup()
    state = score_geometry.geometry_state(130.0, 1.7, setup)
    q = state.query[None]
    torch.testing.assert_close(state.scores["dot"], dot_scores(q, setup.keys)[0])
    torch.testing.assert_close(state.scores["cosine"], cosine_scores(q, setup.keys)[0])
    brute = torch.stack([((state.query - k) ** 2).sum() for k in setup.keys])
    torch.testing.assert_close(state.scores["neg_euclidean"], -brute, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(state.scores["distance"], brute, atol=1e-5, rtol=1e-5)
    for name, weights in state.weights.items():
        torch.testing.assert_close(weights, torch.softmax(state.scores[name].float(), dim=0), msg=name)


def test_softmax_of_raw_distances_favours_the_farthest_key_and_negated_the_nearest():
    for angle in range(0, 360, 30):
        state = score_geometry.geometry_state(float(angle), 1.0)
        distances = state.scores["distance"]
        assert state.weights["distance"].argmax() == distances.argmax()
        assert state.weights["neg_euclidean"].argmax() == distances.argmin()


def test_geometry_grid_matches_geometry_state():
    setup = score_geometry.explorer_setup()
    grid = score_geometry.geometry_grid([0.0, 90.0], [0.5, 2.0], setup)
    assert grid.scores.shape == (2, 2, len(score_geometry.EXPLORER_ROWS), 5)
    state = score_geometry.geometry_state(90.0, 0.5, setup)
    for r, name in enumerate(grid.rows):
        np.testing.assert_allclose(grid.scores[1, 0, r], state.scores[name].numpy(), rtol=1e-6)
        np.testing.assert_allclose(grid.weights[1, 0, r], state.weights[name].numpy(), rtol=1e-6)
    np.testing.assert_allclose(grid.weights.sum(-1), 1.0, rtol=1e-5)


def test_static_explorer_has_one_frame_per_angle_and_one_visible_copy_per_length():
    angles, norms = (0.0, 120.0, 240.0), (0.5, 1.0, 2.0)
    fig = geometry_figures.geometry_explorer_figure(angles, norms, start_angle=120.0, start_norm=1.0)
    assert [f.name for f in fig.frames] == ["0", "120", "240"]
    angle_slider, norm_slider = fig.layout.sliders
    assert angle_slider.active == 1 and norm_slider.active == 1
    n_static = 1 + 5  # circle + keys
    for j, step in enumerate(norm_slider.steps):
        visible, ids = step.args
        assert list(ids) == list(range(n_static, n_static + 9))
        assert list(visible["visible"]) == [k // 3 == j for k in range(9)]
    # initial state: only the copy of length 1 is visible
    assert [bool(t.visible) if t.visible is not None else True for t in fig.data[n_static:]] == \
        [False] * 3 + [True] * 3 + [False] * 3
    # the heatmap of frame "240", copy for length 2.0, holds exactly geometry_state's weights
    heat = fig.frames[2].data[3 * 2 + 2]
    state = score_geometry.geometry_state(240.0, 2.0)
    expected = np.stack([state.weights[r].numpy() for r in score_geometry.EXPLORER_ROWS])
    np.testing.assert_allclose(np.array(heat.z), expected, atol=6e-4)
    # the query arrow of that frame ends at the query
    arrow = fig.frames[2].data[3 * 2]
    np.testing.assert_allclose([arrow.x[1], arrow.y[1]], state.query.numpy(), atol=6e-4)


def test_static_explorer_rejects_a_start_outside_the_grid():
    with pytest.raises(ValueError, match="start_angle"):
        geometry_figures.geometry_explorer_figure((0.0, 90.0), (1.0,), start_angle=45.0, start_norm=1.0)


def test_static_explorer_is_small_enough_for_a_page():
    assert len(geometry_figures.geometry_explorer_figure().to_json()) < 300_000


# --------------------------------------------------------------------------------------------
# 2. Sign and softmax
# --------------------------------------------------------------------------------------------


def test_sign_demo_amplifies_positive_and_suppresses_negative_dot_products():
    demo = score_geometry.sign_softmax_demo(30.0, 1.5)
    assert (demo.dot > 0.1).any() and (demo.dot < -0.1).any()
    # a weight is above uniform exactly when its score is above log-mean-exp of the scores
    threshold = math.log(np.exp(demo.dot).mean())
    np.testing.assert_array_equal(demo.dot_weights > demo.uniform, demo.dot > threshold)
    # every positive-score key outweighs every negative-score key
    assert demo.dot_weights[demo.dot > 0].min() > demo.dot_weights[demo.dot < 0].max()
    assert (demo.distance >= 0).all()
    assert demo.distance_weights.argmax() == demo.distance.argmax()
    assert demo.neg_distance_weights.argmax() == demo.distance.argmin()


def test_softmax_ignores_a_shift_so_a_positive_score_can_still_lose_weight():
    demo = score_geometry.sign_softmax_demo(30.0, 2.0, shift=100.0)
    np.testing.assert_allclose(demo.shifted_dot_weights, demo.dot_weights, atol=1e-6)
    np.testing.assert_allclose(demo.shifted_neg_distance_weights, demo.neg_distance_weights, atol=1e-6)
    assert demo.log_mean_exp == pytest.approx(math.log(np.exp(demo.dot.astype(float)).mean()), rel=1e-6)
    k4 = 3  # the short key: positive dot product, but below the log-mean-exp, so below 1/S
    assert demo.dot[k4] > 0.5 and demo.dot_weights[k4] < demo.uniform

