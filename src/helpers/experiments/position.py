"""Experiments of chapter 6.5: attention has no positions of its own.

- :func:`permutation_gaps`: shuffle the input of an attention layer (and of a whole encoder)
  without positions and the output is shuffled the same way; a causal mask breaks this.
- :func:`order_task_runs`: an encoder without positions cannot learn a task that depends on
  order (reversal); with learned positions it can.
- :func:`rope_offset_gap`: RoPE's score ``<R_m q, R_n k>`` depends only on ``m - n``.
- :func:`extrapolation_runs`: the same tiny decoder trained on sequences of length ``L`` with each
  position encoding, evaluated per position on sequences up to ``4 L`` (train short, test long;
  Press et al., 2022; Kazemnejad et al., 2023). The learned runs keep their position table.
- :func:`transformer_xl_terms`: the four terms of Transformer-XL's relative score for random
  inputs (Dai et al., 2019), and :func:`diagonal_spread` to check which of them depend on ``i - j`` only.

All seeded and sized for a 2-core CPU (one thread).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import torch
from torch import Tensor

from helpers.models import LogitsOnly, TinyConfig, TinyEncoder, TinyGPT
from helpers.multihead import MultiHeadAttention
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb, transformer_xl_scores
from helpers.tasks import reverse_task
from helpers.train import num_threads, set_seed, train

from .. import seeding

__all__ = [
    "ENCODINGS",
    "permutation_gaps",
    "OrderRun",
    "order_task_runs",
    "set_function_ceiling",
    "rope_offset_gap",
    "rope_scores_by_offset",
    "recurrence_sequences",
    "ExtrapolationRun",
    "extrapolation_batch",
    "extrapolation_model",
    "extrapolation_runs",
    "windowed_predictions",
    "transformer_xl_terms",
    "diagonal_spread",
    "mean_spread",
]

ENCODINGS = ("none", "sinusoidal", "learned", "t5", "alibi", "rope")
"""The position encodings compared, in the order of the figures."""


def mean_spread(values: list[float]) -> tuple[float, float, float]:
    """``(mean, min, max)`` of a list of per-seed results."""
    return statistics.fmean(values), min(values), max(values)


@torch.no_grad()
def permutation_gaps(*, seed: int = 0, length: int = 10, embed_dim: int = 32) -> dict[str, float]:
    """Max ``|f(x)[perm] - f(x[perm])|`` for attention layers and a tiny encoder without positions.

    Returns:
        A dict with keys ``"attention layer"``, ``"encoder without positions"``, ``"encoder with
        learned positions"`` and ``"causal attention layer"``, holding float32 rounding for the
        first two and order one for the last two (they see positions).
    """
    set_seed(seed)
    layer = MultiHeadAttention(embed_dim, 4).eval()
    encoder = TinyEncoder(TinyConfig(vocab_size=16, embed_dim=embed_dim, positional="none")).eval()
    positioned = TinyEncoder(TinyConfig(vocab_size=16, embed_dim=embed_dim, positional="learned")).eval()
    with torch.no_grad():  # larger position vectors than the 0.02 init, so that they matter
        positioned.stack.position_embedding.weight.normal_(0.0, 1.0)
    x = torch.randn(2, length, embed_dim)  # (B, L, D)
    tokens = torch.randint(0, 16, (2, length))  # (B, L)
    perm = torch.randperm(length)
    return {
        "attention layer": (layer(x)[0][:, perm] - layer(x[:, perm])[0]).abs().max().item(),
        "encoder without positions": (
            encoder(tokens).output[:, perm] - encoder(tokens[:, perm]).output).abs().max().item(),
        "encoder with learned positions": (
            positioned(tokens).output[:, perm] - positioned(tokens[:, perm]).output).abs().max().item(),
        "causal attention layer": (layer(x, is_causal=True)[0][:, perm]
                                   - layer(x[:, perm], is_causal=True)[0]).abs().max().item(),
    }


@dataclass
class OrderRun:
    """One training run of the reversal task."""

    positional: str
    seed: int
    accuracy: float  # held-out token accuracy


def order_task_runs(
    positionals: tuple[str, ...] = ("none", "learned"),
    seeds: tuple[int, ...] = (0, 1, 2),
    *,
    seq_len: int = 8,
    vocab_size: int = 8,
    steps: int = 200,
    batch: int = 64,
) -> dict[str, list[OrderRun]]:
    """Trains a 1-layer encoder to reverse a sequence, with and without positions.

    Without positions the encoder's output at a position is a function of its own token and of
    the *set* of tokens: it cannot know where to copy from.
    """
    runs: dict[str, list[OrderRun]] = {}
    test_x, test_y = reverse_task(512, seq_len, vocab_size, seed=10_000)
    with num_threads(1):
        for positional in positionals:
            for seed in seeds:
                set_seed(seed)
                config = TinyConfig(vocab_size=vocab_size, embed_dim=32, num_heads=2, num_layers=1,
                                    max_positions=seq_len, positional=positional)
                model = TinyEncoder(config, num_outputs=vocab_size)

                def make_batch(step: int, seed: int = seed) -> tuple[Tensor, Tensor]:
                    return reverse_task(batch, seq_len, vocab_size, seed=seed * 100_000 + step)

                train(LogitsOnly(model), make_batch, steps=steps, lr=3e-3, accuracy_fn=None, seed=seed)
                model.eval()
                with torch.no_grad():
                    pred = model(test_x).output.argmax(-1)  # (N, L)
                runs.setdefault(positional, []).append(
                    OrderRun(positional, seed, (pred == test_y).float().mean().item()))
    return runs


def set_function_ceiling(tokens: Tensor) -> float:
    """The expected accuracy of the best reversal that sees only its own token and the set of tokens.

    An encoder without positions is permutation equivariant: its output at position ``i`` is a
    function of ``x_i`` and of the multiset of the sequence's tokens, nothing else. The reversal's
    target at ``i`` is ``x_{L-1-i}``, one of the *other* tokens, and for exchangeable random tokens
    each of them is equally likely to be the one asked for. The best such function therefore
    predicts the most frequent of the other ``L - 1`` tokens, and is right with probability (its
    count) / (L - 1). Averaged over the sequences given, that is the ceiling of any model without
    positions on this task (in expectation; a finite test set scatters around it).

    Args:
        tokens: Sequences ``(N, L)`` with ``L >= 2``, e.g. the inputs of :func:`helpers.tasks.reverse_task`.

    Returns:
        The mean over sequences and positions of ``max count among the other tokens / (L - 1)``.
    """
    if not isinstance(tokens, Tensor) or tokens.dim() != 2 or tokens.size(1) < 2:
        raise ValueError(f"tokens must be a (N, L) tensor with L >= 2, got {getattr(tokens, 'shape', tokens)!r}")
    length = tokens.size(1)
    counts = torch.nn.functional.one_hot(tokens).sum(1)  # (N, V): how often each symbol occurs
    others = counts[:, None, :] - torch.nn.functional.one_hot(tokens, counts.size(-1))  # (N, L, V): without x_i
    return (others.max(-1).values.double() / (length - 1)).mean().item()


@torch.no_grad()
def rope_offset_gap(*, head_dim: int = 64, max_position: int = 512, seed: int = 0) -> float:
    """Max change of ``<R_m q, R_n k>`` when both positions are shifted by the same amount.

    For random ``q, k`` and pairs ``(m, n)``, compares the score at ``(m, n)`` with the score at
    ``(m + s, n + s)`` for many shifts ``s``; the result is float32 rounding.
    """
    gen = seeding.generator(seed)
    q = torch.randn(1, 1, 1, head_dim, generator=gen)  # (B, H, 1, E)
    k = torch.randn(1, 1, 1, head_dim, generator=gen)
    rope = RotaryEmbedding(head_dim)
    cos, sin = rope(max_position)  # (1, P, E)
    q_all, k_all = apply_rotary_pos_emb(q.expand(1, 1, max_position, head_dim),
                                        k.expand(1, 1, max_position, head_dim), cos, sin)  # (1, 1, P, E)
    scores = (q_all[0, 0] @ k_all[0, 0].T).double()  # (P, P): scores[m, n] = <R_m q, R_n k>
    reference = (q[0, 0, 0] @ k[0, 0, 0]).item()
    gaps = []
    for offset in range(-64, 65, 8):  # every diagonal m - n = offset holds one value
        diagonal = torch.diagonal(scores, offset=-offset)
        gaps.append((diagonal - diagonal[0]).abs().max().item())
    if abs(scores[0, 0].item() - reference) >= 1e-4:  # at m = n = 0 RoPE rotates nothing
        raise RuntimeError(f"RoPE changed the score at position 0: {scores[0, 0].item()} vs {reference}")
    return max(gaps)


@torch.no_grad()
def rope_scores_by_offset(*, head_dim: int = 64, max_offset: int = 256, seed: int = 0,
                          num_pairs: int = 256) -> tuple[list[int], list[float], list[float]]:
    """Mean ``<R_m q, R_n q> / E`` over random ``q`` (a key equal to the query), against ``m - n``.

    Returns offsets, the mean score for identical ``q = k`` (RoPE's long-term decay, Su et al.
    section 3.4.3) and the same without RoPE (flat).
    """
    gen = seeding.generator(seed)
    q = torch.randn(num_pairs, head_dim, generator=gen)  # (N, E): q = k, the best-matching key
    rope = RotaryEmbedding(head_dim)
    offsets = list(range(0, max_offset + 1, 4))
    cos, sin = rope(torch.tensor(offsets))  # (1, O, E)
    base = q[None, None].expand(1, 1, num_pairs, head_dim)
    rotated = []
    for i in range(len(offsets)):
        qi, _ = apply_rotary_pos_emb(base, base, cos[:, i:i + 1].expand(1, num_pairs, head_dim),
                                     sin[:, i:i + 1].expand(1, num_pairs, head_dim))
        rotated.append(qi[0, 0])  # (N, E): q rotated by offset i (key at position 0)
    with_rope = [float((r * q).sum(-1).mean() / head_dim) for r in rotated]
    without = [float((q * q).sum(-1).mean() / head_dim)] * len(offsets)
    return offsets, with_rope, without


def recurrence_sequences(
    num: int, length: int, vocab_size: int, *, seed: int, lags: tuple[int, ...] = (1, 3)
) -> Tensor:
    """Sequences where ``x_t = (sum of x_{t-lag} over lags) mod V`` after ``max(lags)`` random tokens.

    The default is ``x_t = (x_{t-1} + x_{t-3}) mod V``.

    Predicting ``x_t`` needs the tokens exactly one and three places back: a task about relative
    position, the same at every length.

    Shape:
        output: ``(num, length)``
    """
    gen = seeding.generator(seed)
    x = torch.zeros(num, length, dtype=torch.long)
    first = max(lags)
    x[:, :first] = torch.randint(0, vocab_size, (num, first), generator=gen)
    for t in range(first, length):
        x[:, t] = sum(x[:, t - lag] for lag in lags) % vocab_size
    return x


@dataclass
class ExtrapolationRun:
    """One tiny decoder trained on length ``train_len``, evaluated per position at ``test_len``."""

    positional: str
    seed: int
    train_len: int
    per_position: list[float] = field(default_factory=list)  # accuracy of predicting x_{t+1}, t = 0..test_len-2
    seconds: float = 0.0
    position_table: Tensor | None = None  # learned runs: the (test_len, D) table after training
    initial_position_table: Tensor | None = None  # ... and before it
    windowed_per_position: list[float] | None = None  # each prediction from the last train_len - 1 tokens only

    def windowed_accuracy(self, start: int, stop: int) -> float:
        """As :meth:`accuracy`, for the predictions that saw only a training-length window of keys."""
        if self.windowed_per_position is None:
            raise ValueError(f"run {self.positional}/{self.seed} has no windowed evaluation (see extrapolation_runs)")
        return statistics.fmean(self.windowed_per_position[start - 1:stop - 1])

    def accuracy(self, start: int, stop: int) -> float:
        """Mean accuracy over predicted positions ``start .. stop - 1`` (target index)."""
        values = self.per_position[start - 1:stop - 1]
        return statistics.fmean(values)


@torch.no_grad()
def windowed_predictions(model: TinyGPT, inputs: Tensor, window: int) -> Tensor:
    """Next-token predictions where position ``t`` sees only the inputs ``t - window + 1 .. t``.

    Each window is run as its own sequence (positions ``0 .. window - 1``), so the keys farther
    back than the window are removed. For an encoding that sees only offsets (RoPE, ALiBi, T5,
    none), this is the same as masking the far keys out of every layer; the queries then meet only
    offsets below ``window``, as in training on ``window``-token inputs.

    Args:
        model: A :class:`~helpers.models.TinyGPT`, in eval mode.
        inputs: Token ids ``(B, T)``.
        window: Keys per query, at least 1.

    Returns:
        The predicted ids ``(B, T)``; the first ``window - 1`` positions see their whole prefix.
    """
    if not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an int >= 1, got {window!r}")
    batch, length = inputs.shape
    pred = torch.empty_like(inputs)  # (B, T)
    head = min(window, length)
    pred[:, :head] = model(inputs[:, :head]).output.argmax(-1)  # (B, head): whole prefixes
    if length > window:
        windows = inputs.unfold(1, window, 1)[:, 1:]  # (B, T - window, window): the window ending at t
        flat = windows.reshape(-1, window)  # (B * (T - window), window)
        last = model(flat).output[:, -1].argmax(-1)  # (B * (T - window),)
        pred[:, window:] = last.view(batch, length - window)
    return pred


def extrapolation_batch(num: int, length: int, vocab_size: int, *, seed: int,
                        lags: tuple[int, ...] = (3,)) -> tuple[Tensor, Tensor]:
    """Inputs and next-token targets of :func:`recurrence_sequences`, the random start left out of the loss.

    Args:
        num: Sequences ``B``.
        length: Tokens per sequence ``L`` (inputs and targets have ``L - 1``).
        vocab_size: Symbols ``V``.
        seed: Seed of the sequences.
        lags: The recurrence's offsets; the first ``max(lags)`` tokens are random.

    Returns:
        ``(inputs, targets)``, targets ``-100`` where the next token is one of the random ones.

    Shape:
        inputs, targets: ``(B, L - 1)``
    """
    x = recurrence_sequences(num, length, vocab_size, seed=seed, lags=lags)  # (B, L)
    targets = x[:, 1:].clone()  # (B, L - 1)
    targets[:, :max(lags) - 1] = -100  # x_1 .. x_{first-1} are random: not predictable, not in the loss
    return x[:, :-1], targets


def extrapolation_model(
    positional: str,
    seed: int,
    *,
    train_len: int = 16,
    max_positions: int = 64,
    vocab_size: int = 8,
    steps: int = 300,
    batch: int = 32,
    embed_dim: int = 32,
    num_layers: int = 2,
    lags: tuple[int, ...] = (3,),
    lr: float = 3e-3,
    initial: dict[str, Tensor] | None = None,
) -> TinyGPT:
    """The tiny decoder of :func:`extrapolation_runs`, trained on ``train_len`` tokens (left in train mode).

    Also the starting point of chapter 6's "Long context in practice"
    (:mod:`helpers.experiments.rope_extrapolation`).

    Args:
        positional: The position encoding, one of :data:`ENCODINGS`.
        seed: Seed of the weights and of the training batches.
        train_len: Tokens per training sequence.
        max_positions: Rows of the absolute tables (``"learned"``, ``"sinusoidal"``).
        vocab_size, steps, batch, embed_dim, num_layers, lags, lr: As in :func:`extrapolation_runs`.
        initial: If given, a dict that receives a copy of the weights before training (``state_dict``).
    """
    set_seed(seed)
    config = TinyConfig(vocab_size=vocab_size, embed_dim=embed_dim, num_heads=4, num_layers=num_layers,
                        max_positions=max_positions, positional=positional)
    model = TinyGPT(config)
    if initial is not None:
        initial.update({name: value.detach().clone() for name, value in model.state_dict().items()})

    def make_batch(step: int) -> tuple[Tensor, Tensor]:
        return extrapolation_batch(batch, train_len, vocab_size, seed=seed * 1_000_003 + step, lags=lags)

    train(LogitsOnly(model), make_batch, steps=steps, lr=lr, accuracy_fn=None, seed=seed, warmup_steps=20)
    return model


def extrapolation_runs(
    encodings: tuple[str, ...] = ENCODINGS,
    seeds: tuple[int, ...] = (0, 1, 2),
    *,
    train_len: int = 16,
    test_len: int = 64,
    vocab_size: int = 8,
    steps: int = 300,
    batch: int = 32,
    embed_dim: int = 32,
    num_layers: int = 2,
    num_test: int = 256,
    lags: tuple[int, ...] = (3,),
    lr: float = 3e-3,
    windowed: tuple[str, ...] = (),
) -> dict[str, list[ExtrapolationRun]]:
    """Train short, test long: one tiny causal decoder per encoding and seed.

    Every model sees only sequences of ``train_len`` tokens; it is evaluated on ``num_test``
    sequences of ``test_len`` tokens, and the accuracy of its next-token prediction is recorded
    at every position (the first ``max(lags)`` tokens are random and excluded from the loss).
    The default task, ``x_t = x_{t-3}`` over 8 symbols, needs one relative offset and nothing
    else: whatever an encoding learns about "three back" at length 16 should hold at any length.
    A ``"learned"`` run also keeps its position table before and after training: the inputs have
    ``train_len - 1`` tokens, so rows ``train_len - 1`` and later never receive a gradient.
    For the encodings in ``windowed``, the runs also hold ``windowed_per_position``: the same
    test with every prediction made from the last ``train_len - 1`` tokens only
    (:func:`windowed_predictions`), which removes the keys at offsets never seen in training.
    """
    import time

    test = recurrence_sequences(num_test, test_len, vocab_size, seed=99_999, lags=lags)
    runs: dict[str, list[ExtrapolationRun]] = {}
    with num_threads(1):
        for positional in encodings:
            for seed in seeds:
                start = time.process_time()
                weights: dict[str, Tensor] = {}
                model = extrapolation_model(positional, seed, train_len=train_len, max_positions=test_len,
                                            vocab_size=vocab_size, steps=steps, batch=batch, embed_dim=embed_dim,
                                            num_layers=num_layers, lags=lags, lr=lr, initial=weights)
                initial = weights.get("stack.position_embedding.weight")
                table = model.stack.position_embedding
                model.eval()
                with torch.no_grad():
                    pred = model(test[:, :-1]).output.argmax(-1)  # (N, T - 1)
                    windowed_pred = (windowed_predictions(model, test[:, :-1], train_len - 1)
                                     if positional in windowed else None)  # (N, T - 1)
                per_position = (pred == test[:, 1:]).float().mean(0).tolist()
                runs.setdefault(positional, []).append(ExtrapolationRun(
                    positional, seed, train_len, per_position, time.process_time() - start,
                    table.weight.detach().clone() if table is not None else None, initial,
                    None if windowed_pred is None else (windowed_pred == test[:, 1:]).float().mean(0).tolist()))
    return runs


@torch.no_grad()
def transformer_xl_terms(
    *, seed: int = 0, length: int = 8, memory: int = 8, head_dim: int = 16, rel_dim: int = 16,
    shared_query: bool = False,
) -> dict[str, Tensor]:
    """The four terms of Transformer-XL's score for one head and random inputs (Dai et al., 2019).

    ``length`` queries at positions ``memory .. memory + length - 1`` attend to ``memory`` cached
    keys and their own segment's; queries, keys, ``W_R``, ``u`` and ``v`` are random normal,
    ``W_R`` scaled so that ``W_R R`` has unit-variance entries like the keys (the four terms then
    have the same scale). With ``shared_query`` every query is the same vector,
    as if one token were repeated: then (a) depends on the key only, and (b) on ``i - j`` only.

    Args:
        seed: Seed of every random input.
        length: Queries ``L``, the current segment.
        memory: Cached keys before the segment.
        head_dim: ``E``.
        rel_dim: Features ``D_r`` of the sinusoid ``R``.
        shared_query: Use the first query vector at every position.

    Returns:
        ``{"(a) q·k", "(b) q·W_R R", "(c) u·k", "(d) v·W_R R"}`` (content-content, content-position,
        global content bias, global position bias), each ``(L, S)`` with ``S = memory + length``, not masked:
        keys after their query (``j > memory + i``) are masked by the model, not here.
    """
    gen = seeding.generator(seed)
    query = torch.randn(1, 1, length, head_dim, generator=gen)  # (B, H, L, E)
    key = torch.randn(1, 1, memory + length, head_dim, generator=gen)  # (B, H, S, E)
    w_r = torch.randn(1, rel_dim, head_dim, generator=gen) / (rel_dim / 2) ** 0.5  # (H, D_r, E): |R|^2 = D_r / 2
    u, v = torch.randn(2, 1, head_dim, generator=gen)  # (H, E) each
    if shared_query:
        query = query[:, :, :1].expand_as(query)  # (B, H, L, E): one query vector everywhere
    terms = transformer_xl_scores(query, key, w_r, u, v, query_offset=memory)
    names = ("(a) q·k", "(b) q·W_R R", "(c) u·k", "(d) v·W_R R")
    return {name: term[0, 0] for name, term in zip(names, terms)}  # (L, S) each


def diagonal_spread(matrix: Tensor) -> float:
    """Largest ``max - min`` along a diagonal of an ``(L, S)`` matrix: 0 when it depends on ``i - j`` only.

    A diagonal ``j - i = const`` is also ``p_i - j = const`` for queries at positions
    ``p_i = offset + i``, whatever the offset.

    Args:
        matrix: Scores or any ``(L, S)`` table, e.g. a term of :func:`transformer_xl_terms`.

    Returns:
        The largest spread along a diagonal, in the units of ``matrix``.
    """
    spread = 0.0
    for offset in range(-(matrix.shape[0] - 1), matrix.shape[1]):
        diagonal = torch.diagonal(matrix, offset=offset)  # (i, i + offset) for every row i
        spread = max(spread, (diagonal.max() - diagonal.min()).item())
    return spread
