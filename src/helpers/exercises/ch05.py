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
and writes its verdict from ``MESSAGES``, this chapter's part of the checkers' catalogue
(:mod:`helpers.exercises.messages`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.messages import phrase, register
from helpers.exercises.reader import allclose, as_tensor, call_without_package

__all__ = ["check_sliding_window_attention", "check_linear_attention", "check_se_block", "buggy_padded_attention",
           "check_padding_fix", "check_crossover"]

MESSAGES = {
    "ch05.what.window_output": {"en": "attention output, shape (B, H, L, E)",
                                "zh": "注意力的输出（形状 (B, H, L, E)）"},
    "ch05.what.linear_output": {"en": "output, shape (B, H, L, Ev)", "zh": "输出（形状 (B, H, L, Ev)）"},
    "ch05.what.feature_map": {"en": "rescaled feature map, shape (B, C, H, W)",
                              "zh": "重新加权后的特征图（形状 (B, C, H, W)）"},
    "ch05.what.padded_output": {"en": "attention output, shape (B, H, S, E)",
                                "zh": "注意力的输出（形状 (B, H, S, E)）"},
    "ch05.window.shape": {
        "en": "output shape {got}, expected {expected} (B, H, L, E)",
        "zh": "输出的形状是 {got}，应为 {expected}，即 (B, H, L, E)"},
    "ch05.window.off_by_one": {
        "en": "off by one: your window keeps |i - j| <= window; the convention (the package's and this exercise's) "
              "is |i - j| < window, so window=1 sees only itself",
        "zh": "差了一位：你的窗口保留的是 |i - j| <= window；本包和这道练习的约定是 |i - j| < window，"
              "所以 window=1 时每个位置只看得见自己"},
    "ch05.window.causal": {
        "en": "your window only looks back (j <= i): that is the causal window; here query i sees keys on both sides",
        "zh": "你的窗口只往回看（j <= i）：那是因果窗口；这里第 i 个查询要看见两侧的键"},
    "ch05.window.unscaled": {
        "en": "the window is right but the scores are not divided by sqrt(d)",
        "zh": "窗口对了，但分数没有除以 sqrt(d)"},
    "ch05.window.after_softmax": {
        "en": "you zeroed the weights outside the window *after* the softmax, so the kept weights no longer sum to "
              "1; mask the scores with -inf *before* the softmax",
        "zh": "你在 softmax *之后*才把窗口外的权重置零，留下的权重加起来就不再是 1；"
              "应在 softmax *之前*用 -inf 遮住分数"},
    "ch05.window.full": {
        "en": "this is full attention: the window mask was not applied",
        "zh": "这是完整的注意力：窗口掩码没有起作用"},
    "ch05.window.differs": {
        "en": "the output differs from softmax attention restricted to |i - j| < window",
        "zh": "输出与限制在 |i - j| < window 之内的 softmax 注意力不同"},
    "ch05.window.passed": {
        "en": "your sliding-window attention matches dense attention with the window mask.",
        "zh": "你的局部窗口注意力与加了窗口掩码的稠密注意力结果一致。"},
    "ch05.linear.shape": {
        "en": "output shape {got}, expected {expected} (B, H, L, Ev)",
        "zh": "输出的形状是 {got}，应为 {expected}，即 (B, H, L, Ev)"},
    "ch05.linear.no_normaliser": {
        "en": "the normaliser is missing: divide by phi(q_i) . sum_j phi(k_j) so that each query's weights sum to 1",
        "zh": "少了归一化项：应除以 phi(q_i) . sum_j phi(k_j)，让每个查询的权重加起来等于 1"},
    "ch05.linear.elu": {
        "en": "phi is elu without the +1: elu can be negative, and weights must be positive",
        "zh": "phi 用的是没有 +1 的 elu：elu 可能为负，而权重必须为正"},
    "ch05.linear.softmax": {
        "en": "this is softmax attention; linear attention replaces exp(q.k) by phi(q).phi(k)",
        "zh": "这是 softmax 注意力；线性注意力把 exp(q.k) 换成了 phi(q).phi(k)"},
    "ch05.linear.differs": {
        "en": "the output differs from the kernel form (phi(Q) phi(K)^T / row sums) V",
        "zh": "输出与核形式 (phi(Q) phi(K)^T / row sums) V 的结果不同"},
    "ch05.linear.quadratic": {
        "en": "right numbers, but a tensor of shape {shape} was created: that is the L x S matrix, computed in the "
              "(phi(Q) phi(K)^T) V order; compute phi(K)^T V (E x Ev) first, then multiply by phi(Q)",
        "zh": "数值对了，但中间生成了一个形状为 {shape} 的张量：这就是 L x S 矩阵，是按 (phi(Q) phi(K)^T) V 的顺序"
              "算出来的；应先算 phi(K)^T V（E x Ev），再乘以 phi(Q)"},
    "ch05.linear.passed": {
        "en": "same output as the kernel form, and the largest tensor was {shape}: no L x S matrix.",
        "zh": "输出与核形式相同，而且最大的张量只有 {shape}：没有生成 L x S 矩阵。"},
    "ch05.se.passed": {
        "en": "squeeze, excite and scale match the package's SE block.",
        "zh": "压缩、激励和缩放三步都与本包的 SE 模块一致。"},
    "ch05.se.weights_only": {
        "en": "you returned the channel weights; the block returns x scaled by them (x * weights[:, :, None, None])",
        "zh": "你返回的是通道权重；这个模块要返回的是用它们缩放后的 x（x * weights[:, :, None, None]）"},
    "ch05.se.shape": {
        "en": "output shape {got}, expected {expected}: the block keeps the feature map's shape (did you squeeze "
              "over the channels instead of H and W?)",
        "zh": "输出的形状是 {got}，应为 {expected}：这个模块不改变特征图的形状"
              "（你是不是沿通道、而不是沿 H 和 W 做了压缩？）"},
    "ch05.se.max": {
        "en": "you squeezed with the max; SE squeezes with the spatial mean (CBAM uses both)",
        "zh": "你用最大值做了压缩；SE 用的是空间上的均值（CBAM 两者都用）"},
    "ch05.se.softmax": {
        "en": "softmax over channels makes them compete for a total of 1; SE uses a sigmoid, one independent weight "
              "in (0, 1) per channel",
        "zh": "在通道上做 softmax，会让各通道争抢总和为 1 的权重；SE 用的是 sigmoid，"
              "每个通道各有一个 (0, 1) 之间的独立权重"},
    "ch05.se.no_sigmoid": {
        "en": "the sigmoid is missing: the weights must lie in (0, 1)",
        "zh": "少了 sigmoid：权重必须落在 (0, 1) 之间"},
    "ch05.se.differs": {
        "en": "the output differs from x * sigmoid(fc2(relu(fc1(mean over H, W of x))))",
        "zh": "输出与 x * sigmoid(fc2(relu(fc1(mean over H, W of x)))) 不同"},
    "ch05.padding.shape": {
        "en": "output shape {got}, expected {expected}",
        "zh": "输出的形状是 {got}，应为 {expected}"},
    "ch05.padding.nan": {
        "en": "real tokens' outputs contain NaN: a real query must keep at least its real keys",
        "zh": "真实词元的输出里有 NaN：一个真实的查询至少要保留它的那些真实的键"},
    "ch05.padding.passed": {
        "en": "the real tokens now attend only to real keys: the mask has shape (B, 1, 1, S).",
        "zh": "真实词元现在只注意真实的键：掩码的形状是 (B, 1, 1, S)。"},
    "ch05.padding.still_the_bug": {
        "en": "still the bug: the mask (B, 1, S, 1) hides padded *queries*, and the real queries still see the padded "
              "keys; mask the key axis, shape (B, 1, 1, S)",
        "zh": "还是原来的错误：形状为 (B, 1, S, 1) 的掩码遮住的是填充的*查询*，真实的查询仍然看得见填充的键；"
              "应遮住键所在的维度，形状为 (B, 1, 1, S)"},
    "ch05.padding.differs": {
        "en": "the real tokens' outputs differ from attention over the real keys only",
        "zh": "真实词元的输出与只在真实的键上做注意力的结果不同"},
    "ch05.crossover.no_prediction": {
        "en": "first write your prediction: predicted_n must be a positive number, got {got}",
        "zh": "先写下你的预测：predicted_n 应是一个正数，得到的是 {got}"},
    "ch05.crossover.not_two_times": {
        "en": "time_both({n}) must return two positive numbers of seconds, got {got}",
        "zh": "time_both({n}) 应返回两个以秒为单位的正数，得到的是 {got}"},
    "ch05.crossover.not_faster": {
        "en": "your dense time grows like n^{k_dense:.2f} and the window's like n^{k_window:.2f}: dense should grow "
              "clearly faster. Time the attention itself (not tensor creation), take the best of a few calls, and "
              "check the window really restricts the keys",
        "zh": "你测得的稠密注意力耗时按 n^{k_dense:.2f} 增长，窗口注意力按 n^{k_window:.2f} 增长：稠密注意力应当"
              "增长得明显更快。请只计时注意力本身（不含创建张量），每种取几次调用中最快的一次，并检查窗口确实限制了键"},
    "ch05.crossover.below": {"en": "below the smallest size", "zh": "小于所测的最小长度"},
    "ch05.crossover.beyond": {"en": "beyond the measured sizes", "zh": "超出了所测的范围"},
    "ch05.crossover.how.measured": {"en": "measured", "zh": "实测"},
    "ch05.crossover.how.extrapolated": {"en": "extrapolated", "zh": "外推"},
    "ch05.crossover.about": {"en": "about {n:,.0f} ({how})", "zh": "约为 {n:,.0f}（{how}）"},
    "ch05.crossover.ratio": {
        "en": "; your prediction was {ratio:.1f}× the measured value",
        "zh": "；你的预测是实测值的 {ratio:.1f} 倍"},
    "ch05.crossover.passed": {
        "en": "dense time ∝ n^{k_dense:.2f}, window ∝ n^{k_window:.2f}; the window becomes faster at {measured}, you "
              "predicted {predicted:,.0f}{ratio}.",
        "zh": "稠密注意力耗时 ∝ n^{k_dense:.2f}，窗口注意力 ∝ n^{k_window:.2f}；窗口注意力开始更快的长度"
              "{measured}，你预测的是 {predicted:,.0f}{ratio}。"},
}
"""This chapter's messages in the checkers' catalogue, ``{key: {language: template}}``."""
register(MESSAGES)


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
        result, failure = call_without_package(fn, q, k, v, window, disabled=disabled, language=language)
        if failure is not None:
            return failure
        out, failure = as_tensor(result, phrase("ch05.what.window_output"), language)
        if failure is not None:
            return failure
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
        result, failure = call_without_package(fn, q, k, v, disabled=(efficient_linear.linear_attention,
                                                       efficient_linear.performer_attention), language=language)
    if failure is not None:
        return failure
    out, failure = as_tensor(result, phrase("ch05.what.linear_output"), language)
    if failure is not None:
        return failure
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
        result, failure = call_without_package(fn, x, block.fc1, block.fc2, disabled=(SqueezeExcitation, CBAM),
                                               language=language)
    if failure is not None:
        return failure
    out, failure = as_tensor(result, phrase("ch05.what.feature_map"), language)
    if failure is not None:
        return failure
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
    result, failure = call_without_package(fn, q, k, v, lengths,
                                           disabled=(masks.padding_mask, attention.scaled_dot_product_attention),
                                           language=language)
    if failure is not None:
        return failure
    out, failure = as_tensor(result, phrase("ch05.what.padded_output"), language)
    if failure is not None:
        return failure
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
        result, failure = call_without_package(time_both, n, disabled=(efficient_cost.measure_cost,),
                                               language=language)
        if failure is not None:
            return failure
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
