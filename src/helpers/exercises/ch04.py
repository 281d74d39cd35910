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
and writes its verdict from ``MESSAGES``, this chapter's part of the checkers' catalogue
(:mod:`helpers.exercises.messages`): the model the other chapters' checkers follow.
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
from helpers.multihead import MultiHeadAttention

__all__ = ["check_split_heads", "check_merge_heads", "check_multihead_attention", "buggy_multihead_attention",
           "check_view_fix", "check_parameter_count", "check_head_ablation"]

_LAYER_CALLS = (MultiHeadAttention.forward,)

MESSAGES = {
    "ch04.what.heads": {"en": "heads, shape (B, H, L, E)", "zh": "切分后的头（形状 (B, H, L, E)）"},
    "ch04.what.merged": {"en": "merged tensor, shape (B, L, D)", "zh": "合并后的张量（形状 (B, L, D)）"},
    "ch04.what.output": {"en": "attention output, shape (B, L, D)", "zh": "注意力的输出（形状 (B, L, D)）"},
    "ch04.split.not_moved": {
        "en": "shape {shape} is (B, L, H, E): the heads are cut but not moved; add .transpose(1, 2) so that each "
              "head is a batch of L tokens",
        "zh": "形状 {shape} 是 (B, L, H, E)：头已经切开，却还没有移到批维度旁边；加上 .transpose(1, 2)，"
              "让每个头成为一批 L 个词元"},
    "ch04.split.no_transpose": {
        "en": "this is x.view(B, H, L, E) without the transpose: each 'head' gets a block of consecutive numbers "
              "that spans several tokens, so a head's 'token' i mixes features of different tokens. View as "
              "(B, L, H, E), then .transpose(1, 2)",
        "zh": "这是没有转置的 x.view(B, H, L, E)：每个“头”拿到的是一段跨越好几个词元的连续数字，"
              "于是头里的“第 i 个词元”混进了不同词元的特征。应先 view 成 (B, L, H, E)，再 .transpose(1, 2)"},
    "ch04.split.strided": {
        "en": "head h takes every H-th feature (view(B, L, E, H)): the package's heads are contiguous blocks, "
              "features h·E to (h+1)·E − 1; view as (B, L, H, E)",
        "zh": "第 h 个头取的是每隔 H 个的特征（view(B, L, E, H)）：本包中，每个头是一段连续的特征，"
              "即第 h·E 到第 (h+1)·E − 1 个；应 view 成 (B, L, H, E)"},
    "ch04.split.shape": {
        "en": "expected shape (B, H, L, E) = {expected}, got {got}",
        "zh": "形状应为 (B, H, L, E) = {expected}，得到的是 {got}"},
    "ch04.split.misplaced": {
        "en": "the shape is right but the numbers are not where they belong: head h, token i must hold "
              "x[:, i, h*E:(h+1)*E]",
        "zh": "形状对了，数却没放在该放的位置：第 h 个头的第 i 个词元应当是 x[:, i, h*E:(h+1)*E]"},
    "ch04.split.passed": {
        "en": "view(B, L, H, E) then transpose(1, 2): each head is a contiguous block of features, and the heads "
              "become a batch dimension.",
        "zh": "先 view(B, L, H, E)，再 transpose(1, 2)：每个头是一段连续的特征，头成了一个批维度。"},
    "ch04.merge.no_transpose": {
        "en": "you reshaped (B, H, L, E) straight to (B, L, D): token i then gets pieces of other tokens from the "
              "same head. Transpose back to (B, L, H, E) first",
        "zh": "你把 (B, H, L, E) 直接 reshape 成了 (B, L, D)：这样第 i 个词元会拿到同一个头里其他词元的片段。"
              "应先转置回 (B, L, H, E)"},
    "ch04.merge.shape": {
        "en": "expected shape (B, L, D) = {expected}, got {got}",
        "zh": "形状应为 (B, L, D) = {expected}，得到的是 {got}"},
    "ch04.merge.misplaced": {
        "en": "right shape, wrong order: token i must hold head 0's E features, then head 1's, ...",
        "zh": "形状对了，顺序不对：第 i 个词元应当先放第 0 个头的 E 个特征，再放第 1 个头的，依此类推"},
    "ch04.merge.passed": {
        "en": "transpose(1, 2) then reshape(B, L, D): the heads of each token side by side, in order. (After a "
              "transpose the tensor is not contiguous, so .view would fail: reshape copies.)",
        "zh": "先 transpose(1, 2)，再 reshape(B, L, D)：每个词元的各个头按顺序并排。"
              "（转置之后张量在内存中不再连续，所以 .view 会报错；reshape 会复制一份。）"},
    "ch04.layer.where": {
        "en": "(d_model={d_model}, {heads} head{plural})",
        "zh": "（d_model={d_model}，{heads} 个头）"},
    "ch04.layer.shape": {
        "en": "{where}: expected shape {expected}, got {got}",
        "zh": "{where}：形状应为 {expected}，得到的是 {got}"},
    "ch04.layer.no_transpose": {
        "en": "{where}: view(B, H, L, E) without transpose: each head attends over rows that are pieces of several "
              "tokens, so the heads mix positions. View as (B, L, H, E) and transpose(1, 2); transpose back before "
              "merging",
        "zh": "{where}：view(B, H, L, E) 之后没有转置：每个头所注意的“行”是由好几个词元的碎片拼成的，"
              "于是各个头把不同的位置混在了一起。应 view 成 (B, L, H, E) 再 transpose(1, 2)；合并之前再转置回来"},
    "ch04.layer.model_scale": {
        "en": "{where}: scores divided by √d_model; each head's dot product has head_dim terms: divide by "
              "√head_dim (chapter 3)",
        "zh": "{where}：分数除以的是 √d_model；每个头的点积只有 head_dim 项，应除以 √head_dim（见第 3 章）"},
    "ch04.layer.unscaled": {
        "en": "{where}: the scores are not scaled: divide by √head_dim",
        "zh": "{where}：分数没有缩放：应除以 √head_dim"},
    "ch04.layer.no_output_projection": {
        "en": "{where}: the output projection o_proj is missing after the merge",
        "zh": "{where}：合并之后少了输出投影 o_proj"},
    "ch04.layer.differs": {
        "en": "{where}: the output differs from the layer's (max |diff| {diff:.2e}); check the split, the softmax "
              "axis (the keys: dim=-1) and the merge",
        "zh": "{where}：输出与该层的输出不同（最大 |差值| 为 {diff:.2e}）；请检查切分、softmax 的维度"
              "（沿键的方向：dim=-1）以及合并"},
    "ch04.layer.passed": {
        "en": "your multi-head attention matches MultiHeadAttention with the same weights, for 4, 2 and 1 heads.",
        "zh": "在权重相同的条件下，你的多头注意力与 MultiHeadAttention 的结果一致（4 个、2 个和 1 个头都是如此）。"},
    "ch04.count.not_int": {
        "en": "return an int, got {type} ({value})",
        "zh": "应返回 int，得到的是 {type}（{value}）"},
    "ch04.count.layout": {
        "en": "for embed_dim={d}, num_heads={h}, num_kv_heads={hkv}, bias={bias}",
        "zh": "当 embed_dim={d}、num_heads={h}、num_kv_heads={hkv}、bias={bias} 时"},
    "ch04.count.full_kv": {
        "en": "{layout}: {result} counts full-size k_proj and v_proj; with {hkv} key/value heads they map {d} -> "
              "{kv} features, not {d}",
        "zh": "{layout}：{result} 把 k_proj 和 v_proj 按满尺寸计算了；只有 {hkv} 个键/值头时，"
              "它们把 {d} 个特征映射为 {kv} 个，而不是 {d} 个"},
    "ch04.count.no_bias": {
        "en": "{layout}: the four biases are missing ({n} parameters)",
        "zh": "{layout}：漏掉了四个偏置（共 {n} 个参数）"},
    "ch04.count.times_heads": {
        "en": "{layout}: you multiplied by the number of heads; heads are slices of the same matrices and add no "
              "parameters",
        "zh": "{layout}：你乘上了头数；各个头只是同一组矩阵的切片，并不增加参数"},
    "ch04.count.wrong": {
        "en": "{layout}: expected {expected:,}, got {got:,}",
        "zh": "{layout}：应为 {expected:,}，得到的是 {got:,}"},
    "ch04.count.passed": {
        "en": "q_proj and o_proj: D×D each; k_proj and v_proj: D×(H_kv·E); plus the biases. The number of query "
              "heads never appears: at fixed D, heads are free.",
        "zh": "q_proj 和 o_proj 各为 D×D；k_proj 和 v_proj 各为 D×(H_kv·E)；再加上偏置。"
              "查询头的个数根本不出现：D 固定时，多分几个头不花参数。"},
    "ch04.ablation.no_prediction": {
        "en": "first write your prediction: predicted_most_important must be a head index 0 .. {last}, got {got}",
        "zh": "先写下你的预测：predicted_most_important 应是 0 .. {last} 之间的头编号，得到的是 {got}"},
    "ch04.ablation.length": {
        "en": "return a list of {n} numbers, one R² per removed head",
        "zh": "应返回由 {n} 个数组成的列表，每去掉一个头对应一个 R²"},
    "ch04.ablation.nothing_removed": {
        "en": "every value equals the full model's R²: the mask removed nothing (a head is removed by a 0 at its "
              "index, e.g. 1 - torch.eye(H)[h])",
        "zh": "每个值都等于完整模型的 R²：掩码什么也没去掉（要去掉一个头，得在它的位置上放 0，"
              "例如 1 - torch.eye(H)[h]）"},
    "ch04.ablation.kept_one": {
        "en": "you kept one head and removed the others (torch.eye(H)[h]); the ablation removes one head and keeps "
              "the rest (1 - torch.eye(H)[h])",
        "zh": "你保留了一个头、去掉了其余的头（torch.eye(H)[h]）；消融实验是去掉一个头、保留其余的头"
              "（1 - torch.eye(H)[h]）"},
    "ch04.ablation.differs": {
        "en": "your values differ from R² with one head masked; use run.score(head_mask)",
        "zh": "你的数值与用掩码去掉一个头后的 R² 不符；请用 run.score(head_mask) 计算"},
    "ch04.ablation.passed_predicted": {
        "en": "removing head {worst} costs the most (R² {without:.2f} instead of {full:.2f}); your prediction was "
              "right.",
        "zh": "去掉第 {worst} 个头损失最大（R² 从 {full:.2f} 降到 {without:.2f}）；你的预测是对的。"},
    "ch04.ablation.passed_surprised": {
        "en": "removing head {worst} costs the most (R² {without:.2f} instead of {full:.2f}); you predicted head "
              "{predicted}, the data say head {worst}.",
        "zh": "去掉第 {worst} 个头损失最大（R² 从 {full:.2f} 降到 {without:.2f}）；你预测的是第 {predicted} 个头，"
              "数据说是第 {worst} 个。"},
}
"""This chapter's messages in the checkers' catalogue, ``{key: {language: template}}``."""
register(MESSAGES)


def _reference_split(x: Tensor, num_heads: int) -> Tensor:
    batch, length, d_model = x.shape
    return x.view(batch, length, num_heads, d_model // num_heads).transpose(1, 2)  # (B, H, L, E)


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
        result, failure = call_without_package(fn, x, heads, disabled=(MultiHeadAttention.forward,),
                                               language=language)
        if failure is not None:
            return failure
        out, failure = as_tensor(result, phrase("ch04.what.heads"), language)
        if failure is not None:
            return failure
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
        result, failure = call_without_package(fn, x, disabled=_LAYER_CALLS, language=language)
        if failure is not None:
            return failure
        out, failure = as_tensor(result, phrase("ch04.what.merged"), language)
        if failure is not None:
            return failure
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
            result, failure = call_without_package(fn, x, layer, disabled=_LAYER_CALLS, language=language)
            if failure is not None:
                return failure
            out, failure = as_tensor(result, phrase("ch04.what.output"), language)
            if failure is not None:
                return failure
            if allclose(out, right) or (out.shape == right.shape and torch.allclose(out, right, rtol=1e-4, atol=1e-5)):
                continue
            where = phrase("ch04.layer.where", d_model=d_model, heads=heads, plural="" if heads == 1 else "s")
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
        result, failure = call_without_package(fn, d, h, hkv, bias, disabled=(MultiHeadAttention.__init__,),
                                               language=language)
        if failure is not None:
            return failure
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
    result, failure = call_without_package(fn, run, disabled=disabled, language=language)
    if failure is not None:
        return failure
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
