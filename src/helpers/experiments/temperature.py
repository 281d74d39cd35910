"""Chapter 3: a learned temperature instead of the fixed ``1/sqrt(d_k)``.

:func:`learned_temperature_runs` trains the recall model of :mod:`helpers.experiments.recall`
with a learned factor on ``q . k``, from 1 (no prior) and from ``1/sqrt(d_k)`` (the prior).
Figures: :mod:`helpers.figures.temperature`. Explained in chapter 3 (``book/03-scaling``, "If
LayerNorm already normalises, why keep the scale?").
"""

from __future__ import annotations

import math

from .recall import RecallConfig, RecallRun, train_recall
from .scale_training import SCALE_RECALL, recall_config

__all__ = ["learned_temperature_runs"]


def learned_temperature_runs(
    d_k: int = 256,
    *,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    config: RecallConfig = SCALE_RECALL,
    seed: int = 0,
) -> list[RecallRun]:
    """Replace the fixed ``1/sqrt(d_k)`` by a learned factor on ``q . k`` (a learned temperature).

    Two runs, both learning ``log(scale)`` with the other weights: one starts from ``1`` (no
    prior: the unscaled layer, free to learn its scale), one from ``1/sqrt(d_k)`` (the prior,
    free to move away from it). Compare with
    :func:`~helpers.experiments.scale_training.dk_training_sweep`'s fixed runs at the same
    ``d_k``, learning rate and seed. Explained in chapter 3.

    Args:
        d_k: Head size (one head).
        lr: Learning rate (the same for the temperature as for the weights).
        steps: Optimisation steps per run.
        target: Accuracy for the steps-to-target count.
        config: Task and batch settings.
        seed: Seed of the initialisation.

    Returns:
        The two runs, with their :attr:`~helpers.experiments.recall.RecallRun.scale_trajectory`.
    """
    starts = (("learned, from 1", 1.0), ("learned, from 1/√d_k", 1 / math.sqrt(d_k)))
    return [
        train_recall(recall_config(d_k, scale=scale, learned_scale=True, lr=lr, steps=steps, target=target,
                                   config=config), seed=seed, label=label)
        for label, scale in starts
    ]
