"""Exercise 3 of lab 1: where the model without attention breaks, read off the sweep.

Contract (stated in the lab): record ``predict(BREAKING_PREDICTION, n)`` (an int, or ``"never"``) before the
sweep; then ``my_breaking_length`` is the first evaluated length at which the *token* accuracy of the model
*without* attention of the asked hidden size (mean over the seeds) falls below ``threshold``, or ``None``.
The sweep's models are tested again, so a result made up or edited is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ... import seeding
from .. import CheckResult
from ..catalogue.ch01 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..predictions import recorded, reveal
from ..reader import checker, draw_int, reject, verdict

__all__ = ["check_breaking_length", "BREAKING_PREDICTION", "SWEEP_TOLERANCE", "reading_verdict"]

BREAKING_PREDICTION = "ch01.breaking_length"
"""The key of exercise 3's prediction (:func:`helpers.exercises.predictions.predict`), recorded before the sweep."""

SWEEP_TOLERANCE = 0.1
"""How far the token accuracy of a sweep's result may be from the checker's re-evaluation of its models on fresh
sequences (mean over the seeds, at any length): the test sets differ, nothing else."""


def _first_below(lengths: Sequence[int], accuracies: Sequence[float], threshold: float) -> int | None:
    return next((n for n, acc in zip(lengths, accuracies) if acc < threshold), None)


def _verify_sweep(result: Any, hidden_size: int, task: str) -> None:
    """Test the sweep's trained models without attention of size ``hidden_size`` again on fresh sequences; raise
    :class:`~helpers.exercises.reader.Rejected` when the result is not what they give (or they were never trained)."""
    from helpers.experiments.seq2seq_training import evaluate_seq2seq
    from helpers.rnn import Seq2SeqGRU
    from helpers.train import set_seed

    try:
        lengths, seeds = result.lengths, result.seeds
        accuracy = result.accuracy(False, hidden_size)
        models = {seed: result.models_by_seed.get((False, hidden_size, seed)) for seed in seeds}
    except Exception as error:  # a wrong `result` or hidden size: explain, never raise
        raise reject("ch01.breaking.unreadable", hidden_size=hidden_size, error=str(error)) from None
    for seed, model in models.items():
        if not isinstance(model, Seq2SeqGRU) or model.use_attention or model.hidden_size != hidden_size:
            raise reject("ch01.breaking.no_models", hidden=hidden_size, seed=seed)
        with torch.random.fork_rng():  # the reader's random state is left as it was
            set_seed(seed)
            initial = Seq2SeqGRU(model.vocab_size, model.embedding.embedding_dim, hidden_size, attention=False)
        if all(torch.equal(a, b) for a, b in zip(initial.state_dict().values(), model.state_dict().values())):
            raise reject("ch01.breaking.untrained", hidden=hidden_size, seed=seed)
    gen = seeding.fresh_generator()  # fresh test sequences: no accuracy can be computed for them in advance
    test_seed = draw_int(0, 2**31 - 1, gen)
    with torch.random.fork_rng():
        again = [sum(evaluate_seq2seq(model, n, task=task, num_samples=128, seed=test_seed + n)["token_accuracy"]
                     for model in models.values()) / len(models) for n in lengths]
    gaps = [abs(a - b) for a, b in zip(accuracy, again)]
    worst = max(range(len(gaps)), key=gaps.__getitem__)
    if gaps[worst] > SWEEP_TOLERANCE:
        raise reject("ch01.breaking.not_reproduced", hidden=hidden_size, length=lengths[worst],
                     recorded=accuracy[worst], again=again[worst], task=task, seed=gen.initial_seed())


def _prediction_value() -> Any:
    """The recorded prediction of the breaking length (an int or ``"never"``), or :class:`.Rejected`."""
    prediction = recorded(BREAKING_PREDICTION)
    if prediction is None:
        raise reject("ch01.breaking.no_prediction", key=BREAKING_PREDICTION)
    value = prediction.value
    if value is ...:
        raise reject("ch01.breaking.prediction_ellipsis", key=BREAKING_PREDICTION)
    if isinstance(value, str) and value.strip().lower() == "never":
        return "never"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise reject("ch01.breaking.prediction_not_a_length", value=repr(prediction.value))
    return value


def _prediction_phrase(value: Any, expected: int | None, lengths: Sequence[int]) -> dict[str, str]:
    """What the sweep says of the prediction, in every language (only once the reading is right)."""
    if value == "never" or expected is None:
        key = "ch01.breaking.prediction_right" if (value == "never") == (expected is None) else (
            "ch01.breaking.prediction_never" if value == "never" else "ch01.breaking.prediction_broke_never")
        return phrase(key, predicted=str(value), expected=str(expected))
    before = [n for n in lengths if n < expected]
    low = before[-1] if before else 0
    if low < value <= expected:
        return phrase("ch01.breaking.prediction_right", predicted=str(value), expected=str(expected))
    key = "ch01.breaking.prediction_early" if value <= low else "ch01.breaking.prediction_late"
    return phrase(key, predicted=str(value), expected=str(expected))


def reading_verdict(answer: int | None, result: Any, hidden_size: int, threshold: float) -> CheckResult:
    """The reading of the sweep: passed when ``answer`` is the breaking length, else the mix-up it is."""
    lengths = result.lengths
    plain = result.accuracy(False, hidden_size)
    expected = _first_below(lengths, plain, threshold)
    if answer == expected:
        return verdict(True, "ch01.breaking.read")

    def first_below(*args: Any) -> int | None:
        try:
            return _first_below(lengths, result.accuracy(*args), threshold)
        except Exception:  # a sweep without that model: no such mix-up  # noqa: BLE001
            return -1

    if answer not in lengths and answer is not None:
        return verdict(False, "ch01.breaking.not_evaluated", answer=str(answer), lengths=str(lengths))
    if answer == first_below(True, hidden_size):
        return verdict(False, "ch01.breaking.with_attention")
    if answer == first_below(False, hidden_size, "sequence_accuracy"):
        return verdict(False, "ch01.breaking.sequence", threshold=threshold)
    if expected is not None and answer is not None and lengths.index(answer) == lengths.index(expected) - 1:
        return verdict(False, "ch01.breaking.last_working", answer=answer,
                       accuracy=float(plain[lengths.index(answer)]))
    for other in result.hidden_sizes:
        if other != hidden_size and answer == first_below(False, other):
            return verdict(False, "ch01.breaking.other_hidden", other=other, hidden=hidden_size)
    return verdict(False, "ch01.breaking.not_quite", hidden=hidden_size, threshold=threshold)


@checker
def check_breaking_length(answer: Any, result: Any, hidden_size: int, *, threshold: float = 0.5,
                          task: str = "reverse") -> CheckResult:
    """Check the length at which the model without attention breaks, read off a bottleneck sweep.

    The breaking length is the first evaluation length at which the *token* accuracy of the model *without*
    attention of hidden size ``hidden_size`` (mean over the seeds) falls below ``threshold``. The sweep is not
    taken on trust: its trained models without attention are tested again on fresh sequences (their seed is in
    the verdict when they disagree), and their accuracy must be the one the result records (within
    :data:`.SWEEP_TOLERANCE`); models that were never trained are refused. The prediction recorded before the
    sweep is required; once the reading is right the verdict says how it compares.

    Args:
        answer: The reader's length (an int), or ``None`` if it never breaks in the range.
        result: The :class:`~helpers.experiments.bottleneck.BottleneckResult` of the sweep.
        hidden_size: The hidden size asked about.
        threshold: The accuracy that counts as broken.
        task: The task the sweep trained on (its models are tested on it again).

    Returns:
        The verdict (chapter 1).
    """
    if answer is ...:
        return verdict(False, "ch01.breaking.ellipsis")
    try:
        lengths = result.lengths
        plain = result.accuracy(False, hidden_size)
    except Exception as error:  # a wrong `result` or hidden size: explain, never raise
        return verdict(False, "ch01.breaking.unreadable", hidden_size=hidden_size, error=str(error))
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        if not (isinstance(answer, float) and answer.is_integer()):
            return verdict(False, "ch01.breaking.not_a_length", lengths=str(lengths), answer=repr(answer))
        answer = int(answer)
    predicted = _prediction_value()
    _verify_sweep(result, hidden_size, task)
    reading = reading_verdict(answer, result, hidden_size, threshold)
    if not reading.passed:
        return reading
    reveal(BREAKING_PREDICTION)
    prediction = recorded(BREAKING_PREDICTION)
    if prediction is not None and prediction.late:
        return verdict(False, "ch01.breaking.late", key=BREAKING_PREDICTION)
    expected = _first_below(lengths, plain, threshold)
    values = ", ".join(f"{n}: {a:.2f}" for n, a in zip(lengths, plain))
    remark = _prediction_phrase(predicted, expected, lengths)
    if expected is None:
        return verdict(True, "ch01.breaking.passed_never", hidden=hidden_size, values=values, prediction=remark)
    return verdict(True, "ch01.breaking.passed", hidden=hidden_size, threshold=threshold, expected=expected,
                   values=values, prediction=remark)
