"""What lab 2's score exercises share: the phrase "scores", the two lengths, the shape check, quoting a failure."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor

from ..catalogue.ch02 import MESSAGES
from ..messages import quoted
from ..reader import Rejected, as_tensor, draw_int, reject

SCORES = MESSAGES["ch02.what.scores"]
"""The phrase "scores" in every language (what a score function must return)."""


def two_lengths(low: int, high: int, generator: torch.Generator) -> tuple[int, int]:
    """Fresh ``L != S`` in ``[low, high]`` (a transposed result cannot pass by accident)."""
    L = draw_int(low, high, generator)
    S = low + (L - low + draw_int(1, high - low, generator)) % (high - low + 1)
    return L, S


def scores_of_shape(result: Any, query: Tensor, key: Tensor) -> Tensor:
    """``result`` if it is a tensor of scores of shape ``(L, S)``, else :class:`.Rejected` saying what it is."""
    result = as_tensor(result, SCORES)
    (L, E), S = query.shape, key.size(0)
    if result.shape == (S, L) and S != L:
        raise reject("ch02.scores.transposed", S=S, L=L)
    if result.shape != (L, S):
        raise reject("ch02.scores.shape", L=L, E=E, S=S, got=tuple(result.shape))
    return result


def max_error(a: Tensor, b: Tensor) -> float:
    return float((a.double() - b.double()).abs().max())


@contextmanager
def quoting_failure(key: str) -> Iterator[None]:
    """Inside: a rejected answer becomes the verdict ``key``, whose field ``failure`` quotes the rejection (a
    second call of the reader's function failed where the first one worked)."""
    try:
        yield
    except Rejected as rejected:
        raise reject(key, failure=quoted(rejected.verdict)) from None
