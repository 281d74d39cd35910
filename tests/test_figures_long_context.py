"""Chapter 6.6's figures carry the numbers they are drawn from: RoPE's angles and the ones training never
met (against the closed form of each rule's frequencies), per-position accuracy and loss averaged over
seeds, and the gradient reach of sliding-window layers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from helpers.experiments import rope_extrapolation as rx
from helpers.experiments.attention_sinks import SinkRun
from helpers.figures import long_context as fig
from helpers.rope_scaling import position_interpolation, rope_frequencies


def test_the_angle_figure_holds_each_rules_angles_and_marks_the_ones_never_trained() -> None:
    coverages = {m: rx.angle_coverage(m) for m in rx.METHODS}
    figure = fig.angle_coverage_figure(coverages)
    assert [f.name for f in figure.frames] == list(rx.METHODS)
    assert [b.label for b in figure.layout.updatemenus[0].buttons] == [rx.METHOD_NAMES[m] for m in rx.METHODS]
    distances = torch.arange(64, dtype=torch.float64)
    for frame, method in zip(figure.frames, rx.METHODS):
        heat, crosses = frame.data
        inv_freq = {"rope": rope_frequencies(8), "pi": position_interpolation(8, 4.0)}.get(method)
        if inv_freq is not None:  # the closed form, written out: d * theta_i mod one turn
            turns = torch.remainder(distances[None, :] * inv_freq.double()[:, None], 2 * math.pi) / (2 * math.pi)
            np.testing.assert_allclose(np.array(heat.z), turns.numpy(), atol=6e-4)
        new = {(int(x), y) for x, y in zip(crosses.x, crosses.y)}
        labels = list(heat.y)
        cov = coverages[method]
        assert len(new) == int((~cov.covered).sum())
        for i, label in enumerate(labels):  # the crosses past the training length: new_beyond's share of them
            beyond = sum(1 for d, y in new if y == label and d > cov.max_trained_distance)
            assert beyond == round(float(cov.new_beyond()[i]) * (64 - 15))
    rope = {(int(x), y) for x, y in zip(figure.frames[0].data[1].x, figure.frames[0].data[1].y)}
    labels = list(figure.frames[0].data[0].y)
    assert not any(y == labels[0] for _, y in rope)  # the fastest pair turned whole circles in training
    assert {d for d, y in rope if y == labels[3]} == set(range(15, 64))  # the slowest: every distance past 14


def _scaling_runs() -> dict[tuple[str, int], list[rx.ScalingRun]]:
    gen = torch.Generator().manual_seed(0)
    return {(m, s): [rx.ScalingRun(m, seed, s, 4, torch.rand(15, generator=gen).tolist()) for seed in range(3)]
            for m in ("rope", "pi") for s in (0, 5)}


def test_the_scaling_figure_and_table_average_the_seeds() -> None:
    runs = _scaling_runs()
    figure = fig.scaling_figure(runs, train_len=4)
    lines = [t for t in figure.data if t.mode == "lines"]
    assert [t.name for t in lines] == [rx.METHOD_NAMES["rope"], rx.METHOD_NAMES["pi"]] * 2
    for trace, key in zip(lines, [("rope", 0), ("pi", 0), ("rope", 5), ("pi", 5)]):
        want = np.mean([r.per_position for r in runs[key]], axis=0)
        np.testing.assert_allclose(trace.y, want, atol=6e-4)
        assert list(trace.x) == list(range(1, 16))
    table = fig.scaling_table(runs, [(3, 8)])
    values = [r.accuracy(3, 8) for r in runs[("pi", 5)]]
    assert f"| {rx.METHOD_NAMES['pi']} | 5 | {np.mean(values):.2f} [{min(values):.2f}, {max(values):.2f}] |" in table


def test_the_reach_figure_draws_log10_of_the_positions_that_have_a_path() -> None:
    sensitivity = torch.tensor([[0.0, 0.0, 1.0, 10.0], [0.0, 0.5, 2.0, 100.0]])
    figure = fig.reach_figure(sensitivity, window=2)
    assert [f.name for f in figure.frames] == ["1", "2"]
    assert list(figure.frames[0].data[0].x) == [2, 3] and list(figure.frames[0].data[0].y) == [0.0, 1.0]
    np.testing.assert_allclose(figure.frames[1].data[0].y, np.log10([0.5, 2.0, 100.0]), atol=6e-3)
    with pytest.raises(ValueError, match="sensitivity"):
        fig.reach_figure(torch.ones(3), window=2)


def test_the_sink_figure_and_table_average_the_seeds() -> None:
    runs = [SinkRun(seed, [0.5], [1, 17], loss={"full": [1.0 + seed, 2.0], "window": [3.0, 4.0 + seed]},
                    mean_loss={"full": 1.0 + seed, "window": 2.0}, mean_accuracy={"full": 0.5, "window": seed / 2})
            for seed in range(3)]
    figure = fig.sink_figure(runs, ["full", "window"], train_length=32, cache_size=16)
    lines = [t for t in figure.data if t.mode == "lines"]
    assert [t.name for t in lines] == ["full", "window"]
    np.testing.assert_allclose(lines[0].y, [2.0, 2.0])
    np.testing.assert_allclose(lines[1].y, [3.0, 5.0])
    table = fig.sink_table(runs, ["full", "window"])
    assert "| full | 2.000 [1.000, 3.000] | 0.50 [0.50, 0.50] |" in table
    assert "| window | 2.000 [2.000, 2.000] | 0.50 [0.00, 1.00] |" in table


def test_the_sink_table_adds_the_floor_and_the_accuracy_past_the_training_length() -> None:
    runs = [SinkRun(seed, [0.5], [1], mean_loss={"full": 3.0, "window": 2.8 + seed, "sinks=1": 2.65},
                    mean_accuracy={"full": 0.3, "window": 1.0, "sinks=1": 1.0}, floor_loss=2.6 + 0.01 * seed,
                    past_length_accuracy={"full": 0.2 + 0.1 * seed, "window": 1.0, "sinks=1": 1.0})
            for seed in range(2)]
    table = fig.sink_table(runs, ["full", "window", "sinks=1"])
    assert "| full | 3.000 [3.000, 3.000] | 0.30 [0.30, 0.30] | 0.25 [0.20, 0.30] |" in table
    assert table.splitlines()[-1] == "| the language's floor | 2.605 [2.600, 2.610] | — | — |"
    old = [SinkRun(0, [0.5], [1], mean_loss={"full": 3.0}, mean_accuracy={"full": 0.3})]
    assert fig.sink_table(old, ["full"]).splitlines() == [
        "| cache | loss once the cache is full | accuracy on the copies |", "|---|---|---|",
        "| full | 3.000 [3.000, 3.000] | 0.30 [0.30, 0.30] |"]
