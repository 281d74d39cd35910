"""RoPE's context-extension rules tried on chapter 6.5's toy, for chapter 6's "Long context in practice".

The toy of :func:`helpers.experiments.position.extrapolation_runs` (a 2-layer causal decoder, width 32,
4 heads, so a head of ``E = 8`` features and ``E/2 = 4`` rotated pairs with RoPE's base 10000; the task
``x_t = x_{t-3}`` over 8 symbols) is trained once per seed on 16-token sequences, then run on sequences
``factor`` times longer (64 tokens) with each rule of :mod:`helpers.rope_scaling` put in its rotary
module, without and with a short fine-tune at the long length.

- :func:`scaled_rotary`: the rotary module of one method (:data:`METHODS`) for the toy's head.
- :func:`rope_scaling_runs`: accuracy against position for every method, seed, with and without fine-tuning.
- :func:`rotation_angles` and :func:`angle_coverage`: for each pair and each distance, the rotation
  angle ``d * theta_i`` (mod ``2 pi``) and whether the trained range of distances swept it; the data of
  an explorer showing which pairs meet angles they never saw past the training length.

The toy's four frequencies are ``theta = 1, 0.1, 0.01, 0.001`` rad per token. In the 16 trained tokens
they turn ``r = L theta / 2 pi = 2.5, 0.25, 0.025, 0.0025`` times: only the fastest pair has seen a whole
turn. YaRN's and Llama 3.1's ramps are defined in those turns ``r``, so their published values carry
over, except YaRN's ``beta = 32``, which was set for a head whose fastest pair turns 650 times in
Llama's 4096 tokens: with it every pair of this head would be (almost fully) interpolated. Here
``alpha = 1`` (as published: a pair that has not made one turn meets new angles) and ``beta = 2``
(the fastest pair, 2.5 turns, kept as it is; the three slow ones interpolated), and Llama 3.1's
``low = 1, high = 4`` as published (its fastest pair blended halfway, ``w = 0.52``). The only
difference between YaRN and Llama 3.1 here is then YaRN's temperature and the fastest pair's blend.

The fine-tune is 50 steps of 16 sequences of 64 tokens (about 50,000 tokens; PI fine-tuned 200 to 1000
steps, YaRN 400). All seeded, one thread: 3 seeds x 5 methods x {no fine-tune, fine-tune} take about
50 s on one core of a 2-core CPU (3 base trainings of 5 s, 15 fine-tunes of 1.3 s, 30 evaluations).
"""

from __future__ import annotations

import copy
import math
import statistics
import time
from dataclasses import dataclass, field

import torch
from torch import Tensor

from helpers.checks import check_int, check_positive_int
from helpers.experiments.position import extrapolation_batch, extrapolation_model, recurrence_sequences
from helpers.models import LogitsOnly, TinyGPT
from helpers.positional import RotaryEmbedding
from helpers.rope_scaling import (
    ScaledRotaryEmbedding,
    llama3_frequencies,
    ntk_aware_frequencies,
    position_interpolation,
    rope_frequencies,
    scaled_rotary_embedding,
    yarn_frequencies,
    yarn_temperature,
)
from helpers.train import num_threads, train

__all__ = [
    "METHODS",
    "METHOD_NAMES",
    "method_frequencies",
    "scaled_rotary",
    "with_rotary",
    "ScalingRun",
    "rope_scaling_runs",
    "summarise",
    "rotation_angles",
    "covered_angles",
    "AngleCoverage",
    "angle_coverage",
]

METHODS = ("rope", "pi", "ntk", "yarn", "llama3")
"""The rules compared, in this order (plain RoPE extrapolating, position interpolation, the NTK-aware base, YaRN
and Llama 3.1)."""

METHOD_NAMES = {"rope": "plain RoPE (extrapolation)", "pi": "position interpolation", "ntk": "NTK-aware base",
                "yarn": "YaRN", "llama3": "Llama 3.1"}
"""Names of :data:`METHODS` for tables and figures."""

YARN_ALPHA, YARN_BETA = 1.0, 2.0  # the toy's ramp (module docstring): the fastest pair kept, the rest interpolated
LLAMA_LOW, LLAMA_HIGH = 1.0, 4.0  # Llama 3.1's published values


def _check_method(method: object) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return str(method)


def _check_factor(factor: object) -> float:
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not 1 <= factor < math.inf:
        raise ValueError(f"factor must be a number >= 1 (the length's growth), got {factor!r}")
    return float(factor)


def method_frequencies(method: str, head_dim: int, factor: float, original_length: int,
                       base: float = 10000.0) -> tuple[Tensor, float]:
    """The frequencies and the factor on ``q`` and ``k`` of one method, with the toy's ramp parameters.

    Args:
        method: One of :data:`METHODS`.
        head_dim: ``E``.
        factor: ``s``, the length's growth.
        original_length: ``L``, the training length (YaRN and Llama 3.1 count turns in it).
        base: RoPE's base.

    Returns:
        ``(inv_freq, attention_factor)``: ``(E/2,)`` frequencies, and
        :func:`~helpers.rope_scaling.yarn_temperature` for YaRN, 1 otherwise.
    """
    method = _check_method(method)
    factor = _check_factor(factor)
    if method == "rope":
        return rope_frequencies(head_dim, base), 1.0
    if method == "pi":
        return position_interpolation(head_dim, factor, base), 1.0
    if method == "ntk":
        return ntk_aware_frequencies(head_dim, factor, base), 1.0
    if method == "yarn":
        return (yarn_frequencies(head_dim, factor, original_length, base, alpha=YARN_ALPHA, beta=YARN_BETA),
                yarn_temperature(factor))
    return llama3_frequencies(head_dim, factor, original_length, base, low_freq_factor=LLAMA_LOW,
                              high_freq_factor=LLAMA_HIGH), 1.0


def scaled_rotary(method: str, head_dim: int, factor: float, original_length: int,
                  base: float = 10000.0) -> ScaledRotaryEmbedding:
    """The rotary module of one method (:func:`method_frequencies`) with YaRN's temperature folded into ``q``, ``k``."""
    inv_freq, attention_factor = method_frequencies(method, head_dim, factor, original_length, base)
    return scaled_rotary_embedding(inv_freq, attention_factor)


def with_rotary(model: TinyGPT, rotary: RotaryEmbedding) -> TinyGPT:
    """A copy of a RoPE ``TinyGPT`` whose layers rotate with ``rotary`` (the original is left as it was).

    Raises:
        ValueError: if ``model`` has no rotary module, or ``rotary``'s head size differs.
    """
    current = getattr(getattr(model, "stack", None), "rope", None)
    if not isinstance(current, RotaryEmbedding):
        raise ValueError("model must be a TinyGPT with positional='rope'")
    if not isinstance(rotary, RotaryEmbedding) or rotary.head_dim != current.head_dim:
        raise ValueError(f"rotary must be a RotaryEmbedding with head_dim={current.head_dim}, got {rotary!r}")
    copied = copy.deepcopy(model)
    copied.stack.rope = rotary
    return copied


@dataclass
class ScalingRun:
    """One method on one seed's model, evaluated per position at the long length."""

    method: str
    seed: int
    fine_tune_steps: int  # 0: the trained model with the new rotary module, no further training
    train_len: int
    per_position: list[float] = field(default_factory=list)  # accuracy of predicting x_{t+1}, t = 0 .. T - 2
    seconds: float = 0.0  # CPU seconds of the fine-tune and the evaluation
    long_per_position: list[float] | None = None  # the same on longer sequences (``long_test_len``), if asked

    def accuracy(self, start: int, stop: int) -> float:
        """Mean accuracy over predicted positions ``start .. stop - 1`` (target index, as in chapter 6.5).

        Positions past the test length are read from ``long_per_position`` (the longer test set,
        whose first positions are the same task on other sequences).
        """
        values = self.per_position[start - 1:stop - 1]
        if stop - 1 > len(self.per_position):
            if self.long_per_position is None:
                raise ValueError(f"no positions in [{start}, {stop}) of a run with {len(self.per_position) + 1} "
                                 "tokens (no longer evaluation: see rope_scaling_runs' long_test_len)")
            values = self.long_per_position[start - 1:stop - 1]
        if not values:
            raise ValueError(f"no positions in [{start}, {stop}) of a run with {len(self.per_position) + 1} tokens")
        return statistics.fmean(values)

    def binned(self, width: int, first: int = 3) -> list[tuple[int, int, float]]:
        """``(start, stop, accuracy)`` for consecutive bins of ``width`` target positions from ``first``."""
        check_positive_int("width", width)
        end = len(self.per_position) + 1
        return [(a, min(a + width, end), self.accuracy(a, min(a + width, end))) for a in range(first, end, width)]


def summarise(runs: list[ScalingRun], start: int, stop: int) -> tuple[float, float, float]:
    """``(mean, min, max)`` over seeds of the accuracy on target positions ``start .. stop - 1``."""
    if not runs:
        raise ValueError("runs must not be empty")
    values = [run.accuracy(start, stop) for run in runs]
    return statistics.fmean(values), min(values), max(values)


@torch.no_grad()
def _per_position(model: TinyGPT, test: Tensor) -> list[float]:
    model.eval()
    pred = model(test[:, :-1]).output.argmax(-1)  # (N, T - 1)
    return (pred == test[:, 1:]).float().mean(0).tolist()


def rope_scaling_runs(
    methods: tuple[str, ...] = METHODS,
    seeds: tuple[int, ...] = (0, 1, 2),
    *,
    train_len: int = 16,
    factor: int = 4,
    steps: int = 300,
    fine_tune_steps: int = 50,
    fine_tune_batch: int = 16,
    fine_tune_lr: float = 1e-3,
    num_test: int = 256,
    vocab_size: int = 8,
    embed_dim: int = 32,
    lags: tuple[int, ...] = (3,),
    long_test_len: int = 0,
    num_long_test: int = 128,
) -> dict[tuple[str, int], list[ScalingRun]]:
    """Every method on chapter 6.5's RoPE toy, at ``factor`` times its training length, before and after a fine-tune.

    Per seed, the model of :func:`~helpers.experiments.position.extrapolation_model` is trained once
    (``steps`` steps on ``train_len`` tokens, as in chapter 6.5); then, per method, a copy gets the
    method's rotary module (:func:`scaled_rotary`, ``original_length = train_len``) and is evaluated
    on ``num_test`` sequences of ``factor * train_len`` tokens (the chapter's test set), and a second
    copy is fine-tuned for ``fine_tune_steps`` AdamW steps on batches of ``fine_tune_batch`` sequences
    of the long length (learning rate ``fine_tune_lr``, 5 warm-up steps, constant after; every method
    sees the same batches) and evaluated again. For ``"rope"`` that fine-tune is PI's "direct
    fine-tuning" baseline.

    Args:
        methods: Some of :data:`METHODS`.
        seeds: One trained model per seed.
        train_len: Tokens per training sequence ``L``.
        factor: ``s``; the test and fine-tune sequences hold ``s L`` tokens.
        steps: Training steps of the base model.
        fine_tune_steps: Steps of the fine-tune (0: no fine-tuned runs).
        fine_tune_batch: Sequences per fine-tuning step.
        fine_tune_lr: Learning rate of the fine-tune.
        num_test: Test sequences.
        vocab_size: Symbols of the task.
        embed_dim: Model width (4 heads: ``E = embed_dim / 4``).
        lags: The recurrence's offsets.
        long_test_len: If positive, the fine-tuned models (all models if ``fine_tune_steps == 0``) are also
            evaluated on ``num_long_test`` sequences of this many tokens (``ScalingRun.long_per_position``):
            past the length of the fine-tune, where YaRN's Table 1 (its 10k column) separates the rules.
        num_long_test: Sequences of that longer test.

    Returns:
        ``{(method, steps of fine-tuning): [one ScalingRun per seed]}``, with keys ``(method, 0)`` and,
        if ``fine_tune_steps > 0``, ``(method, fine_tune_steps)``.
    """
    for method in methods:
        _check_method(method)
    if not methods:
        raise ValueError("methods must name at least one method")
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    check_positive_int("train_len", train_len)
    check_int("factor", factor, minimum=1)
    check_positive_int("steps", steps)
    check_int("fine_tune_steps", fine_tune_steps, minimum=0)
    check_positive_int("fine_tune_batch", fine_tune_batch)
    check_positive_int("num_test", num_test)
    check_int("long_test_len", long_test_len, minimum=0)
    check_positive_int("num_long_test", num_long_test)
    if not 0 < fine_tune_lr < math.inf:
        raise ValueError(f"fine_tune_lr must be a positive number, got {fine_tune_lr!r}")
    if embed_dim % 8:
        raise ValueError(f"embed_dim must be a multiple of 8 (4 heads of an even size >= 2), got {embed_dim}")
    test_len = factor * train_len
    head_dim = embed_dim // 4
    test = recurrence_sequences(num_test, test_len, vocab_size, seed=99_999, lags=lags)  # (N, T), chapter 6.5's
    long_test = (recurrence_sequences(num_long_test, long_test_len, vocab_size, seed=99_998, lags=lags)
                 if long_test_len else None)  # (N', T')

    def evaluate(model: TinyGPT, long: bool) -> tuple[list[float], list[float] | None]:
        return _per_position(model, test), None if long_test is None or not long else _per_position(model, long_test)

    runs: dict[tuple[str, int], list[ScalingRun]] = {}
    with num_threads(1):
        for seed in seeds:
            base = extrapolation_model("rope", seed, train_len=train_len, max_positions=test_len,
                                       vocab_size=vocab_size, steps=steps, embed_dim=embed_dim, lags=lags)
            for method in methods:
                start = time.process_time()
                rotary = scaled_rotary(method, head_dim, factor, train_len)
                model = with_rotary(base, rotary)
                short, long = evaluate(model, fine_tune_steps == 0)
                runs.setdefault((method, 0), []).append(ScalingRun(
                    method, seed, 0, train_len, short, time.process_time() - start, long))
                if fine_tune_steps == 0:
                    continue
                start = time.process_time()
                model = with_rotary(base, copy.deepcopy(rotary))

                def make_batch(step: int, seed: int = seed) -> tuple[Tensor, Tensor]:
                    stream = 500_000 + seed * 7_919 + step  # apart from the training batches and the test set
                    return extrapolation_batch(fine_tune_batch, test_len, vocab_size, seed=stream, lags=lags)

                train(LogitsOnly(model), make_batch, steps=fine_tune_steps, lr=fine_tune_lr, accuracy_fn=None,
                      seed=seed, warmup_steps=min(5, fine_tune_steps))
                short, long = evaluate(model, True)
                runs.setdefault((method, fine_tune_steps), []).append(ScalingRun(
                    method, seed, fine_tune_steps, train_len, short, time.process_time() - start, long))
    return runs


def rotation_angles(inv_freq: Tensor, distances: Tensor) -> Tensor:
    """The angle ``d * theta_i`` mod ``2 pi`` by which RoPE turns pair ``i`` between tokens ``d`` apart.

    ``<R_m q, R_n k>`` depends on ``m - n`` only through these angles, so a key ``d`` tokens back is
    seen through them.

    Args:
        inv_freq: ``(E/2,)`` frequencies ``theta_i``.
        distances: ``(P,)`` non-negative distances ``d = m - n`` (or positions).

    Returns:
        ``(P, E/2)`` angles in ``[0, 2 pi)``.
    """
    if not isinstance(inv_freq, Tensor) or inv_freq.dim() != 1 or not bool((inv_freq > 0).all()):
        raise ValueError(f"inv_freq must be a 1-D tensor of positive frequencies, got {inv_freq!r}")
    if not isinstance(distances, Tensor) or distances.dim() != 1 or bool((distances < 0).any()):
        raise ValueError(f"distances must be a 1-D tensor of non-negative distances, got {distances!r}")
    angle = distances.to(torch.float64)[:, None] * inv_freq.to(torch.float64)[None, :]  # (P, E/2)
    return torch.remainder(angle, 2 * math.pi)  # (P, E/2)


def covered_angles(angles: Tensor, trained_inv_freq: Tensor, max_trained_distance: int,
                   tolerance: float = 1e-6) -> Tensor:
    """Whether each angle lies on the arc the trained pair swept over distances ``0 .. max_trained_distance``.

    The trained model saw pair ``i`` turned by ``d theta_i`` for ``d = 0 .. D``: the arc from 0 to
    ``D theta_i`` on the circle, the whole circle once ``D theta_i >= 2 pi``. An angle on that arc
    falls between two angles the model saw (interpolation); one off it was never met (extrapolation).

    Args:
        angles: ``(P, E/2)`` angles in ``[0, 2 pi)``, e.g. from :func:`rotation_angles`.
        trained_inv_freq: ``(E/2,)`` the frequencies the model was trained with.
        max_trained_distance: ``D``, the longest distance in training (the toy: ``train_len - 2``, its
            inputs hold ``train_len - 1`` tokens).
        tolerance: Slack in radians at the arc's end (float rounding).

    Returns:
        ``(P, E/2)`` booleans.
    """
    if not isinstance(angles, Tensor) or angles.dim() != 2:
        raise ValueError(f"angles must be a (P, E/2) tensor, got {angles!r}")
    if (not isinstance(trained_inv_freq, Tensor) or trained_inv_freq.dim() != 1
            or trained_inv_freq.numel() != angles.shape[1]):
        raise ValueError(f"trained_inv_freq must be a 1-D tensor of {angles.shape[1]} frequencies, "
                         f"got {trained_inv_freq!r}")
    check_int("max_trained_distance", max_trained_distance, minimum=0)
    swept = max_trained_distance * trained_inv_freq.to(torch.float64)  # (E/2,)
    angles = angles.to(torch.float64)  # (P, E/2)
    whole_turn = (swept >= 2 * math.pi)[None, :]  # (1, E/2)
    return whole_turn | (angles <= swept[None, :] + tolerance) | (angles >= 2 * math.pi - tolerance)  # (P, E/2)


@dataclass
class AngleCoverage:
    """Every pair's angle at every distance under one method, and whether training covered it."""

    method: str
    trained_inv_freq: Tensor  # (E/2,) plain RoPE's
    inv_freq: Tensor  # (E/2,) the method's
    distances: Tensor  # (P,) 0 .. P - 1
    max_trained_distance: int
    angles: Tensor  # (P, E/2) in [0, 2 pi)
    covered: Tensor  # (P, E/2) bool

    def new_beyond(self) -> Tensor:
        """``(E/2,)`` fraction of the distances past the trained ones at which pair ``i``'s angle is new."""
        beyond = self.distances > self.max_trained_distance  # (P,)
        if not bool(beyond.any()):
            return torch.zeros(self.inv_freq.numel())
        return (~self.covered[beyond]).double().mean(0)  # (E/2,)


def angle_coverage(method: str = "rope", *, head_dim: int = 8, train_len: int = 16, factor: float = 4.0,
                   base: float = 10000.0) -> AngleCoverage:
    """Angles of every pair at distances ``0 .. factor * train_len - 1`` and their coverage (an explorer's data).

    The toy's defaults: ``E = 8``, trained distances ``0 .. train_len - 2`` (its inputs hold
    ``train_len - 1`` tokens). Plain RoPE's three slow pairs meet new angles past the training
    length (the fastest has turned a whole circle); interpolation brings the angles back onto the
    trained arcs, all but the last few: the toy's inputs are one token shorter than its sequences,
    so at ``s = 4`` distance 62 becomes 15.5, past the 14 trained, and 7 of the 49 distances past
    the training length stay new on the interpolated pairs. The NTK-aware base stretches the slowest
    pair as interpolation does but the second only by ``s**(1/3)``, which still meets new angles.

    Args:
        method: One of :data:`METHODS` (its frequencies from :func:`method_frequencies`).
        head_dim: ``E``.
        train_len: Tokens per training sequence.
        factor: ``s``; distances up to ``s * train_len - 1``.
        base: RoPE's base.
    """
    check_int("train_len", train_len, minimum=2)
    factor = _check_factor(factor)
    inv_freq, _ = method_frequencies(method, head_dim, factor, train_len, base)
    trained = rope_frequencies(head_dim, base)  # (E/2,)
    distances = torch.arange(int(round(factor * train_len)))  # (P,)
    angles = rotation_angles(inv_freq, distances)  # (P, E/2)
    covered = covered_angles(angles, trained, train_len - 2)  # (P, E/2)
    return AngleCoverage(method, trained, inv_freq, distances, train_len - 2, angles, covered)
