"""Seeded synthetic sequence tasks: the data the book's sequence experiments train on.

Each task is small enough to train on a 2-core CPU in seconds, and each one isolates one
ability: holding a whole sequence (copy, reverse, sort), looking something up by content
(associative recall), combining two places (two-place sum), reading fixed offsets (the offset
filter). The image tasks of chapter 5 are in :mod:`helpers.vision_tasks`. Every function takes a
keyword-only ``seed`` and is deterministic for it: the same seed gives the same tensors, on any
machine, without touching the global random state.

Shape legend:
    N: number of samples
    L: sequence length
    P: number of key-value pairs (associative recall)
    K: number of offsets (the offset filter)

Token conventions of the sequence-to-sequence tasks (:func:`copy_task`, :func:`reverse_task`,
:func:`sort_task`): ``PAD_TOKEN = 0`` and ``BOS_TOKEN = 1`` are reserved, content tokens are
``FIRST_CONTENT_TOKEN = 2`` ... ``vocab_size - 1``. Sequences have no padding and no EOS: every
sequence of a call has the same length, and a decoder is told how many tokens to produce.

Used in chapters 1 (copy, reverse), 2-3 (associative recall) and 4 (two-place sum, offset filter).
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import seeding
from .checks import check_int, check_positive_int

__all__ = [
    "PAD_TOKEN",
    "BOS_TOKEN",
    "FIRST_CONTENT_TOKEN",
    "copy_task",
    "reverse_task",
    "sort_task",
    "associative_recall_task",
    "two_place_task",
    "offset_filter_task",
]

PAD_TOKEN: int = 0
"""Padding token of the sequence tasks (never produced by them; reserved for models)."""
BOS_TOKEN: int = 1
"""Beginning-of-sequence token a decoder starts from."""
FIRST_CONTENT_TOKEN: int = 2
"""Smallest content token of :func:`copy_task`, :func:`reverse_task` and :func:`sort_task`."""


def _generator(seed: int) -> torch.Generator:
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} ({seed!r})")
    return seeding.generator(seed)


def _random_content(num_samples: int, seq_len: int, vocab_size: int, seed: int) -> Tensor:
    check_positive_int("num_samples", num_samples)
    check_positive_int("seq_len", seq_len)
    check_int("vocab_size", vocab_size, FIRST_CONTENT_TOKEN + 1)
    gen = _generator(seed)
    return torch.randint(FIRST_CONTENT_TOKEN, vocab_size, (num_samples, seq_len), generator=gen)


def copy_task(num_samples: int, seq_len: int, vocab_size: int, *, seed: int) -> tuple[Tensor, Tensor]:
    """Copy: the target is the source itself.

    Tests whether a model can carry every token of the input to the output at the same
    position: a recurrent encoder-decoder must squeeze the whole sequence through its state.
    Explained in chapter 1.

    Args:
        num_samples: Number of sequences N.
        seq_len: Length L of every sequence.
        vocab_size: Size of the vocabulary, special tokens included; content tokens are drawn
            uniformly from ``FIRST_CONTENT_TOKEN .. vocab_size - 1`` (so ``vocab_size >= 3``).
        seed: Seed of the sampler.

    Returns:
        ``(src, tgt)`` with ``tgt == src``.

    Shape:
        src, tgt: ``(N, L)``, dtype ``int64``.
    """
    src = _random_content(num_samples, seq_len, vocab_size, seed)
    return src, src.clone()


def reverse_task(num_samples: int, seq_len: int, vocab_size: int, *, seed: int) -> tuple[Tensor, Tensor]:
    """Reversal: the target is the source read backwards, ``tgt[:, i] == src[:, L - 1 - i]``.

    Tests long-range transport: the first output token is the last input token and the last
    output token is the first input token, so every output needs a token from a different place.
    The task of the bottleneck experiment (Sutskever et al., 2014, reversed the source sentence
    for exactly this reason). Explained in chapter 1.

    Args:
        num_samples: Number of sequences N.
        seq_len: Length L of every sequence.
        vocab_size: Size of the vocabulary, special tokens included (``>= 3``).
        seed: Seed of the sampler.

    Returns:
        ``(src, tgt)`` with ``tgt == src.flip(1)``.

    Shape:
        src, tgt: ``(N, L)``, dtype ``int64``.
    """
    src = _random_content(num_samples, seq_len, vocab_size, seed)
    return src, src.flip(1)


def sort_task(num_samples: int, seq_len: int, vocab_size: int, *, seed: int) -> tuple[Tensor, Tensor]:
    """Sorting: the target is the source in ascending order.

    Tests content-based ordering: where an output token comes from depends on the values of all
    input tokens, not on a fixed position. Explained in chapter 1.

    Args:
        num_samples: Number of sequences N.
        seq_len: Length L of every sequence.
        vocab_size: Size of the vocabulary, special tokens included (``>= 3``).
        seed: Seed of the sampler.

    Returns:
        ``(src, tgt)`` with ``tgt == src.sort(dim=1).values``.

    Shape:
        src, tgt: ``(N, L)``, dtype ``int64``.
    """
    src = _random_content(num_samples, seq_len, vocab_size, seed)
    return src, src.sort(dim=1).values


def associative_recall_task(
    num_samples: int, num_pairs: int, num_keys: int, num_values: int, *, seed: int
) -> tuple[Tensor, Tensor]:
    """Associative recall: key-value pairs, then a query key; the target is that key's value.

    A sequence reads ``k_1 v_1 k_2 v_2 ... k_P v_P q`` where the keys of one sequence are
    distinct and ``q`` is one of them. Answering needs a lookup by content: match ``q`` against
    the keys, then read the token next to the match. One attention layer whose query is ``q``
    can do it if its score function can express "same key" (chapters 2 and 3).

    Keys and values share one vocabulary of ``num_keys + num_values`` tokens: keys are
    ``0 .. num_keys - 1`` and values are ``num_keys .. num_keys + num_values - 1``, so the target
    is a token id (subtract ``num_keys`` for the value index).

    Args:
        num_samples: Number of sequences N.
        num_pairs: Number of key-value pairs P per sequence (``<= num_keys``).
        num_keys: Number of distinct key tokens.
        num_values: Number of distinct value tokens (values may repeat within a sequence).
        seed: Seed of the sampler.

    Returns:
        ``(tokens, target)``: ``tokens[:, 2 * i]`` are keys, ``tokens[:, 2 * i + 1]`` their values,
        ``tokens[:, -1]`` the query key; ``target[n]`` is the value paired with the query.

    Shape:
        tokens: ``(N, 2 * P + 1)``; target: ``(N,)``; dtype ``int64``.
    """
    check_positive_int("num_samples", num_samples)
    check_positive_int("num_pairs", num_pairs)
    check_positive_int("num_keys", num_keys)
    check_positive_int("num_values", num_values)
    if num_pairs > num_keys:
        raise ValueError(
            f"num_pairs ({num_pairs}) must be <= num_keys ({num_keys}): keys of a sequence are distinct"
        )
    gen = _generator(seed)
    keys = torch.rand(num_samples, num_keys, generator=gen).argsort(dim=1)[:, :num_pairs]  # (N, P)
    values = torch.randint(0, num_values, (num_samples, num_pairs), generator=gen) + num_keys  # (N, P)
    which = torch.randint(0, num_pairs, (num_samples,), generator=gen)  # (N,)
    rows = torch.arange(num_samples)
    tokens = torch.stack([keys, values], dim=2).reshape(num_samples, 2 * num_pairs)  # (N, 2P)
    query = keys[rows, which]  # (N,)
    tokens = torch.cat([tokens, query[:, None]], dim=1)  # (N, 2P + 1)
    return tokens, values[rows, which]


def two_place_task(
    num_samples: int, seq_len: int, vocab_size: int, *, op: str = "sum", seed: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Two places: the answer combines the tokens at two marked positions.

    A sequence holds ``seq_len`` digits ``x_0 .. x_{L-1}`` in ``0 .. vocab_size - 1``. Two positions
    ``i != j`` are marked, with two different marks: the token at ``i`` is written as
    ``x_i + vocab_size`` ("first" mark) and the token at ``j`` as ``x_j + 2 * vocab_size``
    ("second" mark). A final query token ``3 * vocab_size`` closes the sequence, and the target
    is, read at the query:

    - ``op="sum"``: ``(x_i + x_j) % vocab_size``;
    - ``op="compare"``: ``1`` if ``x_i > x_j``, else ``0``.

    Either way the output needs information from two different places at once: one attention
    head must split its weight between them, two heads can each take one (chapter 4). The full
    vocabulary has ``3 * vocab_size + 1`` tokens.

    Args:
        num_samples: Number of sequences N.
        seq_len: Number of digits L (``>= 2``).
        vocab_size: Number of digit values (``>= 2``).
        op: ``"sum"`` or ``"compare"``.
        seed: Seed of the sampler.

    Returns:
        ``(tokens, target, positions)``: ``positions[n] = (i, j)`` are the first- and
        second-marked positions.

    Shape:
        tokens: ``(N, L + 1)``; target: ``(N,)``; positions: ``(N, 2)``; dtype ``int64``.
    """
    check_positive_int("num_samples", num_samples)
    check_int("seq_len", seq_len, 2)
    check_int("vocab_size", vocab_size, 2)
    if op not in ("sum", "compare"):
        raise ValueError(f"op must be 'sum' or 'compare', got {op!r}")
    gen = _generator(seed)
    digits = torch.randint(0, vocab_size, (num_samples, seq_len), generator=gen)  # (N, L)
    positions = torch.rand(num_samples, seq_len, generator=gen).argsort(dim=1)[:, :2]  # (N, 2)
    rows = torch.arange(num_samples)
    first = digits[rows, positions[:, 0]]  # (N,)
    second = digits[rows, positions[:, 1]]  # (N,)
    tokens = digits.clone()
    tokens[rows, positions[:, 0]] += vocab_size
    tokens[rows, positions[:, 1]] += 2 * vocab_size
    query = torch.full((num_samples, 1), 3 * vocab_size, dtype=torch.long)
    tokens = torch.cat([tokens, query], dim=1)  # (N, L + 1)
    if op == "sum":
        target = (first + second) % vocab_size
    else:
        target = (first > second).long()
    return tokens, target, positions


def offset_filter_task(
    num_samples: int,
    seq_len: int,
    dim: int,
    offsets: tuple[int, ...],
    *,
    seed: int,
    filters: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """A k-tap filter over a circular sequence: each output mixes the inputs at fixed offsets.

    ``y_i = sum_k A_k x_{(i + o_k) mod L}`` with Gaussian inputs ``x_i`` of size ``dim`` and one
    fixed ``dim x dim`` matrix ``A_k`` per offset ``o_k`` (a 1-D convolution with a matrix per
    tap). An attention head whose weights depend on the relative position only outputs
    ``M sum_j w_j x_{i+j}``, one matrix times one average: it can follow one offset exactly but
    not two with different matrices. ``K`` offsets need ``K`` such heads in one layer
    (Cordonnier et al., 2020, "On the Relationship between Self-Attention and Convolutional
    Layers", in 1-D). Chapter 4.

    Args:
        num_samples: Number of sequences N.
        seq_len: Number of positions L (the sequence wraps around).
        dim: Size of each input and output vector.
        offsets: The K distinct relative offsets ``o_k`` (any ints; taken modulo L).
        seed: Seed of the sampler (the inputs, and the filters when ``filters`` is None).
        filters: The K matrices ``A_k``; drawn (entries ``N(0, 1/dim)``) when None, so that
            train and test sets of one task can share them.

    Returns:
        ``(x, y, filters)``.

    Shape:
        x, y: ``(N, L, dim)`` float32; filters: ``(K, dim, dim)``.
    """
    check_positive_int("num_samples", num_samples)
    check_positive_int("seq_len", seq_len)
    check_positive_int("dim", dim)
    offsets = tuple(offsets)
    if not offsets or any(isinstance(o, bool) or not isinstance(o, int) for o in offsets):
        raise ValueError(f"offsets must be a non-empty tuple of ints, got {offsets!r}")
    if len({o % seq_len for o in offsets}) != len(offsets):
        raise ValueError(f"offsets must be distinct modulo seq_len={seq_len}, got {offsets!r}")
    gen = _generator(seed)
    if filters is None:
        filters = torch.randn(len(offsets), dim, dim, generator=gen) / dim**0.5  # (K, dim, dim)
    elif not isinstance(filters, Tensor) or filters.shape != (len(offsets), dim, dim):
        got = tuple(filters.shape) if isinstance(filters, Tensor) else type(filters).__name__
        raise ValueError(f"filters must have shape (K, dim, dim) = {(len(offsets), dim, dim)}, got {got}")
    x = torch.randn(num_samples, seq_len, dim, generator=gen)  # (N, L, dim)
    y = torch.zeros_like(x)
    for k, offset in enumerate(offsets):
        y = y + torch.roll(x, shifts=-offset, dims=1) @ filters[k].T  # row i reads x_{i + o_k}
    return x, y, filters
