"""The extra exercise of chapter 3 (not in the lab): predict the attention entropy for a given ``d_k``.

Contract: record ``predict(ENTROPY_KEY, nats)`` before the checker runs.
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch
from torch import Tensor

from ... import seeding
from .. import CheckResult
from ..catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..predictions import reveal
from ..reader import checker, verdict
from .common import number, prediction

__all__ = ["ENTROPY_KEY", "expected_entropy", "check_entropy_prediction"]

ENTROPY_KEY = "ch03.entropy"
"""The prediction of the extra exercise — a mean entropy in nats."""


def _mean_entropy(scores: Tensor) -> float:
    p = torch.softmax(scores, dim=-1)  # (N, S)
    return float(-torch.special.xlogy(p, p).sum(-1).mean())


@lru_cache(maxsize=32)
def expected_entropy(d_k: int, num_keys: int = 16, *, scaled: bool = False, num_rows: int = 40_000) -> float:
    """Mean entropy (nats) of ``softmax(q . k_j * scale)`` over ``num_keys`` keys, N(0, 1) entries.

    A Monte Carlo estimate with ``num_rows`` rows and a fixed seed (standard error about 0.003 nats). Given ``q``,
    the scores ``q . k_j`` are independent ``N(0, |q|^2)`` with ``|q|^2 ~ chi^2(d_k)``, so the rows are drawn that
    way (cheap for any ``d_k``); the global random state is left as it was. Explained in chapter 3.

    Args:
        d_k: Size of queries and keys.
        num_keys: Keys per row.
        scaled: Divide the scores by ``sqrt(d_k)``.
        num_rows: Rows averaged.

    Returns:
        The mean entropy in nats.

    Raises:
        ValueError: ``d_k`` is not a positive int.
    """
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"d_k must be a positive int, got {d_k!r}")
    with torch.random.fork_rng(devices=[]):
        seeding.manual_seed(12345)
        squared_norm = torch.distributions.Chi2(torch.tensor(float(d_k), dtype=torch.float64)).sample((num_rows, 1))
        scores = torch.randn(num_rows, num_keys, dtype=torch.float64) * squared_norm.sqrt()  # (N, S)
    return _mean_entropy(scores / math.sqrt(d_k) if scaled else scores)


@lru_cache(maxsize=32)
def _entropy_at_std(std: float, num_keys: int, num_rows: int = 40_000) -> float:
    """Mean entropy of rows of ``num_keys`` independent ``N(0, std^2)`` scores."""
    gen = seeding.generator(54321)
    return _mean_entropy(torch.randn(num_rows, num_keys, generator=gen, dtype=torch.float64) * std)


@checker
def check_entropy_prediction(*, d_k: int = 256, num_keys: int = 16, scaled: bool = False) -> CheckResult:
    """Check the predicted mean attention entropy (nats) for random queries and keys of size ``d_k``.

    The prediction is the number recorded with ``predict(ENTROPY_KEY, value)`` before this call; without one the
    checker refuses and shows nothing. The reference is :func:`.expected_entropy`; a prediction within 0.03 nats
    (or 3%) passes.

    Args:
        d_k: Size of queries and keys in the question.
        num_keys: Keys per softmax row.
        scaled: Whether the question's scores are divided by ``sqrt(d_k)``.

    Returns:
        The verdict, naming the mistake (scaled vs unscaled, bits vs nats, variance vs standard deviation, the
        uniform entropy), and saying whether the prediction came late.
    """
    record = prediction(ENTROPY_KEY, "ch03.predict.nats")
    value = number(record.value, phrase("ch03.what.entropy"))
    right = expected_entropy(d_k, num_keys, scaled=scaled)
    reveal(ENTROPY_KEY)
    tolerance = max(0.03, 0.03 * right)
    setting = phrase("ch03.entropy.setting_scaled" if scaled else "ch03.entropy.setting_unscaled", d_k=d_k,
                     num_keys=num_keys)
    if abs(value - right) <= tolerance:
        return verdict(True, "ch03.entropy.late" if record.late else "ch03.entropy.passed", right=right,
                       setting=setting, num_keys=num_keys, log_keys=math.log(num_keys))
    if value < 0:
        return verdict(False, "ch03.entropy.negative")
    if abs(value - right / math.log(2)) <= tolerance / math.log(2):
        return verdict(False, "ch03.entropy.bits", value=value)
    if abs(value - expected_entropy(d_k, num_keys, scaled=not scaled)) <= tolerance:
        if scaled:
            return verdict(False, "ch03.entropy.unscaled", value=value)
        return verdict(False, "ch03.entropy.scaled", value=value, sqrt_d_k=math.sqrt(d_k))
    if not scaled and abs(value - _entropy_at_std(float(d_k), num_keys)) <= tolerance:
        return verdict(False, "ch03.entropy.std_d_k", value=value, d_k=d_k, sqrt_d_k=math.sqrt(d_k))
    if abs(value - math.log(num_keys)) <= 0.02:
        return verdict(False, "ch03.entropy.uniform", value=value, num_keys=num_keys, setting=setting)
    return verdict(False, "ch03.entropy.too_high" if value > right else "ch03.entropy.too_low", value=value)
