"""Lab 6.1-6.2's failing Post-LN run and the reader's rescues of it, trained by exercise 5's checker
(:mod:`helpers.exercises.training.post_ln`): chapter 6's lag-task model
(:func:`helpers.experiments.training_failures.train_lag_model`) with a setting or two changed."""

from __future__ import annotations

import functools
from typing import Any

from ..train import num_threads
from . import training_failures as tf

__all__ = ["FAILING_SETTINGS", "rescue_run"]

FAILING_SETTINGS: dict[str, Any] = {"norm_first": False, "lr": 3e-2, "warmup_steps": 0, "clip_grad_norm": None,
                                    "steps": 80}
"""The Post-LN run of the chapter's grid that fails in every seed (6 blocks, lr 0.03, no warm-up)."""


@functools.lru_cache(maxsize=32)
def rescue_run(seed: int, changes: tuple[tuple[str, Any], ...]) -> tf.RunResult:
    """The failing run with ``changes`` (``((setting, value), ...)``) and ``seed``, trained once a session."""
    with num_threads(1):
        return tf.train_lag_model(seed=seed, **{**FAILING_SETTINGS, **dict(changes)})
