"""Exercise 6 of lab 1: design a control experiment: is attention's advantage only its extra parameters?

Contract (stated in the lab): ``my_design`` is a dict with ``attention_hidden``, ``plain_hidden`` (ints),
``seeds`` and ``lengths`` (lists of ints, the same for both models) and ``steps`` (an int), within the stated
minimums (:data:`.CONTROL_MIN_STEPS`, :data:`.CONTROL_MAX_SHORTEST`, :data:`.CONTROL_MIN_LONGEST`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import CheckResult
from ..catalogue.ch01 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..reader import checker, verdict

__all__ = ["parameter_count", "check_control_design", "CONTROL_MIN_STEPS", "CONTROL_MAX_SHORTEST",
           "CONTROL_MIN_LONGEST"]

CONTROL_MIN_STEPS = 300
"""The fewest training steps of a control — the chapter's budget, below which neither model has learned the task."""
CONTROL_MAX_SHORTEST = 8
"""The shortest length of a control must be at most this — a length both models still handle."""
CONTROL_MIN_LONGEST = 16
"""The longest length of a control must be at least this — past where the model without attention of the lab's
size breaks (near 10 symbols in chapter 1), where the two can differ at all."""


def parameter_count(hidden_size: int, *, attention: bool, vocab_size: int = 12, embed_dim: int = 16) -> int:
    """Number of parameters of the chapter's :class:`~helpers.rnn.Seq2SeqGRU` (the lab's sizes by default)."""
    from helpers.rnn import Seq2SeqGRU

    return sum(p.numel() for p in Seq2SeqGRU(vocab_size, embed_dim, hidden_size, attention=attention).parameters())


def _design_fault(design: Any) -> CheckResult | None:
    """What makes the design unreadable or weak before any parameter is counted; ``None`` if nothing."""
    keys = ("attention_hidden", "plain_hidden", "seeds", "lengths", "steps")
    if not isinstance(design, Mapping):
        return verdict(False, "ch01.control.not_a_dict", keys=str(list(keys)), type=type(design).__name__)
    missing = [k for k in keys if k not in design]
    if missing:
        return verdict(False, "ch01.control.missing", missing=str(missing))
    if any(design[k] is ... for k in keys):
        return verdict(False, "ch01.control.ellipsis")
    for k in ("seeds", "lengths", "steps"):
        if isinstance(design[k], Mapping):  # one value per model: the arms would differ in more than attention
            return verdict(False, "ch01.control.per_model", key=repr(k))
    for k in ("attention_hidden", "plain_hidden", "steps"):
        value = design[k]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return verdict(False, "ch01.control.not_positive", key=repr(k), value=repr(value))
    try:
        seeds = {int(s) for s in design["seeds"]}
        lengths = {int(n) for n in design["lengths"]}
    except Exception:  # not a sequence of ints
        return verdict(False, "ch01.control.not_lists")
    if len(seeds) < 3:
        return verdict(False, "ch01.control.few_seeds", n=len(seeds))
    if len(lengths) < 3 or min(lengths) < 1:
        return verdict(False, "ch01.control.few_lengths")
    if max(lengths) < CONTROL_MIN_LONGEST:
        return verdict(False, "ch01.control.too_short", longest=max(lengths), minimum=CONTROL_MIN_LONGEST)
    if min(lengths) > CONTROL_MAX_SHORTEST:
        return verdict(False, "ch01.control.no_short", shortest=min(lengths), maximum=CONTROL_MAX_SHORTEST)
    if design["steps"] < CONTROL_MIN_STEPS:
        return verdict(False, "ch01.control.few_steps", steps=design["steps"], minimum=CONTROL_MIN_STEPS)
    return None


@checker
def check_control_design(design: Any) -> CheckResult:
    """Check the design of a control experiment: is attention's advantage only its extra parameters?

    A fair control gives the model *without* attention at least as many parameters as the one with (at most 1.5
    times as many: :func:`.parameter_count` counts them), and changes nothing else: one list of at least 3 seeds,
    one list of at least 3 lengths (from at most :data:`.CONTROL_MAX_SHORTEST` to at least
    :data:`.CONTROL_MIN_LONGEST`) and one number of steps (at least :data:`.CONTROL_MIN_STEPS`), for both models.

    Args:
        design: The reader's dict.

    Returns:
        The verdict, which names what makes the design unfair or weak (chapter 1).
    """
    fault = _design_fault(design)
    if fault is not None:
        return fault
    attention_params = parameter_count(design["attention_hidden"], attention=True)
    plain_params = parameter_count(design["plain_hidden"], attention=False)
    counts = phrase("ch01.control.counts", attention_hidden=design["attention_hidden"],
                    attention_params=attention_params, plain_hidden=design["plain_hidden"], plain_params=plain_params)
    if design["plain_hidden"] == design["attention_hidden"]:
        return verdict(False, "ch01.control.same_hidden", counts=counts)
    if plain_params < attention_params:
        return verdict(False, "ch01.control.fewer", counts=counts)
    if plain_params > 1.5 * attention_params:
        return verdict(False, "ch01.control.too_many", counts=counts)
    lengths = sorted({int(n) for n in design["lengths"]})
    return verdict(True, "ch01.control.passed", counts=counts, n_seeds=len({int(s) for s in design["seeds"]}),
                   steps=design["steps"], lengths=str(lengths))
