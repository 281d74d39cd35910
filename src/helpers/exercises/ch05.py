"""Checkers for the exercises of chapter 5, "Variants" (``notebooks/05-variants-lab.ipynb``).

Each checker runs the reader's function under :func:`helpers.exercises.guard.package_disabled`,
so an answer that calls the package's own implementation of the thing practised fails by name;
the reference is computed outside that block. The messages name the typical mistakes.

- :func:`check_sliding_window_attention`: a sliding window mask and attention from scratch.
- :func:`check_linear_attention`: the reordering ``phi(Q) (phi(K)^T V)``, checked against the
  explicit kernel form and for the absence of an ``L x S`` matrix.
- :func:`check_se_block`: squeeze, excite, scale.
- :func:`buggy_padded_attention`, :func:`check_padding_fix`: the padding-mask bug hunt.
- :func:`check_crossover`: the reader's timing of dense against windowed attention, and the
  crossover length they predicted before measuring.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch05`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch05 import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.messages import phrase
from helpers.exercises.reader import allclose, as_tensor, call_without_package, checker

__all__ = ["check_sliding_window_attention", "check_linear_attention", "check_se_block", "buggy_padded_attention",
           "check_padding_fix", "check_crossover"]


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


@checker
def check_sliding_window_attention(fn: Callable[[Tensor, Tensor, Tensor, int], Tensor], *,
                                   language: str | None = None) -> CheckResult:
    """Check ``fn(q, k, v, window)``: softmax attention where query ``i`` sees keys ``|i - j| < window``.

    ``helpers.efficient.sliding_window_attention``, ``helpers.masks.sliding_window_mask`` and
    ``helpers.attention.scaled_dot_product_attention`` are disabled.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    from helpers import attention, efficient, masks

    disabled = (efficient.sliding_window_attention, masks.sliding_window_mask, attention.scaled_dot_product_attention)
    gen = torch.Generator().manual_seed(5)
    for n, window in ((10, 3), (7, 1)):
        q, k, v = (torch.randn(2, 2, n, 8, generator=gen) for _ in range(3))
        right = _masked_attention(q, k, v, _band(n, window))
        result = call_without_package(fn, q, k, v, window, disabled=disabled, language=language)
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


@checker
def check_linear_attention(fn: Callable[[Tensor, Tensor, Tensor], Tensor], *,
                           language: str | None = None) -> CheckResult:
    """Check ``fn(q, k, v)``: ``phi(Q) (phi(K)^T V)`` normalised by ``phi(Q) sum_j phi(k_j)``, ``phi = elu + 1``.

    Compared with the explicit kernel form ``(phi(Q) phi(K)^T / row sums) V``; also checks that no
    ``L x S`` tensor is created (:class:`helpers.memory.TensorMemoryTracker`).
    ``helpers.efficient_linear.linear_attention`` and ``performer_attention`` are disabled.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    from helpers import efficient_linear
    from helpers.memory import TensorMemoryTracker

    gen = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(1, 2, 64, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    right = _kernel_reference(q, k, v)
    with TensorMemoryTracker() as tracker:
        result = call_without_package(fn, q, k, v, disabled=(efficient_linear.linear_attention,
                                              efficient_linear.performer_attention), language=language)
    out = as_tensor(result, phrase("ch05.what.linear_output"), language)
    if out.shape != right.shape:
        return CheckResult.of(False, "ch05.linear.shape", language, got=tuple(out.shape), expected=tuple(right.shape))
    if not allclose(out, right):
        if allclose(out, _kernel_reference(q, k, v, normalise=False)):
            return CheckResult.of(False, "ch05.linear.no_normaliser", language)
        if allclose(out, _kernel_reference(q, k, v, phi=torch.nn.functional.elu)):
            return CheckResult.of(False, "ch05.linear.elu", language)
        softmax = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1) @ v
        if allclose(out, softmax):
            return CheckResult.of(False, "ch05.linear.softmax", language)
        return CheckResult.of(False, "ch05.linear.differs", language)
    if tracker.max_numel >= 64 * 64:
        return CheckResult.of(False, "ch05.linear.quadratic", language, shape=tracker.max_shape)
    return CheckResult.of(True, "ch05.linear.passed", language, shape=tracker.max_shape)


@checker
def check_se_block(fn: Callable[[Tensor, Any, Any], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(x, fc1, fc2)``: squeeze (spatial mean), excite (fc1, ReLU, fc2, sigmoid), scale.

    ``helpers.vision.SqueezeExcitation`` (its ``forward``) and ``CBAM`` are disabled.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    from helpers.vision import CBAM, SqueezeExcitation

    torch.manual_seed(7)
    block = SqueezeExcitation(8, reduction=2)
    x = torch.randn(3, 8, 5, 6)
    with torch.no_grad():
        right = block(x)
        squeezed = x.mean(dim=(2, 3))
        gates = torch.sigmoid(block.fc2(torch.relu(block.fc1(squeezed))))
        wrong = {
            "max": x * torch.sigmoid(block.fc2(torch.relu(block.fc1(x.amax(dim=(2, 3))))))[:, :, None, None],
            "softmax": x * torch.softmax(block.fc2(torch.relu(block.fc1(squeezed))), dim=1)[:, :, None, None],
            "no sigmoid": x * block.fc2(torch.relu(block.fc1(squeezed)))[:, :, None, None],
        }
    with torch.no_grad():
        result = call_without_package(fn, x, block.fc1, block.fc2, disabled=(SqueezeExcitation, CBAM),
                                      language=language)
    out = as_tensor(result, phrase("ch05.what.feature_map"), language)
    if allclose(out, right):
        return CheckResult.of(True, "ch05.se.passed", language)
    if out.shape == gates.shape and allclose(out, gates):
        return CheckResult.of(False, "ch05.se.weights_only", language)
    if out.shape != right.shape:
        return CheckResult.of(False, "ch05.se.shape", language, got=tuple(out.shape), expected=tuple(right.shape))
    if allclose(out, wrong["max"]):
        return CheckResult.of(False, "ch05.se.max", language)
    if allclose(out, wrong["softmax"]):
        return CheckResult.of(False, "ch05.se.softmax", language)
    if allclose(out, wrong["no sigmoid"]):
        return CheckResult.of(False, "ch05.se.no_sigmoid", language)
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


@checker
def check_padding_fix(fn: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], *,
                      language: str | None = None) -> CheckResult:
    """Check the reader's fix of :func:`buggy_padded_attention`: padded *keys* masked, real rows right.

    Compared on the real query rows only (what a padded query outputs is a convention).
    ``helpers.masks.padding_mask`` and ``helpers.attention.scaled_dot_product_attention`` are disabled.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    from helpers import attention, masks

    gen = torch.Generator().manual_seed(8)
    q, k, v = (torch.randn(3, 2, 6, 4, generator=gen) for _ in range(3))
    lengths = torch.tensor([6, 4, 2])
    real = torch.arange(6)[None, :] < lengths[:, None]  # (B, S)
    right = _masked_attention(q, k, v, real[:, None, None, :])  # keys masked
    result = call_without_package(fn, q, k, v, lengths,
                                  disabled=(masks.padding_mask, attention.scaled_dot_product_attention),
                                  language=language)
    out = as_tensor(result, phrase("ch05.what.padded_output"), language)
    if out.shape != right.shape:
        return CheckResult.of(False, "ch05.padding.shape", language, got=tuple(out.shape), expected=tuple(right.shape))
    rows = real[:, None, :, None].expand_as(right)
    if torch.isnan(out[rows]).any():
        return CheckResult.of(False, "ch05.padding.nan", language)
    if torch.allclose(out[rows], right[rows], atol=1e-5):
        return CheckResult.of(True, "ch05.padding.passed", language)
    if torch.allclose(out[rows], buggy_padded_attention(q, k, v, lengths)[rows], atol=1e-5):
        return CheckResult.of(False, "ch05.padding.still_the_bug", language)
    return CheckResult.of(False, "ch05.padding.differs", language)


@checker
def check_crossover(time_both: Callable[[int], tuple[float, float]], predicted_n: Any,
                    sizes: tuple[int, ...] = (256, 512, 1024, 2048), *, language: str | None = None) -> CheckResult:
    """Run the reader's ``time_both(n) -> (dense_seconds, window_seconds)`` and compare the
    measured crossover with the prediction made before.

    Passes when the prediction is a number and the timings are plausible (dense time grows
    faster than the window's); the message reports the measured crossover and the prediction.
    ``helpers.experiments.efficient_cost.measure_cost`` is disabled.

    Args:
        time_both: The reader's function.
        predicted_n: The crossover length the reader predicted before measuring.
        sizes: The sequence lengths timed.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    if isinstance(predicted_n, bool) or not isinstance(predicted_n, (int, float)) or not predicted_n > 0:
        return CheckResult.of(False, "ch05.crossover.no_prediction", language, got=repr(predicted_n))
    from helpers.experiments import efficient_cost

    dense, window = [], []
    for n in sizes:
        result = call_without_package(time_both, n, disabled=(efficient_cost.measure_cost,),
                                      language=language)
        if (not isinstance(result, (tuple, list)) or len(result) != 2
                or not all(isinstance(t, (int, float)) and t > 0 for t in result)):
            return CheckResult.of(False, "ch05.crossover.not_two_times", language, n=n, got=repr(result))
        dense.append(float(result[0]))
        window.append(float(result[1]))
    k_dense = efficient_cost.fit_exponent(sizes, dense)
    k_window = efficient_cost.fit_exponent(sizes, window)
    if k_dense < k_window + 0.3:
        return CheckResult.of(False, "ch05.crossover.not_faster", language, k_dense=k_dense, k_window=k_window)
    n_star, how = efficient_cost.crossover_length(sizes, dense, window)
    if how == "always cheaper":
        measured = phrase("ch05.crossover.below")
    elif math.isinf(n_star):
        measured = phrase("ch05.crossover.beyond")
    else:
        measured = phrase("ch05.crossover.about", n=n_star, how=phrase(f"ch05.crossover.how.{how}"))
    ratio = "" if math.isinf(n_star) else phrase("ch05.crossover.ratio", ratio=predicted_n / n_star)
    return CheckResult.of(True, "ch05.crossover.passed", language, k_dense=k_dense, k_window=k_window,
                          measured=measured, predicted=predicted_n, ratio=ratio)
