"""Tests of helpers.experiments.scale_training, temperature and scale_bug (chapter 3): training with and
without the scale."""

import math

import pytest

from helpers.experiments import scale_bug, scale_training, temperature
from helpers.experiments.recall import RecallRun
from helpers.experiments.scale_training import SCALE_RECALL, recall_config
from helpers.train import TrainingHistory


def _run(acc):
    return RecallRun("x", recall_config(4), 0, TrainingHistory(accuracy=[acc] * 50), 0)


def test_usable_learning_rate_range_in_decades_needs_every_seed():
    sweep = scale_training.LearningRateSweep(
        4, [1e-4, 1e-3, 1e-2, 1e-1],
        {"scaled": [[_run(a), _run(a)] for a in (0.95, 1.0, 0.92, 0.1)],
         "no scale": [[_run(a), _run(b)] for a, b in ((0.5, 0.5), (0.95, 0.99), (0.99, 0.2), (0.1, 0.1))]},
        0.9,
    )
    assert sweep.usable("scaled") == [1e-4, 1e-3, 1e-2]
    assert sweep.usable_decades("scaled") == pytest.approx(2.0)
    assert sweep.usable("no scale") == [1e-3]  # at 1e-2 one seed of two fails
    assert sweep.usable_decades("no scale") == 0.0
    assert sweep.final_accuracy("no scale")[1] == pytest.approx(0.97)
    sweep.runs["no scale"] = [[_run(0.1)]] * 4
    assert math.isnan(sweep.usable_decades("no scale"))


def test_seed_summary_and_steps_or_cap():
    assert scale_training.seed_summary([1.0, 3.0, math.nan]) == (2.0, 1.0, 3.0)
    assert all(math.isnan(v) for v in scale_training.seed_summary([math.nan]))
    run = _run(0.1)
    assert run.steps_to_target is None and scale_training.steps_or_cap(run) == run.config.steps


def test_sweeps_repeat_every_seed_and_stop_after_the_target():
    runs = scale_training.dk_training_sweep((8,), steps=3, seeds=(0, 1))
    assert [(r.label, r.seed) for r in runs] == [("scaled", 0), ("scaled", 1), ("no scale", 0), ("no scale", 1)]
    assert runs[0].config.stop_after_target == scale_training.STOP_AFTER_TARGET
    assert runs[0].score_std_steps == [0]  # the spread at initialisation (every 10 steps after)


def test_learning_rate_sweep_reuses_runs_with_the_same_settings():
    runs = scale_training.dk_training_sweep((8,), steps=3, seeds=(0, 1))
    sweep = scale_training.learning_rate_sweep((1e-3,), d_k=8, steps=3, threshold=0.5, reuse=runs, seeds=(0, 1))
    assert sweep.runs["scaled"][0][1].history is runs[1].history and sweep.runs["scaled"][0][0].target == 0.5
    assert sweep.runs["no scale"][0][0].history is runs[2].history


def test_scale_bug_shrinks_the_score_variance_to_one_over_num_heads():
    report = scale_bug.multihead_scale_bug(64, 8, steps=2, num_samples=50_000, seeds=(0,))
    assert report.head_dim == 8
    assert report.score_variance["1/sqrt(head_dim)"] == pytest.approx(1.0, rel=0.03)
    assert report.score_variance["1/sqrt(d_model)"] == pytest.approx(1 / 8, rel=0.03)
    assert report.init_entropy["1/sqrt(d_model)"] > report.init_entropy["1/sqrt(head_dim)"]
    assert report.init_entropy["1/sqrt(d_model)"] <= report.max_entropy + 1e-6
    assert [run.scale for run in report.runs] == pytest.approx([1 / math.sqrt(8), 1 / 8])
    assert SCALE_RECALL.num_pairs == 8 and report.max_entropy == pytest.approx(math.log(8))


@pytest.mark.slow
def test_scaled_model_learns_recall_and_unscaled_wide_head_lags():
    runs = scale_training.dk_training_sweep((256,), steps=120, seeds=(0,))
    scaled, unscaled = runs
    assert (scaled.label, unscaled.label) == ("scaled", "no scale")
    assert scaled.steps_to_target is not None and scaled.steps_to_target < 60
    assert unscaled.steps_to_target is None or unscaled.steps_to_target > scaled.steps_to_target + 20
    assert len(scaled.history.accuracy) == scaled.steps_to_target + scale_training.STOP_AFTER_TARGET + 1
    assert unscaled.score_std[0] > 10 * scaled.score_std[0]  # sqrt(256) = 16 times the spread at initialisation


@pytest.mark.slow
def test_learned_temperature_moves_and_records_its_trajectory():
    from_one, fast, from_prior = temperature.learned_temperature_runs(64, steps=40, seeds=(0,), fast_factor=10.0)
    assert len(from_one.scale_trajectory) == 40
    assert from_one.scale_trajectory[0] < 1.0  # the first steps already shrink it
    # ten times the temperature's learning rate: AdamW moves it about ten times as far
    assert abs(math.log(fast.scale_trajectory[-1])) > 3 * abs(math.log(from_one.scale_trajectory[-1]))
    assert from_prior.scale_trajectory[0] == pytest.approx(1 / 8, rel=0.05)
