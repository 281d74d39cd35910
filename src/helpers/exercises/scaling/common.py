"""What lab 3's exercises share: a recorded prediction, a number, a relative tolerance."""

from __future__ import annotations

import math
from typing import Any

from torch import Tensor

from ..messages import phrase
from ..predictions import Prediction, recorded
from ..reader import reject


def prediction(key: str, what: str) -> Prediction:
    """The prediction recorded under ``key``, else :class:`~helpers.exercises.reader.Rejected` saying how to record
    one (nothing revealed); ``what`` names the catalogue's phrase for what it is (``"ch03.predict.number"``...)."""
    record = recorded(key)
    if record is None or record.value is ...:
        raise reject("ch03.predict.missing", key=key, what=phrase(what))
    return record


def number(answer: Any, what: dict[str, str]) -> float:
    """``answer`` as a finite number, else :class:`~helpers.exercises.reader.Rejected` naming ``what``."""
    if isinstance(answer, Tensor) and answer.numel() == 1:
        answer = answer.item()
    if answer is None or isinstance(answer, bool) or not isinstance(answer, (int, float)):
        raise reject("ch03.number.expected", what=what, type=type(answer).__name__, value=repr(answer))
    if not math.isfinite(answer):
        raise reject("ch03.number.finite", what=what, value=repr(answer))
    return float(answer)


def near(value: float, target: float, rtol: float) -> bool:
    return abs(value - target) <= rtol * abs(target) + 1e-12
