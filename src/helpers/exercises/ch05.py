"""Checkers for the exercises of chapter 5, "Variants" (``notebooks/05-variants-lab.ipynb``).

Each checker runs the reader's function under the guard (:func:`helpers.exercises.reader.call_watched`):
every function of the package is forbidden while the answer runs, except what the exercise tells
the reader to call, and so are the third-party equivalents of the thing practised (PyTorch's fused
attention). Inputs, shapes and values, are drawn afresh at each call
(:func:`helpers.exercises.reader.fresh_generator`), so no table of answers passes; the messages name
the typical mistakes.

- :func:`check_sliding_window_attention`: a sliding window mask and attention from scratch.
- :func:`check_linear_attention`: the reordering ``phi(Q) (phi(K)^T V)``, checked against the
  explicit kernel form, for the absence of an ``L x S`` matrix and for work that grows linearly
  with the length (counted at ``n`` and ``4n``).
- :func:`check_se_block`: squeeze, excite, scale (on pre-activations of both signs).
- :func:`buggy_padded_attention`, :func:`check_padding_fix`: the padding-mask bug hunt.
- :func:`check_crossover`: the reader's timing of dense against windowed attention, checked
  against the checker's own measurement, and the crossover length they predicted before
  (recorded with :func:`helpers.exercises.predictions.predict` under :data:`CROSSOVER`).
- :func:`check_causal_attention`: causal attention of ``L`` queries, the last ``L`` of ``S``
  positions (bottom-right aligned), in float32 and float16.
- :func:`check_masked_scores`: scores with a boolean mask applied so that their softmax is right
  in float32, float16 and bfloat16, on fully masked rows and with two masks too (chapter 5.2).

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch05`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`).
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch05 import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.guard import ARRAYS, ATTENTION
from helpers.exercises.messages import phrase
from helpers.exercises.predictions import recorded, reveal
from helpers.exercises.reader import Rejected, allclose, as_tensor, call_watched, checker, fresh_generator, fresh_int

__all__ = ["check_sliding_window_attention", "check_linear_attention", "check_se_block", "buggy_padded_attention",
           "check_padding_fix", "check_crossover", "check_causal_attention", "check_masked_scores", "CROSSOVER"]

CROSSOVER = "ch05.crossover"
"""The key of exercise 5's prediction — ``predict(ch05.CROSSOVER, n)`` before :func:`check_crossover`."""

_CAUSAL_FORBIDDEN = ATTENTION + ("torch.nn.attention",)
"""PyTorch's attention, and its ready-made causal biases (``torch.nn.attention.bias.causal_lower_right``)."""


class _WorkCounter(TorchDispatchMode):
    """Counts the elements of every tensor the ops produce while active (a proxy for work), and the
    largest one: a loop over rows that computes every ``q_i . k_j`` still produces ``L x S`` of them."""

    def __init__(self) -> None:
        super().__init__()
        self.elements = 0
        self.max_numel = 0
        self.max_shape: tuple[int, ...] = ()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, Tensor):
                self.elements += t.numel()
                if t.numel() > self.max_numel:
                    self.max_numel, self.max_shape = t.numel(), tuple(t.shape)
        return out


def _counter() -> _WorkCounter:
    """A fresh :class:`_WorkCounter`, used once already: the first dispatch mode of a session imports
    ``torch._dynamo`` (seconds), which should happen before the answer runs, not under its watch."""
    counter = _WorkCounter()
    with counter:
        torch.zeros(1).add(1)
    counter.elements, counter.max_numel, counter.max_shape = 0, 0, ()
    return counter


def _masked_attention(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: float | None = None) -> Tensor:
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # (B, H, L, S)
    scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v  # (B, H, L, Ev)


def _band(n: int, window: int, *, inclusive: bool = False, causal: bool = False) -> Tensor:
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    near = (i - j).abs() <= window if inclusive else (i - j).abs() < window
    return near & (j <= i) if causal else near


def _qkv(gen: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32) -> tuple[Tensor, Tensor, Tensor]:
    return tuple(torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype) for _ in range(3))  # type: ignore


@checker
def check_sliding_window_attention(fn: Callable[[Tensor, Tensor, Tensor, int], Tensor], *,
                                   language: str | None = None) -> CheckResult:
    """Check ``fn(q, k, v, window)``: softmax attention where query ``i`` sees keys ``|i - j| < window``.

    Run on fresh inputs and shapes (``window=1`` among them, a window always shorter than the
    sequence). Every package function and PyTorch's attention (:data:`~helpers.exercises.guard.ATTENTION`)
    are forbidden while it runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    for trial in range(3):
        n = fresh_int(6, 20, gen)
        window = 1 if trial == 0 else fresh_int(2, n // 2, gen)
        q, k, v = _qkv(gen, fresh_int(1, 2, gen), fresh_int(1, 3, gen), n, fresh_int(4, 8, gen))
        right = _masked_attention(q, k, v, _band(n, window))
        result = call_watched(fn, q, k, v, window, forbidden=ATTENTION, language=language)
        out = as_tensor(result, phrase("ch05.what.window_output"), language)
        if allclose(out, right):
            continue
        if out.shape != right.shape:
            return CheckResult.of(False, "ch05.window.shape", language, got=tuple(out.shape),
                                  expected=tuple(right.shape))
        if allclose(out, _masked_attention(q, k, v, _band(n, window, inclusive=True))):
            return CheckResult.of(False, "ch05.window.off_by_one", language)
        if allclose(out, _masked_attention(q, k, v, _band(n, window, causal=True))):
            return CheckResult.of(False, "ch05.window.causal", language)
        if allclose(out, _masked_attention(q, k, v, _band(n, window), scale=1.0)):
            return CheckResult.of(False, "ch05.window.unscaled", language)
        weights = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1]), dim=-1) * _band(n, window)
        if allclose(out, weights @ v):
            return CheckResult.of(False, "ch05.window.after_softmax", language)
        if allclose(out, _masked_attention(q, k, v, torch.ones(n, n, dtype=torch.bool))):
            return CheckResult.of(False, "ch05.window.full", language)
        return CheckResult.of(False, "ch05.window.differs", language)
    return CheckResult.of(True, "ch05.window.passed", language)


def _phi(x: Tensor) -> Tensor:
    return torch.nn.functional.elu(x) + 1


def _kernel_reference(q: Tensor, k: Tensor, v: Tensor, phi: Callable[[Tensor], Tensor] = _phi,
                      normalise: bool = True) -> Tensor:
    weights = phi(q) @ phi(k).transpose(-2, -1)  # (B, H, L, S): the explicit kernel form
    if normalise:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v


def _linear_verdict(out: Tensor, q: Tensor, k: Tensor, v: Tensor, language: str | None) -> CheckResult | None:
    """``None`` when ``out`` is linear attention of ``q, k, v``; else the verdict naming the mistake."""
    right = _kernel_reference(q, k, v)
    if out.shape != right.shape:
        return CheckResult.of(False, "ch05.linear.shape", language, got=tuple(out.shape), expected=tuple(right.shape))
    if allclose(out, right):
        return None
    if allclose(out, _kernel_reference(q, k, v, normalise=False)):
        return CheckResult.of(False, "ch05.linear.no_normaliser", language)
    if allclose(out, _kernel_reference(q, k, v, phi=torch.nn.functional.elu)):
        return CheckResult.of(False, "ch05.linear.elu", language)
    softmax = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v
    if allclose(out, softmax) or allclose(out, torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v):
        return CheckResult.of(False, "ch05.linear.softmax", language)
    return CheckResult.of(False, "ch05.linear.differs", language)


@checker
def check_linear_attention(fn: Callable[[Tensor, Tensor, Tensor], Tensor], *,
                           language: str | None = None) -> CheckResult:
    """Check ``fn(q, k, v)``: ``phi(Q) (phi(K)^T V)`` normalised by ``phi(Q) sum_j phi(k_j)``, ``phi = elu + 1``.

    Compared with the explicit kernel form ``(phi(Q) phi(K)^T / row sums) V`` on fresh inputs at a
    fresh length ``n`` and at ``4n``; the elements of every tensor the answer's operations produce
    are counted at both lengths: no tensor may have ``L x S`` elements, and the count may grow
    about 4 times, not 16 (a loop over the rows that computes every ``q_i . k_j`` grows 16 times).
    Every package function (its private kernel form included) is forbidden while it runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    n = fresh_int(48, 80, gen)
    batch, heads, e, ev = fresh_int(1, 2, gen), fresh_int(1, 2, gen), fresh_int(3, 6, gen), fresh_int(2, 6, gen)
    counts, largest = [], (0, ())
    for length in (n, 4 * n):
        q, k, _ = _qkv(gen, batch, heads, length, e, dtype=torch.float64)
        v = torch.randn(batch, heads, length, ev, generator=gen, dtype=torch.float64)
        with _counter() as counter:
            result = call_watched(fn, q, k, v, forbidden=ARRAYS, language=language)
        out = as_tensor(result, phrase("ch05.what.linear_output"), language)
        verdict = _linear_verdict(out, q, k, v, language)
        if verdict is not None:
            return verdict
        if counter.max_numel >= length * length:
            return CheckResult.of(False, "ch05.linear.quadratic", language, shape=counter.max_shape)
        counts.append(counter.elements)
        largest = max(largest, (counter.max_numel, counter.max_shape))
    growth = counts[1] / max(counts[0], 1)
    if growth > 8:
        return CheckResult.of(False, "ch05.linear.grows_quadratically", language, n=n, n4=4 * n, small=counts[0],
                              large=counts[1], growth=growth)
    return CheckResult.of(True, "ch05.linear.passed", language, shape=largest[1], n=n, n4=4 * n, growth=growth)


def _se_forward(x: Tensor, fc1: Any, fc2: Any, *, squeeze: str = "mean", relu: bool = True,
                gate: str = "sigmoid") -> Tensor:
    squeezed = {"mean": x.mean(dim=(2, 3)), "max": x.amax(dim=(2, 3)), "sum": x.sum(dim=(2, 3))}[squeeze]
    hidden = fc1(squeezed)
    logits = fc2(torch.relu(hidden) if relu else hidden)
    weights = {"sigmoid": torch.sigmoid(logits), "softmax": torch.softmax(logits, dim=1), "none": logits}[gate]
    return x * weights[:, :, None, None]


@checker
def check_se_block(fn: Callable[[Tensor, Any, Any], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(x, fc1, fc2)``: squeeze (spatial mean), excite (fc1, ReLU, fc2, sigmoid), scale.

    Run on a fresh feature map and fresh layers, chosen so that ``fc1``'s outputs (the
    pre-activations) have both signs: an answer without the ReLU does not pass. Every package
    function (``SqueezeExcitation``, ``CBAM`` among them) is forbidden while it runs, and so is
    torchvision (its ``ops.SqueezeExcitation``, on Colab by default) and the way out of PyTorch
    (:data:`~helpers.exercises.guard.ARRAYS`).

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    channels = fresh_int(4, 10, gen)
    hidden = max(1, channels // 2)
    fc1, fc2 = torch.nn.Linear(channels, hidden).double(), torch.nn.Linear(hidden, channels).double()
    with torch.no_grad():
        for layer in (fc1, fc2):
            layer.weight.copy_(torch.randn(layer.weight.shape, generator=gen, dtype=torch.float64))
            layer.bias.copy_(torch.randn(layer.bias.shape, generator=gen, dtype=torch.float64))
        while True:  # fresh x until fc1's outputs have both signs and the ReLU changes the answer
            x = torch.randn(fresh_int(2, 4, gen), channels, fresh_int(3, 6, gen), fresh_int(3, 6, gen), generator=gen,
                            dtype=torch.float64) + torch.randn(1, channels, 1, 1, generator=gen, dtype=torch.float64)
            pre = fc1(x.mean(dim=(2, 3)))
            if (pre < 0).any() and (pre > 0).any() and not allclose(_se_forward(x, fc1, fc2),
                                                                     _se_forward(x, fc1, fc2, relu=False)):
                break
        right = _se_forward(x, fc1, fc2)
        gates = torch.sigmoid(fc2(torch.relu(fc1(x.mean(dim=(2, 3))))))
        result = call_watched(fn, x, fc1, fc2, forbidden=(*ARRAYS, "torchvision"), language=language)
        out = as_tensor(result, phrase("ch05.what.feature_map"), language)
        if allclose(out, right):
            return CheckResult.of(True, "ch05.se.passed", language)
        if out.shape == gates.shape and allclose(out, gates):
            return CheckResult.of(False, "ch05.se.weights_only", language)
        if out.shape != right.shape:
            return CheckResult.of(False, "ch05.se.shape", language, got=tuple(out.shape), expected=tuple(right.shape))
        wrong = {"ch05.se.max": {"squeeze": "max"}, "ch05.se.sum": {"squeeze": "sum"},
                 "ch05.se.no_relu": {"relu": False}, "ch05.se.softmax": {"gate": "softmax"},
                 "ch05.se.no_sigmoid": {"gate": "none"}}
        for key, mistake in wrong.items():
            if allclose(out, _se_forward(x, fc1, fc2, **mistake)):
                return CheckResult.of(False, key, language)
    return CheckResult.of(False, "ch05.se.differs", language)


def buggy_padded_attention(q: Tensor, k: Tensor, v: Tensor, lengths: Tensor) -> Tensor:
    """Attention over a padded batch, with a bug: the padding mask is built on the wrong axis.

    Shape: q, k, v ``(B, H, S, E)``; lengths ``(B,)`` -> ``(B, H, S, E)``.
    """
    S = k.shape[-2]
    real = torch.arange(S)[None, :] < lengths[:, None]  # (B, S): True = real token
    mask = real[:, None, :, None]  # (B, 1, S, 1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, S, S)
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v


def _same_rows(out: Tensor, expected: Tensor, rows: Tensor) -> bool:
    """``out`` and ``expected`` agree (float tolerance) on the query rows ``rows`` ``(B, 1, S, 1)``, which are some."""
    rows = rows.expand_as(expected)
    return bool(rows.any()) and bool(torch.allclose(out[rows].double(), expected[rows].double(), atol=1e-5))


@checker
def check_padding_fix(fn: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], *,
                      language: str | None = None) -> CheckResult:
    """Check the reader's fix of :func:`buggy_padded_attention`: padded *keys* masked, real rows right.

    Run on a fresh batch (fresh sizes and lengths: one full sequence, one padded, at times an
    empty one), compared on the real query rows only (what a padded query outputs is a
    convention). Every package function and PyTorch's attention are forbidden while it runs.
    Names: the original bug, no mask at all, the mask inverted, one padded key still visible,
    weights zeroed after the softmax, unscaled scores, NaN on real rows.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    batch, heads, S, e = fresh_int(3, 5, gen), fresh_int(1, 2, gen), fresh_int(5, 9, gen), fresh_int(3, 6, gen)
    q, k, v = _qkv(gen, batch, heads, S, e)
    lengths = torch.randint(0, S + 1, (batch,), generator=gen)
    lengths[0], lengths[1] = S, fresh_int(1, S - 2, gen)  # one full sequence, one with at least two padded keys
    positions = torch.arange(S)[None, :]
    real = positions < lengths[:, None]  # (B, S)
    right = _masked_attention(q, k, v, real[:, None, None, :])  # keys masked
    result = call_watched(fn, q, k, v, lengths.clone(), forbidden=ATTENTION, allowed=(buggy_padded_attention,),
                          language=language)
    out = as_tensor(result, phrase("ch05.what.padded_output"), language)
    if out.shape != right.shape:
        return CheckResult.of(False, "ch05.padding.shape", language, got=tuple(out.shape), expected=tuple(right.shape))
    rows = real[:, None, :, None]  # (B, 1, S, 1): the real queries
    if _same_rows(out, right, rows):
        return CheckResult.of(True, "ch05.padding.passed", language)
    if _same_rows(out, buggy_padded_attention(q, k, v, lengths), rows):
        padded_rows = (~real)[:, None, :, None].expand_as(out)
        if bool(padded_rows.any()) and bool((out[padded_rows] == 0).all()):
            return CheckResult.of(False, "ch05.padding.still_the_bug", language)
        return CheckResult.of(False, "ch05.padding.no_mask", language)
    padded = rows & (lengths < S)[:, None, None, None]  # real queries of sequences that have padding
    if _same_rows(out, _masked_attention(q, k, v, (~real)[:, None, None, :]), padded):
        return CheckResult.of(False, "ch05.padding.inverted", language)
    if _same_rows(out, _masked_attention(q, k, v, (positions <= lengths[:, None])[:, None, None, :]), rows):
        return CheckResult.of(False, "ch05.padding.off_by_one", language)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1) * real[:, None, None, :]
    if _same_rows(out, weights @ v, rows):
        return CheckResult.of(False, "ch05.padding.after_softmax", language)
    if _same_rows(out, _masked_attention(q, k, v, real[:, None, None, :], scale=1.0), rows):
        return CheckResult.of(False, "ch05.padding.unscaled", language)
    if torch.isnan(out[rows.expand_as(out)]).any():
        return CheckResult.of(False, "ch05.padding.nan", language)
    return CheckResult.of(False, "ch05.padding.differs", language)


_WINDOW = 32
_HEAD = 32
_TOLERANCE = 5.0
"""How far (a factor) the reader's times may lie outside the checker's own CPU-to-wall band for the same calls."""


def _best_time(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, float]:
    """The best CPU time of this thread (other jobs on the machine do not stretch it) and the best
    wall time of ``repeats`` calls after a warm-up: a reader may time either."""
    fn()  # warm-up
    cpu = wall = math.inf
    for _ in range(repeats):
        start, start_wall = time.thread_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.thread_time() - start), min(wall, time.perf_counter() - start_wall)
    return max(cpu, 1e-7), max(wall, cpu, 1e-7)


def _own_times(n: int, gen: torch.Generator) -> tuple[tuple[float, float], tuple[float, float]]:
    """``((dense_cpu, dense_wall), (window_cpu, window_wall))`` at length ``n``, one head of size 32."""
    from helpers.efficient import sliding_window_attention

    q, k, v = (torch.randn(1, 1, n, _HEAD, generator=gen) for _ in range(3))
    dense = _best_time(lambda: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(_HEAD), dim=-1) @ v)
    window = _best_time(lambda: sliding_window_attention(q, k, v, _WINDOW))
    return dense, window


def _how_far(theirs: list[float], own: list[tuple[float, float]]) -> float:
    """The geometric mean, over the sizes, of how far the reader's times lie outside the band between
    the checker's CPU and wall times of the same calls (1: inside it), signed: < 1 below, > 1 above."""
    logs = []
    for t, (cpu, wall) in zip(theirs, own):
        logs.append(math.log(t / wall) if t > wall else (math.log(t / cpu) if t < cpu else 0.0))
    return math.exp(sum(logs) / len(logs))


def _is_positive_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value > 0


@checker
def check_crossover(time_both: Callable[[int], tuple[float, float]], *, language: str | None = None) -> CheckResult:
    """Run the reader's ``time_both(n) -> (dense_seconds, window_seconds)``, measure the same calls,
    and compare the crossover with the prediction recorded before (``predict(ch05.CROSSOVER, n)``).

    Refused: no prediction recorded (the result is then not shown); ``time_both(n)`` that does not
    compute dense attention at length ``n`` (no ``n x n`` score matrix), or whose times are more
    than 5 times from the checker's own measurement of the same calls (invented timings); times
    where dense does not grow clearly faster. The sizes are fresh: ``b, 2b, 4b, 8b`` for a fresh
    ``b``. Passes with the crossover the checker measured itself, and says whether the prediction
    (within a factor 2) was right, and whether it was recorded late. The package is forbidden in
    ``time_both`` except :func:`helpers.efficient.sliding_window_attention`, which it times.

    Args:
        time_both: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    from helpers.efficient import sliding_window_attention
    from helpers.experiments import efficient_cost

    prediction = recorded(CROSSOVER)
    if prediction is None:
        return CheckResult.of(False, "ch05.crossover.no_prediction", language, key=CROSSOVER)
    if not _is_positive_number(prediction.value):
        return CheckResult.of(False, "ch05.crossover.bad_prediction", language, got=repr(prediction.value))
    predicted = float(prediction.value)
    gen = fresh_generator()
    base = fresh_int(160, 256, gen)
    sizes = tuple(base * 2**i for i in range(4))
    probe = fresh_int(96, 160, gen)  # a fresh length at which time_both must compute the n x n scores
    with _counter() as counter:  # (not timed: counting slows every operation down)
        result = call_watched(time_both, probe, allowed=(sliding_window_attention,), language=language)
    if counter.max_numel < probe * probe:
        return CheckResult.of(False, "ch05.crossover.no_dense", language, n=probe)
    dense, window = [], []
    for n in sizes:
        result = call_watched(time_both, n, allowed=(sliding_window_attention,), language=language)
        if not isinstance(result, (tuple, list)) or len(result) != 2 or not all(_is_positive_number(t) for t in result):
            return CheckResult.of(False, "ch05.crossover.not_two_times", language, n=n, got=repr(result))
        dense.append(float(result[0]))
        window.append(float(result[1]))
    own = [_own_times(n, gen) for n in sizes]
    for name, theirs, mine in (("dense", dense, [t[0] for t in own]), ("window", window, [t[1] for t in own])):
        off = _how_far(theirs, mine)
        if not 1 / _TOLERANCE <= off <= _TOLERANCE:
            reveal(CROSSOVER)
            return CheckResult.of(False, "ch05.crossover.not_measured", language, what=phrase(f"ch05.crossover.{name}"),
                                  n=sizes[-1], theirs=theirs[-1] * 1e3, cpu=mine[-1][0] * 1e3,
                                  wall=mine[-1][1] * 1e3, off=off)
    k_dense = efficient_cost.fit_exponent(sizes, dense)
    k_window = efficient_cost.fit_exponent(sizes, window)
    if k_dense < k_window + 0.3:
        return CheckResult.of(False, "ch05.crossover.not_faster", language, k_dense=k_dense, k_window=k_window)
    own_dense, own_window = [t[0][0] for t in own], [t[1][0] for t in own]  # CPU times
    n_star, how = efficient_cost.crossover_length(sizes, own_dense, own_window)
    reveal(CROSSOVER)
    if how == "always cheaper":
        measured = phrase("ch05.crossover.below", n=sizes[0])
        right = predicted <= 2 * sizes[0]
    elif math.isinf(n_star):
        measured = phrase("ch05.crossover.beyond", n=sizes[-1])
        right = predicted >= sizes[-1] / 2
    else:
        measured = phrase("ch05.crossover.about", n=n_star, how=phrase(f"ch05.crossover.how.{how}"))
        right = 0.5 <= predicted / n_star <= 2
    if prediction.late:
        judged = phrase("ch05.crossover.late", predicted=predicted)
    elif right:
        judged = phrase("ch05.crossover.right", predicted=predicted)
    else:
        judged = phrase("ch05.crossover.wrong", predicted=predicted)
    return CheckResult.of(True, "ch05.crossover.passed", language,
                          k_dense=efficient_cost.fit_exponent(sizes, own_dense),
                          k_window=efficient_cost.fit_exponent(sizes, own_window), measured=measured, judged=judged)


def _causal_allowed(L: int, S: int, shift: int = 0, *, inverted: bool = False, strict_future: bool = True) -> Tensor:
    """Key ``j`` visible to query ``i`` (position ``i + S - L``) when ``j <= i + S - L + shift``;
    ``inverted``: when ``j > i + S - L`` (``strict_future``) or ``j >= i + S - L``."""
    i = torch.arange(L)[:, None] + (S - L)
    j = torch.arange(S)[None, :]
    if inverted:
        return j > i if strict_future else j >= i
    return j <= i + shift  # (L, S)


def _rows_match(out: Tensor, q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, *, tol: float,
                scale: float | None = None, after_softmax: bool = False) -> bool:
    """``out`` is attention under ``allowed`` ``(L, S)`` on every query row that keeps a key (computed in float64)."""
    q, k, v = q.double(), k.double(), v.double()
    if after_softmax:
        expected = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) * allowed @ v
    else:
        expected = _masked_attention(q, k, v, allowed, scale)
    rows = allowed.any(dim=-1)  # (L,)
    if not bool(rows.any()) or out.shape != expected.shape:
        return False
    return bool(torch.allclose(out[..., rows, :].double(), expected[..., rows, :], atol=tol, rtol=tol))


def _hard_case(gen: torch.Generator) -> tuple[int, int, Tensor, Tensor, Tensor]:
    """Float16, head size 4: every score is -a^2/2 (exactly, about -2e4), below any finite fill of -1e4."""
    S = fresh_int(5, 9, gen)
    L = fresh_int(2, S - 2, gen)
    a = 8.0 * fresh_int(23, 28, gen)  # a^2 < 65,504 (float16), a^2 / 2 > 1e4; every product exact in float16
    batch, heads = fresh_int(1, 2, gen), fresh_int(1, 2, gen)
    q = torch.zeros(batch, heads, L, 4, dtype=torch.float16)
    k = torch.zeros(batch, heads, S, 4, dtype=torch.float16)
    q[..., 0], k[..., 0] = a, -a
    v = torch.randn(batch, heads, S, fresh_int(2, 6, gen), generator=gen).half()
    return L, S, q, k, v


@checker
def check_causal_attention(fn: Callable[[Tensor, Tensor, Tensor], Tensor], *,
                           language: str | None = None) -> CheckResult:
    """Check ``fn(q, k, v)``: causal attention of ``L`` queries that are the *last* ``L`` of ``S`` positions.

    Query ``i`` is position ``i + S - L`` and sees keys ``j <= i + S - L`` (the bottom-right
    aligned mask, as after a KV cache; ``L == S`` is the usual square mask). Run on fresh inputs:
    ``L == S``, ``L < S``, a single query, float16 inputs (the output keeps the input's dtype), and
    a float16 case whose scores are all about ``-2e4``, where a finite fill such as ``-1e4`` is not
    an exact zero. Names: top-left alignment, the diagonal excluded, one key too many, the mask
    inverted, no mask, weights zeroed after the softmax, unscaled scores, a finite fill, a fill
    that does not fit in float16, a wrong dtype, NaN. Every package function (``causal_mask``
    included), PyTorch's attention and ``torch.nn.attention`` are forbidden while it runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    square = fresh_int(3, 10, gen)
    longer = fresh_int(6, 12, gen)
    cases: list[tuple[int, int, torch.dtype]] = [
        (square, square, torch.float32),
        (fresh_int(2, longer - 2, gen), longer, torch.float32),
        (1, fresh_int(3, 10, gen), torch.float32),
        (fresh_int(2, longer - 2, gen), longer, torch.float16),
    ]
    for L, S, dtype in cases:
        batch, heads, e = fresh_int(1, 2, gen), fresh_int(1, 3, gen), fresh_int(4, 8, gen)
        q = torch.randn(batch, heads, L, e, generator=gen).to(dtype)
        k = torch.randn(batch, heads, S, e, generator=gen).to(dtype)
        v = torch.randn(batch, heads, S, fresh_int(2, 6, gen), generator=gen).to(dtype)
        verdict = _causal_case(fn, L, S, q, k, v, language, hard=False)
        if verdict is not None:
            return verdict
    L, S, q, k, v = _hard_case(gen)
    verdict = _causal_case(fn, L, S, q, k, v, language, hard=True)
    if verdict is not None:
        return verdict
    return CheckResult.of(True, "ch05.causal.passed", language)


def _causal_case(fn: Callable[[Tensor, Tensor, Tensor], Tensor], L: int, S: int, q: Tensor, k: Tensor, v: Tensor,
                 language: str | None, *, hard: bool) -> CheckResult | None:
    """``None`` when ``fn`` gets this case right; else the verdict that names the mistake."""
    half = q.dtype == torch.float16
    try:
        result = call_watched(fn, q, k, v, forbidden=_CAUSAL_FORBIDDEN, language=language)
    except Rejected as rejected:
        error = str(rejected.verdict.fields.get("error", ""))
        if half and rejected.verdict.key == "reader.raised" and "without overflow" in error:
            raise Rejected(CheckResult.of(False, "ch05.causal.fill_overflows", language)) from None
        raise
    out = as_tensor(result, phrase("ch05.what.causal_output"), language)
    allowed = _causal_allowed(L, S)
    expected_shape = (*q.shape[:-1], v.shape[-1])
    if tuple(out.shape) != expected_shape:
        return CheckResult.of(False, "ch05.causal.shape", language, got=tuple(out.shape), expected=expected_shape,
                              L=L, S=S)
    if out.dtype != q.dtype:
        return CheckResult.of(False, "ch05.causal.dtype", language, got=str(out.dtype).removeprefix("torch."),
                              expected=str(q.dtype).removeprefix("torch."))
    tol = 1e-2 if half else 1e-5
    if _rows_match(out, q, k, v, allowed, tol=tol) and not torch.isnan(out).any():
        return None
    where = {"L": L, "S": S, "dtype": str(q.dtype).removeprefix("torch.")}
    if hard:
        if torch.isnan(out).any():
            return CheckResult.of(False, "ch05.causal.nan", language, **where)
        return CheckResult.of(False, "ch05.causal.finite_fill", language, **where)
    candidates = [
        ("ch05.causal.top_left", _causal_allowed(L, S, -(S - L)), {}),
        ("ch05.causal.diagonal", _causal_allowed(L, S, -1), {}),
        ("ch05.causal.one_ahead", _causal_allowed(L, S, 1), {}),
        ("ch05.causal.inverted", _causal_allowed(L, S, inverted=True), {}),
        ("ch05.causal.inverted", _causal_allowed(L, S, inverted=True, strict_future=False), {}),
        ("ch05.causal.no_mask", torch.ones(L, S, dtype=torch.bool), {}),
        ("ch05.causal.after_softmax", allowed, {"after_softmax": True}),
        ("ch05.causal.unscaled", allowed, {"scale": 1.0}),
    ]
    for key, mask, how in candidates:
        if key == "ch05.causal.top_left" and L == S:
            continue
        if mask.equal(allowed) and not how:
            continue
        if _rows_match(out, q, k, v, mask, tol=tol, **how):
            return CheckResult.of(False, key, language, **where)
    if torch.isnan(out).any():
        return CheckResult.of(False, "ch05.causal.nan", language, **where)
    return CheckResult.of(False, "ch05.causal.differs", language, **where)


# --- masks that are safe in any dtype (chapter 5.2, section 4) -------------------------------------

_MASK_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
_MASK_TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.5e-2}
"""How far the softmax of the reader's scores, computed in their dtype, may be from the float64 reference."""


def _fill_min(scores: Tensor, keep: Tensor) -> Tensor:
    return scores.masked_fill(~keep, torch.finfo(scores.dtype).min)


def _add_min(scores: Tensor, keep: Tensor) -> Tensor:
    low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
    return scores + torch.where(keep, torch.zeros((), dtype=scores.dtype), low)


def _fill_minus_1e9(scores: Tensor, keep: Tensor) -> Tensor:
    return scores.float().masked_fill(~keep, -1e9).to(scores.dtype)  # -inf in float16, whatever the route


def _add_minus_1e9(scores: Tensor, keep: Tensor) -> Tensor:
    return scores + torch.where(keep, 0.0, -1e9).to(scores.dtype)  # in float32, -1e9 + s rounds to steps of 64


def _fill_minus_inf(scores: Tensor, keep: Tensor) -> Tensor:
    return scores.masked_fill(~keep, -math.inf)


def _fill_inverted(scores: Tensor, keep: Tensor) -> Tensor:
    return scores.masked_fill(keep, torch.finfo(scores.dtype).min)


def _multiplied(scores: Tensor, keep: Tensor) -> Tensor:
    return scores * keep


_MASK_MISTAKES: tuple[tuple[str, Callable[[Tensor, Tensor], Tensor]], ...] = (
    ("ch05.mask_dtype.minus_inf", _fill_minus_inf),
    ("ch05.mask_dtype.added_min", _add_min),
    ("ch05.mask_dtype.minus_1e9", _fill_minus_1e9),
    ("ch05.mask_dtype.minus_1e9", _add_minus_1e9),
    ("ch05.mask_dtype.inverted", _fill_inverted),
    ("ch05.mask_dtype.multiplied", _multiplied),
)
"""The typical ways to get it wrong, in the order they are named (the first that reproduces the answer)."""


def _mask_case(gen: torch.Generator, two: bool, shape: str) -> tuple[Tensor, list[Tensor]]:
    """Float64 scores ``(B, H, L, S)`` and one or two boolean masks (True means may attend) that broadcast to them.

    Three query rows are fully masked (by every mask, so that two added fills hide the same keys):
    one of negative scores (below -16, where ``score + finfo.min`` overflows float16), one of
    negative scores but one positive, one of mixed scores; with two masks, a fourth row is fully
    masked by the two together, each key by one of them; every other row keeps a key. The second
    mask is ``(L, S)``, or the first's shape when that is the scores' own."""
    B, H, L, S = fresh_int(1, 2, gen), fresh_int(1, 3, gen), fresh_int(5, 8, gen), fresh_int(4, 8, gen)
    scores = torch.randn(B, H, L, S, generator=gen, dtype=torch.float64) * 4  # mixed signs
    rows = torch.randperm(L, generator=gen)
    negative, one_positive, mixed_full = (int(r) for r in rows[:3])
    low = -40 + 23 * torch.rand(B, H, 2, S, generator=gen, dtype=torch.float64)  # in [-40, -17]
    scores[:, :, negative], scores[:, :, one_positive] = low[:, :, 0], low[:, :, 1]
    scores[:, :, one_positive, fresh_int(0, S - 1, gen)] = 1 + 7 * torch.rand(B, H, generator=gen,
                                                                              dtype=torch.float64)
    full = rows[:3]
    mask_shape = {"full": (B, H, L, S), "batch": (B, 1, L, S), "square": (L, S)}[shape]
    masks = []
    for m in range(2 if two else 1):
        keep = torch.rand(*(mask_shape if m == 0 or shape == "full" else (L, S)), generator=gen) < 0.6
        keep[..., full, :] = False
        masks.append(keep)
    if two:  # a row fully masked by the two together: the first hides some keys, the second the others
        split, together = fresh_int(1, S - 1, gen), int(rows[3])
        masks[0][..., together, :] = torch.arange(S) >= split
        masks[1][..., together, :] = torch.arange(S) < split
    for r in rows[4 if two else 3:].tolist():  # every other row keeps at least one key under every mask
        j = fresh_int(0, S - 1, gen)
        for keep in masks:
            keep[..., r, j] = True
    return scores, masks


def _softmax_of(scores: Tensor) -> Tensor:
    return torch.softmax(scores, dim=-1).double()  # computed in the scores' own dtype


def _same_weights(a: Tensor, b: Tensor, tol: float) -> bool:
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    if a.shape != b.shape or not bool((nan_a == nan_b).all()):
        return False
    return bool(torch.allclose(a[~nan_a], b[~nan_b], rtol=0, atol=tol))


def _apply(fn: Callable[[Tensor, Tensor], Any], scores: Tensor, masks: list[Tensor], language: str | None,
           *, watched: bool = True) -> Tensor:
    out: Any = scores.clone()
    for keep in masks:  # two masks: the function called twice, as a model applies a causal then a padding mask
        out = call_watched(fn, out, keep, language=language) if watched else fn(out, keep)
        out = as_tensor(out, phrase("ch05.what.masked_scores"), language)
        if out.shape != scores.shape:  # named by the caller
            break
    return out


def _mask_mistake(fn: Callable[[Tensor, Tensor], Any], scores64: Tensor, masks: list[Tensor],
                  language: str | None) -> str | None:
    """The key of the typical mistake that reproduces the answer's weights in all three dtypes, if one does."""
    theirs = {}
    for dtype in _MASK_DTYPES:
        try:
            out = _apply(fn, scores64.to(dtype), masks, language)
        except Rejected:
            return None
        if out.shape != scores64.shape:
            return None
        theirs[dtype] = _softmax_of(out)
    for key, mistake in _MASK_MISTAKES:
        if all(_same_weights(theirs[d], _softmax_of(_apply(mistake, scores64.to(d), masks, language, watched=False)),
                             _MASK_TOLERANCE[d]) for d in _MASK_DTYPES):
            return key
    return None


@checker
def check_masked_scores(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(scores, mask)``, the scores with the mask applied (True means may attend, as in PyTorch), safe
    to softmax in the scores' own dtype.

    The softmax of the answer, computed in its dtype, is compared with a float64 reference: the
    masked softmax on rows that keep a key, and a uniform row where every key is masked (what
    ``masked_fill`` with ``torch.finfo(dtype).min`` gives, chapter 5.2: the softmax of scores cannot
    give the all-zero row that :func:`helpers.attention.scaled_dot_product_attention` defines).
    Fresh cases: float32, float16 and bfloat16, each once with one mask and once with two, in a
    fresh order (``fn`` called twice, as a model applies a causal and then a padding mask); masks of
    the scores' shape and masks that broadcast (``(B, 1, L, S)``, ``(L, S)``); three fully masked
    rows in each case, one of negative scores (below -16), one with one positive score, one mixed.
    The answer must keep the scores' shape and dtype. Names: ``finfo.min`` added (NaN or one-hot in
    float16, NaN with two masks in every dtype), ``-1e9`` (``-inf`` in float16), ``-inf`` (NaN on a
    fully masked row), a fill that does not fit the dtype, the mask inverted, the scores multiplied
    by the mask, a mask that is not broadcast, a wrong shape or dtype, NaN. Every package function is
    forbidden while it runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    every = [(dtype, two) for dtype in _MASK_DTYPES for two in (False, True)]
    # the first case: no broadcast; the second: an (L, S) mask, which always broadcasts (a (B, 1, L, S) one
    # does not when H = 1, and without one case that broadcasts, indexing with the mask would pass)
    shapes = ["full", "square"] + [("full", "batch", "square")[fresh_int(0, 2, gen)] for _ in every[2:]]
    cases = [(*every[i], shape) for shape, i in zip(shapes, torch.randperm(len(every), generator=gen).tolist())]
    for dtype, two, shape in cases:
        scores64, masks = _mask_case(gen, two, shape)
        scores = scores64.to(dtype)
        where = {"dtype": str(dtype).removeprefix("torch."), "masks": len(masks),
                 "mask_shape": " & ".join(str(tuple(keep.shape)) for keep in masks), "shape": tuple(scores.shape)}
        try:
            out = _apply(fn, scores, masks, language)
        except Rejected as rejected:
            error = str(rejected.verdict.fields.get("error", ""))
            if rejected.verdict.key == "reader.raised" and "without overflow" in error:
                return CheckResult.of(False, "ch05.mask_dtype.fill_overflows", language, **where)
            if rejected.verdict.key == "reader.raised" and any(keep.shape != scores.shape for keep in masks):
                return CheckResult.of(False, "ch05.mask_dtype.broadcast", language, error=error, **where)
            raise
        if tuple(out.shape) != tuple(scores.shape):
            return CheckResult.of(False, "ch05.mask_dtype.shape", language, got=tuple(out.shape), **where)
        if out.dtype != dtype:
            return CheckResult.of(False, "ch05.mask_dtype.dtype", language, got=str(out.dtype).removeprefix("torch."),
                                  **where)
        keep = masks[0] if len(masks) == 1 else masks[0] & masks[1]
        reference = _softmax_of(_fill_min(scores.double(), keep.expand_as(scores)))  # uniform on a row with no key
        if _same_weights(_softmax_of(out), reference, _MASK_TOLERANCE[dtype]) and not torch.isnan(out).any():
            continue
        key = _mask_mistake(fn, scores64, masks, language)
        if key == "ch05.mask_dtype.added_min" and two:
            key = "ch05.mask_dtype.added_twice"
        if key is not None:
            return CheckResult.of(False, key, language, **where)
        if torch.isnan(_softmax_of(out)).any():
            return CheckResult.of(False, "ch05.mask_dtype.nan", language, **where)
        return CheckResult.of(False, "ch05.mask_dtype.differs", language, **where)
    return CheckResult.of(True, "ch05.mask_dtype.passed", language)
