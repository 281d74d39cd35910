"""Exercise 4 of lab 6.3-6.6: the RoPE bug hunt.

Contract (stated in the lab): ``fixed_rope_attention(x, layer, rope)`` is :func:`.buggy_rope_attention` with its two
bugs fixed: causal self-attention with ``layer``'s projections and ``rope``'s half-split rotation of the queries and
keys (not the values), ``(B, L, D)``. The layer's own forward and transformers are refused; the rotation is allowed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch06_memory import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import TRANSFORMERS
from ..messages import phrase
from ..reader import as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .common import close, seeded_layer, split

__all__ = ["buggy_rope_attention", "check_rope_fix"]

CASES = (("2 heads of 4 features, 6 tokens", dict(heads=2, head_dim=4, length=6, batch=2)),
         ("3 heads of 6 features, 5 tokens", dict(heads=3, head_dim=6, length=5, batch=1)))


def buggy_rope_attention(x: Tensor, layer: Any, rope: Any) -> Tensor:
    """Causal self-attention with RoPE, with ``layer``'s weights, and two bugs (lab exercise 4).

    Shape:
        x ``(B, L, D)`` -> ``(B, L, D)``.
    """
    b, length, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q, k, v = (p(x).view(b, length, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    cos, sin = rope(length)  # (1, L, E) each, from the package's RotaryEmbedding
    cos, sin = cos[:, None], sin[:, None]  # (1, 1, L, E)

    def quarter_turn(t: Tensor) -> Tensor:  # (t0, t1, t2, t3, ...) -> (-t1, t0, -t3, t2, ...)
        return torch.stack((-t[..., 1::2], t[..., 0::2]), dim=-1).flatten(-2)

    q, k, v = (t * cos + quarter_turn(t) * sin for t in (q, k, v))  # rotate by the positions' angles
    scores = q @ k.transpose(-2, -1) / math.sqrt(e)  # (B, H, L, L)
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    return layer.o_proj((weights @ v).transpose(1, 2).reshape(b, length, d))  # (B, L, D)


def _neighbours(x: Tensor) -> Tensor:
    """``(x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)``: a 90-degree turn of each neighbour pair."""
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


@torch.no_grad()
def _attention(x: Tensor, layer: Any, rope: Any, *, pairing: str, rotate_v: bool, causal: bool = True,
               rotate: str = "qk") -> Tensor:
    """Causal RoPE attention with one ``pairing``: ``"half"`` (rotate_half with the table), ``"neighbours"`` (the
    quarter turn with the half-split table: the bug), ``"interleaved"`` (the quarter turn with the table made
    interleaved: a consistent RoPE, but not the layer's); ``rotate``: ``"qk"``, ``"q"`` or ``"k"``."""
    from helpers.positional import rotate_half

    b, length, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q, k, v = (split(p(x), h, e) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    cos, sin = (t[:, None] for t in rope(length))  # (1, 1, L, E)
    if pairing == "interleaved":  # the angle of pair i at features 2i and 2i + 1
        cos, sin = (t[..., : e // 2].repeat_interleave(2, dim=-1) for t in (cos, sin))
    turn = rotate_half if pairing == "half" else _neighbours
    q = q * cos + turn(q) * sin if "q" in rotate else q
    k = k * cos + turn(k) * sin if "k" in rotate else k
    v = v * cos + turn(v) * sin if rotate_v else v
    scores = q @ k.transpose(-2, -1) / math.sqrt(e)  # (B, H, L, L)
    if causal:
        scores = scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("-inf"))
    return layer.o_proj((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, length, d))


def _mistake(key: str, fields: dict[str, Any], **how: Any) -> Mistake:
    return Mistake(key, lambda x, layer, rope: _attention(x, layer, rope, **how), fields)


MISTAKES = (
    _mistake("ch06_memory.fix.both", {"pairing": "pairing_bug", "v": "v_bug"}, pairing="neighbours", rotate_v=True),
    _mistake("ch06_memory.fix.v_fixed", {"pairing": "pairing_bug"}, pairing="neighbours", rotate_v=False),
    _mistake("ch06_memory.fix.pairing_fixed", {"v": "v_bug"}, pairing="half", rotate_v=True),
    _mistake("ch06_memory.fix.interleaved", {}, pairing="interleaved", rotate_v=False),
    _mistake("ch06_memory.fix.interleaved", {}, pairing="interleaved", rotate_v=True),
    _mistake("ch06_memory.fix.one_side", {"side": "k"}, pairing="half", rotate_v=False, rotate="q"),
    _mistake("ch06_memory.fix.one_side", {"side": "q"}, pairing="half", rotate_v=False, rotate="k"),
    _mistake("ch06_memory.fix.no_mask", {}, pairing="half", rotate_v=False, causal=False),
)
"""The fixes that are not one; a field ``pairing`` or ``v`` names a phrase of the catalogue."""


@checker
def check_rope_fix(fn: Callable[[Tensor, Any, Any], Tensor]) -> CheckResult:
    """Check the fixed version of :func:`.buggy_rope_attention` against ``layer(x, is_causal=True, rope=rope)``.

    Named layers and a fresh one. When the output is wrong, the checker says which of the two bugs is left (the
    neighbour pairing used with the half-split table, RoPE applied to the values, or both), or which "fix" is not one:
    a consistent interleaved RoPE (not the layer's convention), the query or the key left unrotated, the causal mask
    gone.

    Args:
        fn: The reader's fixed function ``fn(x, layer, rope) -> (B, L, D)``.

    Returns:
        The verdict.
    """
    from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb, rotate_half

    allowed = (RotaryEmbedding.forward, apply_rotary_pos_emb, rotate_half, buggy_rope_attention)

    def one(case: Case) -> CheckResult | None:
        heads, head_dim, length = case["heads"], case["head_dim"], case["length"]
        layer = seeded_layer(draw_int(0, 2**31, case.generator), heads * head_dim, heads)
        rope, x = RotaryEmbedding(head_dim), case.randn(case["batch"], length, heads * head_dim)
        with torch.no_grad():
            right = layer(x, is_causal=True, rope=rope)[0]
            out = as_tensor(call_watched(fn, x.clone(), layer, rope, allowed=allowed, forbidden=TRANSFORMERS),
                            phrase("ch06_memory.what.output")).detach()
        if close(out, right):
            return None
        where = phrase("ch06_memory.fix.where", embed_dim=heads * head_dim, heads=heads, length=length)
        if out.shape != right.shape:
            return verdict(False, "ch06_memory.fix.shape", where=where, expected=tuple(right.shape),
                           got=tuple(out.shape))
        mistake = first_mistake(out, MISTAKES, x, layer, rope, same=close)
        if mistake is not None:
            fields = {name: phrase(f"ch06_memory.fix.{value}") if value.endswith("_bug") else value
                      for name, value in mistake.fields.items()}
            return verdict(False, mistake.key, where=where, **fields)
        return verdict(False, "ch06_memory.fix.differs", where=where, diff=(out - right).abs().max().item())

    fresh = lambda gen: dict(heads=draw_int(1, 4, gen), head_dim=2 * draw_int(2, 6, gen),  # noqa: E731
                             length=draw_int(3, 10, gen), batch=draw_int(1, 3, gen))
    return passed_unless(each_case(one, CASES, seed=6340, fresh=fresh), "ch06_memory.fix.passed")
