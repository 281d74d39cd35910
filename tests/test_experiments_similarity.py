"""Tests of helpers.experiments.similarity (chapter 2): numbers against closed forms and brute force."""

import math

import numpy as np
import pytest
import torch

from helpers.attention import cosine_scores, dot_scores, neg_euclidean_scores, scaled_dot_scores
from helpers.experiments import similarity as sim


# --------------------------------------------------------------------------------------------
# 1. Geometry
# --------------------------------------------------------------------------------------------


def test_explorer_keys_have_the_documented_lengths_and_angles():
    setup = sim.explorer_setup()
    lengths = setup.keys.norm(dim=1)
    angles = torch.rad2deg(torch.atan2(setup.keys[:, 1], setup.keys[:, 0])) % 360
    torch.testing.assert_close(lengths, torch.tensor([1.0, 1.0, 1.0, 0.4, 2.5]))
    torch.testing.assert_close(angles, torch.tensor([30.0, 120.0, 210.0, 60.0, 300.0]), atol=1e-4, rtol=0)


def test_query_vector_is_polar_coordinates():
    torch.testing.assert_close(sim.query_vector(90.0, 2.0), torch.tensor([0.0, 2.0]), atol=1e-6, rtol=0)
    torch.testing.assert_close(sim.query_vector(210.0, 1.0), torch.tensor([-math.sqrt(3) / 2, -0.5]))


@pytest.mark.parametrize("angle", [0.0, 45.0, 200.0])
@pytest.mark.parametrize("norm", [0.5, 1.0, 3.0])
def test_dot_score_is_projection_length_times_key_length(angle, norm):
    setup = sim.explorer_setup()
    state = sim.geometry_state(angle, norm, setup)
    k1 = setup.keys[0]
    # signed length of the projection of q on k1's direction, from the drawn foot of the perpendicular
    signed = float(state.projection @ k1 / k1.norm())
    assert state.scores["dot"][0].item() == pytest.approx(signed * k1.norm().item(), abs=1e-5)
    # and q.k = |q| |k| cos(angle between them), for every key
    key_angles = torch.atan2(setup.keys[:, 1], setup.keys[:, 0])
    expected = norm * setup.keys.norm(dim=1) * torch.cos(torch.deg2rad(torch.tensor(angle)) - key_angles)
    torch.testing.assert_close(state.scores["dot"], expected, atol=1e-5, rtol=1e-5)


def test_dot_equals_cosine_for_a_unit_query_and_unit_keys_only():
    state = sim.geometry_state(75.0, 1.0)
    unit = slice(0, 3)  # k1, k2, k3 have length 1
    torch.testing.assert_close(state.scores["dot"][unit], state.scores["cosine"][unit])
    # the short key (0.4) and the long key (2.5): the dot product scales with length, the cosine does not
    torch.testing.assert_close(state.scores["dot"][3:], state.scores["cosine"][3:] * torch.tensor([0.4, 2.5]))
    stretched = sim.geometry_state(75.0, 3.0)
    torch.testing.assert_close(stretched.scores["cosine"], state.scores["cosine"])
    torch.testing.assert_close(stretched.scores["dot"], 3.0 * state.scores["dot"], atol=1e-5, rtol=1e-5)


def test_every_row_comes_from_the_helper_and_distance_is_the_unnegated_squared_distance():
    setup = sim.explorer_setup()
    state = sim.geometry_state(130.0, 1.7, setup)
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
        state = sim.geometry_state(float(angle), 1.0)
        distances = state.scores["distance"]
        assert state.weights["distance"].argmax() == distances.argmax()
        assert state.weights["neg_euclidean"].argmax() == distances.argmin()


def test_geometry_grid_matches_geometry_state():
    setup = sim.explorer_setup()
    grid = sim.geometry_grid([0.0, 90.0], [0.5, 2.0], setup)
    assert grid.scores.shape == (2, 2, len(sim.EXPLORER_ROWS), 5)
    state = sim.geometry_state(90.0, 0.5, setup)
    for r, name in enumerate(grid.rows):
        np.testing.assert_allclose(grid.scores[1, 0, r], state.scores[name].numpy(), rtol=1e-6)
        np.testing.assert_allclose(grid.weights[1, 0, r], state.weights[name].numpy(), rtol=1e-6)
    np.testing.assert_allclose(grid.weights.sum(-1), 1.0, rtol=1e-5)


def test_static_explorer_has_one_frame_per_angle_and_one_visible_copy_per_length():
    angles, norms = (0.0, 120.0, 240.0), (0.5, 1.0, 2.0)
    fig = sim.geometry_explorer_figure(angles, norms, start_angle=120.0, start_norm=1.0)
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
    state = sim.geometry_state(240.0, 2.0)
    expected = np.stack([state.weights[r].numpy() for r in sim.EXPLORER_ROWS])
    np.testing.assert_allclose(np.array(heat.z), expected, atol=6e-4)
    # the query arrow of that frame ends at the query
    arrow = fig.frames[2].data[3 * 2]
    np.testing.assert_allclose([arrow.x[1], arrow.y[1]], state.query.numpy(), atol=6e-4)


def test_static_explorer_rejects_a_start_outside_the_grid():
    with pytest.raises(ValueError, match="start_angle"):
        sim.geometry_explorer_figure((0.0, 90.0), (1.0,), start_angle=45.0, start_norm=1.0)


def test_static_explorer_is_small_enough_for_a_page():
    assert len(sim.geometry_explorer_figure().to_json()) < 300_000


# --------------------------------------------------------------------------------------------
# 2. Sign and softmax
# --------------------------------------------------------------------------------------------


def test_sign_demo_amplifies_positive_and_suppresses_negative_dot_products():
    demo = sim.sign_softmax_demo(30.0, 1.5)
    assert (demo.dot > 0.1).any() and (demo.dot < -0.1).any()
    # a weight is above uniform exactly when its score is above log-mean-exp of the scores
    threshold = math.log(np.exp(demo.dot).mean())
    np.testing.assert_array_equal(demo.dot_weights > demo.uniform, demo.dot > threshold)
    # every positive-score key outweighs every negative-score key
    assert demo.dot_weights[demo.dot > 0].min() > demo.dot_weights[demo.dot < 0].max()
    assert (demo.distance >= 0).all()
    assert demo.distance_weights.argmax() == demo.distance.argmax()
    assert demo.neg_distance_weights.argmax() == demo.distance.argmin()


# --------------------------------------------------------------------------------------------
# 3. Cost
# --------------------------------------------------------------------------------------------


class _CountingFloat(float):
    """A float that counts the multiplications and additions done with it."""

    ops = 0

    def __mul__(self, other):
        _CountingFloat.ops += 1
        return _CountingFloat(float(self) * float(other))

    def __add__(self, other):
        _CountingFloat.ops += 1
        return _CountingFloat(float(self) + float(other))

    __radd__ = __add__
    __rmul__ = __mul__


def test_dot_flops_match_the_operations_counted_in_the_python_loop():
    L, S, E = 3, 4, 5
    q = [[_CountingFloat(x) for x in row] for row in torch.randn(L, E).tolist()]
    k = [[_CountingFloat(x) for x in row] for row in torch.randn(S, E).tolist()]
    _CountingFloat.ops = 0
    for qi in q:  # the arithmetic of loop_dot_scores_python, on counting floats
        for kj in k:
            sum(a * b for a, b in zip(qi, kj))
    assert _CountingFloat.ops == sim.score_flops("dot", L, S, E)["flops"] == 2 * L * S * E


def test_flop_formulas_and_largest_tensors():
    rows = {r["name"]: r for r in sim.flops_table(L=8, S=16, E=4, A=6)}
    assert rows["dot"]["flops"] == 2 * 8 * 16 * 4
    assert rows["scaled_dot"]["flops"] == 2 * 8 * 16 * 4 + 8 * 16
    assert rows["general"]["flops"] == 2 * 8 * 4 * 4 + 2 * 8 * 16 * 4
    assert rows["additive"]["flops"] == 2 * (8 + 16) * 4 * 6 + 4 * 8 * 16 * 6
    assert rows["additive"]["largest_tensor"] == 8 * 16 * 6 and rows["dot"]["largest_tensor"] == 8 * 16
    assert rows["additive"]["vs_dot"] == pytest.approx(rows["additive"]["flops"] / rows["dot"]["flops"])
    with pytest.raises(ValueError, match="name must be one of"):
        sim.score_flops("manhattan", 1, 1, 1)


def test_looped_dot_products_equal_the_matrix_product():
    q, k = torch.randn(5, 7, dtype=torch.float64), torch.randn(6, 7, dtype=torch.float64)
    expected = dot_scores(q, k)
    for fn in (sim.loop_dot_scores_python, sim.loop_dot_scores_pairs, sim.loop_dot_scores_rows):
        torch.testing.assert_close(fn(q, k), expected, msg=fn.__name__)


def test_time_score_functions_measures_every_method_within_its_limit_and_restores_threads():
    threads = torch.get_num_threads()
    table = sim.time_score_functions((8, 32), python_max=8, pairs_max=32, repeats=2, budget_s=0.05)
    assert torch.get_num_threads() == threads
    assert table.sizes == [8, 32]
    assert math.isnan(table.seconds["dot (pure Python loops)"][1])
    for method, times in table.seconds.items():
        measured = [t for t in times if not math.isnan(t)]
        assert measured and all(t > 0 for t in measured), method
    # a Python loop over 32 x 32 pairs cannot come close to one matrix product
    assert table.ratio("dot (loop over pairs)")[1] > 10
    text = table.to_markdown()
    assert text.splitlines()[0] == "| method | n = 8 | n = 32 |"
    assert "| dot (pure Python loops) |" in text and "—" in text


# --------------------------------------------------------------------------------------------
# 4. Stability at initialisation
# --------------------------------------------------------------------------------------------


def test_stability_matches_the_closed_forms():
    norms = (1e-3, 1e-2, 1.0)
    result = sim.stability_at_init(norms, dim=16, num_pairs=4000, noise=1e-4)
    for r, dot_grad, cos_grad in zip(norms, result.grad_norm["dot"], result.grad_norm["cosine"]):
        assert dot_grad == pytest.approx(r, rel=0.06)  # d(q.k)/dq = k, |k| ~ r
        assert cos_grad * r == pytest.approx(1.0, rel=0.12)  # sin(angle) / |q| ~ 1 / r
    # cosine scores do not shrink with the vectors: spread 1/sqrt(E) at every length
    for std in result.score_std["cosine"]:
        assert std == pytest.approx(1 / math.sqrt(16), rel=0.08)
    # dot scores shrink like r^2
    ratio = result.score_std["dot"][1] / result.score_std["dot"][0]
    assert ratio == pytest.approx(100.0, rel=0.1)
    # the same nudge moves the cosine ~ noise/r and the dot product ~ noise * r
    assert result.sensitivity["cosine"][0] / result.sensitivity["cosine"][1] == pytest.approx(10.0, rel=0.15)
    assert result.sensitivity["cosine"][0] > 1e4 * result.sensitivity["dot"][0]


# --------------------------------------------------------------------------------------------
# 5. Learning
# --------------------------------------------------------------------------------------------


def test_recall_model_shapes_and_the_score_functions_it_uses():
    torch.manual_seed(0)
    tokens = torch.randint(0, 10, (3, 9))
    for score in sim.LEARNING_SCORES + sim.EXTRA_SCORES:
        model = sim.RecallAttention(10, score, dim=8, hidden_dim=4)
        logits, weights = model(tokens)
        assert logits.shape == (3, 10) and weights.shape == (3, 1, 8)
        torch.testing.assert_close(weights.sum(-1), torch.ones(3, 1))
    model = sim.RecallAttention(10, "dot", dim=8)
    q, k = torch.randn(2, 1, 8), torch.randn(2, 5, 8)
    torch.testing.assert_close(model.scores(q, k), scaled_dot_scores(q, k))
    model = sim.RecallAttention(10, "neg_euclidean", dim=8)
    torch.testing.assert_close(model.scores(q, k), neg_euclidean_scores(q, k))
    with pytest.raises(ValueError, match="score must be one of"):
        sim.RecallAttention(10, "manhattan")


def test_recall_model_slot_t_returns_the_token_after_it():
    model = sim.RecallAttention(6, "dot", dim=4)
    with torch.no_grad():
        model.q_proj.weight.zero_()  # uniform attention: the output is the mean of the values
        model.v_proj.weight.copy_(torch.eye(4))
    tokens = torch.tensor([[0, 1, 2, 3, 4]])
    x = model.embed(tokens)
    logits, weights = model(tokens)
    torch.testing.assert_close(weights, torch.full((1, 1, 4), 0.25))
    torch.testing.assert_close(logits, model.o_proj(x[:, 1:].mean(1)))


def test_train_recall_is_deterministic_and_summarised():
    a = sim.train_recall("dot", steps=6, eval_every=3, num_test=50)
    b = sim.train_recall("dot", steps=6, eval_every=3, num_test=50)
    assert a.eval_steps == [2, 5] and a.test_accuracy == b.test_accuracy and a.loss == b.loss
    assert a.num_parameters == sum(p.numel() for p in sim.RecallAttention(64, "dot", dim=16).parameters())
    runs = {"dot": [a, b]}
    (row,) = sim.learning_summary(runs, threshold=0.0)
    assert row["accuracy"] == pytest.approx(a.final_accuracy) and row["steps_to_threshold"] == 3
    assert "| dot (scaled) |" in sim.learning_table([row], threshold=0.0)


@pytest.mark.slow
def test_dot_product_learns_recall_and_plain_cosine_cannot_get_sharp():
    dot = sim.train_recall("dot", steps=300, num_test=300)
    cosine = sim.train_recall("cosine", steps=300, num_test=300)
    assert dot.final_accuracy > 0.95
    assert cosine.final_accuracy < 0.6


def test_plain_cosine_attention_cannot_put_more_than_its_bound_on_one_slot():
    # scores in [-1, 1] over S slots: at most e / (e + (S - 1) / e) of the weight on the best one
    torch.manual_seed(0)
    model = sim.RecallAttention(64, "cosine", dim=16)
    with torch.no_grad():
        model.k_proj.weight.copy_(model.q_proj.weight)  # make the query match its own key exactly
    tokens = torch.randint(0, 64, (20, 25))
    tokens[:, 0] = tokens[:, -1]
    _, weights = model(tokens)
    bound = 1 / (1 + 23 * math.exp(-2))
    assert weights.max() <= bound + 1e-6
    assert (weights[:, 0].argmax(-1) == 0).all()  # the matching slot (score 1) wins every row ...
    assert weights[:, 0, 0].max() < 0.5  # ... but can never take the weight a dot product could give it
