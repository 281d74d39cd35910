"""Chapter 3: training with and without the ``1/sqrt(d_k)`` scale, at several ``d_k`` and learning rates.

Both experiments train the associative-recall model of :mod:`helpers.experiments.recall` (one
head, dot-product scores) and change only the factor on ``q . k``:

- :func:`dk_training_sweep`: ``"scaled"`` against ``"no scale"`` at each ``d_k``;
- :func:`learning_rate_sweep`: the same pair at each learning rate: which ones work?

Figures: :mod:`helpers.figures.scale_training`. Seeded and deterministic. Explained in chapter 3
(``book/03-scaling``, "Does it matter for training?").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .recall import RecallConfig, RecallRun, train_recall

__all__ = ["SCALE_RECALL", "recall_config", "dk_training_sweep", "LearningRateSweep", "learning_rate_sweep"]

SCALE_RECALL = RecallConfig()
"""Chapter 3's recall runs: 8 pairs of 16 keys and 16 values, one dot-product head over the 8
pairs, batches of 64 from data seed 1234, 90% as the target; :func:`recall_config` sets the rest."""

#: The two runs every comparison of this chapter makes: the label and the factor on ``q . k``
#: (``None``: the standard ``1/sqrt(d_k)``; ``1.0``: no scale).
SCALED_AND_UNSCALED: tuple[tuple[str, float | None], ...] = (("scaled", None), ("no scale", 1.0))


def recall_config(
    d_k: int,
    *,
    num_heads: int = 1,
    scale: float | None = None,
    learned_scale: bool = False,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    config: RecallConfig = SCALE_RECALL,
) -> RecallConfig:
    """``config`` with ``num_heads`` heads of size ``d_k`` and the given scale and training settings.

    Args:
        d_k: Head size (``embed_dim = num_heads * d_k``).
        num_heads: Heads.
        scale: Factor on ``q . k``; ``None`` is the standard ``1/sqrt(d_k)``, ``1.0`` no scale.
        learned_scale: Learn the factor, starting from ``scale``.
        lr: Learning rate.
        steps: Optimisation steps.
        target: Accuracy for :attr:`~helpers.experiments.recall.RecallRun.steps_to_target`.
        config: Task and batch settings.

    Returns:
        The configuration (the score function is always ``"dot"``).
    """
    return replace(config, score="dot", embed_dim=num_heads * d_k, num_heads=num_heads, scale=scale,
                   learned_scale=learned_scale, lr=lr, steps=steps, target=target)


def dk_training_sweep(
    d_ks: Sequence[int] = (16, 64, 256),
    *,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    config: RecallConfig = SCALE_RECALL,
    seed: int = 0,
) -> list[RecallRun]:
    """Train at each ``d_k`` with the ``1/sqrt(d_k)`` scale (``"scaled"``) and without (``"no scale"``).

    Same data, same initialisation, same learning rate: only the factor on ``q . k`` differs.
    Explained in chapter 3.

    Args:
        d_ks: Head sizes (one head, ``embed_dim = d_k``).
        lr: Learning rate.
        steps: Optimisation steps per run.
        target: Accuracy for the steps-to-target count.
        config: Task and batch settings.
        seed: Seed of the initialisation.

    Returns:
        ``2 * len(d_ks)`` runs, ``"scaled"`` then ``"no scale"`` for each ``d_k``.
    """
    return [
        train_recall(recall_config(d_k, scale=scale, lr=lr, steps=steps, target=target, config=config),
                     seed=seed, label=label)
        for d_k in d_ks
        for label, scale in SCALED_AND_UNSCALED
    ]


@dataclass
class LearningRateSweep:
    """Final accuracy against the learning rate, with and without the scale (see :func:`learning_rate_sweep`).

    Attributes:
        d_k: Head size.
        lrs: The learning rates tried.
        runs: ``{"scaled": [...], "no scale": [...]}``, one :class:`~helpers.experiments.recall.RecallRun`
            per learning rate.
        threshold: Final accuracy a learning rate needs to count as usable.
    """

    d_k: int
    lrs: list[float]
    runs: dict[str, list[RecallRun]]
    threshold: float

    def final_accuracy(self, label: str) -> list[float]:
        """Final accuracy of each learning rate for ``label`` (``"scaled"`` or ``"no scale"``)."""
        return [run.final_accuracy for run in self.runs[label]]

    def usable(self, label: str) -> list[float]:
        """The learning rates whose final accuracy reaches :attr:`threshold`."""
        return [lr for lr, run in zip(self.lrs, self.runs[label]) if run.final_accuracy >= self.threshold]

    def usable_decades(self, label: str) -> float:
        """Width of the usable range in decades, ``log10(max / min)`` over :meth:`usable`.

        ``0`` when one learning rate works, ``nan`` when none does. The grid limits it: the
        true range is at least this wide and at most one grid step wider on each side.
        """
        usable = self.usable(label)
        return math.log10(max(usable) / min(usable)) if usable else math.nan


def learning_rate_sweep(
    lrs: Sequence[float] = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2),
    *,
    d_k: int = 256,
    steps: int = 300,
    threshold: float = 0.9,
    config: RecallConfig = SCALE_RECALL,
    seed: int = 0,
    reuse: Sequence[RecallRun] = (),
) -> LearningRateSweep:
    """Train at each learning rate with and without the scale; which learning rates work?

    A learning rate counts as usable when the final accuracy (mean of the last 50 steps)
    reaches ``threshold`` within ``steps``. Explained in chapter 3.

    Args:
        lrs: Learning rates, increasing.
        d_k: Head size (one head).
        steps: Optimisation steps per run.
        threshold: Final accuracy of a usable learning rate.
        config: Task and batch settings.
        seed: Seed of the initialisation.
        reuse: Runs already trained (e.g. by :func:`dk_training_sweep`): a run with the same
            label, settings (the target aside) and seed is taken from here instead of being
            trained again.

    Returns:
        A :class:`LearningRateSweep`.
    """
    runs: dict[str, list[RecallRun]] = {"scaled": [], "no scale": []}
    for lr in lrs:
        for label, scale in SCALED_AND_UNSCALED:
            wanted = recall_config(d_k, scale=scale, lr=lr, steps=steps, target=threshold, config=config)
            done = [r for r in reuse
                    if (r.label, r.seed, replace(r.config, target=threshold)) == (label, seed, wanted)]
            if done:
                run = replace(done[0], config=wanted)
            else:
                run = train_recall(wanted, seed=seed, label=label)
            runs[label].append(run)
    return LearningRateSweep(d_k, list(lrs), runs, threshold)
