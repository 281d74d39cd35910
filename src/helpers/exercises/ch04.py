"""Checkers for the exercises of chapter 4, "Why many heads" (``notebooks/04-multihead-lab.ipynb``).

Each checker runs the reader's function under :func:`helpers.exercises.guard.package_disabled`,
so an answer that calls the package's own implementation of the thing practised fails by name,
and it names the typical mistakes: ``view(B, H, L, E)`` without ``transpose`` (heads that mix
tokens), a merge without the transpose back, the scale of the whole model, biases forgotten,
key/value heads counted as query heads.

- :func:`check_split_heads`, :func:`check_merge_heads`: the two reshapes.
- :func:`check_multihead_attention`: the whole layer from scratch, with a layer's weights.
- :func:`buggy_multihead_attention`, :func:`check_view_fix`: the bug hunt.
- :func:`check_parameter_count`: parameters of a layer (MHA, GQA, MQA), by formula.
- :func:`check_head_ablation`: the reader's ablation, and the prediction made before it.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch04`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`): the model the
other chapters' checkers follow.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch04 import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.messages import phrase
from helpers.exercises.reader import allclose, as_tensor, call_without_package, checker
from helpers.multihead import MultiHeadAttention

__all__ = ["check_split_heads", "check_merge_heads", "check_multihead_attention", "buggy_multihead_attention",
           "check_view_fix", "check_parameter_count", "check_head_ablation"]

_LAYER_CALLS = (MultiHeadAttention.forward,)


def _reference_split(x: Tensor, num_heads: int) -> Tensor:
    batch, length, d_model = x.shape
    return x.view(batch, length, num_heads, d_model // num_heads).transpose(1, 2)  # (B, H, L, E)


@checker
def check_split_heads(fn: Callable[[Tensor, int], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(x, num_heads)``: ``(B, L, D)`` -> ``(B, H, L, E)``, head ``h`` = features ``hE..(h+1)E-1``.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    torch.manual_seed(0)
    for batch, length, d_model, heads in ((2, 5, 12, 3), (1, 4, 8, 2)):
        x = torch.randn(batch, length, d_model)
        result = call_without_package(fn, x, heads, disabled=(MultiHeadAttention.forward,),
                                      language=language)
        out = as_tensor(result, phrase("ch04.what.heads"), language)
        right = _reference_split(x, heads)
        if allclose(out, right):
            continue
        e = d_model // heads
        if out.shape == (batch, length, heads, e):
            return CheckResult.of(False, "ch04.split.not_moved", language, shape=tuple(out.shape))
        if out.shape == right.shape and allclose(out, x.reshape(batch, heads, length, e)):
            return CheckResult.of(False, "ch04.split.no_transpose", language)
        if out.shape == right.shape and allclose(out, x.view(batch, length, e, heads).permute(0, 3, 1, 2)):
            return CheckResult.of(False, "ch04.split.strided", language)
        if out.shape != right.shape:
            return CheckResult.of(False, "ch04.split.shape", language, expected=tuple(right.shape),
                                  got=tuple(out.shape))
        return CheckResult.of(False, "ch04.split.misplaced", language)
    return CheckResult.of(True, "ch04.split.passed", language)


@checker
def check_merge_heads(fn: Callable[[Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(heads)``: ``(B, H, L, E)`` -> ``(B, L, H*E)``, the inverse of the split.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    torch.manual_seed(1)
    for batch, heads, length, e in ((2, 3, 5, 4), (1, 2, 6, 3)):
        x = torch.randn(batch, heads, length, e)
        result = call_without_package(fn, x, disabled=_LAYER_CALLS, language=language)
        out = as_tensor(result, phrase("ch04.what.merged"), language)
        right = x.transpose(1, 2).reshape(batch, length, heads * e)
        if allclose(out, right):
            continue
        if out.shape == right.shape and allclose(out, x.reshape(batch, length, heads * e)):
            return CheckResult.of(False, "ch04.merge.no_transpose", language)
        if out.shape != right.shape:
            return CheckResult.of(False, "ch04.merge.shape", language, expected=tuple(right.shape),
                                  got=tuple(out.shape))
        return CheckResult.of(False, "ch04.merge.misplaced", language)
    return CheckResult.of(True, "ch04.merge.passed", language)


def buggy_multihead_attention(x: Tensor, layer: MultiHeadAttention) -> Tensor:
    """Multi-head self-attention with ``layer``'s weights and one classic bug (lab exercise 4).

    Shape:
        x ``(B, L, D)`` -> ``(B, L, D)``.
    """
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    q = layer.q_proj(x).view(batch, heads, length, e)  # (B, H, L, E)?
    k = layer.k_proj(x).view(batch, heads, length, e)
    v = layer.v_proj(x).view(batch, heads, length, e)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = (weights @ v).reshape(batch, length, d_model)  # (B, L, D)
    return layer.o_proj(out)


def _scaled_by(x: Tensor, layer: MultiHeadAttention, scale: float) -> Tensor:
    b, l_, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q, k, v = (p(x).view(b, l_, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    out = torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v  # (B, H, L, E)
    return layer.o_proj(out.transpose(1, 2).reshape(b, l_, d))


@checker
def check_multihead_attention(fn: Callable[[Tensor, MultiHeadAttention], Tensor], *,
                              language: str | None = None) -> CheckResult:
    """Check ``fn(x, layer)``: multi-head self-attention from scratch with ``layer``'s projections.

    ``layer.forward`` is disabled while ``fn`` runs: the answer must build it from ``q_proj``,
    ``k_proj``, ``v_proj`` and ``o_proj``.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    for d_model, heads, length in ((24, 4, 6), (16, 2, 5), (12, 1, 4)):
        torch.manual_seed(d_model)
        layer = MultiHeadAttention(d_model, heads)
        x = torch.randn(2, length, d_model)
        with torch.no_grad():
            right = layer(x)[0]
            result = call_without_package(fn, x, layer, disabled=_LAYER_CALLS, language=language)
            out = as_tensor(result, phrase("ch04.what.output"), language)
            if allclose(out, right) or (out.shape == right.shape and torch.allclose(out, right, rtol=1e-4, atol=1e-5)):
                continue
            where = phrase("ch04.layer.where", embed_dim=d_model, heads=heads, plural="" if heads == 1 else "s")
            if out.shape != right.shape:
                return CheckResult.of(False, "ch04.layer.shape", language, where=where, expected=tuple(right.shape),
                                      got=tuple(out.shape))
            if torch.allclose(out, buggy_multihead_attention(x, layer), rtol=1e-4, atol=1e-5):
                return CheckResult.of(False, "ch04.layer.no_transpose", language, where=where)
            if torch.allclose(out, _scaled_by(x, layer, 1 / math.sqrt(d_model)), rtol=1e-4, atol=1e-5):
                return CheckResult.of(False, "ch04.layer.model_scale", language, where=where)
            if torch.allclose(out, _scaled_by(x, layer, 1.0), rtol=1e-4, atol=1e-5):
                return CheckResult.of(False, "ch04.layer.unscaled", language, where=where)
            no_out = layer.o_proj.weight.new_zeros(0)
            try:
                merged = right - layer.o_proj.bias
                no_out = torch.linalg.lstsq(layer.o_proj.weight, merged.reshape(-1, d_model).T).solution.T
            except RuntimeError:
                pass
            if no_out.numel() and out.shape == right.shape and torch.allclose(
                    out.reshape(-1, d_model), no_out, rtol=1e-3, atol=1e-4):
                return CheckResult.of(False, "ch04.layer.no_output_projection", language, where=where)
            return CheckResult.of(False, "ch04.layer.differs", language, where=where,
                                  diff=(out - right).abs().max().item())
    return CheckResult.of(True, "ch04.layer.passed", language)


@checker
def check_view_fix(fn: Callable[[Tensor, MultiHeadAttention], Tensor], *, language: str | None = None) -> CheckResult:
    """Check the fixed version of :func:`buggy_multihead_attention` (same criteria as
    :func:`check_multihead_attention`).

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    return check_multihead_attention(fn, language=language)


@checker
def check_parameter_count(fn: Callable[[int, int, int, bool], int], *, language: str | None = None) -> CheckResult:
    """Check ``fn(embed_dim, num_heads, num_kv_heads, bias) -> number of parameters`` of a layer.

    Constructing :class:`~helpers.multihead.MultiHeadAttention` is disabled while ``fn`` runs: count by formula.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    for d, h, hkv, bias in ((64, 8, 8, True), (64, 1, 1, True), (96, 12, 4, True), (32, 4, 1, False)):
        result = call_without_package(fn, d, h, hkv, bias, disabled=(MultiHeadAttention.__init__,),
                                      language=language)
        if isinstance(result, bool) or not isinstance(result, int):
            return CheckResult.of(False, "ch04.count.not_int", language, type=type(result).__name__,
                                  value=repr(result))
        e = d // h
        kv = hkv * e
        right = d * d + 2 * d * kv + d * d + ((d + 2 * kv + d) if bias else 0)
        if result == right:
            continue
        layout = phrase("ch04.count.layout", d=d, h=h, hkv=hkv, bias=bias)
        full = 4 * d * d + (4 * d if bias else 0)
        if result == full and hkv != h:
            return CheckResult.of(False, "ch04.count.full_kv", language, layout=layout, result=result, hkv=hkv, d=d,
                                  kv=kv)
        if bias and result == right - (d + 2 * kv + d):
            return CheckResult.of(False, "ch04.count.no_bias", language, layout=layout, n=d + 2 * kv + d)
        if result in (right * h, 4 * d * d * h):
            return CheckResult.of(False, "ch04.count.times_heads", language, layout=layout)
        return CheckResult.of(False, "ch04.count.wrong", language, layout=layout, expected=right, got=result)
    return CheckResult.of(True, "ch04.count.passed", language)


@checker
def check_head_ablation(fn: Callable[[Any], list[float]], run: Any, predicted_most_important: Any, *,
                        language: str | None = None) -> CheckResult:
    """Check ``fn(run) -> [R² with head h removed, for each h]`` (with ``head_mask``), and report
    how the reader's prediction of the most important head compares with the result.

    ``helpers.experiments.heads_training.head_ablation`` and ``break_one_head`` are disabled.

    Args:
        fn: The reader's function.
        run: The trained run (``helpers.experiments.heads_training.train_filter``).
        predicted_most_important: The head the reader predicted, before running, to matter most.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    if isinstance(predicted_most_important, bool) or not isinstance(predicted_most_important, int) or not (
            0 <= predicted_most_important < run.num_heads):
        return CheckResult.of(False, "ch04.ablation.no_prediction", language, last=run.num_heads - 1,
                              got=repr(predicted_most_important))
    from helpers.experiments import heads_training

    disabled = (heads_training.head_ablation, heads_training.break_one_head)
    result = call_without_package(fn, run, disabled=disabled, language=language)
    if not isinstance(result, (list, tuple)) or len(result) != run.num_heads:
        return CheckResult.of(False, "ch04.ablation.length", language, n=run.num_heads)
    right = [run.score(1 - torch.eye(run.num_heads)[h]) for h in range(run.num_heads)]
    if any(abs(float(a) - b) > 1e-4 for a, b in zip(result, right)):
        if all(abs(float(a) - run.r2) < 1e-4 for a in result):
            return CheckResult.of(False, "ch04.ablation.nothing_removed", language)
        kept_one = [run.score(torch.eye(run.num_heads)[h]) for h in range(run.num_heads)]
        if all(abs(float(a) - b) < 1e-4 for a, b in zip(result, kept_one)):
            return CheckResult.of(False, "ch04.ablation.kept_one", language)
        return CheckResult.of(False, "ch04.ablation.differs", language)
    worst = min(range(run.num_heads), key=lambda h: right[h])
    key = "passed_predicted" if worst == predicted_most_important else "passed_surprised"
    return CheckResult.of(True, f"ch04.ablation.{key}", language, worst=worst, without=right[worst], full=run.r2,
                          predicted=predicted_most_important)
