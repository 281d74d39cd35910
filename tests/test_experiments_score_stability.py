"""Tests of helpers.experiments.score_stability (chapter 2): small vectors against the closed forms."""

import math

import pytest

from helpers.experiments import score_stability

# --------------------------------------------------------------------------------------------
# 4. Stability at initialisation
# --------------------------------------------------------------------------------------------


def test_stability_matches_the_closed_forms():
    norms = (1e-3, 1e-2, 1.0)
    result = score_stability.stability_at_init(norms, dim=16, num_pairs=4000, noise=1e-4)
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


