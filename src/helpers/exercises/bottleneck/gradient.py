"""Exercise 5 of lab 1: predict, then measure, how the gradient falls with distance.

Contract (stated in the lab): record ``predict(GRADIENT_PREDICTION, {"gru": shape, "attention": shape,
"gru_ratio": band})`` before the checker runs, each shape one of :data:`.GRADIENT_SHAPES` and the band one of
:data:`.GRU_RATIO_BANDS`; the checker takes nothing and runs the measurement itself.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import torch

from .. import CheckResult
from ..catalogue.ch01 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import joined, phrase
from ..predictions import recorded, reveal
from ..reader import checker, verdict

__all__ = ["GRADIENT_SHAPES", "GRU_RATIO_BANDS", "GRADIENT_PREDICTION", "check_gradient_prediction"]

GRADIENT_SHAPES: tuple[str, ...] = ("falls", "flat", "rises")
"""The answers for how a gradient changes with distance."""
GRU_RATIO_BANDS: tuple[str, ...] = ("<10", "10-1000", ">1000")
"""The answers for how many times smaller the GRU's gradient is at the farthest input than at distance 1."""
GRADIENT_PREDICTION = "ch01.gradient"
"""The key of exercise 5's prediction (:func:`helpers.exercises.predictions.predict`)."""


def _shape_of(rate: float) -> str:
    return "falls" if rate < 0.9 else "rises" if rate > 1.1 else "flat"


def _ratio_band(ratio: float) -> str:
    return "<10" if ratio < 10 else "10-1000" if ratio <= 1000 else ">1000"


@functools.lru_cache(maxsize=1)
def _measured_gradients() -> Any:
    """The checker's own run of the measurement the exercise names (seeded: the same at every call)."""
    from helpers.experiments.gradient_paths import gradient_by_distance

    with torch.random.fork_rng():
        return gradient_by_distance(seq_len=32, embed_dim=32)


@checker
def check_gradient_prediction(*given: Any) -> CheckResult:
    """Run the measurement, then check the prediction recorded before it.

    The prediction says how ``||d y_last / d x_j||`` changes with the distance of ``x_j`` from the last position,
    for a freshly initialised GRU and for one self-attention layer, and by how much the GRU's gradient shrinks
    between distance 1 and the farthest input. The checker runs
    :func:`~helpers.experiments.gradient_paths.gradient_by_distance` over 32 tokens itself (3 seeds, once a
    session) and reads the shapes off it with :func:`~helpers.experiments.gradient_paths.geometric_decay_rate`
    (below 0.9 per token: falls; above 1.1: rises; else flat; attention without distance 0).

    Args:
        *given: Nothing: a prediction or a measurement handed in is refused.

    Returns:
        The verdict, which says which part of the prediction the measurement contradicts (chapter 1).
    """
    from helpers.experiments.gradient_paths import geometric_decay_rate

    if given:
        return verdict(False, "ch01.gradient.takes_nothing", key=GRADIENT_PREDICTION)
    record = recorded(GRADIENT_PREDICTION)
    if record is None:
        return verdict(False, "ch01.gradient.not_recorded", key=GRADIENT_PREDICTION)
    prediction = record.value
    if not isinstance(prediction, Mapping):
        return verdict(False, "ch01.gradient.not_a_dict", type=type(prediction).__name__)
    keys = ("gru", "attention", "gru_ratio")
    missing = [k for k in keys if k not in prediction]
    if missing:
        return verdict(False, "ch01.gradient.missing", missing=str(missing))
    if any(prediction[k] is ... for k in keys):
        return verdict(False, "ch01.gradient.ellipsis", shapes=str(list(GRADIENT_SHAPES)),
                       bands=str(list(GRU_RATIO_BANDS)))
    answer = {k: str(prediction[k]).strip().lower().replace(" ", "") for k in keys}
    for k, allowed in (("gru", GRADIENT_SHAPES), ("attention", GRADIENT_SHAPES), ("gru_ratio", GRU_RATIO_BANDS)):
        if answer[k] not in allowed:
            return verdict(False, "ch01.gradient.not_allowed", key=repr(k), allowed=str(list(allowed)),
                           value=repr(prediction[k]))
    grads = _measured_gradients()
    distance = [int(d) for d in grads.distance]
    rate_rnn = geometric_decay_rate(grads.rnn, grads.distance)
    rate_att = geometric_decay_rate(grads.attention[1:], grads.distance[1:])
    ratio = float(grads.rnn[distance.index(1)] / grads.rnn[-1])
    reveal(GRADIENT_PREDICTION)
    truth = {"gru": _shape_of(rate_rnn), "attention": _shape_of(rate_att), "gru_ratio": _ratio_band(ratio)}
    measured = phrase("ch01.gradient.measured", rate_rnn=float(rate_rnn), rate_att=float(rate_att), ratio=ratio,
                      far=distance[-1])
    if record.late:
        return verdict(False, "ch01.gradient.late", measured=measured)
    wrong = [k for k in keys if answer[k] != truth[k]]
    if not wrong:
        return verdict(True, "ch01.gradient.passed", measured=measured)
    reasons = joined([(f"ch01.gradient.reason_{k}", {}) for k in wrong])
    listed = {"en": ", ".join(wrong), "zh": "、".join(wrong)}
    return verdict(False, "ch01.gradient.wrong", wrong=listed, measured=measured, reasons=reasons)
