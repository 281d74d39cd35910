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


def test_fixed_width_sweep_changes_only_the_size_of_queries_and_keys():
    runs = scale_training.dk_training_sweep((4, 16), steps=2, seeds=(0,), width=16)
    assert [(r.d_k, r.config.embed_dim) for r in runs] == [(4, 16)] * 2 + [(16, 16)] * 2
    assert runs[0].config.qk_dim == 4 and runs[2].config.qk_dim is None  # d_k = width: the plain model
    assert recall_config(16, width=16) == recall_config(16)


def test_initial_scores_are_the_rows_the_untrained_run_starts_from():
    config = recall_config(16, scale=1.0, steps=1)
    scores = scale_training.initial_scores(config, seeds=(0, 1))
    assert scores.shape == (2 * config.batch_size, config.num_pairs)
    run = scale_training.train_seeds(config, (1,), label="x")[0]
    # the run's spread at initialisation is measured on the same batch and model
    assert scores[config.batch_size:].std(dim=-1).mean().item() == pytest.approx(run.score_std[0], rel=1e-5)


def test_step_size_control_swaps_the_start_and_the_step():
    sweep = scale_training.step_size_control((1e-3,), d_k=16, steps=2, seeds=(0,))
    fast, slow = (sweep.runs[label][0][0] for label in scale_training.STEP_CONTROL_LABELS)
    assert (fast.config.scale, fast.config.qk_lr_factor) == (None, pytest.approx(4.0))
    assert (slow.config.scale, slow.config.qk_lr_factor) == (1.0, pytest.approx(0.25))
    only = scale_training.step_size_control((1e-3,), d_k=16, steps=2, seeds=(0,),
                                            labels=scale_training.STEP_CONTROL_LABELS[:1])
    assert list(only.runs) == list(scale_training.STEP_CONTROL_LABELS[:1])
    with pytest.raises(ValueError, match="labels"):
        scale_training.step_size_control((1e-3,), labels=("other",))


def test_learned_temperature_can_start_fast_at_the_prior():
    runs = temperature.learned_temperature_runs(16, steps=3, seeds=(0,), fast_from_prior=True)
    labels = temperature.temperature_labels(30.0, fast_from_prior=True)
    assert [r.label for r in runs] == list(labels) and len(labels) == 4
    assert runs[3].config.scale == pytest.approx(0.25) and runs[3].config.scale_lr_factor == 30.0
