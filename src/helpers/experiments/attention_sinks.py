"""Experiment of chapter 6 ("Long context in practice"): attention sinks in a tiny trained model.

A tiny RoPE decoder (:class:`~helpers.models.TinyGPT`) is trained on sequences of length ``T``
that all start with a BOS token, in a synthetic language where most tokens are noise and a
marker token says "the next token repeats the one ``j`` places before me" (:func:`marker_copy_language`):
most queries of the copying heads have nothing to look up, which is when softmax needs
somewhere to put its weight (Xiao et al., 2023, section 3.1). It is then run on a sequence
``decode_factor`` times longer, token by token, with five caches:

- ``"full"``: the ordinary :class:`~helpers.multihead.KVCache`, positions counted in the text;
  past ``T`` it sees RoPE distances it was never trained on (it extrapolates);
- ``"window"``: :class:`~helpers.streaming.SinkKVCache` with no sink, the last ``cache_size``
  tokens (StreamingLLM's "window attention");
- ``"sinks=k"`` for ``k`` in ``SINKS``: the first ``k`` tokens and the last ``cache_size - k``,
  the same memory as the window (as in the paper's table 1, 0 + 1024 against 4 + 1020).

The caches other than ``"full"`` count RoPE positions inside the cache, as the official code does.
Reported per seed: the mean attention weight on position 0 of every layer of the trained model
(the sink), the loss and the accuracy on the predictable tokens against position, and their means
once the window is full.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor

from helpers.checks import check_int, check_positive_int
from helpers.models import LogitsOnly, TinyConfig, TinyGPT
from helpers.multihead import KVCache
from helpers.streaming import SinkKVCache, streaming_logits
from helpers.train import num_threads, set_seed, train

from .. import seeding

__all__ = [
    "SINKS",
    "KINDS",
    "SinkConfig",
    "marker_copy_language",
    "train_sink_model",
    "sink_weights",
    "optimal_loss",
    "decode",
    "SinkRun",
    "sink_runs",
    "summary",
]

SINKS = (1, 2, 4)
"""The numbers of sink tokens compared (StreamingLLM's code keeps 4)."""

KINDS = ("full", "window") + tuple(f"sinks={k}" for k in SINKS)
"""The caches compared, in the order of the figures."""


@dataclass(frozen=True)
class SinkConfig:
    """Sizes of the experiment (the defaults run 3 seeds in well under a minute on one thread)."""

    num_content: int = 16  # content tokens 0 .. C-1; then the markers, then BOS
    offsets: tuple[int, ...] = (1, 2, 3, 4)  # marker j+1 means "the next token repeats the one j back"
    marker_prob: float = 0.15  # chance that a position holds a marker
    train_length: int = 32  # T: every training sequence, BOS included
    cache_size: int = 16  # keys held by the window and sink caches (sinks + window)
    decode_factor: int = 4  # the decoded sequence is decode_factor * T long
    embed_dim: int = 64
    num_heads: int = 4
    num_layers: int = 2
    steps: int = 300
    batch_size: int = 32
    lr: float = 3e-3
    eval_samples: int = 16  # sequences decoded per cache
    bin_size: int = 16  # positions per bin of the curves

    @property
    def vocab_size(self) -> int:
        """Content tokens, one marker per offset, and BOS."""
        return self.num_content + len(self.offsets) + 1

    @property
    def bos(self) -> int:
        """The id of the BOS token (the last one)."""
        return self.vocab_size - 1


def marker_copy_language(
    num_samples: int, length: int, config: SinkConfig, *, seed: int
) -> tuple[Tensor, Tensor]:
    """Sequences of noise with markers: the token after marker ``j`` repeats the token ``offsets[j]`` back.

    Position 0 is BOS; every other position holds a marker with probability ``marker_prob``
    (never two in a row), else a uniformly random content token, except right after a marker,
    where it copies the token ``offsets[j]`` places before the marker if that one is a content
    token (else it stays noise: BOS and markers are never copied, so the text cannot fall into
    a periodic loop of copied markers). Only those copies are predictable.

    Args:
        num_samples: sequences.
        length: tokens per sequence, BOS included.
        config: vocabulary, offsets and marker probability.
        seed: the generator's seed.

    Returns:
        ``(tokens, predictable)``: ``predictable[b, t]`` says whether ``tokens[b, t]`` is a copy
        (a target determined by the earlier tokens).

    Shape:
        tokens: ``(N, length)`` int64; predictable: ``(N, length)`` bool.
    """
    check_positive_int("num_samples", num_samples)
    check_int("length", length, minimum=2)
    gen = seeding.generator(seed)
    c, n_off = config.num_content, len(config.offsets)
    tokens = torch.randint(0, c, (num_samples, length), generator=gen)  # (N, length): noise
    is_marker = torch.rand(num_samples, length, generator=gen) < config.marker_prob  # (N, length)
    which = torch.randint(0, n_off, (num_samples, length), generator=gen)  # (N, length)
    predictable = torch.zeros(num_samples, length, dtype=torch.bool)
    tokens[:, 0] = config.bos
    for t in range(1, length):  # sequential: a copy may copy a copy
        after_marker = predictable.new_zeros(num_samples) if t < 2 else (tokens[:, t - 1] >= c) & (
            tokens[:, t - 1] != config.bos)  # (N,)
        source = t - 1 - torch.tensor(config.offsets)[which[:, t - 1]]  # (N,): j back from the marker
        copied = tokens[torch.arange(num_samples), source.clamp(min=0)]  # (N,)
        copy = after_marker & (source >= 1) & (copied < c)  # only content is copied: no chain of markers
        tokens[:, t] = torch.where(copy, copied, tokens[:, t])
        predictable[:, t] = copy
        place_marker = is_marker[:, t] & ~after_marker & (t < length - 1)
        tokens[:, t] = torch.where(place_marker, c + which[:, t], tokens[:, t])
    return tokens, predictable


def train_sink_model(config: SinkConfig, *, seed: int) -> TinyGPT:
    """A tiny RoPE decoder trained on :func:`marker_copy_language` at length ``T`` (seconds on one thread)."""
    set_seed(seed)
    model = TinyGPT(TinyConfig(
        vocab_size=config.vocab_size, embed_dim=config.embed_dim, num_heads=config.num_heads,
        num_layers=config.num_layers, positional="rope",
    ))

    def make_batch(step: int) -> tuple[Tensor, Tensor]:
        tokens, _ = marker_copy_language(config.batch_size, config.train_length + 1, config,
                                         seed=seed * 100_003 + step)  # (B, T + 1)
        return tokens[:, :-1], tokens[:, 1:]  # (B, T) inputs, (B, T) next tokens

    train(LogitsOnly(model), make_batch, steps=config.steps, lr=config.lr, warmup_steps=config.steps // 10,
          lr_decay="cosine", clip_grad_norm=1.0, seed=seed, accuracy_fn=None)
    return model.eval()


def optimal_loss(tokens: Tensor, config: SinkConfig) -> Tensor:
    """The smallest expected loss of each next-token prediction: the language's own floor, token by token.

    :func:`marker_copy_language` draws every position independently given the earlier tokens, so the
    best any model can do at position ``t`` is known exactly: right after a marker whose source is a
    content token the next token is that copy (loss 0); right after a marker whose source is not (BOS,
    a marker, or before position 1), and at the last position (no marker is placed there), it is
    uniform noise over the ``C`` content tokens (``ln C``); anywhere else it is a marker with
    probability ``p = marker_prob``, uniform over the markers, and otherwise uniform over the content
    tokens, so the loss is ``-ln(p / M)`` if the token is a marker and ``-ln((1 - p) / C)`` if not.
    The mean of these over a sequence is below ``ln C``: the copies cost nothing, and a marker-free
    position's expected loss, ``-p ln(p / M) - (1 - p) ln((1 - p) / C)``, is above it.

    Args:
        tokens: Sequences of :func:`marker_copy_language` (BOS first).
        config: The configuration they were drawn with.

    Returns:
        The floor of the loss of predicting ``tokens[:, 1:]`` from the earlier tokens, in nats.

    Shape:
        tokens: ``(B, L)``; output: ``(B, L - 1)``, aligned with ``tokens[:, 1:]``.
    """
    if not isinstance(tokens, Tensor) or tokens.dim() != 2 or tokens.size(1) < 2:
        raise ValueError(f"tokens must be a (B, L) tensor with L >= 2, got {getattr(tokens, 'shape', tokens)!r}")
    c, n_off, p = config.num_content, len(config.offsets), config.marker_prob
    batch, length = tokens.shape
    offsets = torch.tensor(config.offsets)
    floor = torch.empty(batch, length - 1, dtype=torch.float64)
    for t in range(1, length):
        previous = tokens[:, t - 1]  # (B,)
        after_marker = (previous >= c) & (previous != config.bos) if t >= 2 else torch.zeros(batch, dtype=torch.bool)
        source = t - 1 - offsets[(previous - c).clamp(0, n_off - 1)]  # (B,): where the marker points
        copied = tokens[torch.arange(batch), source.clamp(min=0)]  # (B,)
        copy = after_marker & (source >= 1) & (copied < c)  # (B,): the token is determined
        is_marker = (tokens[:, t] >= c) & (tokens[:, t] != config.bos)  # (B,)
        if t < length - 1:
            free = torch.where(is_marker, -torch.tensor(p / n_off).log(), -torch.tensor((1 - p) / c).log())
        else:  # no marker at the last position
            free = torch.full((batch,), torch.tensor(float(c)).log().item(), dtype=torch.float64)
        noise = torch.tensor(float(c)).log().double()  # after a marker with nothing to copy: uniform content
        floor[:, t - 1] = torch.where(copy, torch.zeros((), dtype=torch.float64),
                                      torch.where(after_marker, noise, free.double()))
    return floor.float()


@torch.no_grad()
def sink_weights(model: TinyGPT, tokens: Tensor) -> list[float]:
    """Mean attention weight on position 0, per layer, over heads and the queries at positions ``>= 1``.

    Shape:
        tokens: ``(B, L)``; output: one float per layer.
    """
    attentions = model(tokens, need_weights=True).attentions  # (N, B, H, L, L)
    return attentions[..., 1:, 0].mean(dim=(1, 2, 3)).tolist()  # position 0's column, query 0 left out


@torch.no_grad()
def decode(model: TinyGPT, tokens: Tensor, kind: str, cache_size: int) -> tuple[Tensor, Tensor]:
    """Per-token loss and correctness of next-token prediction, decoding token by token with one cache kind.

    Args:
        model: the trained model.
        tokens: the sequences; position ``t``'s logits predict ``tokens[:, t + 1]``.
        kind: one of :data:`KINDS`.
        cache_size: the window and sink caches' size (sinks + window).

    Returns:
        ``(loss, correct)``: cross-entropy and arg-max hit of each prediction.

    Shape:
        tokens: ``(B, L)``; loss, correct: ``(B, L - 1)``, aligned with ``tokens[:, 1:]``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    inputs, targets = tokens[:, :-1], tokens[:, 1:]  # (B, L - 1) each
    if kind == "full":
        caches = [KVCache() for _ in model.stack.blocks]
        logits = torch.cat([model(inputs[:, t:t + 1], kv_caches=caches).output for t in range(inputs.size(1))],
                           dim=1)  # (B, L - 1, V)
    else:
        sinks = 0 if kind == "window" else int(kind.split("=")[1])
        caches_s = [SinkKVCache(sinks, cache_size - sinks) for _ in model.stack.blocks]
        logits, _ = streaming_logits(model, inputs, caches_s)  # (B, L - 1, V)
    loss = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (B, L - 1)
    return loss, logits.argmax(-1) == targets  # (B, L - 1) each


@dataclass
class SinkRun:
    """One seed's results."""

    seed: int
    sink_weight: list[float]  # per layer: mean weight on position 0 at length T
    bins: list[int]  # first target position of each bin
    loss: dict[str, list[float]] = field(default_factory=dict)  # kind -> mean loss per bin (all targets)
    accuracy: dict[str, list[float]] = field(default_factory=dict)  # kind -> accuracy per bin (predictable targets)
    mean_loss: dict[str, float] = field(default_factory=dict)  # kind -> mean loss once the cache is full
    mean_accuracy: dict[str, float] = field(default_factory=dict)  # kind -> predictable accuracy, cache full
    in_length_accuracy: dict[str, float] = field(default_factory=dict)  # kind -> predictable accuracy, targets < T
    seconds: float = 0.0
    floor_loss: float = float("nan")  # the language's own floor (optimal_loss) on the targets of mean_loss
    past_length_accuracy: dict[str, float] = field(default_factory=dict)  # kind -> predictable accuracy, targets >= T


def sink_runs(config: SinkConfig = SinkConfig(), *, seeds: tuple[int, ...] = (0, 1, 2)) -> list[SinkRun]:
    """Trains one model per seed and decodes the same long sequences with every cache of :data:`KINDS`.

    "Cache full" means targets at positions ``> cache_size``: from there on the window cache
    has dropped position 0. Losses are over every target, noise included (``SinkRun.floor_loss``
    is the best any model can reach on the same targets, :func:`optimal_loss`); accuracies over the
    predictable targets only, once the cache is full and (``past_length_accuracy``) past the
    training length.
    """
    if config.cache_size - max(SINKS) < max(config.offsets) + 2:
        raise ValueError(f"cache_size={config.cache_size} leaves no room for the offsets {config.offsets}")
    runs = []
    with num_threads(1):
        for seed in seeds:
            start = time.perf_counter()
            model = train_sink_model(config, seed=seed)
            probe, _ = marker_copy_language(64, config.train_length, config, seed=10_000 + seed)
            weights = sink_weights(model, probe)
            length = config.decode_factor * config.train_length
            tokens, predictable = marker_copy_language(config.eval_samples, length, config, seed=20_000 + seed)
            target_ok = predictable[:, 1:]  # (B, L - 1): aligned with the predictions
            position = torch.arange(1, length)  # target positions
            bins = list(range(1, length, config.bin_size))
            run = SinkRun(seed, weights, bins)
            full_window = position > config.cache_size
            past = position >= config.train_length
            run.floor_loss = optimal_loss(tokens, config)[:, full_window].mean().item()
            for kind in KINDS:
                loss, correct = decode(model, tokens, kind, config.cache_size)
                run.loss[kind] = [loss[:, (position >= b) & (position < b + config.bin_size)].mean().item()
                                  for b in bins]
                run.accuracy[kind] = [
                    correct[:, (position >= b) & (position < b + config.bin_size)][
                        target_ok[:, (position >= b) & (position < b + config.bin_size)]].float().mean().item()
                    for b in bins]
                run.mean_loss[kind] = loss[:, full_window].mean().item()
                run.mean_accuracy[kind] = correct[:, full_window][target_ok[:, full_window]].float().mean().item()
                early = position < config.train_length
                run.in_length_accuracy[kind] = correct[:, early][target_ok[:, early]].float().mean().item()
                run.past_length_accuracy[kind] = correct[:, past][target_ok[:, past]].float().mean().item()
            run.seconds = time.perf_counter() - start
            runs.append(run)
    return runs


def summary(runs: list[SinkRun]) -> dict[str, tuple[float, float]]:
    """Mean over seeds of ``(loss, accuracy)`` once the cache is full, per kind."""
    return {kind: (statistics.fmean(r.mean_loss[kind] for r in runs),
                   statistics.fmean(r.mean_accuracy[kind] for r in runs)) for kind in KINDS}
