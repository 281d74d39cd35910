"""Chapter 3: training with and without the ``1/sqrt(d_k)`` scale, at several ``d_k`` and learning rates.

Both experiments train the associative-recall model of :mod:`helpers.experiments.recall` (one
head, dot-product scores) and change only the factor on ``q . k``:

- :func:`dk_training_sweep`: ``"scaled"`` against ``"no scale"`` at each ``d_k``;
- :func:`learning_rate_sweep`: the same pair at each learning rate: which ones work?

Every result is repeated over :data:`SEEDS` (initialisation and batches), and each run stops
:data:`STOP_AFTER_TARGET` steps after reaching the target accuracy (the last steps show whether
it stays there), which keeps several seeds affordable on a CPU. Every run records the spread of
its attention logits (``record_score_std_every``). All training is AdamW (:func:`helpers.train.train`).

Figures: :mod:`helpers.figures.scale_training`. Seeded and deterministic. Explained in chapter 3
(``book/03-scaling``, "Does it matter for training?").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from ..train import set_seed
from .recall import RecallAttention, RecallConfig, RecallRun, train_recall

__all__ = ["SCALE_RECALL", "SEEDS", "STOP_AFTER_TARGET", "recall_config", "train_seeds", "seed_summary", "steps_or_cap",
           "initial_scores", "dk_training_sweep",
           "LearningRateSweep", "learning_rate_sweep", "STEP_CONTROL_LABELS", "step_size_control"]

SCALE_RECALL = RecallConfig()
"""Chapter 3's recall runs, 8 pairs of 16 keys and 16 values, one dot-product head over the 8
pairs, batches of 64 from data seed 1234, 90% as the target; :func:`recall_config` sets the rest."""

#: The two runs every comparison of this chapter makes: the label and the factor on ``q . k``
#: (``None``: the standard ``1/sqrt(d_k)``; ``1.0``: no scale).
SCALED_AND_UNSCALED: tuple[tuple[str, float | None], ...] = (("scaled", None), ("no scale", 1.0))

SEEDS: tuple[int, ...] = (0, 1, 2)
"""The seeds every training result of chapter 3 is repeated over."""

STOP_AFTER_TARGET = 50
"""Steps a run goes on after reaching its target; its final accuracy is the mean over them."""

SCORE_STD_EVERY = 10
"""Steps between two measurements of the logits' spread (:attr:`RecallRun.score_std`)."""


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
    stop_after_target: int | None = None,
    scale_lr_factor: float = 1.0,
    width: int | None = None,
    qk_lr_factor: float = 1.0,
) -> RecallConfig:
    """``config`` with ``num_heads`` heads of size ``d_k`` and the given scale and training settings.

    Args:
        d_k: Head size: the size of each head's queries and keys (``embed_dim = num_heads * d_k`` unless
            ``width`` is given).
        num_heads: Heads.
        scale: Factor on ``q . k``; ``None`` is the standard ``1/sqrt(d_k)``, ``1.0`` no scale.
        learned_scale: Learn the factor, starting from ``scale``.
        lr: Learning rate.
        steps: Optimisation steps.
        target: Accuracy for :attr:`~helpers.experiments.recall.RecallRun.steps_to_target`.
        config: Task and batch settings.
        stop_after_target: End a run this many steps after it reaches ``target`` (``None``: never).
        scale_lr_factor: With ``learned_scale``, the temperature's learning rate over ``lr``.
        width: The model width ``embed_dim``, fixed whatever ``d_k`` (``None``: ``num_heads * d_k``, the model
            widens with ``d_k``); the queries and keys have size ``d_k``, the values ``width / num_heads``.
        qk_lr_factor: The learning rate of ``q_proj`` and ``k_proj`` over ``lr``.

    Returns:
        The configuration (the score function is always ``"dot"``).
    """
    if width is None:
        return replace(config, score="dot", embed_dim=num_heads * d_k, num_heads=num_heads, scale=scale,
                       learned_scale=learned_scale, lr=lr, steps=steps, target=target,
                       stop_after_target=stop_after_target, scale_lr_factor=scale_lr_factor,
                       qk_lr_factor=qk_lr_factor)
    return replace(config, score="dot", embed_dim=width, num_heads=num_heads, scale=scale,
                   learned_scale=learned_scale, lr=lr, steps=steps, target=target,
                   stop_after_target=stop_after_target, scale_lr_factor=scale_lr_factor,
                   qk_dim=None if d_k * num_heads == width else d_k, qk_lr_factor=qk_lr_factor)


def train_seeds(config: RecallConfig, seeds: Sequence[int] = SEEDS, *, label: str) -> list[RecallRun]:
    """Train ``config`` once per seed (initialisation and batches), recording the logits' spread."""
    return [train_recall(config, seed=seed, label=label, record_score_std_every=SCORE_STD_EVERY) for seed in seeds]


def seed_summary(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, min, max)`` of one measurement over seeds (``nan`` entries are ignored; all ``nan``: ``nan``)."""
    kept = [v for v in values if not math.isnan(v)]
    if not kept:
        return math.nan, math.nan, math.nan
    return sum(kept) / len(kept), min(kept), max(kept)


def steps_or_cap(run: RecallRun) -> int:
    """Steps to the target, or the step budget when the run never got there (for plots and means)."""
    return run.config.steps if run.steps_to_target is None else run.steps_to_target


def initial_scores(config: RecallConfig, seeds: Sequence[int] = SEEDS) -> Tensor:
    """The scores the softmax of :func:`~helpers.experiments.recall.train_recall`'s model sees before training.

    For each seed the model is built exactly as ``train_recall(config, seed=seed)`` builds it, and scores its
    first training batch (:meth:`~helpers.experiments.recall.RecallAttention.scaled_scores`): the rows whose
    saturation and Jacobian the untrained head starts from. Explained in chapter 3.

    Returns:
        The scaled scores, one row per sequence, head and seed.

    Shape:
        ``(len(seeds) * B * H, S)``.
    """
    rows = []
    for seed in seeds:
        set_seed(seed)
        model = RecallAttention.from_config(config)
        with torch.no_grad():
            scores = model.scaled_scores(config.make_batch(0, seed)[0])  # (B, H, 1, S)
        rows.append(scores.reshape(-1, scores.size(-1)))  # (B * H, S)
    return torch.cat(rows)



def dk_training_sweep(
    d_ks: Sequence[int] = (16, 64, 256),
    *,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    config: RecallConfig = SCALE_RECALL,
    seeds: Sequence[int] = SEEDS,
    stop_after_target: int | None = STOP_AFTER_TARGET,
    width: int | None = None,
) -> list[RecallRun]:
    """Train at each ``d_k`` with the ``1/sqrt(d_k)`` scale (``"scaled"``) and without (``"no scale"``).

    Same data, same initialisation, same learning rate (AdamW): only the factor on ``q . k``
    differs. Each pair is repeated for every seed. Explained in chapter 3.

    Args:
        d_ks: Head sizes (one head; ``embed_dim = d_k`` unless ``width`` is given).
        lr: Learning rate.
        steps: Step budget per run.
        target: Accuracy for the steps-to-target count.
        config: Task and batch settings.
        seeds: Seeds of the initialisation and batches.
        stop_after_target: End a run this many steps after it reaches ``target`` (``None``: never).
        width: A model width kept whatever ``d_k`` (only the queries and keys change size); ``None``: the
            model's width is ``d_k``.

    Returns:
        ``2 * len(d_ks) * len(seeds)`` runs: for each ``d_k``, ``"scaled"`` then ``"no scale"``,
        each for every seed.
    """
    return [
        run
        for d_k in d_ks
        for label, scale in SCALED_AND_UNSCALED
        for run in train_seeds(recall_config(d_k, scale=scale, lr=lr, steps=steps, target=target, config=config,
                                             stop_after_target=stop_after_target, width=width), seeds, label=label)
    ]


@dataclass
class LearningRateSweep:
    """Final accuracy against the learning rate, with and without the scale (see :func:`learning_rate_sweep`).

    Attributes:
        d_k: Head size.
        lrs: The learning rates tried.
        runs: ``{"scaled": [...], "no scale": [...]}``: per learning rate, one
            :class:`~helpers.experiments.recall.RecallRun` per seed.
        threshold: Final accuracy a learning rate needs, for every seed, to count as usable.
    """

    d_k: int
    lrs: list[float]
    runs: dict[str, list[list[RecallRun]]]
    threshold: float

    def final_accuracy_by_seed(self, label: str) -> list[list[float]]:
        """Per learning rate, the final accuracy of each seed."""
        return [[run.final_accuracy for run in runs] for runs in self.runs[label]]

    def final_accuracy(self, label: str) -> list[float]:
        """Per learning rate, the final accuracy averaged over seeds."""
        return [sum(accs) / len(accs) for accs in self.final_accuracy_by_seed(label)]

    def usable(self, label: str) -> list[float]:
        """The learning rates at which every seed's final accuracy reaches :attr:`threshold`."""
        return [lr for lr, accs in zip(self.lrs, self.final_accuracy_by_seed(label))
                if min(accs) >= self.threshold]

    def usable_decades(self, label: str) -> float:
        """Width of the usable range in decades, ``log10(max / min)`` over :meth:`usable`.

        ``0`` when one learning rate works, ``nan`` when none does. The grid limits it: the
        true range is at least this wide and at most one grid step wider on each side.
        """
        usable = self.usable(label)
        return math.log10(max(usable) / min(usable)) if usable else math.nan


def learning_rate_sweep(
    lrs: Sequence[float] = (1e-4, 3e-4, 1e-3, 3e-3),
    *,
    d_k: int = 256,
    steps: int = 300,
    threshold: float = 0.9,
    config: RecallConfig = SCALE_RECALL,
    seeds: Sequence[int] = SEEDS,
    stop_after_target: int | None = STOP_AFTER_TARGET,
    reuse: Sequence[RecallRun] = (),
) -> LearningRateSweep:
    """Train at each learning rate with and without the scale; which learning rates work?

    A learning rate counts as usable when, for every seed, the final accuracy (mean of the last
    50 steps: with ``stop_after_target``, the steps after the target was reached) reaches
    ``threshold`` within ``steps``. AdamW throughout. Explained in chapter 3.

    Args:
        lrs: Learning rates, increasing.
        d_k: Head size (one head).
        steps: Step budget per run.
        threshold: Final accuracy of a usable learning rate (and the target of each run).
        config: Task and batch settings.
        seeds: Seeds of the initialisation and batches.
        stop_after_target: End a run this many steps after it reaches ``threshold``.
        reuse: Runs already trained (e.g. by :func:`dk_training_sweep`): a run with the same
            label, settings (the target aside) and seed is taken from here instead of being
            trained again.

    Returns:
        A :class:`LearningRateSweep`.
    """
    runs: dict[str, list[list[RecallRun]]] = {"scaled": [], "no scale": []}
    for lr in lrs:
        for label, scale in SCALED_AND_UNSCALED:
            wanted = recall_config(d_k, scale=scale, lr=lr, steps=steps, target=threshold, config=config,
                                   stop_after_target=stop_after_target)
            per_seed = []
            for seed in seeds:
                done = [r for r in reuse
                        if (r.label, r.seed, replace(r.config, target=threshold)) == (label, seed, wanted)]
                if done:
                    per_seed.append(replace(done[0], config=wanted))
                else:
                    per_seed.extend(train_seeds(wanted, (seed,), label=label))
            runs[label].append(per_seed)
    return LearningRateSweep(d_k, list(lrs), runs, threshold)


STEP_CONTROL_LABELS: tuple[str, str] = ("scaled, W_Q and W_K at √d_k × lr", "no scale, W_Q and W_K at lr / √d_k")
"""The two runs of :func:`step_size_control`."""


def step_size_control(
    lrs: Sequence[float] = (1e-4, 3e-4, 1e-3, 3e-3),
    *,
    d_k: int = 128,
    steps: int = 300,
    threshold: float = 0.9,
    config: RecallConfig = SCALE_RECALL,
    seeds: Sequence[int] = SEEDS,
    stop_after_target: int | None = STOP_AFTER_TARGET,
    labels: Sequence[str] = STEP_CONTROL_LABELS,
) -> LearningRateSweep:
    """The learning-rate sweep's control: the scale's two effects on training, taken apart.

    Under Adam a step of ``W_Q`` or ``W_K`` has about the same size whatever the gradient, and without the
    scale the same step moves the scores ``sqrt(d_k)`` times further. The unscaled head therefore differs from
    the scaled one twice: it *starts* with ``sqrt(d_k)`` times larger scores, and each step *moves* them
    ``sqrt(d_k)`` times further. The two runs here swap one of the two:

    - ``"scaled, W_Q and W_K at √d_k × lr"``: the scaled head's start, the unscaled head's steps (the learning
      rate of ``q_proj`` and ``k_proj`` alone multiplied by ``sqrt(d_k)``, to first order the score change of
      an unscaled step);
    - ``"no scale, W_Q and W_K at lr / √d_k"``: the unscaled head's start, the scaled head's steps.

    Every other weight keeps ``lr``. AdamW without weight decay, as everywhere in the chapter. Compare with
    :func:`learning_rate_sweep` at the same learning rates and seeds. Explained in chapter 3.

    Args:
        lrs: Learning rates, increasing (of every weight but ``W_Q`` and ``W_K``).
        d_k: Head size (one head).
        steps: Step budget per run.
        threshold: Target accuracy of each run.
        config: Task and batch settings.
        seeds: Seeds of the initialisation and batches.
        stop_after_target: End a run this many steps after it reaches ``threshold``.
        labels: Which of the two runs to train (both by default).

    Returns:
        A :class:`LearningRateSweep` whose ``runs`` are keyed by ``labels``.
    """
    unknown = [label for label in labels if label not in STEP_CONTROL_LABELS]
    if unknown:
        raise ValueError(f"labels must be among {STEP_CONTROL_LABELS}, got {unknown}")
    factor = math.sqrt(d_k)
    runs: dict[str, list[list[RecallRun]]] = {label: [] for label in labels}
    for lr in lrs:
        for label, scale, qk_lr_factor in zip(STEP_CONTROL_LABELS, (None, 1.0), (factor, 1 / factor)):
            if label not in labels:
                continue
            wanted = recall_config(d_k, scale=scale, lr=lr, steps=steps, target=threshold, config=config,
                                   stop_after_target=stop_after_target, qk_lr_factor=qk_lr_factor)
            runs[label].append(train_seeds(wanted, seeds, label=label))
    return LearningRateSweep(d_k, list(lrs), runs, threshold)
