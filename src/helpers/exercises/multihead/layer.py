"""Exercise 3 of lab 4: multi-head self-attention from scratch, and the one simulator of its mistakes.

Contract (stated in the lab): ``my_multihead(x, layer)`` takes ``x`` ``(B, L, D)`` and a
:class:`~helpers.multihead.MultiHeadAttention` ``layer``, and returns ``(B, L, D)``: self-attention
with the layer's ``q_proj``, ``k_proj``, ``v_proj`` and ``o_proj`` (called, biases included), heads
split as in exercise 1 with ``layer.num_heads`` heads of ``layer.head_dim`` features, scores scaled
by ``1/√head_dim``, no mask. (``layer.scale`` is ``None``, which means that default.)

:func:`.attend` is multi-head attention written as a pipeline of stages (project, split, score,
scale, normalise, merge, output projection); a mistake replaces one or two stages. Chapter 3's bug
hunt (:mod:`helpers.exercises.scaling.multihead_fix`) and this lab's exercises 3 and 4 name their
mistakes with it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch04 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import phrase
from ..reader import as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .heads import split

__all__ = ["attend", "check_multihead_attention", "run_layers", "fresh_layer", "PROJECTIONS"]

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")


def split_flat(t: Tensor, heads: int) -> Tensor:
    """``view(B, H, L, E)`` without the transpose: each head's rows are pieces of several tokens."""
    batch, length, d_model = t.shape
    return t.reshape(batch, heads, length, d_model // heads)


def _merge(o: Tensor, shape: torch.Size) -> Tensor:
    return o.transpose(1, 2).reshape(shape)  # (B, H, L, E) -> (B, L, H, E) -> (B, L, D)


def merge_flat(o: Tensor, shape: torch.Size) -> Tensor:
    """``(B, H, L, E)`` reshaped straight to ``(B, L, D)``."""
    return o.reshape(shape)


def attend(x: Tensor, layer: Any, *, project: Callable[[Any, Tensor], Tensor] | None = None,
           split_heads: Callable[[Tensor, int], Tensor] = split,
           merge_heads: Callable[[Tensor, torch.Size], Tensor] = _merge,
           scale: float | None = None, keys_first: bool = False, softmax_dim: int | None = -1,
           output: bool = True) -> Tensor:
    """Multi-head self-attention with ``layer``'s projections, right by default; a mistake replaces a stage.

    Args:
        x: The input ``(B, L, D)``.
        layer: A layer with ``num_heads`` and ``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``.
        project: ``project(proj, t)`` (default: ``proj(t)``).
        split_heads: ``(B, L, D) -> (B, H, L, E)``.
        merge_heads: ``(B, H, L, E)`` and the shape ``(B, L, D)`` -> ``(B, L, D)``.
        scale: The factor on ``q·k`` (default ``1/√E``).
        keys_first: Whether the scores are ``K Qᵀ`` instead of ``Q Kᵀ``.
        softmax_dim: The softmax's axis; ``None``: no softmax.
        output: Whether ``o_proj`` is applied.

    Returns:
        ``(B, L, D)``.
    """
    project = project or (lambda proj, t: proj(t))
    heads = layer.num_heads
    q, k, v = (split_heads(project(getattr(layer, name), x), heads) for name in PROJECTIONS[:3])  # (B, H, L, E)
    factor = q.shape[-1] ** -0.5 if scale is None else scale
    scores = (k @ q.transpose(-2, -1) if keys_first else q @ k.transpose(-2, -1)) * factor  # (B, H, L, L)
    weights = scores if softmax_dim is None else torch.softmax(scores, dim=softmax_dim)
    merged = merge_heads(weights @ v, x.shape)  # (B, L, D)
    return project(layer.o_proj, merged) if output else merged


def _project_untransposed(proj: Any, t: Tensor) -> Tensor:
    return F.linear(t, proj.weight.T, proj.bias)


def _project_untransposed_no_bias(proj: Any, t: Tensor) -> Tensor:
    return t @ proj.weight


def _mistake(key: str, **stages: Any) -> Mistake:
    return Mistake(key, lambda x, layer: attend(x, layer, **stages))


MISTAKES = (
    _mistake("ch04.layer.no_transpose", split_heads=split_flat, merge_heads=merge_flat),
    _mistake("ch04.layer.split_no_transpose", split_heads=split_flat),
    _mistake("ch04.layer.merge_no_transpose", merge_heads=merge_flat),
    _mistake("ch04.layer.transposed_wrong_view", split_heads=lambda t, h: split_flat(t, h).transpose(1, 2),
             merge_heads=merge_flat),
    _mistake("ch04.layer.transposed_wrong_view", split_heads=lambda t, h: split_flat(t, h).transpose(1, 2)),
    _mistake("ch04.layer.heads_reversed", merge_heads=lambda o, shape: _merge(o.flip(1), shape)),
    _mistake("ch04.layer.heads_interleaved", merge_heads=lambda o, shape: o.permute(0, 2, 3, 1).reshape(shape)),
    Mistake("ch04.layer.model_scale", lambda x, layer: attend(x, layer, scale=x.shape[-1] ** -0.5)),
    Mistake("ch04.layer.scale_e", lambda x, layer: attend(x, layer, scale=layer.num_heads / x.shape[-1])),
    _mistake("ch04.layer.unscaled", scale=1.0),
    _mistake("ch04.layer.softmax_axis", softmax_dim=-2),
    _mistake("ch04.layer.no_softmax", softmax_dim=None),
    _mistake("ch04.layer.no_output_projection", output=False),
    _mistake("ch04.layer.weight_not_transposed", project=_project_untransposed),
    _mistake("ch04.layer.weight_not_transposed", project=_project_untransposed_no_bias),
) + tuple(  # k_proj's bias adds q·b_k to every score of a query: the softmax ignores it
    Mistake("ch04.layer.no_bias", lambda x, layer, missing=missing: attend(
        x, layer, project=lambda proj, t: F.linear(t, proj.weight, None if proj in [
            getattr(layer, name) for name in missing] else proj.bias)), {"names": ", ".join(missing)})
    for size in (3, 2, 1) for missing in itertools.combinations(("q_proj", "v_proj", "o_proj"), size))
"""The typical mistakes of a multi-head layer, in the order they are tried."""

LAYERS = (  # (name, sizes): two head counts with E != H, then one head
    ("3 heads of 4 features", dict(heads=3, e=4, batch=2, length=5)),
    ("2 heads of 5 features", dict(heads=2, e=5, batch=1, length=4)),
    ("one head of 6 features", dict(heads=1, e=6, batch=2, length=3)),
)


def _fresh_sizes(gen: torch.Generator) -> dict[str, int]:
    heads, e = draw_int(2, 4, gen), draw_int(2, 5, gen)
    length = draw_int(3, 6, gen)
    return dict(heads=heads, e=e + 1 if e == heads else e, batch=draw_int(1, 3, gen),
                length=7 if length == heads else length)


def fresh_layer(d_model: int, heads: int, gen: torch.Generator, dtype: torch.dtype = torch.float32) -> Any:
    """A :class:`~helpers.multihead.MultiHeadAttention` with weights drawn with ``gen`` and clearly non-zero biases
    (so that a forgotten bias shows)."""
    from helpers.multihead import MultiHeadAttention

    layer = MultiHeadAttention(d_model, heads).to(dtype)
    with torch.no_grad():
        for name in PROJECTIONS:
            proj = getattr(layer, name)
            proj.weight.copy_(torch.randn(proj.weight.shape, generator=gen, dtype=torch.float64) / math.sqrt(d_model))
            proj.bias.copy_(torch.randn(proj.bias.shape, generator=gen, dtype=torch.float64) * 0.5)
    return layer.eval()


def _close(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=1e-4, atol=1e-5))


def run_layers(fn: Callable[..., Any], seed: int, rename: dict[str, str] | None = None) -> CheckResult | None:
    """Run ``fn(x, layer)`` on the named layers and a fresh one; the verdict of the first mistake, or ``None``.

    Args:
        fn: The reader's function.
        seed: The checker's seed.
        rename: Message keys to use instead of ``MISTAKES``' (the bug hunt's own words).
    """
    def one(case: Case) -> CheckResult | None:
        heads, d_model = case["heads"], case["heads"] * case["e"]
        layer = fresh_layer(d_model, heads, case.generator)
        x = case.randn(case["batch"], case["length"], d_model)
        with torch.no_grad():
            right = attend(x, layer)
            out = as_tensor(call_watched(fn, x.clone(), layer, forbidden=ATTENTION), phrase("ch04.what.output"))
        if _close(out, right):
            return None
        where = phrase("ch04.layer.where", embed_dim=d_model, heads=heads, plural="" if heads == 1 else "s")
        if out.shape != right.shape:
            return verdict(False, "ch04.layer.shape", where=where, expected=tuple(right.shape), got=tuple(out.shape))
        with torch.no_grad():
            mistake = first_mistake(out, MISTAKES, x, layer, same=_close)
        if mistake is not None:
            return verdict(False, (rename or {}).get(mistake.key, mistake.key), where=where, **mistake.fields)
        diff = (out.double() - right.double()).abs().max().item()
        return verdict(False, "ch04.layer.differs", where=where, diff=diff)

    return each_case(one, LAYERS, seed=seed, fresh=_fresh_sizes)


@checker
def check_multihead_attention(fn: Callable[[Tensor, Any], Tensor]) -> CheckResult:
    """Check ``fn(x, layer)``: multi-head self-attention from scratch with ``layer``'s projections.

    Every package function (``layer.forward`` among them) and PyTorch's attention are refused while ``fn``
    runs. Three named layers (two head counts, then one head) and a fresh one; a wrong output is compared
    with each typical mistake (``MISTAKES``) simulated on the same inputs, and the one it matches is named.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    return passed_unless(run_layers(fn, seed=4300), "ch04.layer.passed")
