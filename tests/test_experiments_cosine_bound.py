"""Tests of helpers.experiments.cosine_bound (chapter 2, "Is it the bound?"): the recall task's real cosine
ceiling, the weight a model puts on the match, and the controls that separate the bound from the step size."""

import math
from dataclasses import replace

import pytest
import torch

from helpers.experiments import cosine_bound, score_learning
from helpers.experiments.recall import RecallAttention


def test_the_search_reaches_the_bound_where_one_geometry_serves_every_query():
    # two keys, both in every sequence (slots are the pairs): q(0) = k(0) = u and q(1) = k(1) = -u put every
    # match at cosine 1 and the other key at -1 at once, so the single-query bound is reachable
    config = replace(score_learning.SCORE_RECALL, num_pairs=2, num_keys=2, num_values=2, slots="pairs", num_test=64)
    found = cosine_bound.cosine_task_ceiling(config, seeds=(0, 1), steps=300)
    bound = score_learning.cosine_weight_bound(2)  # e^2 / (e^2 + 1)
    assert all(m == pytest.approx(bound, abs=1e-3) for m in found.mean_weight)
    assert all(x <= bound + 1e-6 for x in found.max_weight)


def test_the_recall_tasks_ceiling_is_far_under_the_single_query_bound():
    # 24 slots: the bound (24.3 %) needs all 23 other slots at cosine -1 against the query at once
    found = cosine_bound.cosine_task_ceiling(seeds=(0,), steps=200)
    bound = score_learning.cosine_weight_bound(24)
    assert found.max_weight[0] < 0.6 * bound
    assert 1 / 24 < found.mean_weight[0] <= found.max_weight[0]  # better than uniform, never above the largest


def test_weight_on_match_against_a_loop_over_sequences():
    config = replace(score_learning.score_config("cosine"), num_test=20)
    torch.manual_seed(0)
    model = RecallAttention.from_config(config)
    tokens, _ = config.test_set()
    with torch.no_grad():
        weights = model(tokens)[1][:, 0, 0]  # (B, S)
    looped = []
    for row, w in zip(tokens.tolist(), weights):
        slot = row[:-1].index(row[-1])  # slots are the tokens: the query's key is the slot with its token
        looped.append(float(w[slot]))
    assert cosine_bound.weight_on_match(model, config) == pytest.approx(sum(looped) / len(looped), rel=1e-6)


def test_the_controls_change_only_what_their_labels_say():
    config = replace(score_learning.SCORE_RECALL, steps=4, eval_every=2, num_test=20)
    runs = cosine_bound.compare_cosine_controls(4.0, seeds=(0,), config=config)
    plain = score_learning.score_config("cosine", config)
    assert tuple(runs) == cosine_bound.COSINE_CONTROLS
    (lr_run,), (scaled,), (slow_scaled,) = runs.values()
    assert (lr_run.lr, lr_run.scale) == (pytest.approx(4 * plain.lr), 1.0)
    assert (scaled.lr, scaled.scale) == (pytest.approx(plain.lr), pytest.approx(4.0))
    assert (slow_scaled.lr, slow_scaled.scale) == (pytest.approx(plain.lr / 4), pytest.approx(4.0))
    for (run,) in runs.values():
        assert run.config.steps == 4 and run.config.score == "cosine" and not run.config.learned_scale


@pytest.mark.parametrize("factor", [1.0, 0.5, math.nan, "4"])
def test_controls_refuse_a_factor_that_does_not_lift_the_bound(factor):
    with pytest.raises(ValueError, match="factor"):
        cosine_bound.compare_cosine_controls(factor)


def test_ceiling_refuses_bad_arguments():
    with pytest.raises(ValueError, match="steps"):
        cosine_bound.cosine_task_ceiling(steps=0)
    with pytest.raises(ValueError, match="num_test"):
        cosine_bound.cosine_task_ceiling(replace(score_learning.SCORE_RECALL, num_test=0))
