"""Lab 1's mystery alignments: three small attention models, trained on copy, reverse and sort, and their
alignments on one source, which exercise 4 (:mod:`helpers.exercises.bottleneck.task_names`) asks to name."""

from __future__ import annotations

import functools

import torch
from torch import Tensor

from .. import seeding

__all__ = ["TASKS", "VOCAB_SIZE", "trained_alignment"]

TASKS: tuple[str, ...] = ("copy", "reverse", "sort")
"""The tasks the mystery models are trained on."""

VOCAB_SIZE = 12
"""The models' vocabulary (the special tokens, then the content symbols)."""


@functools.lru_cache(maxsize=8)
def trained_alignment(task: str, seq_len: int, hidden_size: int, steps: int, seed: int) -> tuple[Tensor, Tensor]:
    """One :class:`~helpers.rnn.Seq2SeqGRU` with attention trained on ``task``, and its alignment on a source of
    ``seq_len`` distinct symbols (seeded: the same at every call; trained once per setting in a session).

    Returns:
        ``(src, alignment)``: the source ``(S,)`` and the teacher-forced alignment ``(T, S)``.
    """
    from ..rnn import Seq2SeqGRU
    from ..tasks import FIRST_CONTENT_TOKEN
    from ..train import num_threads, set_seed
    from .seq2seq_training import train_seq2seq

    gen = seeding.generator(seed + 777)
    src = (torch.randperm(VOCAB_SIZE - FIRST_CONTENT_TOKEN, generator=gen)[:seq_len] + FIRST_CONTENT_TOKEN)[None]
    target = {"copy": src, "reverse": src.flip(1), "sort": src.sort(dim=1).values}[task]  # (1, S), distinct
    with num_threads(1):
        set_seed(seed)
        model = Seq2SeqGRU(VOCAB_SIZE, 16, hidden_size, attention=True)
        train_seq2seq(model, task=task, lengths=[seq_len], steps=steps, batch_size=32, lr=1e-2, seed=seed)
        model.eval()
        with torch.no_grad():
            _, alignment = model(src, target)  # (1, T, S)
    return src[0], alignment[0]
