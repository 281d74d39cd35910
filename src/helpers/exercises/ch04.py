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
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.reader import allclose, as_tensor, call_without_package
from helpers.multihead import MultiHeadAttention

__all__ = ["check_split_heads", "check_merge_heads", "check_multihead_attention", "buggy_multihead_attention",
           "check_view_fix", "check_parameter_count", "check_head_ablation"]

_LAYER_CALLS = (MultiHeadAttention.forward,)




def _reference_split(x: Tensor, num_heads: int) -> Tensor:
    batch, length, d_model = x.shape
    return x.view(batch, length, num_heads, d_model // num_heads).transpose(1, 2)  # (B, H, L, E)


_SPLIT_HINT = " (split (B, L, D) into (B, L, H, E) first, then swap L and H)"


def check_split_heads(fn: Callable[[Tensor, int], Tensor]) -> CheckResult:
    """Check ``fn(x, num_heads)``: ``(B, L, D)`` -> ``(B, H, L, E)``, head ``h`` = features ``hE..(h+1)E-1``."""
    torch.manual_seed(0)
    for batch, length, d_model, heads in ((2, 5, 12, 3), (1, 4, 8, 2)):
        x = torch.randn(batch, length, d_model)
        result, failure = call_without_package(fn, x, heads, disabled=(MultiHeadAttention.forward,))
        if failure is not None:
            return failure
        out, failure = as_tensor(result, "heads, shape (B, H, L, E)")
        if failure is not None:
            return failure
        right = _reference_split(x, heads)
        if allclose(out, right):
            continue
        e = d_model // heads
        if out.shape == (batch, length, heads, e):
            return CheckResult(False, f"shape {tuple(out.shape)} is (B, L, H, E): the heads are cut but not moved; "
                                      "add .transpose(1, 2) so that each head is a batch of L tokens")
        if out.shape == right.shape and allclose(out, x.reshape(batch, heads, length, e)):
            return CheckResult(False, "this is x.view(B, H, L, E) without the transpose: each 'head' gets a block of "
                                      "consecutive numbers that spans several tokens, so a head's 'token' i mixes "
                                      "features of different tokens. View as (B, L, H, E), then .transpose(1, 2)")
        if out.shape == right.shape and allclose(out, x.view(batch, length, e, heads).permute(0, 3, 1, 2)):
            return CheckResult(False, "head h takes every H-th feature (view(B, L, E, H)): the package's heads are "
                                      "contiguous blocks, features h·E to (h+1)·E − 1; view as (B, L, H, E)")
        if out.shape != right.shape:
            return CheckResult(False, f"expected shape (B, H, L, E) = {tuple(right.shape)}, got {tuple(out.shape)}")
        return CheckResult(False, "the shape is right but the numbers are not where they belong: head h, token i "
                                  "must hold x[:, i, h*E:(h+1)*E]")
    return CheckResult(True, "view(B, L, H, E) then transpose(1, 2): each head is a contiguous block of features, "
                             "and the heads become a batch dimension.")


def check_merge_heads(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``fn(heads)``: ``(B, H, L, E)`` -> ``(B, L, H*E)``, the inverse of the split."""
    torch.manual_seed(1)
    for batch, heads, length, e in ((2, 3, 5, 4), (1, 2, 6, 3)):
        x = torch.randn(batch, heads, length, e)
        result, failure = call_without_package(fn, x, disabled=_LAYER_CALLS)
        if failure is not None:
            return failure
        out, failure = as_tensor(result, "merged tensor, shape (B, L, D)")
        if failure is not None:
            return failure
        right = x.transpose(1, 2).reshape(batch, length, heads * e)
        if allclose(out, right):
            continue
        if out.shape == right.shape and allclose(out, x.reshape(batch, length, heads * e)):
            return CheckResult(False, "you reshaped (B, H, L, E) straight to (B, L, D): token i then gets pieces of "
                                      "other tokens from the same head. Transpose back to (B, L, H, E) first")
        if out.shape != right.shape:
            return CheckResult(False, f"expected shape (B, L, D) = {tuple(right.shape)}, got {tuple(out.shape)}")
        return CheckResult(False, "right shape, wrong order: token i must hold head 0's E features, then head 1's, ...")
    return CheckResult(True, "transpose(1, 2) then reshape(B, L, D): the heads of each token side by side, in order. "
                             "(After a transpose the tensor is not contiguous, so .view would fail: reshape copies.)")


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


def check_multihead_attention(fn: Callable[[Tensor, MultiHeadAttention], Tensor]) -> CheckResult:
    """Check ``fn(x, layer)``: multi-head self-attention from scratch with ``layer``'s projections.

    ``layer.forward`` is disabled while ``fn`` runs: the answer must build it from ``q_proj``,
    ``k_proj``, ``v_proj`` and ``o_proj``.
    """
    for d_model, heads, length in ((24, 4, 6), (16, 2, 5), (12, 1, 4)):
        torch.manual_seed(d_model)
        layer = MultiHeadAttention(d_model, heads)
        x = torch.randn(2, length, d_model)
        with torch.no_grad():
            right = layer(x)[0]
            result, failure = call_without_package(fn, x, layer, disabled=_LAYER_CALLS)
            if failure is not None:
                return failure
            out, failure = as_tensor(result, "attention output, shape (B, L, D)")
            if failure is not None:
                return failure
            if allclose(out, right) or (out.shape == right.shape and torch.allclose(out, right, rtol=1e-4, atol=1e-5)):
                continue
            where = f"(d_model={d_model}, {heads} head{'' if heads == 1 else 's'})"
            if out.shape != right.shape:
                return CheckResult(False, f"{where}: expected shape {tuple(right.shape)}, got {tuple(out.shape)}")
            if torch.allclose(out, buggy_multihead_attention(x, layer), rtol=1e-4, atol=1e-5):
                return CheckResult(False, f"{where}: view(B, H, L, E) without transpose: each head attends over "
                                          "rows that are pieces of several tokens, so the heads mix positions. "
                                          "View as (B, L, H, E) and transpose(1, 2); transpose back before merging")
            if torch.allclose(out, _scaled_by(x, layer, 1 / math.sqrt(d_model)), rtol=1e-4, atol=1e-5):
                return CheckResult(False, f"{where}: scores divided by √d_model; each head's dot product has "
                                          "head_dim terms: divide by √head_dim (chapter 3)")
            if torch.allclose(out, _scaled_by(x, layer, 1.0), rtol=1e-4, atol=1e-5):
                return CheckResult(False, f"{where}: the scores are not scaled: divide by √head_dim")
            no_out = layer.o_proj.weight.new_zeros(0)
            try:
                merged = right - layer.o_proj.bias
                no_out = torch.linalg.lstsq(layer.o_proj.weight, merged.reshape(-1, d_model).T).solution.T
            except RuntimeError:
                pass
            if no_out.numel() and out.shape == right.shape and torch.allclose(
                    out.reshape(-1, d_model), no_out, rtol=1e-3, atol=1e-4):
                return CheckResult(False, f"{where}: the output projection o_proj is missing after the merge")
            return CheckResult(False, f"{where}: the output differs from the layer's (max |diff| "
                                      f"{(out - right).abs().max().item():.2e}); check the split, the softmax axis "
                                      "(the keys: dim=-1) and the merge")
    return CheckResult(True, "your multi-head attention matches MultiHeadAttention with the same weights, for 4, 2 "
                             "and 1 heads.")


def check_view_fix(fn: Callable[[Tensor, MultiHeadAttention], Tensor]) -> CheckResult:
    """Check the fixed version of :func:`buggy_multihead_attention` (same criteria as
    :func:`check_multihead_attention`)."""
    return check_multihead_attention(fn)


def check_parameter_count(fn: Callable[[int, int, int, bool], int]) -> CheckResult:
    """Check ``fn(embed_dim, num_heads, num_kv_heads, bias) -> number of parameters`` of a layer.

    Constructing :class:`~helpers.multihead.MultiHeadAttention` is disabled while ``fn`` runs: count by formula.
    """
    for d, h, hkv, bias in ((64, 8, 8, True), (64, 1, 1, True), (96, 12, 4, True), (32, 4, 1, False)):
        result, failure = call_without_package(fn, d, h, hkv, bias, disabled=(MultiHeadAttention.__init__,))
        if failure is not None:
            return failure
        if isinstance(result, bool) or not isinstance(result, int):
            return CheckResult(False, f"return an int, got {type(result).__name__} ({result!r})")
        e = d // h
        kv = hkv * e
        right = d * d + 2 * d * kv + d * d + ((d + 2 * kv + d) if bias else 0)
        if result == right:
            continue
        layout = f"for embed_dim={d}, num_heads={h}, num_kv_heads={hkv}, bias={bias}"
        full = 4 * d * d + (4 * d if bias else 0)
        if result == full and hkv != h:
            return CheckResult(False, f"{layout}: {result} counts full-size k_proj and v_proj; with {hkv} key/value "
                                      f"heads they map {d} -> {kv} features, not {d}")
        if bias and result == right - (d + 2 * kv + d):
            return CheckResult(False, f"{layout}: the four biases are missing ({d + 2 * kv + d} parameters)")
        if result in (right * h, 4 * d * d * h):
            return CheckResult(False, f"{layout}: you multiplied by the number of heads; heads are slices of the "
                                      "same matrices and add no parameters")
        return CheckResult(False, f"{layout}: expected {right:,}, got {result:,}")
    return CheckResult(True, "q_proj and o_proj: D×D each; k_proj and v_proj: D×(H_kv·E); plus the biases. The "
                             "number of query heads never appears: at fixed D, heads are free.")


def check_head_ablation(fn: Callable[[Any], list[float]], run: Any, predicted_most_important: Any) -> CheckResult:
    """Check ``fn(run) -> [R² with head h removed, for each h]`` (with ``head_mask``), and report
    how the reader's prediction of the most important head compares with the result.

    ``helpers.experiments.heads_training.head_ablation`` and ``break_one_head`` are disabled.
    """
    if isinstance(predicted_most_important, bool) or not isinstance(predicted_most_important, int) or not (
            0 <= predicted_most_important < run.num_heads):
        return CheckResult(False, f"first write your prediction: predicted_most_important must be a head index "
                                  f"0 .. {run.num_heads - 1}, got {predicted_most_important!r}")
    from helpers.experiments import heads_training

    disabled = (heads_training.head_ablation, heads_training.break_one_head)
    result, failure = call_without_package(fn, run, disabled=disabled)
    if failure is not None:
        return failure
    if not isinstance(result, (list, tuple)) or len(result) != run.num_heads:
        return CheckResult(False, f"return a list of {run.num_heads} numbers, one R² per removed head")
    right = [run.score(1 - torch.eye(run.num_heads)[h]) for h in range(run.num_heads)]
    if any(abs(float(a) - b) > 1e-4 for a, b in zip(result, right)):
        if all(abs(float(a) - run.r2) < 1e-4 for a in result):
            return CheckResult(False, "every value equals the full model's R²: the mask removed nothing (a head is "
                                      "removed by a 0 at its index, e.g. 1 - torch.eye(H)[h])")
        kept_one = [run.score(torch.eye(run.num_heads)[h]) for h in range(run.num_heads)]
        if all(abs(float(a) - b) < 1e-4 for a, b in zip(result, kept_one)):
            return CheckResult(False, "you kept one head and removed the others (torch.eye(H)[h]); the ablation "
                                      "removes one head and keeps the rest (1 - torch.eye(H)[h])")
        return CheckResult(False, "your values differ from R² with one head masked; use run.score(head_mask)")
    worst = min(range(run.num_heads), key=lambda h: right[h])
    verdict = ("your prediction was right" if worst == predicted_most_important else
               f"you predicted head {predicted_most_important}, the data say head {worst}")
    return CheckResult(True, f"removing head {worst} costs the most (R² {right[worst]:.2f} instead of "
                             f"{run.r2:.2f}); {verdict}.")
