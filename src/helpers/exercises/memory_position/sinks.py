"""Exercise 8 of lab 6.3-6.6: which caches keep a small RoPE model working past its window (attention sinks).

Contract (stated in the lab): record ``predict(SINK_CACHES, [...])`` (names of :data:`.CACHE_CHOICES`, possibly none)
before the run; then pass what ``helpers.experiments.attention_sinks.sink_runs(config, seeds=...)`` returned, and
``config``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ... import seeding
from .. import CheckResult
from ..catalogue.ch06_long_context import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..predictions import recorded, reveal
from ..reader import checker, draw_int, verdict

__all__ = ["SINK_CACHES", "CACHE_CHOICES", "WORKING_DROP", "check_sink_prediction"]

SINK_CACHES = "ch06_long_context.sink_caches"
"""The key under which exercise 8's prediction is recorded — ``lc.predict(lc.SINK_CACHES, [...])``."""
CACHE_CHOICES = ("full", "window", "sinks")
"""The caches of exercise 8 — the full cache, the window only, the window with 4 sinks (``"sinks=4"``)."""
WORKING_DROP = 0.1
"""A cache "keeps the model working" past the window when its accuracy on the predictable tokens, once the cache is
full, is at most this much below the model's accuracy inside its training length."""

_KIND = {"full": "full", "window": "window", "sinks": "sinks=4"}
"""The run's cache kind (:data:`helpers.experiments.attention_sinks.KINDS`) behind each choice."""
_RERUNS: dict[tuple[Any, int], Any] = {}
"""The checker's own runs, by (config, seed) — what the reader's runs are compared with (trained once a session)."""


def _same_run(a: Any, b: Any) -> bool:
    def close(u: Sequence[float], v: Sequence[float]) -> bool:
        return len(u) == len(v) and all((math.isnan(p) and math.isnan(q)) or abs(p - q) <= 1e-6 for p, q in zip(u, v))

    try:
        return (a.bins == b.bins and close(a.sink_weight, b.sink_weight)
                and all(close(a.accuracy[k], b.accuracy[k]) and close(a.loss[k], b.loss[k])
                        and close([a.mean_accuracy[k], a.mean_loss[k], a.in_length_accuracy[k]],
                                  [b.mean_accuracy[k], b.mean_loss[k], b.in_length_accuracy[k]])
                        for k in b.mean_accuracy))
    except (AttributeError, KeyError, TypeError):
        return False


def _explanation(again: Any, config: Any, inside: float) -> dict[str, str]:
    works = {choice: again.mean_accuracy[kind] >= inside - WORKING_DROP for choice, kind in _KIND.items()}
    loss = {c: again.mean_loss[_KIND[c]] for c in CACHE_CHOICES}
    parts = [phrase("ch06_long_context.sinks.sink_weight", weight=again.sink_weight[0])]
    parts += [phrase(f"ch06_long_context.sinks.{c}_{'works' if works[c] else 'fails'}",
                     accuracy=again.mean_accuracy[_KIND[c]], inside=inside, train_length=config.train_length,
                     cache_size=config.cache_size) for c in CACHE_CHOICES]
    if works["window"] and works["sinks"]:
        parts.append(phrase("ch06_long_context.sinks.loss_lower" if loss["sinks"] < loss["window"]
                            else "ch06_long_context.sinks.loss_not_lower", window=loss["window"], sinks=loss["sinks"]))
    return {lang: ("" if lang == "zh" else " ").join(p[lang] for p in parts) for lang in parts[0]}


@checker
def check_sink_prediction(runs: list[Any], config: Any) -> CheckResult:
    """Compare the recorded prediction of which caches keep the model working past the window with the run.

    Without a prediction the checker refuses and shows nothing; one recorded after the result was shown is refused
    as such. One of ``runs``, drawn afresh, is trained and decoded again with ``config`` (once per setting and seed in
    a session) and must come out the same. A cache keeps the model working when its accuracy on the predictable
    tokens, once the cache is full, is at most :data:`.WORKING_DROP` below the full cache's accuracy inside the
    training length. The settings must decode past the training length (``decode_factor >= 2``) with a cache smaller
    than it, and the model must have learned the task inside its length (accuracy at least 0.8).

    Args:
        runs: The :class:`~helpers.experiments.attention_sinks.SinkRun` list.
        config: The :class:`~helpers.experiments.attention_sinks.SinkConfig` it was made with.

    Returns:
        Passes when the prediction was recorded in time and is right; the message shows the measured accuracies and
        losses and explains each cache's outcome.
    """
    from helpers.experiments import attention_sinks as sinks

    if not isinstance(runs, list) or not runs or not all(isinstance(r, sinks.SinkRun) for r in runs):
        return verdict(False, "ch06_long_context.sinks.not_runs", got=type(runs).__name__)
    if not isinstance(config, sinks.SinkConfig):
        return verdict(False, "ch06_long_context.sinks.not_config", got=type(config).__name__)
    if config.decode_factor < 2 or config.cache_size >= config.train_length:
        return verdict(False, "ch06_long_context.sinks.unfair", decode_factor=config.decode_factor,
                       cache_size=config.cache_size, train_length=config.train_length)
    prediction = recorded(SINK_CACHES)
    if prediction is None:
        return verdict(False, "ch06_long_context.sinks.no_prediction", choices=str(list(CACHE_CHOICES)))
    predicted = prediction.value
    if (not isinstance(predicted, (list, tuple, set, frozenset)) or not all(isinstance(p, str) for p in predicted)
            or not set(predicted) <= set(CACHE_CHOICES) or len(set(predicted)) != len(list(predicted))):
        return verdict(False, "ch06_long_context.sinks.bad_prediction", choices=str(list(CACHE_CHOICES)),
                       got=repr(predicted))
    run = runs[draw_int(0, len(runs) - 1, seeding.fresh_generator())]
    key = (config, run.seed)
    if key not in _RERUNS:
        try:
            _RERUNS[key] = sinks.sink_runs(config, seeds=(run.seed,))[0]
        except (TypeError, ValueError) as error:
            return verdict(False, "ch06_long_context.sinks.not_config", got=f"{config!r}: {error}")
    again = _RERUNS[key]
    if not _same_run(run, again):
        return verdict(False, "ch06_long_context.sinks.not_reproduced", seed=run.seed)
    inside = again.in_length_accuracy["full"]
    if inside < 0.8:
        return verdict(False, "ch06_long_context.sinks.untrained", accuracy=inside, steps=config.steps)
    reveal(SINK_CACHES)
    measured = [c for c in CACHE_CHOICES if again.mean_accuracy[_KIND[c]] >= inside - WORKING_DROP]
    fields = dict(predicted=str(sorted(predicted, key=CACHE_CHOICES.index)), measured=str(measured),
                  explanation=_explanation(again, config, inside), seed=run.seed, cache_size=config.cache_size,
                  length=config.decode_factor * config.train_length, drop=WORKING_DROP)
    if prediction.late:
        return verdict(False, "ch06_long_context.sinks.late", **fields)
    return verdict(set(predicted) == set(measured), "ch06_long_context.sinks.right" if set(predicted) == set(measured)
                   else "ch06_long_context.sinks.wrong", **fields)
