"""Exercise 5 of lab 6.1-6.2: rescue the failing Post-LN run, name the mechanism, and predict warm-up alone.

Contract (stated in the lab): record ``predict(WARMUP_PREDICTION, True or False)`` first; ``fixed_settings`` is a
dict of settings of :data:`.FAILING_SETTINGS` (within :data:`.SETTING_RANGES`; one left out keeps its failing
value) and ``mechanism`` one letter of :data:`.MECHANISMS`. The checker trains the settings itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...experiments.post_ln_rescue import FAILING_SETTINGS, rescue_run
from .. import CheckResult
from ..catalogue.ch06_training import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import joined, phrase
from ..predictions import recorded, reveal
from ..reader import checker, verdict

__all__ = ["FAILING_SETTINGS", "SETTING_RANGES", "MECHANISMS", "WARMUP_PREDICTION", "check_post_ln_fix"]

SETTING_RANGES: dict[str, str] = {"norm_first": "True or False", "lr": "0.0001 to 0.1",
                                  "warmup_steps": "0 to steps - 1", "clip_grad_norm": "None or above 0",
                                  "steps": "80 to 160"}
"""What :func:`.check_post_ln_fix` accepts for each setting — the failing run's 80 steps at least (more steps alone is
not a fix), 160 at most (the lab's time budget)."""

MECHANISMS: dict[str, str] = {"a": "lr", "b": "clip_grad_norm", "c": "warmup_steps", "d": "norm_first", "e": "steps"}
"""The choices of the lab's exercise 5 (each stated there) — the setting whose effect each one explains."""

_SOUND = frozenset({"a", "c", "d"})
"""The choices whose mechanism is right (``b`` and ``e`` state mechanisms the chapter refutes)."""

WARMUP_PREDICTION = "ch06.warmup_alone"
"""The key of exercise 5's prediction — does a 30-step warm-up alone rescue the failing run in every seed?"""

_WARMUP_ALONE = (("warmup_steps", 30),)


def _valid(name: str, value: Any, steps: int) -> bool:
    if name == "norm_first":
        return isinstance(value, bool)
    if name == "clip_grad_norm":
        return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    if name == "lr":
        return 1e-4 <= value <= 0.1
    if name == "steps":
        return isinstance(value, int) and 80 <= value <= 160
    return isinstance(value, int) and 0 <= value < steps  # warmup_steps


def _changes(settings: Mapping[str, Any]) -> dict[str, Any]:
    changed = {}
    for name, old in FAILING_SETTINGS.items():
        new = settings.get(name, old)
        same = (new is None and old is None) or (
            new is not None and old is not None and math.isclose(float(new), float(old), rel_tol=1e-9))
        if not same:
            changed[name] = new
    return changed


def _describe(changes: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in changes.items())


def _form_fault(settings: Any, mechanism: Any, seeds: Any) -> CheckResult | None:
    """What makes the answer unreadable, before anything is trained; ``None`` when nothing does."""
    from helpers.experiments import training_failures as tf

    if isinstance(settings, tf.RunResult):
        return verdict(False, "ch06_training.fix.result_not_settings")
    if not isinstance(settings, Mapping):
        return verdict(False, "ch06_training.fix.not_settings", type=type(settings).__name__)
    unknown = [str(name) for name in settings if name not in FAILING_SETTINGS]
    if unknown:
        return verdict(False, "ch06_training.fix.unknown_setting", names=", ".join(unknown),
                       known=", ".join(FAILING_SETTINGS))
    steps = settings.get("steps", FAILING_SETTINGS["steps"])
    steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else FAILING_SETTINGS["steps"]
    for name in FAILING_SETTINGS:
        if name in settings and not _valid(name, settings[name], steps):
            return verdict(False, "ch06_training.fix.bad_setting", name=name, got=repr(settings[name]),
                           allowed=phrase(f"ch06_training.fix.range_{name}"))
    if (mechanism.strip().lower() if isinstance(mechanism, str) else None) not in MECHANISMS:
        return verdict(False, "ch06_training.fix.no_mechanism", got=repr(mechanism), letters=", ".join(MECHANISMS))
    if (isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or len(set(seeds)) < 2
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)):
        return verdict(False, "ch06_training.fix.one_seed")
    return None


def _still_failing(changes: dict[str, Any], runs: list[Any], losses: dict[str, str]) -> CheckResult:
    from helpers.experiments import training_failures as tf

    hint = phrase("ch06_training.fix.no_hint")
    if set(changes) == {"clip_grad_norm"}:
        hint = phrase("ch06_training.fix.hint_clip")
    elif set(changes) == {"warmup_steps"}:
        hint = phrase("ch06_training.fix.hint_warmup", steps=changes["warmup_steps"])
        if changes["warmup_steps"] == 30:
            reveal(WARMUP_PREDICTION)  # this message shows the predicted result
    elif set(changes) == {"norm_first"}:
        hint = phrase("ch06_training.fix.hint_pre_ln")
    elif set(changes) == {"steps"}:
        hint = phrase("ch06_training.fix.hint_steps")
    elif "lr" in changes and changes["lr"] <= 1e-3:
        hint = phrase("ch06_training.fix.hint_low_lr", lr=changes["lr"])
    elif "lr" in changes and changes["lr"] > FAILING_SETTINGS["lr"]:
        hint = phrase("ch06_training.fix.hint_high_lr")
    return verdict(False, "ch06_training.fix.still_failing", changes=_describe(changes),
                   failed=sum(r.failed for r in runs), n=len(runs), losses=losses, threshold=0.9 * tf.CHANCE, hint=hint)


@checker
def check_post_ln_fix(settings: Any, mechanism: Any, seeds: Sequence[int] = (0, 1)) -> CheckResult:
    """Check the reader's rescue of the failing Post-LN run (:data:`.FAILING_SETTINGS`).

    The checker trains ``settings`` itself, seeded, in every seed of ``seeds`` (at least 2): a run result made
    elsewhere is not evidence. Each run must train (final loss below 90 % of chance). ``mechanism`` must be sound and
    name a setting the fix changed; with several changes each one is also run alone, and the chosen one must be one
    that trains alone when another does. The prediction recorded before (``predict(WARMUP_PREDICTION, ...)``) is
    then compared with a run of the failing setting plus a 30-step warm-up; without a prediction nothing is run.

    Args:
        settings: The reader's settings, e.g. ``{**FAILING_SETTINGS, "lr": 1e-2}``.
        mechanism: The letter of the reader's choice (``"a"`` ... ``"e"``).
        seeds: The seeds the fix must train in (at least 2, distinct).

    Returns:
        The verdict.
    """
    from helpers.experiments import training_failures as tf

    prediction = recorded(WARMUP_PREDICTION)
    if prediction is None:
        return verdict(False, "ch06_training.fix.no_prediction", key=WARMUP_PREDICTION)
    if not isinstance(prediction.value, bool):
        return verdict(False, "ch06_training.fix.prediction_not_bool", got=repr(prediction.value))
    fault = _form_fault(settings, mechanism, seeds)
    if fault is not None:
        return fault
    choice, seeds, changes = mechanism.strip().lower(), tuple(seeds), _changes(settings)
    if not changes:
        return verdict(False, "ch06_training.fix.unchanged")
    runs = [rescue_run(seed, tuple(changes.items())) for seed in seeds]
    losses = joined([("ch06_training.fix.seed_loss", {"seed": r.seed, "loss": r.final_loss}) for r in runs], "list")
    if any(r.failed for r in runs):
        return _still_failing(changes, runs, losses)
    if choice not in _SOUND:
        return verdict(False, f"ch06_training.fix.wrong_{choice}", losses=losses)
    credited = MECHANISMS[choice]
    if credited not in changes:
        return verdict(False, "ch06_training.fix.mechanism_unchanged", choice=choice, setting=credited,
                       changes=_describe(changes))
    alone = phrase("ch06_training.fix.no_hint")
    if len(changes) > 1:
        trained = {name: sum(not rescue_run(seed, ((name, value),)).failed for seed in seeds)
                   for name, value in changes.items()}
        if changes.get("warmup_steps") == 30:
            reveal(WARMUP_PREDICTION)  # the message shows the 30-step warm-up alone
        measured = joined([("ch06_training.fix.alone_part", {"setting": f"{name}={value!r}", "trained": trained[name],
                                                             "n": len(seeds)}) for name, value in changes.items()])
        if trained[credited] < len(seeds) and any(count == len(seeds) for count in trained.values()):
            return verdict(False, "ch06_training.fix.mechanism_not_alone", choice=choice, setting=credited,
                           parts=measured)
        together = all(count < len(seeds) for count in trained.values())
        alone = phrase("ch06_training.fix.together" if together else "ch06_training.fix.alone", parts=measured)
    rescued = sum(not rescue_run(seed, _WARMUP_ALONE).failed for seed in seeds)
    reveal(WARMUP_PREDICTION)
    fact = rescued == len(seeds)
    judged = phrase("ch06_training.fix.prediction_late") if prediction.late else phrase(
        "ch06_training.fix.prediction_right" if fact == prediction.value else "ch06_training.fix.prediction_wrong",
        predicted=prediction.value)
    return verdict(True, "ch06_training.fix.passed", changes=_describe(changes), losses=losses, chance=tf.CHANCE,
                   mechanism=phrase(f"ch06_training.fix.right_{choice}"), alone=alone, rescued=rescued, n=len(seeds),
                   verdict=judged)
