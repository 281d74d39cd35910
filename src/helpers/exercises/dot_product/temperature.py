"""Exercise 7 of lab 2: design the run that tells the cosine's bound from its division by the lengths.

Contract (stated in the lab, with :class:`~helpers.experiments.recall.RecallConfig`'s fields listed): a
``RecallConfig`` equal to ``score_learning.score_config("cosine")`` but for one field, ``scale``, a fixed factor
large enough that one slot can take most of the weight. The checker trains it and its two controls itself.
"""

from __future__ import annotations

import math
from dataclasses import fields
from numbers import Real
from typing import Any

from .. import CheckResult
from ..catalogue.ch02 import MESSAGES  # noqa: F401 (registers its messages)
from ..reader import checker, verdict

__all__ = ["check_temperature_ablation"]

_LIFTED_BOUND = 0.5
"""A factor lifts the bound enough to test it when one slot can take more than half the weight."""


def _design_verdict(config: Any, base: Any) -> CheckResult | None:
    """What makes the design unable to answer, before anything is trained; ``None`` when it can."""
    from helpers.experiments.recall import RecallConfig, RecallRun

    if isinstance(config, RecallRun):
        return verdict(False, "ch02.ablation.result_given")
    if type(config) is not RecallConfig:  # a subclass could change how the run is made
        return verdict(False, "ch02.ablation.not_config", type=type(config).__name__)
    changed = [f.name for f in fields(RecallConfig) if getattr(config, f.name) != getattr(base, f.name)]
    if config.score != "cosine":
        return verdict(False, "ch02.ablation.other_score", score=repr(config.score))
    if not changed:
        return verdict(False, "ch02.ablation.unchanged")
    if config.learned_scale:
        return verdict(False, "ch02.ablation.learned")
    if changed != ["scale"]:
        return verdict(False, "ch02.ablation.other_fields", changed=", ".join(n for n in changed if n != "scale"))
    if isinstance(config.scale, bool) or not isinstance(config.scale, Real) or not (
            math.isfinite(float(config.scale)) and float(config.scale) > 0):
        return verdict(False, "ch02.ablation.bad_factor", got=repr(config.scale))
    return None


@checker
def check_temperature_ablation(config: Any, *, seed: int = 0, target: float = 0.9) -> CheckResult:
    """Check the reader's ablation, then train it and its controls.

    The design: one :class:`~helpers.experiments.recall.RecallConfig` that differs from the chapter's plain-cosine
    run (``score_learning.score_config("cosine")``) only by a fixed factor on the scores, big enough that one slot
    can take most of the weight (a bound above 50 %). Then the checker trains it and its control, the
    plain-cosine run, both with seed ``seed``, and checks that it learns (held-out accuracy at least ``target``)
    where the control does not. A factor also spreads the scores at the start and makes every Adam step move them
    ``factor`` times as far: a second control, the plain cosine at ``factor`` times the learning rate, must not
    learn for the bound to be named. All runs train the same steps on the same batches from the same
    initialisation, measured on the same held-out sequences; the checker takes the settings, never a result.

    Args:
        config: The reader's settings.
        seed: Seed of the check's training runs.
        target: Held-out accuracy the run must reach.

    Returns:
        The verdict, which names what the design changes besides the factor, why the factor cannot tell, or what
        the runs measured.
    """
    from helpers.experiments import cosine_runs, score_learning

    base = score_learning.score_config("cosine")
    failure = _design_verdict(config, base)
    if failure is not None:
        return failure
    factor = float(config.scale)
    slots = 2 * config.num_pairs if config.slots == "tokens" else config.num_pairs
    best = 1.0 / (1.0 + (slots - 1) * math.exp(-2 * factor))  # the match at +factor, the others at -factor
    if best <= _LIFTED_BOUND:  # the match cannot even take most of the weight: the bound still binds
        return verdict(False, "ch02.ablation.bound_too_low", factor=factor, slots=slots, best=best,
                       lifted=_LIFTED_BOUND)
    accuracy = cosine_runs.train_accuracy(config, seed, "cosine, fixed factor")
    control = cosine_runs.plain_cosine_run(seed)[0]
    if accuracy < target:
        return verdict(False, "ch02.ablation.did_not_learn", best=best, accuracy=accuracy, steps=config.steps,
                       control=control)
    if control >= target:  # the control learned too: this seed cannot tell the two apart
        return verdict(False, "ch02.ablation.control_learned", accuracy=accuracy, control=control, seed=seed)
    step_control = cosine_runs.step_size_control(seed, factor)
    if step_control >= target:  # bigger steps alone learned: the run cannot name the bound
        return verdict(False, "ch02.ablation.steps_learned", accuracy=accuracy, factor=factor,
                       step_control=step_control, seed=seed)
    return verdict(True, "ch02.ablation.passed", factor=factor, accuracy=accuracy, steps=config.steps,
                   control=control, seed=seed, slots=slots, best=best,
                   bound_plain=score_learning.cosine_weight_bound(slots),
                   spread_plain=score_learning.initial_statistics(base)["spread"],
                   spread=score_learning.initial_statistics(config)["spread"], step_control=step_control)
