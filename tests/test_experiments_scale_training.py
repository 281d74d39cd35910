"""Tests of helpers.experiments.scale_training, temperature and scale_bug (chapter 3): training with and
without the scale."""

import math

import pytest

from helpers.experiments import scale_bug, scale_training, temperature
from helpers.experiments.recall import RecallRun
from helpers.experiments.scale_training import SCALE_RECALL, recall_config
from helpers.train import TrainingHistory


def test_usable_learning_rate_range_in_decades():
    def run(acc):
        return RecallRun("x", recall_config(4), 0, TrainingHistory(accuracy=[acc] * 50), 0)

    sweep = scale_training.LearningRateSweep(
        4, [1e-4, 1e-3, 1e-2, 1e-1],
        {"scaled": [run(a) for a in (0.95, 1.0, 0.92, 0.1)], "no scale": [run(a) for a in (0.5, 0.95, 0.2, 0.1)]},
        0.9,
    )
    assert sweep.usable("scaled") == [1e-4, 1e-3, 1e-2]
    assert sweep.usable_decades("scaled") == pytest.approx(2.0)
    assert sweep.usable_decades("no scale") == 0.0
    sweep.runs["no scale"] = [run(0.1)] * 4
    assert math.isnan(sweep.usable_decades("no scale"))


def test_learning_rate_sweep_reuses_runs_with_the_same_settings():
    runs = scale_training.dk_training_sweep((8,), steps=3)
    sweep = scale_training.learning_rate_sweep((1e-3,), d_k=8, steps=3, threshold=0.5, reuse=runs)
    assert sweep.runs["scaled"][0].history is runs[0].history and sweep.runs["scaled"][0].target == 0.5
    assert sweep.runs["no scale"][0].history is runs[1].history


def test_scale_bug_shrinks_the_score_variance_to_one_over_num_heads():
    report = scale_bug.multihead_scale_bug(64, 8, steps=2, num_samples=50_000)
    assert report.head_dim == 8
    assert report.score_variance["1/sqrt(head_dim)"] == pytest.approx(1.0, rel=0.03)
    assert report.score_variance["1/sqrt(d_model)"] == pytest.approx(1 / 8, rel=0.03)
    assert report.init_entropy["1/sqrt(d_model)"] > report.init_entropy["1/sqrt(head_dim)"]
    assert report.init_entropy["1/sqrt(d_model)"] <= report.max_entropy + 1e-6
    assert [run.scale for run in report.runs] == pytest.approx([1 / math.sqrt(8), 1 / 8])
    assert SCALE_RECALL.num_pairs == 8 and report.max_entropy == pytest.approx(math.log(8))


@pytest.mark.slow
def test_scaled_model_learns_recall_and_unscaled_wide_head_lags():
    runs = scale_training.dk_training_sweep((256,), steps=120)
    scaled, unscaled = runs
    assert (scaled.label, unscaled.label) == ("scaled", "no scale")
    assert scaled.steps_to_target is not None and scaled.steps_to_target < 60
    assert unscaled.steps_to_target is None or unscaled.steps_to_target > scaled.steps_to_target + 20


@pytest.mark.slow
def test_learned_temperature_moves_and_records_its_trajectory():
    from_one, from_prior = temperature.learned_temperature_runs(64, steps=40)
    assert len(from_one.scale_trajectory) == 40
    assert from_one.scale_trajectory[0] < 1.0  # the first steps already shrink it
    assert from_prior.scale_trajectory[0] == pytest.approx(1 / 8, rel=0.05)
