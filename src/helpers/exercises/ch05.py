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
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.reader import allclose, as_tensor, call_without_package

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


def check_sliding_window_attention(fn: Callable[[Tensor, Tensor, Tensor, int], Tensor]) -> CheckResult:
    """Check ``fn(q, k, v, window)``: softmax attention where query ``i`` sees keys ``|i - j| < window``.

    ``helpers.efficient.sliding_window_attention``, ``helpers.masks.sliding_window_mask`` and
    ``helpers.attention.scaled_dot_product_attention`` are disabled.
    """
    from helpers import attention, efficient, masks

    disabled = (efficient.sliding_window_attention, masks.sliding_window_mask, attention.scaled_dot_product_attention)
    gen = torch.Generator().manual_seed(5)
    for n, window in ((10, 3), (7, 1)):
        q, k, v = (torch.randn(2, 2, n, 8, generator=gen) for _ in range(3))
        right = _masked_attention(q, k, v, _band(n, window))
        result, failure = call_without_package(fn, q, k, v, window, disabled=disabled)
        if failure is not None:
            return failure
        out, failure = as_tensor(result, "attention output, shape (B, H, L, E)")
        if failure is not None:
            return failure
        if allclose(out, right):
            continue
        if out.shape != right.shape:
            return CheckResult(False, f"output shape {tuple(out.shape)}, expected {tuple(right.shape)} (B, H, L, E)")
        if allclose(out, _masked_attention(q, k, v, _band(n, window, inclusive=True))):
            return CheckResult(False, "off by one: your window keeps |i - j| <= window; the convention (the package's "
                                      "and this exercise's) is |i - j| < window, so window=1 sees only itself")
        if allclose(out, _masked_attention(q, k, v, _band(n, window, causal=True))):
            return CheckResult(False, "your window only looks back (j <= i): that is the causal window; here query i "
                                      "sees keys on both sides")
        if allclose(out, _masked_attention(q, k, v, _band(n, window), scale=1.0)):
            return CheckResult(False, "the window is right but the scores are not divided by sqrt(d)")
        weights = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1]), dim=-1) * _band(n, window)
        if allclose(out, weights @ v):
            return CheckResult(False, "you zeroed the weights outside the window *after* the softmax, so the kept "
                                      "weights no longer sum to 1; mask the scores with -inf *before* the softmax")
        if allclose(out, _masked_attention(q, k, v, torch.ones(n, n, dtype=torch.bool))):
            return CheckResult(False, "this is full attention: the window mask was not applied")
        return CheckResult(False, "the output differs from softmax attention restricted to |i - j| < window")
    return CheckResult(True, "your sliding-window attention matches dense attention with the window mask.")


def _phi(x: Tensor) -> Tensor:
    return torch.nn.functional.elu(x) + 1


def _kernel_reference(q: Tensor, k: Tensor, v: Tensor, phi: Callable[[Tensor], Tensor] = _phi,
                      normalise: bool = True) -> Tensor:
    weights = phi(q) @ phi(k).transpose(-2, -1)  # (B, H, L, S): the explicit kernel form
    if normalise:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v


def check_linear_attention(fn: Callable[[Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(q, k, v)``: ``phi(Q) (phi(K)^T V)`` normalised by ``phi(Q) sum_j phi(k_j)``, ``phi = elu + 1``.

    Compared with the explicit kernel form ``(phi(Q) phi(K)^T / row sums) V``; also checks that no
    ``L x S`` tensor is created (:class:`helpers.memory.TensorMemoryTracker`).
    ``helpers.efficient_linear.linear_attention`` and ``performer_attention`` are disabled.
    """
    from helpers import efficient_linear
    from helpers.memory import TensorMemoryTracker

    gen = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(1, 2, 64, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    right = _kernel_reference(q, k, v)
    with TensorMemoryTracker() as tracker:
        result, failure = call_without_package(fn, q, k, v, disabled=(efficient_linear.linear_attention,
                                                       efficient_linear.performer_attention))
    if failure is not None:
        return failure
    out, failure = as_tensor(result, "output, shape (B, H, L, Ev)")
    if failure is not None:
        return failure
    if out.shape != right.shape:
        return CheckResult(False, f"output shape {tuple(out.shape)}, expected {tuple(right.shape)} (B, H, L, Ev)")
    if not allclose(out, right):
        if allclose(out, _kernel_reference(q, k, v, normalise=False)):
            return CheckResult(False, "the normaliser is missing: divide by phi(q_i) . sum_j phi(k_j) so that each "
                                      "query's weights sum to 1")
        if allclose(out, _kernel_reference(q, k, v, phi=torch.nn.functional.elu)):
            return CheckResult(False, "phi is elu without the +1: elu can be negative, and weights must be positive")
        softmax = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1) @ v
        if allclose(out, softmax):
            return CheckResult(False, "this is softmax attention; linear attention replaces exp(q.k) by phi(q).phi(k)")
        return CheckResult(False, "the output differs from the kernel form (phi(Q) phi(K)^T / row sums) V")
    if tracker.max_numel >= 64 * 64:
        return CheckResult(False, f"right numbers, but a tensor of shape {tracker.max_shape} was created: that is the "
                                  "L x S matrix, computed in the (phi(Q) phi(K)^T) V order; compute phi(K)^T V "
                                  "(E x Ev) first, then multiply by phi(Q)")
    return CheckResult(True, f"same output as the kernel form, and the largest tensor was {tracker.max_shape}: "
                             "no L x S matrix.")


def check_se_block(fn: Callable[[Tensor, Any, Any], Tensor]) -> CheckResult:
    """Check ``fn(x, fc1, fc2)``: squeeze (spatial mean), excite (fc1, ReLU, fc2, sigmoid), scale.

    ``helpers.vision.SqueezeExcitation`` (its ``forward``) and ``CBAM`` are disabled.
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
        result, failure = call_without_package(fn, x, block.fc1, block.fc2, disabled=(SqueezeExcitation, CBAM))
    if failure is not None:
        return failure
    out, failure = as_tensor(result, "rescaled feature map, shape (B, C, H, W)")
    if failure is not None:
        return failure
    if allclose(out, right):
        return CheckResult(True, "squeeze, excite and scale match the package's SE block.")
    if out.shape == gates.shape and allclose(out, gates):
        return CheckResult(False, "you returned the channel weights; the block returns x scaled by them "
                                  "(x * weights[:, :, None, None])")
    if out.shape != right.shape:
        return CheckResult(False, f"output shape {tuple(out.shape)}, expected {tuple(right.shape)}: the block keeps "
                                  "the feature map's shape (did you squeeze over the channels instead of H and W?)")
    if allclose(out, wrong["max"]):
        return CheckResult(False, "you squeezed with the max; SE squeezes with the spatial mean (CBAM uses both)")
    if allclose(out, wrong["softmax"]):
        return CheckResult(False, "softmax over channels makes them compete for a total of 1; SE uses a sigmoid, one "
                                  "independent weight in (0, 1) per channel")
    if allclose(out, wrong["no sigmoid"]):
        return CheckResult(False, "the sigmoid is missing: the weights must lie in (0, 1)")
    return CheckResult(False, "the output differs from x * sigmoid(fc2(relu(fc1(mean over H, W of x))))")


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


def check_padding_fix(fn: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check the reader's fix of :func:`buggy_padded_attention`: padded *keys* masked, real rows right.

    Compared on the real query rows only (what a padded query outputs is a convention).
    ``helpers.masks.padding_mask`` and ``helpers.attention.scaled_dot_product_attention`` are disabled.
    """
    from helpers import attention, masks

    gen = torch.Generator().manual_seed(8)
    q, k, v = (torch.randn(3, 2, 6, 4, generator=gen) for _ in range(3))
    lengths = torch.tensor([6, 4, 2])
    real = torch.arange(6)[None, :] < lengths[:, None]  # (B, S)
    right = _masked_attention(q, k, v, real[:, None, None, :])  # keys masked
    result, failure = call_without_package(fn, q, k, v, lengths,
                            disabled=(masks.padding_mask, attention.scaled_dot_product_attention))
    if failure is not None:
        return failure
    out, failure = as_tensor(result, "attention output, shape (B, H, S, E)")
    if failure is not None:
        return failure
    if out.shape != right.shape:
        return CheckResult(False, f"output shape {tuple(out.shape)}, expected {tuple(right.shape)}")
    rows = real[:, None, :, None].expand_as(right)
    if torch.isnan(out[rows]).any():
        return CheckResult(False, "real tokens' outputs contain NaN: a real query must keep at least its real keys")
    if torch.allclose(out[rows], right[rows], atol=1e-5):
        return CheckResult(True, "the real tokens now attend only to real keys: the mask has shape (B, 1, 1, S).")
    if torch.allclose(out[rows], buggy_padded_attention(q, k, v, lengths)[rows], atol=1e-5):
        return CheckResult(False, "still the bug: the mask (B, 1, S, 1) hides padded *queries*, and the real queries "
                                  "still see the padded keys; mask the key axis, shape (B, 1, 1, S)")
    return CheckResult(False, "the real tokens' outputs differ from attention over the real keys only")


def check_crossover(time_both: Callable[[int], tuple[float, float]], predicted_n: Any,
                    sizes: tuple[int, ...] = (256, 512, 1024, 2048)) -> CheckResult:
    """Run the reader's ``time_both(n) -> (dense_seconds, window_seconds)`` and compare the
    measured crossover with the prediction made before.

    Passes when the prediction is a number and the timings are plausible (dense time grows
    faster than the window's); the message reports the measured crossover and the prediction.
    ``helpers.experiments.efficient_cost.measure_cost`` is disabled.
    """
    if isinstance(predicted_n, bool) or not isinstance(predicted_n, (int, float)) or not predicted_n > 0:
        return CheckResult(False, f"first write your prediction: predicted_n must be a positive number, got "
                                  f"{predicted_n!r}")
    from helpers.experiments import efficient_cost

    dense, window = [], []
    for n in sizes:
        result, failure = call_without_package(time_both, n, disabled=(efficient_cost.measure_cost,))
        if failure is not None:
            return failure
        if (not isinstance(result, (tuple, list)) or len(result) != 2
                or not all(isinstance(t, (int, float)) and t > 0 for t in result)):
            return CheckResult(False, f"time_both({n}) must return two positive numbers of seconds, got {result!r}")
        dense.append(float(result[0]))
        window.append(float(result[1]))
    k_dense = efficient_cost.fit_exponent(sizes, dense)
    k_window = efficient_cost.fit_exponent(sizes, window)
    if k_dense < k_window + 0.3:
        return CheckResult(False, f"your dense time grows like n^{k_dense:.2f} and the window's like n^{k_window:.2f}: "
                                  "dense should grow clearly faster. Time the attention itself (not tensor creation), "
                                  "take the best of a few calls, and check the window really restricts the keys")
    n_star, how = efficient_cost.crossover_length(sizes, dense, window)
    measured = "below the smallest size" if how == "always cheaper" else (
        "beyond the measured sizes" if math.isinf(n_star) else f"about {n_star:,.0f} ({how})")
    ratio = "" if math.isinf(n_star) else f"; your prediction was {predicted_n / n_star:.1f}× the measured value"
    return CheckResult(True, f"dense time ∝ n^{k_dense:.2f}, window ∝ n^{k_window:.2f}; the window becomes faster at "
                             f"{measured}, you predicted {predicted_n:,.0f}{ratio}.")
