"""Tests of helpers.experiments.score_learning and its figures (chapter 2): score functions trained on recall."""

from dataclasses import replace

import pytest

from helpers.experiments import score_learning
from helpers.experiments.recall import train_recall
from helpers.figures import score_learning as learning_figures


def test_learning_summary_and_table():
    config = replace(score_learning.SCORE_RECALL, steps=6, eval_every=3, num_test=50)
    a = train_recall(config, label="dot")
    b = train_recall(config, label="dot")
    (row,) = score_learning.learning_summary({"dot": [a, b]}, threshold=0.0)
    assert row["accuracy"] == pytest.approx(a.final_test_accuracy) and row["steps_to_threshold"] == 3
    assert row["steps_per_seed"] == [3, 3] and (row["steps_min"], row["steps_max"]) == (3.0, 3.0)
    assert "| dot (scaled) | 0.25 |" in learning_figures.learning_table([row], threshold=0.0)
    fig = learning_figures.learning_bars_figure([row], steps=6)
    assert len(fig.data) == 4  # accuracy bar + seed dots, steps bar + seed dots


def test_cosine_weight_bound_is_the_best_case_of_scores_in_minus_one_one():
    import math

    import torch

    for S in (1, 2, 24):
        scores = torch.tensor([1.0] + [-1.0] * (S - 1))
        assert score_learning.cosine_weight_bound(S) == pytest.approx(float(torch.softmax(scores, 0)[0]))
    assert score_learning.cosine_weight_bound(24) == pytest.approx(math.e / (math.e + 23 / math.e))
    assert score_learning.cosine_weight_bound(24) > math.e / (math.e + 23)  # perpendicular others is not the best case


def test_matched_scale_gives_every_score_function_the_dot_products_initial_spread():
    config = replace(score_learning.SCORE_RECALL, steps=2)
    target = score_learning.initial_statistics(score_learning.score_config("dot", config), seeds=(0, 1))["spread"]
    assert score_learning.matched_scale("dot", config) == pytest.approx(0.25)  # 1/sqrt(16)
    for name in ("neg_euclidean", "general", "additive"):
        scale = score_learning.matched_scale(name, config, seeds=(0, 1))
        matched = replace(score_learning.score_config(name, config), scale=scale)
        assert score_learning.initial_statistics(matched, seeds=(0, 1))["spread"] == pytest.approx(target, rel=1e-4)
    with pytest.raises(ValueError, match="name must be one of"):
        score_learning.matched_scale("cosine", config)


def test_initial_spread_is_the_spread_of_the_scaled_scores():
    import torch

    from helpers.experiments.recall import RecallAttention
    from helpers.train import set_seed

    config = score_learning.SCORE_RECALL
    stats = score_learning.initial_statistics(config, seeds=(0,), num_sequences=64)
    set_seed(0)
    model = RecallAttention.from_config(config)
    tokens, _ = config._batch(64, 7)
    with torch.no_grad():
        x = model.embed(tokens)
        q = model.q_proj(x[:, -1:])[:, None]  # (B, 1, 1, E)
        k = model.k_proj(x[:, :-1])[:, None]  # (B, 1, S, E)
        scores = model.scores(q, k) * model.log_scale.exp()
    assert stats["spread"] == pytest.approx(float(scores.double().std(-1).mean()), rel=1e-4)
    assert stats["query_norm"] == pytest.approx(float(q.norm(dim=-1).mean()), rel=1e-5)
    assert 1.5 < stats["query_norm"] < 3.5  # far from the tiny vectors of the stability figure


def test_cosine_with_a_learned_scale_is_the_cosine_with_a_trainable_temperature():
    config = score_learning.score_config("cosine_learned_scale")
    assert (config.score, config.learned_scale, config.initial_scale) == ("cosine", True, 1.0)
    with pytest.raises(ValueError, match="name must be one of"):
        score_learning.score_config("manhattan")


@pytest.mark.slow
def test_dot_product_learns_recall_and_plain_cosine_cannot_get_sharp():
    models = {}
    runs = score_learning.compare_score_functions(("dot", "cosine"), seeds=(0,), steps=300, num_test=300,
                                                  match_spread=True, models=models)
    assert runs["dot"][0].final_test_accuracy > 0.95
    assert runs["cosine"][0].final_test_accuracy < 0.6
    bound = score_learning.cosine_weight_bound(24)
    assert score_learning.max_weight_on_one_slot(models["cosine"][0]) <= bound + 1e-6


@pytest.mark.slow
def test_additive_beats_the_unscaled_dot_product_at_large_dk():
    runs = score_learning.compare_at_large_dk(d_k=128, seeds=(0,), steps=60, num_test=200)
    assert runs["additive"][0].final_test_accuracy > runs["dot_unscaled"][0].final_test_accuracy + 0.2


def test_lr_over_scale_divides_each_runs_learning_rate_by_its_factor_and_the_fast_scale_learns_faster():
    runs = score_learning.compare_score_functions(("dot", "general"), seeds=(0,), match_spread=True,
                                                  lr_over_scale=True, steps=2, num_test=0)
    for name, (run,) in runs.items():
        assert run.config.lr == pytest.approx(score_learning.SCORE_RECALL.lr / run.config.initial_scale), name
    assert runs["dot"][0].config.lr == pytest.approx(4 * score_learning.SCORE_RECALL.lr)  # 1 / (1/sqrt(16))
    with pytest.raises(ValueError, match="learns its scale"):
        score_learning.compare_score_functions(("cosine_learned_scale",), seeds=(0,), lr_over_scale=True, steps=1)
    fast = score_learning.score_config("cosine_learned_scale_fast")
    assert fast.learned_scale and fast.scale_lr_factor == score_learning.FAST_SCALE_LR_FACTOR
