"""Reading an alignment: where attention looked, and what the output actually depends on.

An alignment (Bahdanau et al., 2015) is the matrix of attention weights of a decoder over its
source, one row per output step. Chapter 1 reads it two ways:

- :func:`source_positions` and :func:`alignment_mass` -- score an alignment against the
  positions a task reads from (the anti-diagonal of reversal, the diagonal of copying);
- :func:`alignment_by_length` -- how well a trained model's focus holds up on longer sources,
  measured under greedy decoding or teacher forcing, beside :func:`uniform_alignment_mass`, what
  weights spread evenly over the source would score (chance);
- :func:`occlusion_dependence` -- what an alignment does *not* show: how much each output
  actually changes when one source token is replaced, to set beside the attention weights
  (Jain & Wallace, 2019; Wiegreffe & Pinter, 2019), with the decoder fed either the true
  previous tokens (teacher forcing) or its own (greedy decoding).

Shape legend::

    B     batch size
    S     source length
    T     target length (= S for the copy, reverse and sort tasks)
    V     vocabulary size

Deterministic: the same arguments give the same numbers. Explained in chapter 1.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from ..checks import check_int, check_positive_int, check_positive_ints
from ..tasks import FIRST_CONTENT_TOKEN

__all__ = [
    "OCCLUSION_DECODING",
    "source_positions",
    "alignment_mass",
    "uniform_alignment_mass",
    "alignment_by_length",
    "occlusion_dependence",
]


# --------------------------------------------------------------------------------------------
# Where attention looked, scored against where the task reads from
# --------------------------------------------------------------------------------------------


def source_positions(task: str, src: Tensor) -> Tensor:
    """For each output step, the source position a perfect model reads from.

    ``copy``: output ``i`` reads source ``i``; ``reverse``: source ``S - 1 - i``; ``sort``: the
    position of the ``i``-th smallest token (ties in source order, as a stable sort gives).
    Explained in chapter 1.

    Args:
        task: ``"copy"``, ``"reverse"`` or ``"sort"``.
        src: Source tokens.

    Returns:
        Source positions, int64.

    Shape:
        src ``(B, S)`` -> ``(B, S)``.
    """
    if not isinstance(src, Tensor) or src.dim() != 2:
        raise ValueError(f"src must be a (B, S) tensor, got {getattr(src, 'shape', type(src))}")
    batch, length = src.shape
    if task == "copy":
        return torch.arange(length).expand(batch, length).clone()
    if task == "reverse":
        return torch.arange(length - 1, -1, -1).expand(batch, length).clone()
    if task == "sort":
        return torch.sort(src, dim=1, stable=True).indices
    raise ValueError(f"task must be 'copy', 'reverse' or 'sort', got {task!r}")


def alignment_mass(alignment: Tensor, positions: Tensor, *, window: int = 0) -> float:
    """Mean attention weight within ``window`` positions of where each output step should read.

    With ``window=0``: the weight on the exact source position; 1 for an alignment that puts
    all its weight where the task reads from, ``1 / S`` for a uniform one. A bidirectional
    encoder state ``h_j`` also carries its neighbours' tokens, so a trained model may read
    token ``j`` from ``h_{j+1}`` or ``h_{j-1}``: ``window=1`` counts those too. Explained in
    chapter 1.

    Args:
        alignment: Attention of each output step over the source (rows sum to 1).
        positions: The source position of each output step (:func:`source_positions`).
        window: How far from the position a weight still counts (``>= 0``).

    Returns:
        The mean weight, in [0, 1].

    Shape:
        alignment ``(T, S)`` or ``(B, T, S)``; positions ``(T,)`` or ``(B, T)``.
    """
    check_int("window", window, 0)
    if alignment.dim() == 2:
        alignment = alignment[None]
    if positions.dim() == 1:
        positions = positions[None]
    if alignment.dim() != 3 or positions.shape != alignment.shape[:2]:
        raise ValueError(f"alignment must be (B, T, S) and positions (B, T), got {tuple(alignment.shape)} "
                         f"and {tuple(positions.shape)}")
    columns = torch.arange(alignment.shape[-1])  # (S,)
    near = (columns - positions[..., None]).abs() <= window  # (B, T, 1) vs (S,) -> (B, T, S)
    return (alignment * near).sum(-1).mean().item()


def uniform_alignment_mass(length: int, *, window: int = 0) -> float:
    """What :func:`alignment_mass` gives an alignment that spreads its weight evenly: the chance level.

    For a source of ``length`` positions and a task that reads every position once (copy, reverse),
    each output step puts ``1 / length`` on each position, so the mass within ``window`` positions
    of the right one is the number of positions in the window that exist (fewer near the ends)
    over ``length``, averaged over the steps: ``(2 w + 1) / S`` away from the ends. Explained in chapter 1.

    Args:
        length: Source length S.
        window: As in :func:`alignment_mass`.

    Returns:
        The mean weight of a uniform alignment, in (0, 1].
    """
    check_positive_int("length", length)
    check_int("window", window, 0)
    inside = sum(min(i + window, length - 1) - max(i - window, 0) + 1 for i in range(length))
    return inside / (length * length)


@torch.no_grad()
def alignment_by_length(
    model: nn.Module, lengths: list[int] | range, *, task: str = "reverse", num_samples: int = 128,
    window: int = 1, seed: int = 12345, decoding: str = "greedy",
) -> list[float]:
    """Where a trained model's attention goes on longer sources: the weight near the right position.

    For each length, ``num_samples`` fresh sources of the task are decoded greedily (the model
    reads its own previous outputs, as at test time) or teacher-forced (it reads the true previous
    target tokens, so an early mistake cannot lead the later steps astray), and the alignment is scored with
    :func:`alignment_mass` against :func:`source_positions`. A value that falls with the
    length says the focus itself blurs or drifts on long sources, not only what is read
    through it; :func:`uniform_alignment_mass` is the level of an alignment that looks nowhere.
    Explained in chapter 1.

    Args:
        model: A model called as ``model(source, max_new_tokens=T)`` (greedy) or ``model(source, target)``
            (teacher-forced) that returns ``(logits, alignment)``, e.g. :class:`~helpers.rnn.Seq2SeqGRU`
            with attention.
        lengths: Source lengths.
        task: ``"copy"``, ``"reverse"`` or ``"sort"``.
        num_samples: Test sequences per length.
        window: As in :func:`alignment_mass`.
        seed: Seed of the test data.
        decoding: ``"greedy"`` (the model's own previous outputs) or ``"teacher_forced"`` (the true
            previous target tokens).

    Returns:
        One mean weight per length, in [0, 1].
    """
    from .seq2seq_training import seq2seq_task  # noqa: PLC0415 (seq2seq_training imports the model)

    lengths = check_positive_ints("lengths", lengths)
    check_positive_int("num_samples", num_samples)
    if decoding not in ("greedy", "teacher_forced"):
        raise ValueError(f"decoding must be 'greedy' or 'teacher_forced', got {decoding!r}")
    make = seq2seq_task(task)
    vocab_size = getattr(model, "vocab_size", None)
    if not isinstance(vocab_size, int):
        raise ValueError("model must have an int attribute vocab_size")
    was_training = model.training
    model.eval()
    masses = []
    for length in lengths:
        src, tgt = make(num_samples, length, vocab_size, seed=seed + length)  # (N, S), (N, T)
        if decoding == "greedy":
            _, alignment = model(src, max_new_tokens=length)  # (N, T, S)
        else:
            _, alignment = model(src, tgt)  # (N, T, S)
        if alignment is None:
            raise ValueError("alignment_by_length needs a model with attention (it returned no alignment)")
        masses.append(alignment_mass(alignment, source_positions(task, src), window=window))
    model.train(was_training)
    return masses


# --------------------------------------------------------------------------------------------
# What an alignment does not show: dependence measured by occlusion
# --------------------------------------------------------------------------------------------


OCCLUSION_DECODING: tuple[str, ...] = ("teacher_forced", "greedy", "teacher_forced_matched")
"""How :func:`occlusion_dependence` feeds the decoder — the true target, the model's own outputs, or
the true target of each run's own (occluded) source."""


@torch.no_grad()
def occlusion_dependence(
    model: nn.Module, src: Tensor, tgt: Tensor, *, vocab_size: int | None = None, decoding: str = "teacher_forced",
    target_of: Callable[[Tensor], Tensor] | None = None,
) -> Tensor:
    """How much each output changes when one source token is replaced: dependence, measured.

    For each source position ``j`` the token there is replaced by the next content token
    (``FIRST_CONTENT_TOKEN .. V - 1``, cyclically), and the output distribution of every step
    ``i`` is compared with the original one by total-variation distance
    ``0.5 * sum_v |p_i(v) - p'_i(v)|``: 0 when output ``i`` ignores token ``j``, 1 when it
    changes completely. Unlike an attention weight, this is what the output *does* with the
    token (Jain & Wallace, 2019, compare attention with such measures).

    How the decoder is fed matters. With ``decoding="teacher_forced"`` every run reads the true
    previous tokens of ``tgt``; after the replaced symbol has been written, those inputs no
    longer match the changed source, an input the model never met in training. With
    ``decoding="greedy"`` every run (the original and each occluded one) decodes freely, reading
    its own previous outputs, as at test time: a change then also travels through what the model
    wrote. With ``decoding="teacher_forced_matched"`` every run reads the true target of *its own*
    source, ``target_of(source)`` (the reversed source, for reversal): teacher forcing, as in
    training, on a prefix that agrees with the changed source; the control that separates the
    contradiction from teacher forcing itself. Explained in chapter 1; chapter 6 returns to reading
    attention maps.

    Args:
        model: A model called as ``model(source, target)`` (teacher forcing) or ``model(source, max_new_tokens=T)``
            (greedy) that returns ``logits`` or ``(logits, ...)``, e.g. :class:`~helpers.rnn.Seq2SeqGRU`.
        src: Source tokens of one sequence.
        tgt: Its target tokens (teacher forcing), or only their number ``T`` (greedy).
        vocab_size: Vocabulary size (default ``model.vocab_size``).
        decoding: One of :data:`OCCLUSION_DECODING`.
        target_of: The task's target of a batch of sources, ``(B, S) -> (B, T)``; needed by
            ``"teacher_forced_matched"`` only, and must give ``tgt`` for ``src``.

    Returns:
        The dependence matrix, whose entry ``[i, j]`` is the change of output ``i`` when source
        token ``j`` is replaced.

    Shape:
        src ``(1, S)``, tgt ``(1, T)`` -> ``(T, S)``.
    """
    if not isinstance(src, Tensor) or src.dim() != 2 or src.shape[0] != 1:
        raise ValueError(f"src must be one sequence (1, S), got {getattr(src, 'shape', type(src))}")
    if not isinstance(tgt, Tensor) or tgt.dim() != 2 or tgt.shape[0] != 1:
        raise ValueError(f"tgt must be one sequence (1, T), got {getattr(tgt, 'shape', type(tgt))}")
    if decoding not in OCCLUSION_DECODING:
        raise ValueError(f"decoding must be one of {OCCLUSION_DECODING}, got {decoding!r}")
    if (decoding == "teacher_forced_matched") != (target_of is not None):
        raise ValueError("target_of is needed by decoding='teacher_forced_matched', and only by it: "
                         f"got decoding={decoding!r}, target_of={target_of!r}")
    if target_of is not None and not torch.equal(target_of(src), tgt):
        raise ValueError("target_of(src) must equal tgt: it is the task's target of a source")
    vocab_size = vocab_size if vocab_size is not None else getattr(model, "vocab_size", None)
    if not isinstance(vocab_size, int) or vocab_size <= FIRST_CONTENT_TOKEN + 1:
        raise ValueError(f"vocab_size must be an int > {FIRST_CONTENT_TOKEN + 1}, got {vocab_size!r}")
    length = src.shape[1]
    n_content = vocab_size - FIRST_CONTENT_TOKEN
    occluded = src.repeat(length, 1)  # (S, S): row j will have token j replaced
    rows = torch.arange(length)
    occluded[rows, rows] = (occluded[rows, rows] - FIRST_CONTENT_TOKEN + 1) % n_content + FIRST_CONTENT_TOKEN
    was_training = model.training
    model.eval()
    batch_src = torch.cat([src, occluded])  # (1 + S, S): the original first
    if decoding == "greedy":  # every run writes its own outputs and reads them back
        output = model(batch_src, max_new_tokens=tgt.shape[1])
    elif decoding == "teacher_forced_matched":  # every run reads the true target of its own source
        output = model(batch_src, target_of(batch_src))
    else:  # every run reads the true previous tokens
        output = model(batch_src, tgt.expand(1 + length, -1))
    model.train(was_training)
    logits = output[0] if isinstance(output, (tuple, list)) else output  # (1 + S, T, V)
    probs = torch.softmax(logits.float(), dim=-1)  # (1 + S, T, V)
    change = 0.5 * (probs[1:] - probs[:1]).abs().sum(-1)  # (S, T): row j = source j replaced
    return change.T.contiguous()  # (T, S)
