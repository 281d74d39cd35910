"""Tests of helpers.experiments.score_cost and its table (chapter 2): FLOPs against a counted loop, measured time."""

import math
import time

import pytest
import torch

from helpers.experiments import score_cost
from helpers.figures import score_cost as cost_figures
from helpers.scores import dot_scores

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
    assert _CountingFloat.ops == score_cost.score_flops("dot", L, S, E)["flops"] == 2 * L * S * E


def test_flop_formulas_and_largest_tensors():
    rows = {r["name"]: r for r in score_cost.flops_table(L=8, S=16, E=4, A=6)}
    assert rows["dot"]["flops"] == 2 * 8 * 16 * 4
    assert rows["scaled_dot"]["flops"] == 2 * 8 * 16 * 4 + 8 * 16
    assert rows["general"]["flops"] == 2 * 8 * 4 * 4 + 2 * 8 * 16 * 4
    assert rows["additive"]["flops"] == 2 * (8 + 16) * 4 * 6 + 4 * 8 * 16 * 6
    assert rows["additive"]["largest_tensor"] == 8 * 16 * 6 and rows["dot"]["largest_tensor"] == 8 * 16
    assert rows["additive"]["vs_dot"] == pytest.approx(rows["additive"]["flops"] / rows["dot"]["flops"])
    with pytest.raises(ValueError, match="name must be one of"):
        score_cost.score_flops("manhattan", 1, 1, 1)


def test_looped_dot_products_equal_the_matrix_product():
    q, k = torch.randn(5, 7, dtype=torch.float64), torch.randn(6, 7, dtype=torch.float64)
    expected = dot_scores(q, k)
    for fn in (score_cost.loop_dot_scores_python, score_cost.loop_dot_scores_pairs, score_cost.loop_dot_scores_rows):
        torch.testing.assert_close(fn(q, k), expected, msg=fn.__name__)


def test_time_score_functions_measures_every_method_within_its_limit_and_restores_threads():
    threads = torch.get_num_threads()
    table = score_cost.time_score_functions((8, 32), python_max=8, pairs_max=32, repeats=2, budget_s=0.05)
    assert torch.get_num_threads() == threads
    assert table.sizes == [8, 32]
    assert math.isnan(table.seconds["dot (pure Python loops)"][1])
    for method, times in table.seconds.items():
        measured = [t for t in times if not math.isnan(t)]
        assert measured and all(t > 0 for t in measured), method
    # a Python loop over 32 x 32 pairs cannot come close to one matrix product
    assert table.ratio("dot (loop over pairs)")[1] > 10
    text = cost_figures.cost_table(table)
    assert text.splitlines()[0] == "| method | n = 8 | n = 32 |"
    assert "| dot (pure Python loops) |" in text and "—" in text




def test_additive_breakdown_times_every_step_and_the_references():
    threads = torch.get_num_threads()
    times = score_cost.additive_time_breakdown(24, dim=8, hidden_dim=4, repeats=2, budget_s=0.05)
    assert set(times) == {*score_cost.ADDITIVE_STEPS, "whole", "dot (one matmul)", "cheap pass"}
    assert all(math.isfinite(t) and t > 0 for t in times.values())
    assert torch.get_num_threads() == threads
    for name, bad, error in (("n", 0, ValueError), ("hidden_dim", 1.5, TypeError), ("repeats", True, TypeError)):
        with pytest.raises(error, match=name):
            score_cost.additive_time_breakdown(**{name: bad})


def test_timings_read_the_cpu_clock_when_asked():
    table = score_cost.time_score_functions((8,), python_max=8, pairs_max=8, repeats=2, budget_s=0.05, clock="cpu")
    assert table.clock == "cpu" and all(t > 0 for times in table.seconds.values() for t in times)
    times = score_cost.additive_time_breakdown(16, dim=8, hidden_dim=4, repeats=1, budget_s=0.05, clock="cpu")
    assert all(t > 0 for t in times.values())
    assert score_cost.CLOCKS["cpu"] is time.process_time
    for call in (lambda: score_cost.time_score_functions((8,), clock="sundial"),
                 lambda: score_cost.additive_time_breakdown(8, clock="sundial")):
        with pytest.raises(ValueError, match="clock"):
            call()


def test_the_cpu_clock_is_read_on_one_thread_only():
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert score_cost.clock_function("cpu") is time.process_time
        torch.set_num_threads(2)
        assert score_cost.clock_function("cpu") is time.perf_counter  # CPU time would add up the two threads
        assert score_cost.clock_function("wall") is time.perf_counter
    finally:
        torch.set_num_threads(threads)
