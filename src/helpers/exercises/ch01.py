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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable

import torch
from torch import Tensor

from helpers import attention as _attention
from helpers import scores as _scores
from helpers.attention import masked_softmax
from helpers.exercises import CheckResult
from helpers.exercises.guard import package_disabled
from helpers.exercises.reader import allclose, as_tensor, call_reader_function, reader_globals
from helpers.scores import AdditiveAttention, additive_scores

_SHAPE_HINT = (" (a shape mismatch: W_q is laid out like nn.Linear(E_q, A).weight, i.e. (A, E_q), so a "
               "query (B, E_q) is projected by query @ w_q.T)")

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


def check_additive_scores(fn: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(query, keys, w_q, w_k, v)``: the additive scores ``v^T tanh(W_q s + W_k h_j)``.

    Args:
        fn: The reader's function. ``query`` is one decoder state per sequence ``(B, E_q)``,
            ``keys`` the encoder states ``(B, S, E_k)``, ``w_q`` ``(A, E_q)`` and ``w_k``
            ``(A, E_k)`` are laid out like ``nn.Linear`` weights, ``v`` is ``(A,)``; it must
            return the scores ``(B, S)`` (before any softmax).

    Returns:
        A :class:`~helpers.exercises.CheckResult`; compared with
        :func:`helpers.scores.additive_scores`.
    """
    query, keys, w_q, w_k, v = _additive_inputs()
    batch, length, hidden = keys.shape[0], keys.shape[1], v.shape[0]
    reference = additive_scores(query[:, None, :], keys, w_q, w_k, v)[:, 0, :]  # (B, 1, S) -> (B, S)
    # the exercise is to write the score: the package's own versions are switched off while it runs
    with package_disabled(_scores.additive_scores, AdditiveAttention.forward, namespaces=reader_globals(fn)):
        result, failure = call_reader_function(fn, query, keys, w_q, w_k, v, shape_hint=_SHAPE_HINT)
    if failure is not None:
        return failure
    scores, failure = as_tensor(result, "scores (B, S)")
    if failure is not None:
        return failure
    if scores.shape != (batch, length):
        if scores.shape == (batch, length, hidden):
            return CheckResult(False, f"your scores have shape {tuple(scores.shape)} = (B, S, A): you stopped at "
                                      "tanh(W_q s + W_k h_j); take the dot product with v to get one number per key")
        if scores.numel() == batch * length:
            return CheckResult(False, f"your scores have shape {tuple(scores.shape)}, expected (B, S) = "
                                      f"{(batch, length)}: squeeze or reshape to one score per encoder state")
        return CheckResult(False, f"expected scores of shape (B, S) = {(batch, length)}, got {tuple(scores.shape)}")
    if not torch.isfinite(scores).all():
        return CheckResult(False, "your scores contain NaN or inf")
    if allclose(scores, reference):
        return CheckResult(True, "v^T tanh(W_q s + W_k h_j) for every encoder state: the same scores as "
                                 "helpers.scores.additive_scores.")
    if allclose(scores, torch.softmax(reference, dim=-1)):
        return CheckResult(False, "you returned attention weights (a softmax was applied): return the raw scores; "
                                  "the softmax comes next, after masking the padded positions")
    if allclose(scores, -reference):
        return CheckResult(False, "your scores have the wrong sign: it is +v^T tanh(...), and a flipped sign makes "
                                  "softmax favour the worst match")
    q_hidden = query @ w_q.T  # (B, A)
    k_hidden = keys @ w_k.T  # (B, S, A)
    if allclose(scores, (q_hidden[:, None, :] + k_hidden) @ v):
        return CheckResult(False, "you left out the tanh: without it the score is v.W_q s + v.W_k h_j, and the "
                                  "query's term is the same for every key, so it cancels in the softmax: the "
                                  "decoder state could no longer change where the model looks")
    if allclose(scores, (torch.tanh(q_hidden)[:, None, :] + torch.tanh(k_hidden)) @ v):
        return CheckResult(False, "you applied tanh to each projection separately: apply it to the sum "
                                  "W_q s + W_k h_j, so that the query and the key interact inside the nonlinearity")
    if allclose(scores, torch.tanh(k_hidden) @ v):
        return CheckResult(False, "your scores ignore the decoder state: add W_q s inside the tanh, otherwise every "
                                  "decoder step attends to the same places")
    error = float((scores - reference).abs().max())
    return CheckResult(False, f"the shape is right but the values differ from v^T tanh(W_q s + W_k h_j) "
                              f"(largest difference {error:.3g}); check which weight multiplies the query and which "
                              "the keys")


# --------------------------------------------------------------------------------------------
# Exercise 2: masked softmax over padded encoder states
# --------------------------------------------------------------------------------------------


def _padded_inputs(seed: int = 1) -> tuple[Tensor, Tensor]:
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(4, 6, generator=gen, dtype=torch.float64) * 2  # (B, S)
    lengths = torch.tensor([6, 3, 1, 4])  # (B,): sequence b has lengths[b] real tokens, then padding
    return scores, lengths


def check_masked_softmax(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(scores, lengths)``: attention weights that ignore the padded positions.

    Args:
        fn: The reader's function. ``scores`` are ``(B, S)``; sequence ``b`` has ``lengths[b]``
            real tokens (positions ``0 .. lengths[b] - 1``) followed by padding. It must return
            weights ``(B, S)``: a softmax over the real positions, exactly 0 on the padding; a
            sequence of length 0 gets all-zero weights (not NaN).

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
    with package_disabled(_attention.masked_softmax, namespaces=reader_globals(fn)):
        result, failure = call_reader_function(fn, scores.clone(), lengths.clone())
        empty_result, empty_failure = call_reader_function(fn, empty_scores.clone(), empty_lengths.clone())
    if failure is not None:
        return failure
    weights, failure = as_tensor(result, "weights (B, S)")
    if failure is not None:
        return failure
    if weights.shape != scores.shape:
        return CheckResult(False, f"expected weights of the scores' shape (B, S) = {tuple(scores.shape)}, got "
                                  f"{tuple(weights.shape)}")
    weights = weights.double()
    if torch.isnan(weights).any():
        return CheckResult(False, "your weights contain NaN")
    if allclose(weights, torch.softmax(scores, dim=-1)):
        return CheckResult(False, "the padded positions still get weight: set their scores to -inf before the "
                                  "softmax, so that exp() makes them exactly 0 (torch.finfo(dtype).min zeroes them "
                                  "too, but a sequence with no real token then gets uniform weights over its padding, "
                                  "where the book defines all-zero weights; see chapter 0)")
    if allclose(weights, masked_softmax(scores, ~real).double()):
        return CheckResult(False, "your mask is inverted: the weights sit on the padding and the real tokens get 0; "
                                  "position j is real when j < lengths[b]")
    if allclose(weights, torch.softmax(scores, dim=-1) * real):
        return CheckResult(False, "you zeroed the padded weights after the softmax: the remaining weights no longer "
                                  "sum to 1; mask the scores before the softmax instead")
    if allclose(weights, torch.softmax(scores, dim=0)) or allclose(
        weights, masked_softmax(scores.T, real.T).double().T
    ):
        return CheckResult(False, "your softmax runs over the batch axis (dim 0): each sequence's weights must sum "
                                  "to 1 over its own source positions (dim -1)")
    one_more = positions[None, :] <= lengths[:, None]
    if allclose(weights, masked_softmax(scores, one_more).double()):
        return CheckResult(False, "off by one: your mask keeps position lengths[b] too; the real tokens are "
                                  "positions 0 .. lengths[b] - 1 (use positions < lengths)")
    if not allclose(weights, reference):
        padded_weight = float(weights[~real].abs().sum())
        if padded_weight > 1e-6:
            return CheckResult(False, f"the padded positions get total weight {padded_weight:.3g}; they must get "
                                      "exactly 0")
        return CheckResult(False, "the padding is ignored, but the weights over the real positions are not their "
                                  "softmax; check the scores you pass to the softmax")

    # Second test: an empty sequence (length 0) must give zeros, not 0/0 = NaN.
    if empty_failure is not None:
        return CheckResult(False, f"right for non-empty sequences, but with a sequence of length 0: "
                                  f"{empty_failure.message}")
    empty, failure = as_tensor(empty_result, "weights (B, S)")
    if failure is not None:
        return failure
    if empty.shape != empty_scores.shape or not torch.isfinite(empty.double()).all():
        return CheckResult(False, "right for non-empty sequences, but a sequence of length 0 gives NaN: every score "
                                  "of that row is -inf and softmax computes 0/0; give such a row all-zero weights "
                                  "(e.g. torch.nan_to_num, or masked_fill after the softmax)")
    if not allclose(empty.double(), empty_reference):
        uniform = " (uniform weights over the padding: a large negative score such as finfo.min instead of -inf)" \
            if allclose(empty[1].double(), torch.full_like(empty[1].double(), 1 / empty.shape[-1])) else ""
        return CheckResult(False, "right for non-empty sequences, but a sequence of length 0 must get all-zero "
                                  f"weights, as chapter 0 defines a row with nothing to attend to; your row sums to "
                                  f"{float(empty[1].sum()):.3g}{uniform}")
    return CheckResult(True, "softmax over the real tokens, exactly 0 on the padding, and an empty sequence gets "
                             "zeros instead of NaN: the same as helpers.attention.masked_softmax.")


# --------------------------------------------------------------------------------------------
# Exercise 3: where the model without attention breaks
# --------------------------------------------------------------------------------------------


def _first_below(lengths: Sequence[int], accuracies: Sequence[float], threshold: float) -> int | None:
    return next((n for n, acc in zip(lengths, accuracies) if acc < threshold), None)


def check_breaking_length(answer: Any, result: Any, hidden_dim: int, *, threshold: float = 0.5) -> CheckResult:
    """Check the length at which the model without attention breaks, read off a bottleneck sweep.

    The breaking length is the first evaluation length at which the *token* accuracy of the
    model *without* attention of hidden size ``hidden_dim`` falls below ``threshold``.

    Args:
        answer: The reader's length (an int), or ``None`` if it never breaks in the range.
        result: The :class:`~helpers.experiments.bottleneck.BottleneckResult` of the sweep.
        hidden_dim: The hidden size asked about.
        threshold: The accuracy that counts as broken.

    Returns:
        A :class:`~helpers.exercises.CheckResult`.
    """
    try:
        lengths = result.lengths
        plain = result.accuracy(False, hidden_dim)
    except Exception as error:  # a wrong `result` or hidden size: explain, never raise
        return CheckResult(False, f"could not read the sweep for hidden_dim={hidden_dim}: {error}")
    expected = _first_below(lengths, plain, threshold)
    if answer is ...:
        return CheckResult(False, "replace the ... with the length you read off the sweep (an int, or None)")
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        if isinstance(answer, float) and answer.is_integer():
            answer = int(answer)
        else:
            return CheckResult(False, f"answer with a length, an int from {lengths} (or None), got {answer!r}")
    if answer == expected:
        where = "never falls below" if expected is None else f"first falls below {threshold:.0%} at length {expected}"
        return CheckResult(True, f"the GRU without attention (H = {hidden_dim}) {where}: "
                                 + ", ".join(f"{n}: {a:.2f}" for n, a in zip(lengths, plain)) + ".")
    attention_break = _first_below(lengths, result.accuracy(True, hidden_dim), threshold)
    sequence_break = _first_below(lengths, result.accuracy(False, hidden_dim, "sequence_accuracy"), threshold)
    if answer not in lengths and answer is not None:
        return CheckResult(False, f"{answer} is not one of the evaluated lengths {lengths}")
    if answer == attention_break and answer != expected:
        return CheckResult(False, "that is where the model *with* attention falls below the threshold; the question "
                                  "is about the model without attention")
    if answer == sequence_break and answer != expected:
        return CheckResult(False, f"that is where the whole-sequence accuracy falls below {threshold:.0%}; the "
                                  "question asks for the token accuracy (the fraction of tokens right)")
    if expected is not None and answer is not None and lengths.index(answer) == lengths.index(expected) - 1:
        return CheckResult(False, f"at length {answer} the accuracy is still {plain[lengths.index(answer)]:.2f}: that "
                                  "is the last length that works; give the first one below the threshold")
    for other in result.hidden_sizes:
        if other != hidden_dim and answer == _first_below(lengths, result.accuracy(False, other), threshold):
            return CheckResult(False, f"that is the breaking length for H = {other}; the question is about "
                                      f"H = {hidden_dim}")
    return CheckResult(False, f"not quite: read the curve of the model without attention for H = {hidden_dim} and "
                              f"find the first length whose token accuracy is below {threshold:.0%}")


# --------------------------------------------------------------------------------------------
# Exercise 4: name the task from its alignment
# --------------------------------------------------------------------------------------------

MYSTERY_LABELS: tuple[str, ...] = ("A", "B", "C")
"""The names of the three mystery alignments."""
_MYSTERY_TASKS: dict[str, str] = {"A": "sort", "B": "copy", "C": "reverse"}


def mystery_alignments(
    *, seq_len: int = 8, hidden_dim: int = 32, steps: int = 300, seed: int = 0
) -> dict[str, tuple[Tensor, Tensor]]:
    """Train three small attention models on three tasks; return their alignments, unnamed.

    The tasks are ``copy``, ``reverse`` and ``sort`` (:mod:`helpers.tasks`); which one is
    behind which label is what :func:`check_task_names` checks. Each model is a
    :class:`~helpers.rnn.Seq2SeqGRU` with attention trained for ``steps`` steps on sequences of
    length ``seq_len`` (about 3 s each on a laptop CPU). All three are then shown the same
    source, ``seq_len`` *distinct* symbols (so that the sorted order is unambiguous).

    Args:
        seq_len: Length of the sequences (at most 10, the number of content symbols).
        hidden_dim: Hidden size of the models.
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
            model = Seq2SeqGRU(vocab_size, 16, hidden_dim, attention=True)
            train_seq2seq(model, task=task, lengths=[seq_len], steps=steps, batch_size=32, lr=1e-2, seed=seed)
            model.eval()
            with torch.no_grad():
                _, alignment = model(src, targets[task])  # (1, T, S)
            out[label] = (src[0], alignment[0])
    return out


def check_task_names(answer: Any) -> CheckResult:
    """Check the reader's names for the mystery alignments of :func:`mystery_alignments`.

    Args:
        answer: ``{"A": task, "B": task, "C": task}`` with tasks among ``"copy"``,
            ``"reverse"``, ``"sort"``.

    Returns:
        A :class:`~helpers.exercises.CheckResult`.
    """
    tasks = sorted(set(_MYSTERY_TASKS.values()))
    if not isinstance(answer, Mapping):
        return CheckResult(False, f"answer with a dict {{'A': task, 'B': task, 'C': task}}, tasks among {tasks}; got "
                                  f"{type(answer).__name__}")
    given = {str(k).strip().upper(): (v.strip().lower() if isinstance(v, str) else v) for k, v in answer.items()}
    missing = [label for label in MYSTERY_LABELS if label not in given]
    if not missing and any(given[label] is ... for label in MYSTERY_LABELS):
        return CheckResult(False, f"replace each ... with the name of a task, one of {tasks}")
    if missing:
        return CheckResult(False, f"name every alignment: missing {missing}")
    unknown = {label: task for label, task in given.items() if task not in tasks}
    if unknown:
        return CheckResult(False, f"{unknown}: each task must be one of {tasks}")
    wrong = [label for label in MYSTERY_LABELS if given[label] != _MYSTERY_TASKS[label]]
    if not wrong:
        return CheckResult(True, "copy reads the source in order (a diagonal), reverse reads it backwards (the "
                                 "anti-diagonal), and sort jumps to wherever the next-smallest token is: its "
                                 "alignment depends on the content, not on the position.")
    hints = []
    for label in wrong:
        truth, guess = _MYSTERY_TASKS[label], given[label]
        if truth == "sort":
            hints.append(f"{label} is not a straight line: an output reads from a place that depends on the tokens; "
                         "follow the source tokens its rows point at, in order")
        elif {truth, guess} == {"copy", "reverse"}:
            hints.append(f"{label}: the first output reads the {'first' if truth == 'copy' else 'last'} source token: "
                         f"a line from top-left to bottom-right is copy, from top-right to bottom-left is reverse")
        else:
            hints.append(f"{label} is a straight line: its outputs read the source positions in a fixed order, "
                         "whatever the tokens are")
    return CheckResult(False, "; ".join(hints))


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


def check_gradient_prediction(prediction: Any, grads: Any) -> CheckResult:
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

    Returns:
        A :class:`~helpers.exercises.CheckResult` that says which part of the prediction the
        measurement contradicts, with the measured numbers.
    """
    from helpers.experiments.gradient_paths import geometric_decay_rate  # noqa: PLC0415

    if not isinstance(prediction, Mapping):
        return CheckResult(False, "answer with a dict {'gru': ..., 'attention': ..., 'gru_ratio': ...}, got "
                                  f"{type(prediction).__name__}")
    keys = ("gru", "attention", "gru_ratio")
    missing = [k for k in keys if k not in prediction]
    if missing:
        return CheckResult(False, f"the prediction lacks {missing}")
    if any(prediction[k] is ... for k in keys):
        return CheckResult(False, f"replace each ... with your prediction: 'gru' and 'attention' among "
                                  f"{list(GRADIENT_SHAPES)}, 'gru_ratio' among {list(GRU_RATIO_BANDS)}")
    given = {k: str(prediction[k]).strip().lower().replace(" ", "") for k in keys}
    for k, allowed in (("gru", GRADIENT_SHAPES), ("attention", GRADIENT_SHAPES), ("gru_ratio", GRU_RATIO_BANDS)):
        if given[k] not in allowed:
            return CheckResult(False, f"{k!r} must be one of {list(allowed)}, got {prediction[k]!r}")
    try:
        distance = [int(d) for d in grads.distance]
        rnn, att = grads.rnn, grads.attention
        rate_rnn = geometric_decay_rate(rnn, grads.distance)
        rate_att = geometric_decay_rate(att[1:], grads.distance[1:])
        ratio = float(rnn[distance.index(1)] / rnn[-1])
    except Exception as error:  # a wrong `grads`: explain, never raise
        return CheckResult(False, f"could not read the measurement (pass the result of gradient_by_distance): {error}")
    truth = {"gru": _shape_of(rate_rnn), "attention": _shape_of(rate_att), "gru_ratio": _ratio_band(ratio)}
    measured = (f"measured: the GRU's gradient changes by a factor {rate_rnn:.2f} per token, attention's by "
                f"{rate_att:.2f}, and the GRU's is {ratio:,.3g} times smaller at distance {distance[-1]} than at "
                "distance 1")
    wrong = [k for k in keys if given[k] != truth[k]]
    if not wrong:
        return CheckResult(True, f"your prediction matches the measurement ({measured}). The GRU multiplies one "
                                 "Jacobian per step; attention reaches every input in one step.")
    reasons = {
        "gru": "the GRU's input j reaches the last state through one Jacobian per step in between, and at "
               "initialisation those shrink vectors: the gradient falls geometrically with distance",
        "attention": "in attention every input is one weighted sum away from the output, whatever its distance",
        "gru_ratio": "a factor below 1 per token, repeated for every token of distance, compounds",
    }
    return CheckResult(False, "your prediction differs from the run on " + ", ".join(wrong) + f" ({measured}). "
                       + "; ".join(reasons[k] for k in wrong) + ". Keep your prediction as it was and note what "
                       "surprised you: that is the point of predicting first.")


# --------------------------------------------------------------------------------------------
# Exercise 6: design a control experiment
# --------------------------------------------------------------------------------------------


def parameter_count(hidden_dim: int, *, attention: bool, vocab_size: int = 12, embed_dim: int = 16) -> int:
    """Number of parameters of the chapter's :class:`~helpers.rnn.Seq2SeqGRU` (the lab's sizes by default)."""
    from helpers.rnn import Seq2SeqGRU  # noqa: PLC0415

    return sum(p.numel() for p in Seq2SeqGRU(vocab_size, embed_dim, hidden_dim, attention=attention).parameters())


def check_control_design(design: Any) -> CheckResult:
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

    Returns:
        A :class:`~helpers.exercises.CheckResult` that names what makes the design unfair or weak.
    """
    keys = ("attention_hidden", "plain_hidden", "seeds", "lengths", "steps")
    if not isinstance(design, Mapping):
        return CheckResult(False, f"answer with a dict with the keys {list(keys)}, got {type(design).__name__}")
    missing = [k for k in keys if k not in design]
    if missing:
        return CheckResult(False, f"the design lacks {missing}")
    if any(design[k] is ... for k in keys):
        return CheckResult(False, "replace each ... with a value of your design")
    for k in ("attention_hidden", "plain_hidden", "steps"):
        value = design[k]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return CheckResult(False, f"{k!r} must be a positive int, got {value!r}")
    try:
        seeds = [int(s) for s in design["seeds"]]
        lengths = [int(n) for n in design["lengths"]]
    except Exception:  # not a sequence of ints
        return CheckResult(False, "'seeds' and 'lengths' must be lists (or ranges) of ints")
    if len(set(seeds)) < 3:
        return CheckResult(False, f"{len(set(seeds))} distinct seed(s): a single run can be lucky; train each model "
                                  "with at least 3 seeds and show the spread")
    if len(set(lengths)) < 3 or min(lengths) < 1:
        return CheckResult(False, "use at least 3 distinct positive source lengths: the claim is about how "
                                  "accuracy changes with length, which one length cannot show")
    attention_params = parameter_count(design["attention_hidden"], attention=True)
    plain_params = parameter_count(design["plain_hidden"], attention=False)
    counts = (f"the model with attention (H = {design['attention_hidden']}) has {attention_params:,} parameters, "
              f"the model without (H = {design['plain_hidden']}) {plain_params:,}")
    if design["plain_hidden"] == design["attention_hidden"]:
        return CheckResult(False, f"same hidden size: {counts}. That is the chapter's comparison, not the control; "
                                  "make the model without attention big enough to have at least as many parameters")
    if plain_params < attention_params:
        return CheckResult(False, f"{counts}: the model without attention still has fewer parameters, so a win for "
                                  "attention could still be the parameters; make plain_hidden larger")
    if plain_params > 1.5 * attention_params:
        return CheckResult(False, f"{counts}: more than 1.5 times as many. That also answers a question, but not "
                                  "this one; pick the smallest plain_hidden with at least as many parameters")
    return CheckResult(True, f"a fair control: {counts}; {len(set(seeds))} seeds each, the same "
                             f"{design['steps']} steps and lengths {sorted(set(lengths))} for both. If attention "
                             "still wins at the longest length, the parameters do not explain it.")
