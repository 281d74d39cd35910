"""Chapter 2: does the score function change what a model learns?

The recall model of :mod:`helpers.experiments.recall` is trained with each score function, all
else equal (:func:`compare_score_functions`), and summarised per score function
(:func:`learning_summary`). Figures and tables: :mod:`helpers.figures.score_learning`.

Explained in chapter 2 (``book/02-dot-product``, "Does the choice change what a model learns?").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .recall import RecallConfig, RecallRun, train_recall

__all__ = ["LEARNING_SCORES", "EXTRA_SCORES", "SCORE_RECALL", "score_config", "compare_score_functions",
           "learning_summary"]

LEARNING_SCORES: tuple[str, ...] = ("dot", "cosine", "neg_euclidean", "general", "additive")
"""Score functions compared in :func:`compare_score_functions` (``"dot"`` is scaled by ``1/sqrt(E)``)."""

EXTRA_SCORES: tuple[str, ...] = ("cosine_learned_scale",)
"""Further runs: the cosine times a learned scale ``exp(s)`` (``s`` starts at 0), the temperature
that bounded cosine scores need to become sharp."""

SCORE_RECALL = RecallConfig(
    num_pairs=12, num_keys=32, num_values=32, slots="tokens", embed_dim=16, hidden_dim=16,
    steps=300, batch_size=64, lr=3e-3, data_seed=0, num_test=1000, eval_every=20,
)
"""Chapter 2's recall runs: 12 pairs of 32 keys and 32 values; every token but the query is a
memory slot (24 slots); model size 16; 300 AdamW steps at ``3e-3``; each seed its own data;
1,000 held-out sequences measured every 20 steps."""


def score_config(name: str, config: RecallConfig = SCORE_RECALL) -> RecallConfig:
    """``config`` with the score function ``name`` (one of :data:`LEARNING_SCORES` or :data:`EXTRA_SCORES`)."""
    if name == "cosine_learned_scale":
        return replace(config, score="cosine", scale=None, learned_scale=True)
    if name not in LEARNING_SCORES:
        raise ValueError(f"name must be one of {LEARNING_SCORES + EXTRA_SCORES}, got {name!r}")
    return replace(config, score=name)


def compare_score_functions(
    scores: Sequence[str] = LEARNING_SCORES,
    seeds: Sequence[int] = (0, 1, 2),
    *,
    config: RecallConfig = SCORE_RECALL,
    **overrides: object,
) -> dict[str, list[RecallRun]]:
    """:func:`~helpers.experiments.recall.train_recall` for every score function and seed, all else equal.

    Args:
        scores: Score functions to compare (:data:`LEARNING_SCORES`, :data:`EXTRA_SCORES`).
        seeds: Seeds; every score function is trained once per seed.
        config: The settings of every run.
        **overrides: Fields of ``config`` to change (``steps=100``, ``num_pairs=8``...).

    Returns:
        Score function -> its runs, one per seed.
    """
    config = replace(config, **overrides)
    return {name: [train_recall(score_config(name, config), seed=seed, label=name) for seed in seeds]
            for name in scores}


def learning_summary(runs: dict[str, list[RecallRun]], threshold: float = 0.9) -> list[dict[str, object]]:
    """One row per score function: held-out accuracy (mean, min, max over seeds), steps to
    ``threshold``, wall time and parameter count.

    Args:
        runs: The output of :func:`compare_score_functions` (runs with held-out sequences).
        threshold: Held-out accuracy for the "steps to" column.

    Returns:
        Rows of a table, in the order of ``runs``.
    """
    rows = []
    for score, group in runs.items():
        accs = [r.final_test_accuracy for r in group]
        reached = [r.test_steps_to(threshold) for r in group]
        rows.append({
            "score": score,
            "accuracy": float(np.mean(accs)),
            "accuracy_min": float(np.min(accs)),
            "accuracy_max": float(np.max(accs)),
            "steps_to_threshold": None if any(s is None for s in reached) else float(np.mean(reached)),
            "seeds_reaching_threshold": sum(s is not None for s in reached),
            "wall_time": float(np.mean([r.wall_time for r in group])),
            "step_time": float(np.min([r.step_time for r in group])),
            "num_parameters": group[0].num_parameters,
        })
    return rows
