"""Checkers for the exercises of chapter 4, "Why many heads" (``notebooks/04-multihead-lab.ipynb``).

Each checker runs the reader's function under the guard (:func:`helpers.exercises.reader.call_watched`):
every function of the package is forbidden while it runs (the few a solution needs are named in
``allowed``), and so are PyTorch's fused attention and ``nn.MultiheadAttention``
(:data:`helpers.exercises.guard.ATTENTION`), so an answer that delegates fails by name, by whatever
route it reaches the function. Inputs, shapes and weights are drawn afresh at each call
(:func:`helpers.exercises.reader.fresh_generator`): no table of answers passes. Each typical mistake
is simulated on those inputs and named when the answer matches it: ``view(B, H, L, E)`` without
``transpose`` (heads that mix tokens), a merge without the transpose back, heads concatenated in the
wrong order, the scale of the whole model (or ``1/E``, or none), biases forgotten, ``x @ W`` for
``x @ W.T``, the softmax over the queries, the output projection left out, key/value heads counted as
query heads.

- :func:`check_split_heads`, :func:`check_merge_heads`: the two reshapes.
- :func:`check_multihead_attention`: the whole layer from scratch, with a layer's weights.
- :func:`buggy_multihead_attention`, :func:`check_view_fix`: the bug hunt (the fix of that function,
  not a layer written anew).
- :func:`check_parameter_count`: parameters of a layer (MHA, GQA, MQA), by formula.
- :func:`check_head_ablation`: the reader's ablation, re-run on a model the checker trains, and the
  prediction recorded before it (:func:`helpers.exercises.predictions.predict`).

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch04`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`): the model the
other chapters' checkers follow.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import math
import textwrap
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch04 import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.guard import ATTENTION
from helpers.exercises.messages import phrase
from helpers.exercises.predictions import recorded, reveal
from helpers.exercises.reader import Rejected, allclose, as_tensor, call_watched, checker, fresh_generator, fresh_int
from helpers.multihead import MultiHeadAttention

__all__ = ["check_split_heads", "check_merge_heads", "check_multihead_attention", "buggy_multihead_attention",
           "check_view_fix", "check_parameter_count", "check_head_ablation", "ABLATION"]

ABLATION = "ch04.head_ablation"
"""The key under which exercise 6's prediction is recorded — ``predict(ABLATION, head)``."""


def _reference_split(x: Tensor, num_heads: int) -> Tensor:
    batch, length, d_model = x.shape
    return x.view(batch, length, num_heads, d_model // num_heads).transpose(1, 2)  # (B, H, L, E)


def _head_count_and_size(gen: torch.Generator) -> tuple[int, int]:
    """A fresh ``(H, E)`` with ``H >= 2``, ``E >= 2`` and ``E != H`` (so that no two mistakes coincide)."""
    heads = fresh_int(2, 4, gen)
    e = fresh_int(2, 5, gen)
    return heads, e + 1 if e == heads else e


def _length(gen: torch.Generator, heads: int) -> int:
    """A fresh sequence length in 3 .. 7, other than ``heads`` (so that (B, L, H, E) is not (B, H, L, E))."""
    length = fresh_int(3, 6, gen)
    return 7 if length == heads else length


@checker
def check_split_heads(fn: Callable[[Tensor, int], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(x, num_heads)``: ``(B, L, D)`` -> ``(B, H, L, E)``, head ``h`` = features ``hE..(h+1)E-1``.

    Fresh shapes and values at each call; every package function is forbidden while ``fn`` runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    for _ in range(3):
        heads, e = _head_count_and_size(gen)
        batch, length = fresh_int(1, 3, gen), _length(gen, heads)
        d_model = heads * e
        x = torch.randn(batch, length, d_model, generator=gen)
        result = call_watched(fn, x.clone(), heads, forbidden=ATTENTION, language=language)
        out = as_tensor(result, phrase("ch04.what.heads"), language)
        right = _reference_split(x, heads)
        if allclose(out, right):
            continue
        if out.shape == (batch, length, heads, e):
            return CheckResult.of(False, "ch04.split.not_moved", language, shape=tuple(out.shape))
        if out.shape == right.shape and allclose(out, x.reshape(batch, heads, length, e)):
            return CheckResult.of(False, "ch04.split.no_transpose", language)
        if out.shape == right.shape and allclose(out, x.view(batch, length, e, heads).permute(0, 3, 1, 2)):
            return CheckResult.of(False, "ch04.split.strided", language)
        if out.shape == right.shape and allclose(out, right.flip(1)):
            return CheckResult.of(False, "ch04.split.reversed", language)
        if out.shape != right.shape:
            return CheckResult.of(False, "ch04.split.shape", language, expected=tuple(right.shape),
                                  got=tuple(out.shape))
        return CheckResult.of(False, "ch04.split.misplaced", language)
    return CheckResult.of(True, "ch04.split.passed", language)


@checker
def check_merge_heads(fn: Callable[[Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(heads)``: ``(B, H, L, E)`` -> ``(B, L, H*E)``, the inverse of the split.

    Fresh shapes and values at each call; every package function is forbidden while ``fn`` runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    for _ in range(3):
        heads, e = _head_count_and_size(gen)
        batch, length = fresh_int(1, 3, gen), _length(gen, heads)
        x = torch.randn(batch, heads, length, e, generator=gen)
        result = call_watched(fn, x.clone(), forbidden=ATTENTION, language=language)
        out = as_tensor(result, phrase("ch04.what.merged"), language)
        right = x.transpose(1, 2).reshape(batch, length, heads * e)
        if allclose(out, right):
            continue
        if out.shape == right.shape and allclose(out, x.reshape(batch, length, heads * e)):
            return CheckResult.of(False, "ch04.merge.no_transpose", language)
        if out.shape == right.shape and allclose(out, x.flip(1).transpose(1, 2).reshape(batch, length, heads * e)):
            return CheckResult.of(False, "ch04.merge.reversed", language)
        if out.shape == right.shape and allclose(out, x.permute(0, 2, 3, 1).reshape(batch, length, heads * e)):
            return CheckResult.of(False, "ch04.merge.interleaved", language)
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


_PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")


def _simulate(x: Tensor, layer: MultiHeadAttention, *, split: str = "right", merge: str = "right",
              scale: str = "head", softmax_dim: int | None = -1, no_bias: tuple[str, ...] = (),
              transposed: bool = True, output_projection: bool = True) -> Tensor:
    """Multi-head self-attention with ``layer``'s weights, written right or with one named mistake.

    Args:
        x: The input ``(B, L, D)``.
        layer: The layer whose projections are used.
        split: ``"right"`` (view ``(B, L, H, E)``, transpose), ``"no_transpose"`` (view ``(B, H, L, E)``),
            ``"transposed_wrong_view"`` (view ``(B, H, L, E)``, then transpose).
        merge: ``"right"``, ``"no_transpose"``, ``"reversed"`` (heads in reverse order),
            ``"interleaved"`` (each head's features spread every H-th place).
        scale: ``"head"`` (1/√E), ``"model"`` (1/√D), ``"e"`` (1/E), ``"none"``.
        softmax_dim: The softmax's axis; ``None``: no softmax.
        no_bias: The projections whose bias is left out.
        transposed: ``x @ W.T`` (right) or ``x @ W``.
        output_projection: Whether ``o_proj`` is applied.

    Returns:
        ``(B, L, D)``.
    """
    b, length, d = x.shape
    h = layer.num_heads
    e = d // h

    def project(name: str, t: Tensor) -> Tensor:
        proj = getattr(layer, name)
        weight = proj.weight if transposed else proj.weight.T
        return F.linear(t, weight, None if name in no_bias else proj.bias)

    def cut(t: Tensor) -> Tensor:
        if split == "no_transpose":
            return t.reshape(b, h, length, e)  # (B, H, L, E) of the wrong numbers
        if split == "transposed_wrong_view":
            return t.reshape(b, h, length, e).transpose(1, 2)  # (B, L, H, E)
        return t.view(b, length, h, e).transpose(1, 2)  # (B, H, L, E)

    q, k, v = (cut(project(name, x)) for name in _PROJECTIONS[:3])
    factor = {"head": e ** -0.5, "model": d ** -0.5, "e": 1.0 / e, "none": 1.0}[scale]
    scores = q @ k.transpose(-2, -1) * factor  # (B, H, L, L)
    weights = scores if softmax_dim is None else torch.softmax(scores, dim=softmax_dim)
    heads = weights @ v  # (B, H, L, E)
    if merge == "no_transpose":
        merged = heads.reshape(b, length, d)
    elif merge == "reversed":
        merged = heads.flip(1).transpose(1, 2).reshape(b, length, d)
    elif merge == "interleaved":
        merged = heads.permute(0, 2, 3, 1).reshape(b, length, d)
    else:
        merged = heads.transpose(1, 2).reshape(b, length, d)  # (B, L, D)
    return project("o_proj", merged) if output_projection else merged


def _mistakes(layer: MultiHeadAttention) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(message key, its fields, the mistake's settings of _simulate)``, in the order they are tried."""
    table: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("ch04.layer.no_transpose", {}, {"split": "no_transpose", "merge": "no_transpose"}),
        ("ch04.layer.split_no_transpose", {}, {"split": "no_transpose"}),
        ("ch04.layer.merge_no_transpose", {}, {"merge": "no_transpose"}),
        ("ch04.layer.transposed_wrong_view", {}, {"split": "transposed_wrong_view", "merge": "no_transpose"}),
        ("ch04.layer.transposed_wrong_view", {}, {"split": "transposed_wrong_view"}),
        ("ch04.layer.heads_reversed", {}, {"merge": "reversed"}),
        ("ch04.layer.heads_interleaved", {}, {"merge": "interleaved"}),
        ("ch04.layer.model_scale", {}, {"scale": "model"}),
        ("ch04.layer.scale_e", {}, {"scale": "e"}),
        ("ch04.layer.unscaled", {}, {"scale": "none"}),
        ("ch04.layer.softmax_axis", {}, {"softmax_dim": -2}),
        ("ch04.layer.no_softmax", {}, {"softmax_dim": None}),
        ("ch04.layer.no_output_projection", {}, {"output_projection": False}),
        ("ch04.layer.weight_not_transposed", {}, {"transposed": False}),
        ("ch04.layer.weight_not_transposed", {}, {"transposed": False, "no_bias": _PROJECTIONS}),
    ]
    if layer.q_proj.bias is not None:  # k_proj's bias adds q·b_k to every score of a query: the softmax ignores it
        with_effect = ("q_proj", "v_proj", "o_proj")
        for size in range(len(with_effect), 0, -1):
            for missing in itertools.combinations(with_effect, size):
                table.append(("ch04.layer.no_bias", {"names": ", ".join(missing)}, {"no_bias": missing}))
    return table


def _fresh_layer(d_model: int, heads: int, gen: torch.Generator) -> MultiHeadAttention:
    """A layer with fresh weights and clearly non-zero biases (so that a forgotten bias shows)."""
    layer = MultiHeadAttention(d_model, heads)
    with torch.no_grad():
        for name in _PROJECTIONS:
            proj = getattr(layer, name)
            proj.weight.copy_(torch.randn(proj.weight.shape, generator=gen) / math.sqrt(d_model))
            proj.bias.copy_(torch.randn(proj.bias.shape, generator=gen) * 0.5)
    return layer.eval()


def _close(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=1e-4, atol=1e-5))


def _run_layers(fn: Callable[..., Any], language: str | None, override: dict[str, str] | None = None
                ) -> CheckResult | None:
    """Run ``fn(x, layer)`` on fresh layers; the verdict of the first mistake, or ``None`` when right."""
    gen = fresh_generator()
    heads, e = _head_count_and_size(gen)
    other = 6 - heads if heads != 3 else 2  # a second head count, different from the first
    other_e = fresh_int(2, 5, gen)
    other_e = other_e + 1 if other_e == other else other_e
    for heads, e in ((heads, e), (other, other_e), (1, fresh_int(3, 8, gen))):
        d_model = heads * e
        layer = _fresh_layer(d_model, heads, gen)
        x = torch.randn(fresh_int(1, 3, gen), _length(gen, heads), d_model, generator=gen)
        with torch.no_grad():
            right = _simulate(x, layer)
            result = call_watched(fn, x.clone(), layer, forbidden=ATTENTION, language=language)
        out = as_tensor(result, phrase("ch04.what.output"), language)
        if _close(out, right):
            continue
        where = phrase("ch04.layer.where", embed_dim=d_model, heads=heads, plural="" if heads == 1 else "s")
        if out.shape != right.shape:
            return CheckResult.of(False, "ch04.layer.shape", language, where=where, expected=tuple(right.shape),
                                  got=tuple(out.shape))
        with torch.no_grad():
            for key, fields, settings in _mistakes(layer):
                if _close(out, _simulate(x, layer, **settings)):
                    key = (override or {}).get(key, key)
                    return CheckResult.of(False, key, language, where=where, **fields)
        return CheckResult.of(False, "ch04.layer.differs", language, where=where,
                              diff=(out.double() - right.double()).abs().max().item())
    return None


@checker
def check_multihead_attention(fn: Callable[[Tensor, MultiHeadAttention], Tensor], *,
                              language: str | None = None) -> CheckResult:
    """Check ``fn(x, layer)``: multi-head self-attention from scratch with ``layer``'s projections.

    Every package function (``layer.forward`` among them) and PyTorch's attention are forbidden while
    ``fn`` runs: the answer builds it from ``q_proj``, ``k_proj``, ``v_proj`` and ``o_proj``. Three
    fresh layers (two head counts, then one head), fresh inputs; a wrong output is compared with each
    typical mistake simulated on the same inputs, and the one it matches is named.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    failure = _run_layers(fn, language)
    return CheckResult.of(True, "ch04.layer.passed", language) if failure is None else failure


_FIX_MESSAGES = {
    "ch04.layer.no_transpose": "ch04.fix.unchanged",
    "ch04.layer.split_no_transpose": "ch04.fix.split_left",
    "ch04.layer.merge_no_transpose": "ch04.fix.merge_left",
}


def _statements(source_fn: Callable[..., Any]) -> list[ast.stmt] | None:
    """The top-level statements of a function's body (its docstring left out), or ``None``."""
    try:
        source = textwrap.dedent(inspect.getsource(source_fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _returns(statements: list[ast.stmt]) -> int:
    """How many ``return`` statements the function has (those of nested functions left out)."""
    count = 0
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            count += 1
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return count


def _bug_lines() -> tuple[list[str], set[int]]:
    """The buggy function's statements (as ``ast.dump``) and the indices of the lines with the bug."""
    statements = _statements(buggy_multihead_attention) or []
    dumps = [ast.dump(s) for s in statements]
    wrong = {i for i, s in enumerate(statements) if "view" in ast.dump(s) or "reshape" in ast.dump(s)}
    return dumps, wrong


@checker
def check_view_fix(fn: Callable[[Tensor, MultiHeadAttention], Tensor], *, language: str | None = None) -> CheckResult:
    """Check the fix of :func:`buggy_multihead_attention`: its lines that are right kept, the wrong ones fixed.

    The fixed function is run on fresh layers as in :func:`check_multihead_attention`; an output that
    is still the bug's, or that fixes only the split or only the merge, is named. A right output must
    also come from the buggy function fixed, not from a layer written anew (exercise 3's answer): its
    source must keep, unchanged and in order, every line of the buggy function that has no bug, and
    return once, at the end.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    failure = _run_layers(fn, language, override=_FIX_MESSAGES)
    if failure is not None:
        return failure
    statements = _statements(fn)
    if statements is None:
        return CheckResult.of(False, "ch04.fix.no_source", language)
    dumps, wrong = _bug_lines()
    kept = [dump for i, dump in enumerate(dumps) if i not in wrong]
    theirs = {ast.dump(s) for s in statements}
    missing = sum(1 for dump in kept if dump not in theirs)
    if missing:
        return CheckResult.of(False, "ch04.fix.rewritten", language, missing=missing, total=len(kept))
    if _returns(statements) != 1 or ast.dump(statements[-1]) != dumps[-1]:
        return CheckResult.of(False, "ch04.fix.early_return", language)
    return CheckResult.of(True, "ch04.fix.passed", language)


def _parameters(d: int, h: int, hkv: int, bias: bool) -> int:
    kv = hkv * (d // h)
    return 2 * d * d + 2 * d * kv + ((2 * d + 2 * kv) if bias else 0)


@checker
def check_parameter_count(fn: Callable[[int, int, int, bool], int], *, language: str | None = None) -> CheckResult:
    """Check ``fn(embed_dim, num_heads, num_kv_heads, bias) -> number of parameters`` of a layer.

    Fresh layouts at each call: multi-head, grouped-query and multi-query, with and without biases.
    Every package function (building a :class:`~helpers.multihead.MultiHeadAttention` among them),
    ``torch.nn.Linear`` and PyTorch's attention layers are forbidden while ``fn`` runs: count by formula.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    layouts = []
    for kind, bias in (("mha", True), ("gqa", True), ("mqa", False), ("gqa", False), ("mqa", True)):
        if kind == "gqa":
            hkv = fresh_int(2, 4, gen)
            h = hkv * fresh_int(2, 3, gen)  # 1 < H_kv < H
        else:
            h = fresh_int(2, 12, gen)
            hkv = h if kind == "mha" else 1
        layouts.append((h * fresh_int(2, 16, gen), h, hkv, bias))
    for d, h, hkv, bias in layouts:
        result = call_watched(fn, d, h, hkv, bias, forbidden=ATTENTION + ("torch.nn.Linear",), language=language)
        if isinstance(result, bool) or not isinstance(result, int):
            return CheckResult.of(False, "ch04.count.not_int", language, type=type(result).__name__,
                                  value=repr(result))
        right = _parameters(d, h, hkv, bias)
        if result == right:
            continue
        e = d // h
        kv = hkv * e
        layout = phrase("ch04.count.layout", d=d, h=h, hkv=hkv, bias=bias)
        biases = 2 * d + 2 * kv
        if hkv != h and result == _parameters(d, h, h, bias):
            return CheckResult.of(False, "ch04.count.full_kv", language, layout=layout, result=result, hkv=hkv, d=d,
                                  kv=kv)
        if result == 2 * d * d + 2 * d * hkv * d + ((2 * d + 2 * hkv * d) if bias else 0):
            return CheckResult.of(False, "ch04.count.kv_times_d", language, layout=layout, hkv=hkv, d=d, kv=kv)
        if bias and result == right - biases:
            return CheckResult.of(False, "ch04.count.no_bias", language, layout=layout, n=biases)
        if not bias and result == _parameters(d, h, hkv, True):
            return CheckResult.of(False, "ch04.count.bias_counted", language, layout=layout)
        if result == right - d * d - (d if bias else 0):
            return CheckResult.of(False, "ch04.count.no_output", language, layout=layout)
        if result in (right * h, 4 * d * d * h):
            return CheckResult.of(False, "ch04.count.times_heads", language, layout=layout)
        return CheckResult.of(False, "ch04.count.wrong", language, layout=layout, expected=right, got=result)
    return CheckResult.of(True, "ch04.count.passed", language)


def _ablation(run: Any) -> list[float]:
    """The checker's own ablation: R² with each head's output zeroed in turn (``head_mask``)."""
    heads = run.num_heads
    return [run.score(1 - torch.eye(heads)[h]) for h in range(heads)]


def _ablation_verdict(fn: Callable[[Any], Any], run: Any, language: str | None) -> list[float]:
    """Run the reader's ablation on ``run`` and compare with the checker's; :class:`Rejected` names a mistake."""
    from helpers.experiments.heads_training import FilterRun

    right = _ablation(run)
    result = call_watched(fn, run, forbidden=ATTENTION, allowed=(FilterRun.score,), language=language)
    if isinstance(result, Tensor):
        result = result.tolist()
    if not isinstance(result, (list, tuple)) or len(result) != run.num_heads or not all(
            isinstance(a, (int, float)) and not isinstance(a, bool) for a in result):
        raise Rejected(CheckResult.of(False, "ch04.ablation.length", language, n=run.num_heads))
    if all(abs(float(a) - b) <= 1e-4 for a, b in zip(result, right)):
        return right
    if all(abs(float(a) - run.r2) < 1e-4 for a in result):
        raise Rejected(CheckResult.of(False, "ch04.ablation.nothing_removed", language))
    kept_one = [run.score(torch.eye(run.num_heads)[h]) for h in range(run.num_heads)]
    if all(abs(float(a) - b) < 1e-4 for a, b in zip(result, kept_one)):
        raise Rejected(CheckResult.of(False, "ch04.ablation.kept_one", language))
    raise Rejected(CheckResult.of(False, "ch04.ablation.differs", language))


@checker
def check_head_ablation(fn: Callable[[Any], list[float]], run: Any, *, language: str | None = None) -> CheckResult:
    """Check ``fn(run) -> [R² with head h removed, for each h]`` (with ``head_mask``), and compare the
    prediction recorded before it (``predict(ch04.ABLATION, head)``) with the result.

    A run that :func:`helpers.experiments.heads_training.train_filter` did not return in this session,
    or one changed since (weights, data, R²), is refused. No prediction recorded: refused before
    anything is run or shown. Then ``fn`` runs on a small
    model the checker trains itself (fresh seed and head count: no table of numbers passes), then on
    ``run``; each result is compared with the checker's own ablation of the same model. Only
    ``run.score`` of the package may be called (``head_ablation``, ``break_one_head`` and the rest are
    forbidden). The result is shown, and the exercise's prediction marked as revealed, only once the
    ablation is right; a prediction recorded after that is ``late`` and is told so.

    Args:
        fn: The reader's function.
        run: The trained run the reader predicted about (``helpers.experiments.heads_training.train_filter``).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    from helpers.experiments import heads_training as ht

    if not isinstance(run, ht.FilterRun) or type(run.model) is not ht.FilterHeads:
        return CheckResult.of(False, "ch04.ablation.not_a_run", language, type=type(run).__name__)
    if not ht.trained_by_train_filter(run):
        return CheckResult.of(False, "ch04.ablation.not_trained", language)
    prediction = recorded(ABLATION)
    if prediction is None:
        return CheckResult.of(False, "ch04.ablation.no_prediction", language, key=ABLATION, last=run.num_heads - 1)
    value = prediction.value
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < run.num_heads:
        return CheckResult.of(False, "ch04.ablation.bad_prediction", language, last=run.num_heads - 1,
                              got=repr(value))
    gen = fresh_generator()
    others = [h for h in range(2, 6) if h != run.num_heads]  # the probe never has the run's number of heads
    heads = others[fresh_int(0, len(others) - 1, gen)]
    probe = ht.train_filter(heads, seed=fresh_int(0, 10_000, gen), embed_dim=heads * fresh_int(2, 4, gen),
                            steps=15, num_test=64)
    _ablation_verdict(fn, probe, language)
    right = _ablation_verdict(fn, run, language)
    reveal(ABLATION)
    worst = min(range(run.num_heads), key=lambda h: right[h])
    if prediction.late:
        key = "passed_late"
    else:
        key = "passed_predicted" if worst == value else "passed_surprised"
    return CheckResult.of(True, f"ch04.ablation.{key}", language, worst=worst, without=right[worst], full=run.r2,
                          predicted=value)
