"""Checkers for the exercises of chapter 1, "Why attention" (``notebooks/01-bottleneck-lab.ipynb``).

One module an exercise, in :mod:`helpers.exercises.bottleneck`; each states the exercise's contract:

- :func:`.check_additive_scores`: Bahdanau's score ``v^T tanh(W_q s + W_k h_j)``.
- :func:`.check_masked_softmax`: attention weights over padded encoder states.
- :func:`.check_breaking_length`: where the model without attention breaks, read off the sweep (whose models
  are tested again), with the prediction recorded before the sweep.
- :func:`.mystery_alignments` and :func:`.check_task_names`: name the task from its alignment.
- :func:`.check_gradient_prediction`: a prediction of how the gradient of the last output falls with
  distance in a GRU and in attention; the checker runs the measurement itself.
- :func:`.check_control_design`: a control experiment the reader designs.

The from-scratch exercises (1 and 2) run the reader's function under the guard
(:mod:`helpers.exercises.guard`): no function of the package may run while it does, whatever the route. Each
checker takes ``language`` (``"en"``, ``"zh"``) and writes its verdict from ``helpers.exercises.catalogue.ch01``.
"""

from __future__ import annotations

from .bottleneck.additive import check_additive_scores
from .bottleneck.breaking_length import BREAKING_PREDICTION, SWEEP_TOLERANCE, check_breaking_length
from .bottleneck.control import (
    CONTROL_MAX_SHORTEST,
    CONTROL_MIN_LONGEST,
    CONTROL_MIN_STEPS,
    check_control_design,
    parameter_count,
)
from .bottleneck.gradient import GRADIENT_PREDICTION, GRADIENT_SHAPES, GRU_RATIO_BANDS, check_gradient_prediction
from .bottleneck.masked_softmax import LARGE_SCORE, check_masked_softmax
from .bottleneck.task_names import MYSTERY_LABELS, check_task_names, mystery_alignments, task_shown_by
from .catalogue.ch01 import MESSAGES

__all__ = ["check_additive_scores", "check_masked_softmax", "check_breaking_length", "BREAKING_PREDICTION",
           "SWEEP_TOLERANCE", "LARGE_SCORE", "MYSTERY_LABELS", "mystery_alignments", "task_shown_by",
           "check_task_names", "GRADIENT_SHAPES", "GRU_RATIO_BANDS", "check_gradient_prediction",
           "GRADIENT_PREDICTION", "CONTROL_MIN_STEPS", "CONTROL_MAX_SHORTEST", "CONTROL_MIN_LONGEST",
           "parameter_count", "check_control_design", "MESSAGES"]
