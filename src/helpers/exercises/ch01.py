"""Checkers for the exercises of chapter 1, "Why attention" (``notebooks/01-bottleneck-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a missing ``tanh``, a transposed weight, a mask applied at the
wrong moment, the wrong curve read off a figure.

- :func:`check_additive_scores`: Bahdanau's score ``v^T tanh(W_q s + W_k h_j)``.
- :func:`check_masked_softmax`: attention weights over padded encoder states.
- :func:`check_breaking_length`: where the model without attention breaks, read off the sweep.
- :func:`mystery_alignments` and :func:`check_task_names`: name the task from its alignment.
- :func:`check_gradient_prediction`: a prediction, written before the run, of how the gradient
  of the last output falls with distance in a GRU and in attention.
- :func:`check_control_design`: a control experiment the reader designs: is attention's
  advantage only its extra parameters?

The two from-scratch exercises (1 and 2) run the reader's function with the package's own
implementation switched off (:func:`helpers.exercises.guard.package_disabled`): an answer that
just calls it is rejected, by name.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch01`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`), as :mod:`helpers.exercises.ch04` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable

import torch
from torch import Tensor

from helpers.attention import masked_softmax
from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch01 import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.guard import CallWatch, PackageCallError, delegation_verdict
from helpers.exercises.messages import LANGUAGES, phrase, text
from helpers.exercises.reader import (
    Rejected,
    allclose,
    as_tensor,
    call_reader_function,
    call_watched,
    checker,
)
from helpers.scores import additive_scores

__all__ = [
    "check_additive_scores",
    "check_masked_softmax",
    "check_breaking_length",
    "MYSTERY_LABELS",
    "mystery_alignments",
    "check_task_names",
    "GRADIENT_SHAPES",
    "GRU_RATIO_BANDS",
    "check_gradient_prediction",
    "parameter_count",
    "check_control_design",
]


_SEPARATOR = {"en": "; ", "zh": "；"}
"""How the clauses of a message made of several hints are joined, per language."""


def _joined(parts: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """Several messages ``(key, fields)`` joined into one phrase, in every language."""
    return {language: _SEPARATOR[language].join(text(key, language, **fields) for key, fields in parts)
            for language in LANGUAGES}


# --------------------------------------------------------------------------------------------
# Exercise 1: the additive (Bahdanau) score
# --------------------------------------------------------------------------------------------


def _additive_inputs(seed: int = 0) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """A decoder state per sequence, encoder states and weights, with all sizes different."""
    gen = torch.Generator().manual_seed(seed)
    batch, length, e_q, e_k, hidden = 2, 5, 3, 4, 6
    query = torch.randn(batch, e_q, generator=gen, dtype=torch.float64)  # (B, E_q)
    keys = torch.randn(batch, length, e_k, generator=gen, dtype=torch.float64)  # (B, S, E_k)
    w_q = torch.randn(hidden, e_q, generator=gen, dtype=torch.float64)  # (A, E_q)
    w_k = torch.randn(hidden, e_k, generator=gen, dtype=torch.float64)  # (A, E_k)
    v = torch.randn(hidden, generator=gen, dtype=torch.float64)  # (A,)
    return query, keys, w_q, w_k, v


@checker
def check_additive_scores(fn: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], *,
                          language: str | None = None) -> CheckResult:
    """Check ``fn(query, keys, w_q, w_k, v)``: the additive scores ``v^T tanh(W_q s + W_k h_j)``.

    Args:
        fn: The reader's function. ``query`` is one decoder state per sequence ``(B, E_q)``,
            ``keys`` the encoder states ``(B, S, E_k)``, ``w_q`` ``(A, E_q)`` and ``w_k``
            ``(A, E_k)`` are laid out like ``nn.Linear`` weights, ``v`` is ``(A,)``; it must
            return the scores ``(B, S)`` (before any softmax).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`; compared with
        :func:`helpers.scores.additive_scores`.
    """
    query, keys, w_q, w_k, v = _additive_inputs()
    batch, length, hidden = keys.shape[0], keys.shape[1], v.shape[0]
    reference = additive_scores(query[:, None, :], keys, w_q, w_k, v)[:, 0, :]  # (B, 1, S) -> (B, S)
    # the exercise is to write the score: the package's own versions are switched off while it runs
    result = call_watched(fn, query, keys, w_q, w_k, v, shape_hint=phrase("ch01.additive.shape_hint"),
                          language=language)
    scores = as_tensor(result, phrase("ch01.what.scores"), language)
    if scores.shape != (batch, length):
        if scores.shape == (batch, length, hidden):
            return CheckResult.of(False, "ch01.additive.stopped_at_tanh", language, shape=tuple(scores.shape))
        if scores.numel() == batch * length:
            return CheckResult.of(False, "ch01.additive.reshape", language, shape=tuple(scores.shape),
                                  expected=(batch, length))
        return CheckResult.of(False, "ch01.additive.shape", language, expected=(batch, length),
                              got=tuple(scores.shape))
    if not torch.isfinite(scores).all():
        return CheckResult.of(False, "ch01.additive.not_finite", language)
    if allclose(scores, reference):
        return CheckResult.of(True, "ch01.additive.passed", language)
    if allclose(scores, torch.softmax(reference, dim=-1)):
        return CheckResult.of(False, "ch01.additive.softmax", language)
    if allclose(scores, -reference):
        return CheckResult.of(False, "ch01.additive.sign", language)
    q_hidden = query @ w_q.T  # (B, A)
    k_hidden = keys @ w_k.T  # (B, S, A)
    if allclose(scores, (q_hidden[:, None, :] + k_hidden) @ v):
        return CheckResult.of(False, "ch01.additive.no_tanh", language)
    if allclose(scores, (torch.tanh(q_hidden)[:, None, :] + torch.tanh(k_hidden)) @ v):
        return CheckResult.of(False, "ch01.additive.separate_tanh", language)
    if allclose(scores, torch.tanh(k_hidden) @ v):
        return CheckResult.of(False, "ch01.additive.no_query", language)
    error = float((scores - reference).abs().max())
    return CheckResult.of(False, "ch01.additive.differs", language, error=error)


# --------------------------------------------------------------------------------------------
# Exercise 2: masked softmax over padded encoder states
# --------------------------------------------------------------------------------------------


def _padded_inputs(seed: int = 1) -> tuple[Tensor, Tensor]:
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(4, 6, generator=gen, dtype=torch.float64) * 2  # (B, S)
    lengths = torch.tensor([6, 3, 1, 4])  # (B,): sequence b has lengths[b] real tokens, then padding
    return scores, lengths


@checker
def check_masked_softmax(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(scores, lengths)``: attention weights that ignore the padded positions.

    Args:
        fn: The reader's function. ``scores`` are ``(B, S)``; sequence ``b`` has ``lengths[b]``
            real tokens (positions ``0 .. lengths[b] - 1``) followed by padding. It must return
            weights ``(B, S)``: a softmax over the real positions, exactly 0 on the padding; a
            sequence of length 0 gets all-zero weights (not NaN).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`; compared with
        :func:`helpers.attention.masked_softmax`.
    """
    scores, lengths = _padded_inputs()
    positions = torch.arange(scores.shape[1])
    real = positions[None, :] < lengths[:, None]  # (B, S): True = a real token (may attend)
    reference = masked_softmax(scores, real).double()
    empty_lengths = torch.tensor([2, 0])
    empty_scores = scores[:2].clone()
    empty_real = positions[None, :] < empty_lengths[:, None]
    empty_reference = masked_softmax(empty_scores, empty_real).double()
    # the exercise is to write the masked softmax: the package's own one is switched off while it runs
    result = call_watched(fn, scores.clone(), lengths.clone(), language=language)
    empty_watch = CallWatch()
    empty_result, empty_failure = call_reader_function(fn, empty_scores.clone(), empty_lengths.clone(),
                                                       language=language, watch=empty_watch)
    if empty_watch.reached is not None:
        raise Rejected(delegation_verdict(PackageCallError(empty_watch.reached), language))
    weights = as_tensor(result, phrase("ch01.what.weights"), language)
    if weights.shape != scores.shape:
        return CheckResult.of(False, "ch01.masked.shape", language, expected=tuple(scores.shape),
                              got=tuple(weights.shape))
    weights = weights.double()
    if torch.isnan(weights).any():
        return CheckResult.of(False, "ch01.masked.nan", language)
    if allclose(weights, torch.softmax(scores, dim=-1)):
        return CheckResult.of(False, "ch01.masked.unmasked", language)
    if allclose(weights, masked_softmax(scores, ~real).double()):
        return CheckResult.of(False, "ch01.masked.inverted", language)
    if allclose(weights, torch.softmax(scores, dim=-1) * real):
        return CheckResult.of(False, "ch01.masked.after_softmax", language)
    if allclose(weights, torch.softmax(scores, dim=0)) or allclose(
        weights, masked_softmax(scores.T, real.T).double().T
    ):
        return CheckResult.of(False, "ch01.masked.batch_axis", language)
    one_more = positions[None, :] <= lengths[:, None]
    if allclose(weights, masked_softmax(scores, one_more).double()):
        return CheckResult.of(False, "ch01.masked.off_by_one", language)
    if not allclose(weights, reference):
        padded_weight = float(weights[~real].abs().sum())
        if padded_weight > 1e-6:
            return CheckResult.of(False, "ch01.masked.padding_weight", language, weight=padded_weight)
        return CheckResult.of(False, "ch01.masked.wrong_softmax", language)

    # Second test: an empty sequence (length 0) must give zeros, not 0/0 = NaN.
    if empty_failure is not None:
        failure_phrase = {other: empty_failure.in_language(other).message for other in LANGUAGES}
        return CheckResult.of(False, "ch01.masked.empty_failed", language, failure=failure_phrase)
    empty = as_tensor(empty_result, phrase("ch01.what.weights"), language)
    if empty.shape != empty_scores.shape or not torch.isfinite(empty.double()).all():
        return CheckResult.of(False, "ch01.masked.empty_nan", language)
    if not allclose(empty.double(), empty_reference):
        uniform = allclose(empty[1].double(), torch.full_like(empty[1].double(), 1 / empty.shape[-1]))
        return CheckResult.of(False, "ch01.masked.empty_uniform" if uniform else "ch01.masked.empty_not_zero",
                              language, total=float(empty[1].sum()))
    return CheckResult.of(True, "ch01.masked.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 3: where the model without attention breaks
# --------------------------------------------------------------------------------------------


def _first_below(lengths: Sequence[int], accuracies: Sequence[float], threshold: float) -> int | None:
    return next((n for n, acc in zip(lengths, accuracies) if acc < threshold), None)


@checker
def check_breaking_length(answer: Any, result: Any, hidden_size: int, *, threshold: float = 0.5,
                          language: str | None = None) -> CheckResult:
    """Check the length at which the model without attention breaks, read off a bottleneck sweep.

    The breaking length is the first evaluation length at which the *token* accuracy of the
    model *without* attention of hidden size ``hidden_size`` falls below ``threshold``.

    Args:
        answer: The reader's length (an int), or ``None`` if it never breaks in the range.
        result: The :class:`~helpers.experiments.bottleneck.BottleneckResult` of the sweep.
        hidden_size: The hidden size asked about.
        threshold: The accuracy that counts as broken.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`.
    """
    try:
        lengths = result.lengths
        plain = result.accuracy(False, hidden_size)
    except Exception as error:  # a wrong `result` or hidden size: explain, never raise
        return CheckResult.of(False, "ch01.breaking.unreadable", language, hidden_size=hidden_size, error=str(error))
    expected = _first_below(lengths, plain, threshold)
    if answer is ...:
        return CheckResult.of(False, "ch01.breaking.ellipsis", language)
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        if isinstance(answer, float) and answer.is_integer():
            answer = int(answer)
        else:
            return CheckResult.of(False, "ch01.breaking.not_a_length", language, lengths=str(lengths),
                                  answer=repr(answer))
    if answer == expected:
        values = ", ".join(f"{n}: {a:.2f}" for n, a in zip(lengths, plain))
        if expected is None:
            return CheckResult.of(True, "ch01.breaking.passed_never", language, hidden=hidden_size, values=values)
        return CheckResult.of(True, "ch01.breaking.passed", language, hidden=hidden_size, threshold=threshold,
                              expected=expected, values=values)
    attention_break = _first_below(lengths, result.accuracy(True, hidden_size), threshold)
    sequence_break = _first_below(lengths, result.accuracy(False, hidden_size, "sequence_accuracy"), threshold)
    if answer not in lengths and answer is not None:
        return CheckResult.of(False, "ch01.breaking.not_evaluated", language, answer=str(answer),
                              lengths=str(lengths))
    if answer == attention_break and answer != expected:
        return CheckResult.of(False, "ch01.breaking.with_attention", language)
    if answer == sequence_break and answer != expected:
        return CheckResult.of(False, "ch01.breaking.sequence", language, threshold=threshold)
    if expected is not None and answer is not None and lengths.index(answer) == lengths.index(expected) - 1:
        return CheckResult.of(False, "ch01.breaking.last_working", language, answer=answer,
                              accuracy=float(plain[lengths.index(answer)]))
    for other in result.hidden_sizes:
        if other != hidden_size and answer == _first_below(lengths, result.accuracy(False, other), threshold):
            return CheckResult.of(False, "ch01.breaking.other_hidden", language, other=other, hidden=hidden_size)
    return CheckResult.of(False, "ch01.breaking.not_quite", language, hidden=hidden_size, threshold=threshold)


# --------------------------------------------------------------------------------------------
# Exercise 4: name the task from its alignment
# --------------------------------------------------------------------------------------------

MYSTERY_LABELS: tuple[str, ...] = ("A", "B", "C")
"""The names of the three mystery alignments."""
_MYSTERY_TASKS: dict[str, str] = {"A": "sort", "B": "copy", "C": "reverse"}


def mystery_alignments(
    *, seq_len: int = 8, hidden_size: int = 32, steps: int = 300, seed: int = 0
) -> dict[str, tuple[Tensor, Tensor]]:
    """Train three small attention models on three tasks; return their alignments, unnamed.

    The tasks are ``copy``, ``reverse`` and ``sort`` (:mod:`helpers.tasks`); which one is
    behind which label is what :func:`check_task_names` checks. Each model is a
    :class:`~helpers.rnn.Seq2SeqGRU` with attention trained for ``steps`` steps on sequences of
    length ``seq_len`` (about 3 s each on a laptop CPU). All three are then shown the same
    source, ``seq_len`` *distinct* symbols (so that the sorted order is unambiguous).

    Args:
        seq_len: Length of the sequences (at most 10, the number of content symbols).
        hidden_size: Hidden size of the models.
        steps: Training steps per model.
        seed: Seed of the models, the training data and the shown example.

    Returns:
        A dict from each label to a pair ``(src, alignment)``, one source sequence ``(S,)`` and
        the model's alignment ``(T, S)`` on it (teacher-forced).
    """
    # imported here, not at the top: keep the import of this module light
    from helpers.experiments.seq2seq_training import train_seq2seq  # noqa: PLC0415
    from helpers.rnn import Seq2SeqGRU  # noqa: PLC0415
    from helpers.tasks import FIRST_CONTENT_TOKEN  # noqa: PLC0415
    from helpers.train import num_threads, set_seed  # noqa: PLC0415

    vocab_size = 12
    n_symbols = vocab_size - FIRST_CONTENT_TOKEN
    if not isinstance(seq_len, int) or not 2 <= seq_len <= n_symbols:
        raise ValueError(f"seq_len must be an int in [2, {n_symbols}], got {seq_len!r}")
    gen = torch.Generator().manual_seed(seed + 777)
    src = (torch.randperm(n_symbols, generator=gen)[:seq_len] + FIRST_CONTENT_TOKEN)[None]  # (1, S), distinct
    targets = {"copy": src, "reverse": src.flip(1), "sort": src.sort(dim=1).values}
    out: dict[str, tuple[Tensor, Tensor]] = {}
    with num_threads(1):
        for label in MYSTERY_LABELS:
            task = _MYSTERY_TASKS[label]
            set_seed(seed)
            model = Seq2SeqGRU(vocab_size, 16, hidden_size, attention=True)
            train_seq2seq(model, task=task, lengths=[seq_len], steps=steps, batch_size=32, lr=1e-2, seed=seed)
            model.eval()
            with torch.no_grad():
                _, alignment = model(src, targets[task])  # (1, T, S)
            out[label] = (src[0], alignment[0])
    return out


@checker
def check_task_names(answer: Any, *, language: str | None = None) -> CheckResult:
    """Check the reader's names for the mystery alignments of :func:`mystery_alignments`.

    Args:
        answer: ``{"A": task, "B": task, "C": task}`` with tasks among ``"copy"``,
            ``"reverse"``, ``"sort"``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`.
    """
    tasks = sorted(set(_MYSTERY_TASKS.values()))
    if not isinstance(answer, Mapping):
        return CheckResult.of(False, "ch01.tasks.not_a_dict", language, tasks=str(tasks), type=type(answer).__name__)
    given = {str(k).strip().upper(): (v.strip().lower() if isinstance(v, str) else v) for k, v in answer.items()}
    missing = [label for label in MYSTERY_LABELS if label not in given]
    if not missing and any(given[label] is ... for label in MYSTERY_LABELS):
        return CheckResult.of(False, "ch01.tasks.ellipsis", language, tasks=str(tasks))
    if missing:
        return CheckResult.of(False, "ch01.tasks.missing", language, missing=str(missing))
    unknown = {label: task for label, task in given.items() if task not in tasks}
    if unknown:
        return CheckResult.of(False, "ch01.tasks.unknown", language, unknown=str(unknown), tasks=str(tasks))
    wrong = [label for label in MYSTERY_LABELS if given[label] != _MYSTERY_TASKS[label]]
    if not wrong:
        return CheckResult.of(True, "ch01.tasks.passed", language)
    hints = []
    for label in wrong:
        truth, guess = _MYSTERY_TASKS[label], given[label]
        if truth == "sort":
            hints.append(("ch01.tasks.hint_sort", {"label": label}))
        elif {truth, guess} == {"copy", "reverse"}:
            hints.append((f"ch01.tasks.hint_{truth}", {"label": label}))
        else:
            hints.append(("ch01.tasks.hint_line", {"label": label}))
    return CheckResult.of(False, "ch01.tasks.wrong", language, hints=_joined(hints))


# --------------------------------------------------------------------------------------------
# Exercise 5: predict, then measure, how the gradient falls with distance
# --------------------------------------------------------------------------------------------

GRADIENT_SHAPES: tuple[str, ...] = ("falls", "flat", "rises")
"""The answers for how a gradient changes with distance."""
GRU_RATIO_BANDS: tuple[str, ...] = ("<10", "10-1000", ">1000")
"""The answers for how many times smaller the GRU's gradient is at the farthest input than at distance 1."""


def _shape_of(rate: float) -> str:
    return "falls" if rate < 0.9 else "rises" if rate > 1.1 else "flat"


def _ratio_band(ratio: float) -> str:
    return "<10" if ratio < 10 else "10-1000" if ratio <= 1000 else ">1000"


@checker
def check_gradient_prediction(prediction: Any, grads: Any, *, language: str | None = None) -> CheckResult:
    """Check a prediction, written before the run, against the measured gradient by distance.

    The prediction says how ``||d y_last / d x_j||`` changes with the distance of ``x_j`` from
    the last position, for a freshly initialised GRU and for one self-attention layer, and by how
    much the GRU's gradient shrinks between distance 1 and the farthest input. The shapes are
    read off the measurement by :func:`~helpers.experiments.gradient_paths.geometric_decay_rate`
    (below 0.9 per token: falls; above 1.1: rises; else flat; attention without distance 0,
    which is also the query).

    Args:
        prediction: ``{"gru": shape, "attention": shape, "gru_ratio": band}`` with shapes among
            :data:`GRADIENT_SHAPES` and the band among :data:`GRU_RATIO_BANDS`.
        grads: The :class:`~helpers.experiments.gradient_paths.GradientByDistance` measured.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult` that says which part of the prediction the
        measurement contradicts, with the measured numbers.
    """
    from helpers.experiments.gradient_paths import geometric_decay_rate  # noqa: PLC0415

    if not isinstance(prediction, Mapping):
        return CheckResult.of(False, "ch01.gradient.not_a_dict", language, type=type(prediction).__name__)
    keys = ("gru", "attention", "gru_ratio")
    missing = [k for k in keys if k not in prediction]
    if missing:
        return CheckResult.of(False, "ch01.gradient.missing", language, missing=str(missing))
    if any(prediction[k] is ... for k in keys):
        return CheckResult.of(False, "ch01.gradient.ellipsis", language, shapes=str(list(GRADIENT_SHAPES)),
                              bands=str(list(GRU_RATIO_BANDS)))
    given = {k: str(prediction[k]).strip().lower().replace(" ", "") for k in keys}
    for k, allowed in (("gru", GRADIENT_SHAPES), ("attention", GRADIENT_SHAPES), ("gru_ratio", GRU_RATIO_BANDS)):
        if given[k] not in allowed:
            return CheckResult.of(False, "ch01.gradient.not_allowed", language, key=repr(k), allowed=str(list(allowed)),
                                  value=repr(prediction[k]))
    try:
        distance = [int(d) for d in grads.distance]
        rnn, att = grads.rnn, grads.attention
        rate_rnn = geometric_decay_rate(rnn, grads.distance)
        rate_att = geometric_decay_rate(att[1:], grads.distance[1:])
        ratio = float(rnn[distance.index(1)] / rnn[-1])
    except Exception as error:  # a wrong `grads`: explain, never raise
        return CheckResult.of(False, "ch01.gradient.unreadable", language, error=str(error))
    truth = {"gru": _shape_of(rate_rnn), "attention": _shape_of(rate_att), "gru_ratio": _ratio_band(ratio)}
    measured = phrase("ch01.gradient.measured", rate_rnn=float(rate_rnn), rate_att=float(rate_att), ratio=ratio,
                       far=distance[-1])
    wrong = [k for k in keys if given[k] != truth[k]]
    if not wrong:
        return CheckResult.of(True, "ch01.gradient.passed", language, measured=measured)
    reasons = _joined([(f"ch01.gradient.reason_{k}", {}) for k in wrong])
    listed = {"en": ", ".join(wrong), "zh": "、".join(wrong)}
    return CheckResult.of(False, "ch01.gradient.wrong", language, wrong=listed, measured=measured, reasons=reasons)


# --------------------------------------------------------------------------------------------
# Exercise 6: design a control experiment
# --------------------------------------------------------------------------------------------


def parameter_count(hidden_size: int, *, attention: bool, vocab_size: int = 12, embed_dim: int = 16) -> int:
    """Number of parameters of the chapter's :class:`~helpers.rnn.Seq2SeqGRU` (the lab's sizes by default)."""
    from helpers.rnn import Seq2SeqGRU  # noqa: PLC0415

    return sum(p.numel() for p in Seq2SeqGRU(vocab_size, embed_dim, hidden_size, attention=attention).parameters())


@checker
def check_control_design(design: Any, *, language: str | None = None) -> CheckResult:
    """Check the design of a control experiment: is attention's advantage only its extra parameters?

    The model with attention has more parameters than the model without at the same hidden
    size (the scoring network, and a decoder that reads a context at every step). A fair control
    gives the model *without* attention at least as many parameters, and changes nothing else.
    The design must say:

    - ``attention_hidden``: the hidden size of the model with attention;
    - ``plain_hidden``: the hidden size of the model without, chosen so that it has at least as
      many parameters, and at most 1.5 times as many (:func:`parameter_count` counts them);
    - ``seeds``: at least 3 distinct seeds, the same for both models;
    - ``lengths``: at least 3 distinct source lengths, to train and test on (a trend, not a point);
    - ``steps``: the same number of training steps for both (one positive int).

    Args:
        design: The reader's dict.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult` that names what makes the design unfair or weak.
    """
    keys = ("attention_hidden", "plain_hidden", "seeds", "lengths", "steps")
    if not isinstance(design, Mapping):
        return CheckResult.of(False, "ch01.control.not_a_dict", language, keys=str(list(keys)),
                              type=type(design).__name__)
    missing = [k for k in keys if k not in design]
    if missing:
        return CheckResult.of(False, "ch01.control.missing", language, missing=str(missing))
    if any(design[k] is ... for k in keys):
        return CheckResult.of(False, "ch01.control.ellipsis", language)
    for k in ("attention_hidden", "plain_hidden", "steps"):
        value = design[k]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return CheckResult.of(False, "ch01.control.not_positive", language, key=repr(k), value=repr(value))
    try:
        seeds = [int(s) for s in design["seeds"]]
        lengths = [int(n) for n in design["lengths"]]
    except Exception:  # not a sequence of ints
        return CheckResult.of(False, "ch01.control.not_lists", language)
    if len(set(seeds)) < 3:
        return CheckResult.of(False, "ch01.control.few_seeds", language, n=len(set(seeds)))
    if len(set(lengths)) < 3 or min(lengths) < 1:
        return CheckResult.of(False, "ch01.control.few_lengths", language)
    attention_params = parameter_count(design["attention_hidden"], attention=True)
    plain_params = parameter_count(design["plain_hidden"], attention=False)
    counts = phrase("ch01.control.counts", attention_hidden=design["attention_hidden"],
                     attention_params=attention_params, plain_hidden=design["plain_hidden"], plain_params=plain_params)
    if design["plain_hidden"] == design["attention_hidden"]:
        return CheckResult.of(False, "ch01.control.same_hidden", language, counts=counts)
    if plain_params < attention_params:
        return CheckResult.of(False, "ch01.control.fewer", language, counts=counts)
    if plain_params > 1.5 * attention_params:
        return CheckResult.of(False, "ch01.control.too_many", language, counts=counts)
    return CheckResult.of(True, "ch01.control.passed", language, counts=counts, n_seeds=len(set(seeds)),
                          steps=design["steps"], lengths=str(sorted(set(lengths))))
