"""Tests of helpers.experiments.bottleneck (chapter 1): the sweep against the package's own
evaluation, its replay against the trained model, and its accessors against its rows."""

import math

import pytest
import torch

from helpers.experiments import bottleneck as bn
from helpers.experiments.seq2seq_training import evaluate_seq2seq

SMALL = dict(steps=12, batch_size=8, lr=1e-2, seed=3, num_eval=16)


@pytest.fixture(scope="module")
def small_sweep() -> bn.BottleneckResult:
    return bn.bottleneck_sweep([3, 5], [6, 8], curve_every=5, watch_length=4, watch_hidden=8, watch_every=4, **SMALL)


# --------------------------------------------------------------------------------------------
# bottleneck_sweep
# --------------------------------------------------------------------------------------------


def test_sweep_has_one_row_per_setting_and_is_deterministic(small_sweep):
    rows = small_sweep.rows
    assert [(r["hidden_size"], r["attention"], r["seq_len"]) for r in rows] == [
        (h, a, n) for h in (6, 8) for a in (False, True) for n in (3, 5)
    ]
    assert all(0 <= r["sequence_accuracy"] <= r["token_accuracy"] <= 1 and r["train_seconds"] > 0 for r in rows)
    again = bn.bottleneck_sweep([3, 5], [6, 8], **SMALL)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "train_seconds"} for r in rows]  # noqa: E731
    assert strip(again.rows) == strip(rows)


def test_sweep_curve_ends_with_the_trained_models_accuracy(small_sweep):
    for (attention, hidden), curve in small_sweep.curves.items():
        assert curve["step"] == [0, 5, 10, 12]
        model = small_sweep.models[(attention, hidden)]
        final = evaluate_seq2seq(model, small_sweep.curve_length, num_samples=128, seed=SMALL["seed"] + 10_007 + 1)
        assert curve["token_accuracy"][-1] == pytest.approx(final["token_accuracy"])
        assert curve["sequence_accuracy"][-1] == pytest.approx(final["sequence_accuracy"])


def test_sweep_replay_captures_untrained_and_trained_alignments(small_sweep):
    result = small_sweep
    assert result.replay_steps == [0, 4, 8, 12]
    assert result.watch_src.shape == (1, 4) and result.watch_hidden == 8
    history = result.histories[(True, 8)]
    assert math.isnan(result.replay_losses[0])
    assert result.replay_losses[1:] == [history.loss[3], history.loss[7], history.loss[11]]
    for alignment in result.replay_alignments:
        assert alignment.shape == (4, 4)
        torch.testing.assert_close(alignment.sum(-1), torch.ones(4))
    model = result.models[(True, 8)].eval()
    with torch.no_grad():
        _, final = model(result.watch_src, result.watch_tgt)
    torch.testing.assert_close(result.replay_alignments[-1], final[0])
    assert not torch.allclose(result.replay_alignments[0], result.replay_alignments[-1])


def test_sweep_accessors_follow_the_rows(small_sweep):
    assert small_sweep.lengths == [3, 5] and small_sweep.hidden_sizes == [6, 8]
    row = next(r for r in small_sweep.rows if r["attention"] and r["hidden_size"] == 6 and r["seq_len"] == 5)
    assert small_sweep.accuracy(True, 6)[1] == row["token_accuracy"]
    assert small_sweep.accuracy(True, 6, "sequence_accuracy")[1] == row["sequence_accuracy"]
    curves = small_sweep.by_hidden_size()
    assert list(curves) == ["6", "8"]
    assert list(curves["8"]) == [bn.MODEL_LABELS[False], bn.MODEL_LABELS[True]]
    with pytest.raises(KeyError):
        small_sweep.accuracy(True, 7)
    with pytest.raises(ValueError, match="metric"):
        small_sweep.accuracy(True, 6, "loss")


def test_sweep_rejects_bad_arguments():
    with pytest.raises(ValueError, match="train_lengths"):
        bn.bottleneck_sweep([], [8], steps=1)
    with pytest.raises(ValueError, match="task"):
        bn.bottleneck_sweep([3], [8], steps=1, task="shuffle")
    with pytest.raises(ValueError, match="watch_hidden"):
        bn.bottleneck_sweep([3], [8], steps=1, watch_length=3, watch_hidden=16)


# --------------------------------------------------------------------------------------------
# seeds, the spread over them, and worker processes
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seeded_sweep() -> bn.BottleneckResult:
    return bn.bottleneck_sweep([3, 5], [6], seeds=[0, 1, 2], curve_every=6, **{k: v for k, v in SMALL.items()
                                                                              if k != "seed"})


def test_sweep_with_seeds_averages_them_and_gives_the_spread(seeded_sweep):
    result = seeded_sweep
    assert result.seeds == [0, 1, 2]
    runs = [result.accuracy(True, 6, seed=s) for s in result.seeds]
    mean = result.accuracy(True, 6)
    low, high = result.accuracy_range(True, 6)
    for i in range(len(result.lengths)):
        values = [run[i] for run in runs]
        assert mean[i] == pytest.approx(sum(values) / 3)
        assert (low[i], high[i]) == (min(values), max(values))
    assert set(result.models_by_seed) == {(a, 6, s) for a in (False, True) for s in (0, 1, 2)}
    assert result.models[(True, 6)] is result.models_by_seed[(True, 6, 0)]
    curve = result.curves[(False, 6)]["token_accuracy"]
    by_seed = [result.curves_by_seed[(False, 6, s)]["token_accuracy"] for s in (0, 1, 2)]
    assert curve == pytest.approx([sum(v) / 3 for v in zip(*by_seed)])
    # each seed is the same run as a sweep with that one seed
    alone = bn.bottleneck_sweep([3, 5], [6], **dict(SMALL, seed=1))
    assert result.accuracy(True, 6, seed=1) == alone.accuracy(True, 6)
    with pytest.raises(KeyError):
        result.accuracy(True, 6, seed=7)


def test_sweep_can_train_one_kind_of_model_and_rejects_bad_seeds():
    only_plain = bn.bottleneck_sweep([3], [6], steps=2, batch_size=4, num_eval=4, attention=(False,))
    assert {r["attention"] for r in only_plain.rows} == {False}
    with pytest.raises(ValueError, match="seeds"):
        bn.bottleneck_sweep([3], [6], steps=1, seeds=[1, 1])
    with pytest.raises(ValueError, match="attention"):
        bn.bottleneck_sweep([3], [6], steps=1, attention=())
    with pytest.raises(ValueError, match="workers"):
        bn.bottleneck_sweep([3], [6], steps=1, workers=0)


@pytest.mark.slow
def test_sweep_in_worker_processes_gives_the_same_numbers(seeded_sweep):
    parallel = bn.bottleneck_sweep([3, 5], [6], seeds=[0, 1, 2], curve_every=6, workers=2,
                                   **{k: v for k, v in SMALL.items() if k != "seed"})
    strip = lambda rows: [{k: v for k, v in r.items() if k != "train_seconds"} for r in rows]  # noqa: E731
    assert strip(parallel.rows) == strip(seeded_sweep.rows)


def test_sweep_records_learning_curves_at_every_curve_length(small_sweep):
    again = bn.bottleneck_sweep([3, 5], [6], curve_every=5, curve_lengths=[3], **SMALL)
    curves = again.length_curves[(True, 6)]
    assert sorted(curves) == [3, 5]  # the curve length (the longest evaluation length) and the one asked for
    assert all(len(v) == len(again.curves[(True, 6)]["step"]) for v in curves.values())
    assert curves[5] == pytest.approx(again.curves[(True, 6)]["token_accuracy"])
    # the lengths asked for add measurements, they change no number of the sweep
    strip = lambda rows: [{k: v for k, v in r.items() if k != "train_seconds"} for r in rows]  # noqa: E731
    assert strip(again.rows) == strip([r for r in small_sweep.rows if r["hidden_size"] == 6])


def test_sweeps_in_one_pool_give_each_sweep_its_own_numbers():
    longer = dict(SMALL, steps=20)
    one, two = bn.bottleneck_sweeps(dict(train_lengths=[3], hidden_sizes=[6], **SMALL),
                                    dict(train_lengths=[3, 5], hidden_sizes=[6], attention=(False,), **longer))
    strip = lambda rows: [{k: v for k, v in r.items() if k != "train_seconds"} for r in rows]  # noqa: E731
    assert strip(one.rows) == strip(bn.bottleneck_sweep([3], [6], **SMALL).rows)
    assert strip(two.rows) == strip(bn.bottleneck_sweep([3, 5], [6], attention=(False,), **longer).rows)
    with pytest.raises(ValueError, match="workers"):
        bn.bottleneck_sweeps(dict(train_lengths=[3], hidden_sizes=[6], workers=2, **SMALL))
