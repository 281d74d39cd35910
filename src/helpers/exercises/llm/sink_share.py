"""Exercise 2 of lab 7: predict how much attention goes to the first token, then measure it.

Contract (stated in the lab): record ``predict(SINK_SHARE, value)`` first, ``value`` the mean over the 30 layers
of the weight on the first token (a number between 0 and 1); ``first_token_share(weights, skip)`` takes every
layer's weights ``(N, B, H, L, L)`` and returns ``(N,)``: each layer's mean weight on token 0, over the sequences,
the heads and the queries ``skip .. L - 1``. The package is refused while it runs. The checker tries it on random
weights, then on the model's weights on a passage of the package's own prose that it draws itself, and compares
the measured mean with the prediction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch07 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..predictions import recorded, reveal
from ..reader import allclose, as_tensor, call_watched, checker, draw_int, verdict
from .common import check_model, model_weights, random_weights

__all__ = ["SINK_SHARE", "CLOSE", "check_sink_share", "share", "CASES"]

SINK_SHARE = "ch07.sink_share"
"""The key under which exercise 2's prediction is recorded — ``predict(SINK_SHARE, 0.3)``."""
CLOSE = 0.1
"""A prediction within this of the measured mean share is "close"."""
PASSAGE = 96
"""Tokens of the passage the checker reads."""
SKIP = 16
"""The queries left out at the start of the passage (the first ones have few keys to choose from)."""

CASES = (
    ("2 layers, 3 heads, 6 tokens, skip 2", dict(layers=2, batch=2, heads=3, length=6, skip=2)),
    ("3 layers, 2 heads, 5 tokens, skip 1", dict(layers=3, batch=1, heads=2, length=5, skip=1)),
)


def share(weights: Tensor, skip: int) -> Tensor:
    """The reference: each layer's mean weight on token 0 over sequences, heads and queries ``skip ..``; ``(N,)``."""
    return weights[..., skip:, 0].mean(dim=(1, 2, 3))  # (N, B, H, L - skip) -> (N,)


MISTAKES = (
    Mistake("ch07.sink.no_skip", lambda w, s: share(w, 0) if s else None),
    Mistake("ch07.sink.row", lambda w, s: w[..., 0, :].mean(dim=(1, 2, 3))),
    Mistake("ch07.sink.last", lambda w, s: w[..., s:, -1].mean(dim=(1, 2, 3))),
    Mistake("ch07.sink.per_head", lambda w, s: w[..., s:, 0].mean(dim=(1, 3))),
)


def _passage(tokenizer: Any, gen: torch.Generator) -> Tensor:
    from helpers.experiments.llm_text import package_prose

    ids = torch.tensor(tokenizer(package_prose()).input_ids)
    start = draw_int(0, ids.numel() - PASSAGE, gen)
    return ids[start:start + PASSAGE][None]  # (1, PASSAGE)


@checker
def check_sink_share(fn: Callable[[Tensor, int], Tensor], model: Any, tokenizer: Any) -> CheckResult:
    """Check ``fn(weights, skip) -> (N,)``, then measure the sink share on ``model`` and compare the prediction.

    No prediction recorded: refused before anything is run or shown. Two named cases of random causal weights,
    then the model's weights on a passage of :func:`helpers.experiments.llm_text.package_prose` drawn with a fresh
    generator (``PASSAGE`` tokens, queries from ``SKIP`` on). The result is shown, and the prediction
    marked as revealed, only once the function is right.

    Args:
        fn: The reader's function.
        model: SmolLM2-135M (``load_smollm2()[0]``).
        tokenizer: its tokenizer.

    Returns:
        The verdict, with the measured share (mean over layers, and the layers at its extremes).
    """
    model = check_model(model)
    prediction = recorded(SINK_SHARE)
    if prediction is None:
        return verdict(False, "ch07.sink.no_prediction", key=SINK_SHARE)
    value = prediction.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return verdict(False, "ch07.sink.bad_prediction", got=repr(value))
    measured: dict[str, Tensor] = {}

    def one(case: Case) -> CheckResult | None:
        if case.name == "fresh":
            weights, skip = model_weights(model, _passage(tokenizer, case.generator)), SKIP
        else:
            skip = case["skip"]
            weights = random_weights(case.generator, case["layers"], case["batch"], case["heads"], case["length"])
        out = as_tensor(call_watched(fn, weights.clone(), skip), phrase("ch07.what.share"))
        right = share(weights, skip)
        if allclose(out, right, rtol=1e-4, atol=1e-5):
            measured["share"] = right
            return None
        mistake = first_mistake(out, MISTAKES, weights, skip, same=lambda a, b: allclose(a, b, rtol=1e-4, atol=1e-5))
        if mistake is not None:
            return verdict(False, mistake.key)
        if out.shape != right.shape:
            return verdict(False, "ch07.sink.shape", expected=tuple(right.shape), got=tuple(out.shape))
        return verdict(False, "ch07.sink.wrong", case=case.name)

    failure = each_case(one, CASES, seed=7200, fresh=lambda gen: {})
    if failure is not None:
        return failure
    reveal(SINK_SHARE)
    per_layer = measured["share"]
    mean = float(per_layer.mean())
    fields = dict(predicted=float(value), measured=mean, low=float(per_layer.min()), low_layer=int(per_layer.argmin()),
                  high=float(per_layer.max()), high_layer=int(per_layer.argmax()), close=CLOSE)
    if prediction.late:
        return verdict(True, "ch07.sink.passed_late", **fields)
    key = "ch07.sink.passed_close" if abs(value - mean) <= CLOSE else "ch07.sink.passed_far"
    return verdict(True, key, **fields)

