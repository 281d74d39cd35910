"""Exercise 4 of lab 1: name the task from its alignment.

Contract (stated in the lab): after :func:`.mystery_alignments`, ``my_names`` is a dict ``{"A": task, "B": task,
"C": task}`` with tasks among ``"copy"``, ``"reverse"``, ``"sort"``. Which task is behind which label is drawn at
each call of :func:`.mystery_alignments` and kept nowhere: the checker reads it from the alignments, as the
reader must.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from ... import seeding
from .. import CheckResult
from ..catalogue.ch01 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import joined
from ..reader import checker, verdict

__all__ = ["MYSTERY_LABELS", "mystery_alignments", "task_shown_by", "check_task_names", "UNSHUFFLED"]

MYSTERY_LABELS: tuple[str, ...] = ("A", "B", "C")
"""The names of the three mystery alignments."""
UNSHUFFLED: dict[str, str] = {"A": "sort", "B": "copy", "C": "reverse"}
"""The labels' tasks when :func:`.mystery_alignments` does not shuffle them."""
_SHOWN: dict[str, dict[str, tuple[Tensor, Tensor]]] = {}
"""What the last :func:`.mystery_alignments` showed — ``{"shown": {label: (src, alignment)}}``, the alignments and
nothing more (which task is behind which label is not kept anywhere)."""


def task_shown_by(src: Tensor, alignment: Tensor) -> str:
    """The task whose reading order an alignment follows: the one with the most weight within one position of
    where it reads (:func:`helpers.experiments.alignments.alignment_mass`, ``window=1``).

    Shape:
        src ``(S,)``; alignment ``(T, S)``.
    """
    from helpers.experiments.alignments import alignment_mass, source_positions
    from helpers.experiments.mystery_alignments import TASKS

    mass = {task: alignment_mass(alignment, source_positions(task, src[None])[0], window=1) for task in TASKS}
    return max(mass, key=mass.__getitem__)


def mystery_alignments(*, seq_len: int = 8, hidden_size: int = 32, steps: int = 300, seed: int = 0,
                       shuffle: bool = True) -> dict[str, tuple[Tensor, Tensor]]:
    """Train three small attention models on three tasks; return their alignments, unnamed.

    The tasks are ``copy``, ``reverse`` and ``sort`` (:mod:`helpers.tasks`); each model is a
    :class:`~helpers.rnn.Seq2SeqGRU` with attention trained for ``steps`` steps on sequences of length
    ``seq_len`` (:func:`helpers.experiments.mystery_alignments.trained_alignment`, once a setting), then shown the
    same source of ``seq_len`` distinct symbols. Which task hides behind which label is drawn afresh at each call
    (``shuffle``), so that no list of names copied from elsewhere answers the exercise.

    Args:
        seq_len: Length of the sequences (at most 10, the number of content symbols).
        hidden_size: Hidden size of the models.
        steps: Training steps per model.
        seed: Seed of the models, the training data and the shown example.
        shuffle: Draw the labels' tasks afresh (``False``: A is sort, B copy, C reverse).

    Returns:
        ``{label: (src, alignment)}``: one source ``(S,)`` and the model's alignment ``(T, S)`` on it.

    Raises:
        ValueError: ``seq_len`` is out of range.
        RuntimeError: with these settings a model's alignment does not show the task it was trained on.
    """
    from helpers.experiments.mystery_alignments import TASKS, VOCAB_SIZE, trained_alignment
    from helpers.tasks import FIRST_CONTENT_TOKEN

    n_symbols = VOCAB_SIZE - FIRST_CONTENT_TOKEN
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or not 2 <= seq_len <= n_symbols:
        raise ValueError(f"seq_len must be an int in [2, {n_symbols}], got {seq_len!r}")
    trained = {task: trained_alignment(task, seq_len, hidden_size, steps, seed) for task in TASKS}
    for task, (src, alignment) in trained.items():
        if task_shown_by(src, alignment) != task:
            raise RuntimeError(f"with steps={steps} and hidden_size={hidden_size}, the model trained on {task!r} "
                               f"does not read the source as {task} does: train longer (more steps)")
    tasks = [UNSHUFFLED[label] for label in MYSTERY_LABELS]
    if shuffle:  # drawn afresh: the labels' tasks are what the reader reads from the alignments
        tasks = [tasks[int(i)] for i in torch.randperm(len(tasks), generator=seeding.fresh_generator())]
    out = {label: (trained[task][0].clone(), trained[task][1].clone()) for label, task in zip(MYSTERY_LABELS, tasks)}
    _SHOWN["shown"] = {label: (src.clone(), alignment.clone()) for label, (src, alignment) in out.items()}
    return out


@checker
def check_task_names(answer: Any) -> CheckResult:
    """Check the reader's names for the mystery alignments of :func:`.mystery_alignments`.

    The names are compared with the tasks that the alignments of the last call of :func:`.mystery_alignments`
    show (:func:`.task_shown_by`: the checker reads them as the reader must); before any call, the answer is
    refused.

    Args:
        answer: ``{"A": task, "B": task, "C": task}`` with tasks among ``"copy"``, ``"reverse"``, ``"sort"``.

    Returns:
        The verdict.
    """
    tasks = sorted(set(UNSHUFFLED.values()))
    shown = _SHOWN.get("shown")
    if shown is None:
        return verdict(False, "ch01.tasks.not_run")
    truth = {label: task_shown_by(src, alignment) for label, (src, alignment) in shown.items()}
    if not isinstance(answer, Mapping):
        return verdict(False, "ch01.tasks.not_a_dict", tasks=str(tasks), type=type(answer).__name__)
    given = {str(k).strip().upper(): (v.strip().lower() if isinstance(v, str) else v) for k, v in answer.items()}
    missing = [label for label in MYSTERY_LABELS if label not in given]
    if not missing and any(given[label] is ... for label in MYSTERY_LABELS):
        return verdict(False, "ch01.tasks.ellipsis", tasks=str(tasks))
    if missing:
        return verdict(False, "ch01.tasks.missing", missing=str(missing))
    unknown = {label: task for label, task in given.items() if task not in tasks}
    if unknown:
        return verdict(False, "ch01.tasks.unknown", unknown=str(unknown), tasks=str(tasks))
    wrong = [label for label in MYSTERY_LABELS if given[label] != truth[label]]
    if not wrong:
        return verdict(True, "ch01.tasks.passed")
    hints = []
    for label in wrong:
        task, guess = truth[label], given[label]
        if task == "sort":
            hints.append(("ch01.tasks.hint_sort", {"label": label}))
        elif {task, guess} == {"copy", "reverse"}:
            hints.append((f"ch01.tasks.hint_{task}", {"label": label}))
        else:
            hints.append(("ch01.tasks.hint_line", {"label": label}))
    return verdict(False, "ch01.tasks.wrong", hints=joined(hints))
