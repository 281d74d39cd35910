"""Tests of helpers.experiments.score_stability (chapter 2): small vectors against the closed forms."""

import math

import pytest

from helpers.experiments import score_stability

# --------------------------------------------------------------------------------------------
# 4. Stability at initialisation
# --------------------------------------------------------------------------------------------


def test_stability_matches_the_closed_forms():
    norms = (1e-3, 1e-2, 1.0)
    result = score_stability.stability_at_init(norms, dim=16, num_pairs=4000)
    for r, dot_grad, cos_grad in zip(norms, result.grad_norm["dot"], result.grad_norm["cosine"]):
        assert dot_grad == pytest.approx(r, rel=0.06)  # d(q.k)/dq = k, |k| ~ r
        assert cos_grad * r == pytest.approx(1.0, rel=0.12)  # sin(angle) / |q| ~ 1 / r
    # cosine scores do not shrink with the vectors: spread 1/sqrt(E) at every length
    for std in result.score_std["cosine"]:
        assert std == pytest.approx(1 / math.sqrt(16), rel=0.08)
    # dot scores shrink like r^2
    ratio = result.score_std["dot"][1] / result.score_std["dot"][0]
    assert ratio == pytest.approx(100.0, rel=0.1)


def test_only_the_cosine_gradient_grows_as_the_vectors_shrink():
    result = score_stability.stability_at_init((1e-3, 1e-2, 1e-1), dim=16, num_pairs=1000)
    assert set(result.grad_norm) == set(score_stability.STABILITY_SCORES)
    for name, grads in result.grad_norm.items():
        if name == "cosine":
            assert grads[0] > 50 * grads[2]
        else:  # -|q-k|^2: 2|k - q| ~ r; general: |W k| ~ r; additive: about constant
            assert grads[0] <= 1.05 * grads[2], name
    # -|q-k|^2 has gradient 2(k - q): sqrt(2) * 2 * r on average for independent q, k
    assert result.grad_norm["neg_euclidean"][1] == pytest.approx(2 * math.sqrt(2) * 1e-2, rel=0.1)
    with pytest.raises(ValueError, match="scores must be among"):
        score_stability.stability_at_init(scores=("manhattan",))
