"""Predictions made before the result is shown: what an exercise that asks "predict, then run" records.

A prediction is worth something only if it was made before its result was seen. An exercise that
asks for one has two steps: ``predict(exercise, value)`` records the reader's prediction, then the
checker runs the experiment itself, shows the result and compares
(:func:`~helpers.exercises.predictions.reveal`). A prediction
recorded after its exercise's result was shown in this session is kept but marked ``late``, and the
checker says so instead of "your prediction was right"; a checker called with no prediction
recorded refuses to show the result.

Example::

    ex.predict("ch04.head_ablation", 1)       # the reader's cell, before the run
    ex.check_head_ablation(score_heads)        # runs it; compares with the recorded 1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Prediction", "predict", "recorded", "reveal"]


@dataclass(frozen=True)
class Prediction:
    """A reader's prediction.

    Attributes:
        exercise: The exercise's key, e.g. ``"ch04.head_ablation"``.
        value: What the reader predicted.
        late: Whether it was recorded after that exercise's result had been shown.
    """

    exercise: str
    value: Any
    late: bool


_predictions: dict[str, Prediction] = {}
_revealed: set[str] = set()


def predict(exercise: str, value: Any) -> Prediction:
    """Record the reader's prediction for ``exercise`` (a later call replaces it).

    Args:
        exercise: The exercise's key, as its lab names it.
        value: The prediction.

    Returns:
        The recorded :class:`~helpers.exercises.predictions.Prediction`.

    Raises:
        TypeError: ``exercise`` is not a string.
        ValueError: ``value`` is ``None`` (write a prediction, then record it).
    """
    if not isinstance(exercise, str):
        raise TypeError(f"exercise must be the exercise's key (a str), got {type(exercise).__name__}")
    if value is None:
        raise ValueError("value is None: write your prediction first, then record it")
    prediction = Prediction(exercise, value, late=exercise in _revealed)
    _predictions[exercise] = prediction
    return prediction


def recorded(exercise: str) -> Prediction | None:
    """The prediction recorded for ``exercise`` in this session, or ``None``."""
    return _predictions.get(exercise)


def reveal(exercise: str) -> None:
    """Mark ``exercise``'s result as shown: a prediction recorded from now on is ``late``."""
    _revealed.add(exercise)


def _forget(exercise: str | None = None) -> None:
    """Forget the predictions and shown results of ``exercise`` (``None``: of every exercise).

    For the package's own tests, which start each case from a fresh session. It is private, and the
    labs never call it: a public way to forget that a result was shown would let a prediction made
    after seeing the result count as made before it.
    """
    if exercise is None:
        _predictions.clear()
        _revealed.clear()
    else:
        _predictions.pop(exercise, None)
        _revealed.discard(exercise)
