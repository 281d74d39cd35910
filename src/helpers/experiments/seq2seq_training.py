"""Training and scoring chapter 1's GRU encoder-decoders on the book's sequence tasks.

The model is :class:`~helpers.rnn.Seq2SeqGRU`; this module trains it on seeded batches of a
sequence task (:mod:`helpers.tasks`), with teacher forcing, through the package's one training
loop :func:`helpers.train.train`, and scores it by greedy decoding on fresh data:

- :func:`seq2seq_task` -- a task given by name (``"copy"``, ``"reverse"``, ``"sort"``) or as a
  function, resolved to the function that draws its batches;
- :func:`train_seq2seq` -- training on a mix of lengths, one length per batch;
- :func:`evaluate_seq2seq` -- token and whole-sequence accuracy at one length;
- :class:`AlignmentRecorder` -- a training callback that snapshots the alignment of fixed
  examples, to replay how attention's focus forms.

Shape legend::

    B     batch size
    N     number of test sequences
    S     source length
    T     target length (= S for the copy, reverse and sort tasks)

Seeded and deterministic: the same arguments give the same numbers. Explained in chapter 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn

from .. import seeding
from ..checks import check_positive_int, check_positive_ints
from ..rnn import Seq2SeqGRU
from ..tasks import copy_task, reverse_task, sort_task
from ..train import TrainingHistory, sequence_accuracy, token_accuracy, train

__all__ = [
    "TaskFn",
    "SEQ2SEQ_TASKS",
    "seq2seq_task",
    "AlignmentRecorder",
    "train_seq2seq",
    "evaluate_seq2seq",
]

TaskFn = Callable[..., tuple[Tensor, Tensor]]
"""A task, ``fn(batch_size, seq_len, vocab_size, *, seed) -> (src, tgt)``, like :func:`~helpers.tasks.copy_task`."""

SEQ2SEQ_TASKS: dict[str, TaskFn] = {"copy": copy_task, "reverse": reverse_task, "sort": sort_task}
"""The sequence tasks of chapter 1, by name."""


def seq2seq_task(task: str | TaskFn) -> TaskFn:
    """The function that draws batches of a task, given by name or as that function.

    Explained in chapter 1.

    Args:
        task: ``"copy"``, ``"reverse"``, ``"sort"`` (:data:`SEQ2SEQ_TASKS`) or a function like
            :func:`~helpers.tasks.copy_task`, returned as it is.

    Returns:
        The task's function.

    Raises:
        ValueError: ``task`` is neither a known name nor callable.
    """
    if callable(task):
        return task
    if task not in SEQ2SEQ_TASKS:
        raise ValueError(f"task must be one of {sorted(SEQ2SEQ_TASKS)} or a callable, got {task!r}")
    return SEQ2SEQ_TASKS[task]


class AlignmentRecorder:
    """A :func:`~helpers.train.train` callback that snapshots the alignment of fixed examples.

    Every ``every`` steps (and at step 0) it runs the model in eval mode, teacher-forced, on
    ``(src, tgt)`` and stores the alignment, so that the chapter can show the heatmap forming
    during training. Explained in chapter 1.

    Args:
        src: Source tokens to watch.
        tgt: Their targets.
        every: Snapshot period in steps.

    Attributes:
        steps: The steps of the snapshots.
        alignments: The alignments, each ``(B, T, S)``.

    Shape:
        src ``(B, S)``, tgt ``(B, T)``.
    """

    def __init__(self, src: Tensor, tgt: Tensor, every: int = 25) -> None:
        check_positive_int("every", every)
        self.src, self.tgt, self.every = src, tgt, every
        self.steps: list[int] = []
        self.alignments: list[Tensor] = []

    def __call__(self, step: int, model: nn.Module, history: TrainingHistory) -> None:
        """Snapshot the alignment if ``step`` is a multiple of ``every`` (a :func:`~helpers.train.train` callback)."""
        if step % self.every:
            return
        was_training = model.training
        model.eval()
        with torch.no_grad():
            _, alignment = model(self.src, self.tgt)  # (B, T, V), (B, T, S)
        model.train(was_training)
        if alignment is None:
            raise ValueError("AlignmentRecorder needs a model with attention (it returned no alignment)")
        self.steps.append(step)
        self.alignments.append(alignment.clone())


def train_seq2seq(
    model: Seq2SeqGRU,
    *,
    task: str | TaskFn = "reverse",
    lengths: Sequence[int],
    steps: int,
    batch_size: int = 32,
    lr: float = 1e-2,
    warmup_steps: int = 0,
    lr_decay: str = "cosine",
    clip_grad_norm: float | None = 1.0,
    seed: int = 0,
    callback: Callable[[int, nn.Module, TrainingHistory], bool | None] | None = None,
) -> TrainingHistory:
    """Train a :class:`~helpers.rnn.Seq2SeqGRU` with teacher forcing on a sequence task of mixed lengths.

    Each step draws one length uniformly from ``lengths`` and a fresh batch of that length
    (seeded by ``seed`` and the step), so the model never sees the same batch twice; the batch is
    ``((src, tgt), tgt)``, so the loop calls ``model(src, tgt)`` (teacher forcing) and scores
    the logits against ``tgt``. Everything else is :func:`helpers.train.train`. The defaults
    (batch 32, AdamW at 1e-2 with cosine decay, clipping at 1) are the ones tuned for chapter 1's
    experiment. Explained in chapter 1.

    Args:
        model: The model (trained in place).
        task: ``"copy"``, ``"reverse"``, ``"sort"`` or a function like :func:`~helpers.tasks.copy_task`.
        lengths: Sequence lengths to draw from.
        steps: Number of optimisation steps.
        batch_size: Sequences per batch.
        lr: AdamW peak learning rate.
        warmup_steps: Linear warm-up steps.
        lr_decay: ``"none"``, ``"linear"`` or ``"cosine"`` (see :func:`~helpers.train.lr_schedule`).
        clip_grad_norm: Gradient clipping (recurrent nets need it), or None.
        seed: Seed of the batches and of :func:`~helpers.train.train`.
        callback: Passed to :func:`~helpers.train.train` (e.g. an :class:`AlignmentRecorder`).

    Returns:
        The :class:`~helpers.train.TrainingHistory`.

    Shape:
        each batch: src ``(B, S)``, tgt ``(B, T)``, logits ``(B, T, V)``.
    """
    make = seq2seq_task(task)
    lengths = check_positive_ints("lengths", lengths)
    gen = seeding.generator(seed)
    picks = torch.randint(0, len(lengths), (steps,), generator=gen).tolist()

    def make_batch(step: int) -> tuple[tuple[Tensor, Tensor], Tensor]:
        length = lengths[picks[step]]
        src, tgt = make(batch_size, length, model.vocab_size, seed=seed * 1_000_003 + step)  # (B, S), (B, T)
        return (src, tgt), tgt

    return train(
        model, make_batch, steps=steps, lr=lr, warmup_steps=warmup_steps, lr_decay=lr_decay,
        clip_grad_norm=clip_grad_norm, seed=seed, callback=callback,
    )


@torch.no_grad()
def evaluate_seq2seq(
    model: Seq2SeqGRU, seq_len: int, *, task: str | TaskFn = "reverse", num_samples: int = 256, seed: int = 12345
) -> dict[str, float]:
    """Greedy-decoding accuracy of a model at one source length, on fresh seeded data.

    Explained in chapter 1.

    Args:
        model: The model.
        seq_len: Source (and target) length.
        task: As in :func:`train_seq2seq`.
        num_samples: Number of test sequences.
        seed: Seed of the test data (keep it apart from training seeds).

    Returns:
        ``{"token_accuracy": ..., "sequence_accuracy": ...}``: the fraction of tokens right, and
        of sequences with every token right.
    """
    src, tgt = seq2seq_task(task)(num_samples, seq_len, model.vocab_size, seed=seed)  # (N, S), (N, T)
    was_training = model.training
    model.eval()
    predictions = model.generate(src, max_new_tokens=tgt.shape[1])  # (N, T)
    model.train(was_training)
    return {
        "token_accuracy": token_accuracy(predictions, tgt),
        "sequence_accuracy": sequence_accuracy(predictions, tgt),
    }
