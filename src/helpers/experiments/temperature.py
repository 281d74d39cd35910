"""Chapter 3: a learned temperature instead of the fixed ``1/sqrt(d_k)``.

:func:`learned_temperature_runs` trains the recall model of :mod:`helpers.experiments.recall`
with a learned factor on ``q . k``, from 1 (no prior) and from ``1/sqrt(d_k)`` (the prior).
Figures: :mod:`helpers.figures.temperature`. Explained in chapter 3 (``book/03-scaling``, "If
LayerNorm already normalises, why keep the scale?").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .recall import RecallConfig, RecallRun
from .scale_training import SCALE_RECALL, SEEDS, STOP_AFTER_TARGET, recall_config, train_seeds

__all__ = ["learned_temperature_runs", "temperature_labels"]


def temperature_labels(fast_factor: float, *, fast_from_prior: bool = False) -> tuple[str, ...]:
    """The labels of :func:`learned_temperature_runs`' settings, in order (three, or four with
    ``fast_from_prior``)."""
    labels = ("learned, from 1", f"learned, from 1, temperature lr ×{fast_factor:g}", "learned, from 1/√d_k")
    return labels + ((f"learned, from 1/√d_k, temperature lr ×{fast_factor:g}",) if fast_from_prior else ())


def learned_temperature_runs(
    d_k: int = 256,
    *,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    config: RecallConfig = SCALE_RECALL,
    seeds: Sequence[int] = SEEDS,
    stop_after_target: int | None = STOP_AFTER_TARGET,
    fast_factor: float = 30.0,
    fast_from_prior: bool = False,
) -> list[RecallRun]:
    """Replace the fixed ``1/sqrt(d_k)`` by a learned factor on ``q . k`` (a learned temperature).

    Three settings, each learning ``log(scale)`` with the other weights by AdamW, each for every
    seed: from ``1`` (no prior: the unscaled layer, free to learn its scale) at the weights'
    learning rate; from ``1`` with a learning rate ``fast_factor`` times larger for the
    temperature alone; and from ``1/sqrt(d_k)`` (the prior, free to move away from it). AdamW
    moves a parameter by about its learning rate per step whatever its gradient, so the first
    setting cannot travel the ``log sqrt(d_k)`` from 1 to the prior in a few hundred steps at
    ``lr = 1e-3``; the second can. With ``fast_from_prior`` a fourth setting starts at the prior with the
    fast learning rate: free to move, does the temperature stay at the prior? Compare with
    :func:`~helpers.experiments.scale_training.dk_training_sweep`'s fixed runs at the same
    ``d_k``, learning rate and seeds. Explained in chapter 3.

    Args:
        d_k: Head size (one head).
        lr: Learning rate of the weights.
        steps: Step budget per run.
        target: Accuracy for the steps-to-target count.
        config: Task and batch settings.
        seeds: Seeds of the initialisation and batches.
        stop_after_target: End a run this many steps after it reaches ``target`` (``None``: never).
        fast_factor: The temperature's learning rate over ``lr`` in the fast settings.
        fast_from_prior: Add the fourth setting (from the prior, fast).

    Returns:
        ``3 * len(seeds)`` runs (``4 * len(seeds)`` with ``fast_from_prior``), setting by setting (labels
        :func:`temperature_labels`), with their :attr:`~helpers.experiments.recall.RecallRun.scale_trajectory`.
    """
    labels = temperature_labels(fast_factor, fast_from_prior=fast_from_prior)
    starts = [(labels[0], 1.0, 1.0), (labels[1], 1.0, fast_factor), (labels[2], 1 / math.sqrt(d_k), 1.0)]
    if fast_from_prior:
        starts.append((labels[3], 1 / math.sqrt(d_k), fast_factor))
    return [
        run
        for label, scale, factor in starts
        for run in train_seeds(recall_config(d_k, scale=scale, learned_scale=True, lr=lr, steps=steps, target=target,
                                             config=config, stop_after_target=stop_after_target,
                                             scale_lr_factor=factor), seeds, label=label)
    ]
