"""The chapter 2 runs that lab 2's checkers train themselves: the plain-cosine model, and a design and its controls.

Exercise 6 of lab 2 (:mod:`helpers.exercises.dot_product.cosine_bound`) shows the largest weight the
plain-cosine model gives a slot next to the reader's predicted bound; exercise 7
(:mod:`helpers.exercises.dot_product.temperature`) trains the reader's design next to two controls. The
checkers take settings, never results: every number they report comes from a run here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import torch

from . import cosine_bound, score_learning
from .recall import RecallConfig, train_recall

__all__ = ["train_accuracy", "plain_cosine_run", "task_ceiling", "step_size_control"]


@contextmanager
def _flush_denormal() -> Iterator[None]:
    """Denormal floats count as 0 on the CPU within the block (a saturated softmax makes many, and they slow its
    backward pass several times; the runs' results do not change); restored afterwards."""
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def train_accuracy(config: RecallConfig, seed: int, label: str) -> float:
    """Held-out accuracy after training ``config`` with ``seed``."""
    with _flush_denormal():
        return train_recall(config, seed=seed, label=label).final_test_accuracy


@functools.lru_cache(maxsize=4)
def plain_cosine_run(seed: int) -> tuple[float, float]:
    """The chapter's plain-cosine run with ``seed`` (trained once per seed in a session): its held-out accuracy and
    the largest weight it gives any slot on the held-out sequences."""
    kept: list[torch.nn.Module] = []
    with _flush_denormal():
        run = train_recall(score_learning.score_config("cosine"), seed=seed, label="cosine",
                           callback=lambda step, model, history: kept.insert(0, model) if not kept else None)
    return run.final_test_accuracy, score_learning.max_weight_on_one_slot(kept[0])


@functools.lru_cache(maxsize=1)
def task_ceiling() -> float:
    """The mean weight on the right slot that the best cosine geometry found for the chapter's task gives
    (:func:`helpers.experiments.cosine_bound.cosine_task_ceiling`, one seed), searched once per session."""
    return cosine_bound.cosine_task_ceiling(seeds=(0,)).mean_weight[0]


def step_size_control(seed: int, factor: float) -> float:
    """Held-out accuracy of the plain cosine at ``factor`` times the learning rate with ``seed``. A factor on the
    scores also makes every Adam step move them ``factor`` times as far; this run takes steps as large, with the
    plain cosine's bound and start."""
    plain = score_learning.score_config("cosine")
    return train_accuracy(replace(plain, lr=plain.lr * factor), seed, "cosine, lr × factor")
