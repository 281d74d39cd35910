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
    assert "| dot (scaled) |" in learning_figures.learning_table([row], threshold=0.0)


def test_cosine_with_a_learned_scale_is_the_cosine_with_a_trainable_temperature():
    config = score_learning.score_config("cosine_learned_scale")
    assert (config.score, config.learned_scale, config.initial_scale) == ("cosine", True, 1.0)
    with pytest.raises(ValueError, match="name must be one of"):
        score_learning.score_config("manhattan")


@pytest.mark.slow
def test_dot_product_learns_recall_and_plain_cosine_cannot_get_sharp():
    runs = score_learning.compare_score_functions(("dot", "cosine"), seeds=(0,), steps=300, num_test=300)
    assert runs["dot"][0].final_test_accuracy > 0.95
    assert runs["cosine"][0].final_test_accuracy < 0.6
