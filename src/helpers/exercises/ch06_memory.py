"""Checkers for the exercises of chapter 6.3–6.5, "memory, decoding and position"
(``notebooks/06-memory-position-lab.ipynb``).

Each checker runs the reader's function under :func:`helpers.exercises.guard.package_disabled`,
so an answer that calls the package's own implementation of the thing practised fails by name;
the reference is computed outside that block. The messages name the typical mistakes.

- :func:`check_decode_step`: one KV-cache decoding step from scratch, against the full causal pass
  (names a cache that is never appended to, a position that restarts at 0, a causal mask that hides
  the cache from the single new query, key/value heads shared the wrong way).
- :func:`check_cache_bytes`: the KV cache of real model shapes by formula, against
  :func:`helpers.memory.kv_cache_bytes` (names the missing factor 2, layers, bytes per element,
  query heads counted instead of key/value heads).
- :func:`check_rope`: RoPE from scratch, against :func:`helpers.positional.apply_rotary_pos_emb`,
  and the offset property (the score depends only on ``m - n``).
- :func:`buggy_rope_attention`, :func:`check_rope_fix`: the bug hunt (interleaved pairing with a
  half-split table, and RoPE applied to the values); the checker says which bug is left.
- :func:`check_extrapolation_ranking`: the reader's accuracy past twice the training length, and
  the ranking of the encodings they predicted before the run.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch06_memory`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch06_memory import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.guard import TRANSFORMERS
from helpers.exercises.messages import LANGUAGES, phrase
from helpers.exercises.reader import (
    Rejected,
    allclose,
    as_tensor,
    call_reader,
    call_watched,
    call_without_package,
    checker,
)
from helpers.multihead import KVCache, MultiHeadAttention
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb, rotate_half

__all__ = ["check_decode_step", "check_cache_bytes", "check_rope", "buggy_rope_attention", "check_rope_fix",
           "check_extrapolation_ranking"]


def _close(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=1e-4, atol=1e-5))


def _split(t: Tensor, heads: int, head_dim: int) -> Tensor:
    batch, length, _ = t.shape
    return t.view(batch, length, heads, head_dim).transpose(1, 2)  # (B, heads, L, E)


# ----------------------------------------------------------------------------------------------
# Exercise 1: one decoding step with a KV cache
# ----------------------------------------------------------------------------------------------


@torch.no_grad()
def _simulated_decode(layer: MultiHeadAttention, rope: RotaryEmbedding, x: Tensor, prefix: int, *,
                      append: bool = True, position: str = "right", mask: str = "none",
                      kv_map: str = "interleave") -> Tensor:
    """Decode tokens ``prefix .. T-1`` of ``x`` one by one, right or with one named mistake.

    ``position``: "right" (the cache's length), "zero" (restarts at 0), "after" (read after appending).
    ``mask``: "none" (the new query sees every key) or "top_left" (it sees key 0 only).
    ``kv_map``: "interleave" (query head h uses key/value head h // groups) or "tile" (h % H_kv).
    """
    batch, length, _ = x.shape
    heads, kv_heads, e = layer.num_heads, layer.num_kv_heads, layer.head_dim
    q = _split(layer.q_proj(x), heads, e)  # (B, H, T, E)
    k = _split(layer.k_proj(x), kv_heads, e)  # (B, H_kv, T, E)
    v = _split(layer.v_proj(x), kv_heads, e)  # (B, H_kv, T, E)
    cos, sin = rope(length + 1)  # (1, T + 1, E)
    keys = apply_rotary_pos_emb(q[:, :, :prefix], k[:, :, :prefix], cos[:, :prefix], sin[:, :prefix])[1]
    values = v[:, :, :prefix]
    groups = heads // kv_heads
    outs = []
    for p in range(prefix, length):
        where = {"right": p, "zero": 0, "after": p + 1}[position]
        qp, kp = apply_rotary_pos_emb(q[:, :, p:p + 1], k[:, :, p:p + 1], cos[:, where:where + 1],
                                      sin[:, where:where + 1])  # (B, H, 1, E), (B, H_kv, 1, E)
        k_all = torch.cat((keys, kp), dim=2)  # (B, H_kv, S, E)
        v_all = torch.cat((values, v[:, :, p:p + 1]), dim=2)
        if append:
            keys, values = k_all, v_all
        if kv_map == "interleave":
            k_all, v_all = k_all.repeat_interleave(groups, dim=1), v_all.repeat_interleave(groups, dim=1)
        else:
            k_all, v_all = k_all.repeat(1, groups, 1, 1), v_all.repeat(1, groups, 1, 1)  # (B, H, S, E)
        scores = qp @ k_all.transpose(-2, -1) / math.sqrt(e)  # (B, H, 1, S)
        if mask == "top_left":
            scores[..., 1:] = float("-inf")
        outs.append(torch.softmax(scores, dim=-1) @ v_all)  # (B, H, 1, E)
    out = torch.cat(outs, dim=2).transpose(1, 2).reshape(batch, length - prefix, heads * e)  # (B, T - P, D)
    return layer.o_proj(out)


_DECODE_MISTAKES = (  # a mistake, simulated by _simulated_decode, and the key of its message
    (dict(append=False), "ch06_memory.decode.no_append"),
    (dict(position="zero"), "ch06_memory.decode.position_zero"),
    (dict(position="after"), "ch06_memory.decode.position_after"),
    (dict(mask="top_left"), "ch06_memory.decode.top_left"),
    (dict(kv_map="tile"), "ch06_memory.decode.tile"),
)


@checker
def check_decode_step(fn: Callable[[Tensor, MultiHeadAttention, KVCache, RotaryEmbedding], Tensor], *,
                      language: str | None = None) -> CheckResult:
    """Check ``fn(x_new, layer, cache, rope)``: one step of causal self-attention with a KV cache and RoPE.

    The checker fills a :class:`~helpers.multihead.KVCache` with a prompt (rotated keys and values of
    ``P`` tokens, as the package stores them), then calls ``fn`` for each following token and
    compares the outputs with one full causal pass ``layer(x, is_causal=True, rope=rope)``, and the
    cache with the keys and values of all tokens. ``MultiHeadAttention.forward`` is disabled while
    ``fn`` runs.

    Args:
        fn: The reader's step: ``x_new`` ``(B, 1, D)``, the layer, the cache (appended to in place),
            the rotary embedding; returns the new token's output ``(B, 1, D)``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake, e.g. no append, a wrong position, a mask on the single query,
        key/value heads shared the wrong way.
    """
    for d_model, heads, kv_heads, prefix, length in ((16, 2, 2, 3, 8), (24, 4, 2, 2, 7)):
        torch.manual_seed(d_model)
        layer = MultiHeadAttention(d_model, heads, num_kv_heads=kv_heads).eval()
        rope = RotaryEmbedding(layer.head_dim)
        x = torch.randn(2, length, d_model)
        where = phrase("ch06_memory.decode.where", embed_dim=d_model, heads=heads, kv_heads=kv_heads, prefix=prefix)
        with torch.no_grad():
            right = layer(x, is_causal=True, rope=rope)[0][:, prefix:]  # (B, T - P, D)
            full_cache = KVCache()
            layer(x, kv_cache=full_cache, rope=rope, is_causal=True)
            cache = KVCache()
            layer(x[:, :prefix], kv_cache=cache, rope=rope, is_causal=True)

            def decode_all(cache: KVCache = cache, x: Tensor = x) -> list[Any]:
                return [fn(x[:, p:p + 1], layer, cache, rope) for p in range(prefix, length)]

            results = _call_with_globals(fn, decode_all, language)
        outs = []
        for result in results:
            out = as_tensor(result, phrase("ch06_memory.what.new_output"), language)
            if out.shape != (2, 1, d_model):
                return CheckResult.of(False, "ch06_memory.decode.step_shape", language, where=where, embed_dim=d_model,
                                      got=tuple(out.shape))
            outs.append(out)
        out = torch.cat(outs, dim=1).detach()  # (B, T - P, D)
        if cache.seq_len == prefix:
            return CheckResult.of(False, "ch06_memory.decode.prompt_only", language, where=where, prefix=prefix,
                                  steps=length - prefix)
        if allclose(out, right) or _close(out, right):
            if cache.seq_len != length:
                return CheckResult.of(False, "ch06_memory.decode.cache_length", language, where=where,
                                      seq_len=cache.seq_len, length=length)
            if cache.key is None or cache.value is None or full_cache.key is None or full_cache.value is None or not (
                    _close(cache.key.detach(), full_cache.key) and _close(cache.value.detach(), full_cache.value)):
                return CheckResult.of(False, "ch06_memory.decode.cache_content", language, where=where)
            continue
        if cache.seq_len > length:
            return CheckResult.of(False, "ch06_memory.decode.too_long", language, where=where,
                                  seq_len=cache.seq_len, length=length)
        for mistake, key in _DECODE_MISTAKES:
            if mistake.get("kv_map") == "tile" and heads == kv_heads:
                continue
            if _close(out, _simulated_decode(layer, rope, x, prefix, **mistake)):
                return CheckResult.of(False, key, language, where=where)
        return CheckResult.of(False, "ch06_memory.decode.differs", language, where=where,
                              diff=(out - right).abs().max().item())
    return CheckResult.of(True, "ch06_memory.decode.passed", language)


_DECODE_ALLOWED = (KVCache, RotaryEmbedding, apply_rotary_pos_emb, rotate_half, "helpers.attention.repeat_kv")
"""What a decode step may call: the cache it appends to, the rotation, the key/value head repeat."""


def _call_with_globals(fn: Any, run: Callable[[], Any], language: str | None) -> Any:
    """Run ``run()`` (which calls the reader's ``fn``) with ``MultiHeadAttention.forward`` disabled,
    also in ``fn``'s globals; a failure raises :class:`Rejected`, its verdict in ``language``."""
    if not callable(fn):
        return call_reader(fn, language=language)
    return call_watched(run, passthrough=(run,), allowed=_DECODE_ALLOWED, language=language)


# ----------------------------------------------------------------------------------------------
# Exercise 2: the KV cache of a real model
# ----------------------------------------------------------------------------------------------

_SHAPES = (  # name, layers, query heads, key/value heads, head_dim, length, batch, dtype
    ("7B MHA (Llama-2-7B)", 32, 32, 32, 128, 4096, 1, torch.bfloat16),
    ("70B GQA-8 (Llama-2-70B)", 80, 64, 8, 128, 4096, 8, torch.float16),
    ("7B MQA (Falcon-7B)", 32, 71, 1, 64, 2048, 16, torch.float32),
    ("70B GQA-8 in float8", 80, 64, 8, 128, 32768, 2, torch.float8_e4m3fn),
)
_SHAPE_NAMES_ZH = {"70B GQA-8 in float8": "float8 下的 70B GQA-8"}
"""The names of :data:`_SHAPES` that read differently in Chinese (the others are the same in both)."""


def _shape_name(name: str) -> dict[str, str]:
    return {"en": name, "zh": _SHAPE_NAMES_ZH.get(name, name)}


@checker
def check_cache_bytes(fn: Callable[[int, int, int, int, int, int, torch.dtype], int], *,
                      language: str | None = None) -> CheckResult:
    """Check ``fn(num_layers, num_heads, num_kv_heads, head_dim, seq_len, batch, dtype) -> bytes``.

    Compared with :func:`helpers.memory.kv_cache_bytes` on the shapes of Llama-2-7B (multi-head),
    Llama-2-70B (grouped-query) and Falcon-7B (multi-query) in four element types;
    ``kv_cache_bytes`` is disabled while ``fn`` runs: compute it by hand.

    Args:
        fn: The reader's formula.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake, e.g. keys or values only, one layer, elements or a fixed size
        instead of ``dtype.itemsize`` bytes, bits, query heads instead of key/value heads.
    """
    from helpers import memory

    got: list[float] = []
    right: list[int] = []
    for _, layers, heads, kv_heads, head_dim, seq_len, batch, dtype in _SHAPES:
        right.append(memory.kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype))
        result = call_without_package(fn, layers, heads, kv_heads, head_dim, seq_len, batch, dtype,
                                      disabled=(memory.kv_cache_bytes,), language=language)
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            return CheckResult.of(False, "ch06_memory.cache.not_number", language, type=type(result).__name__,
                                  value=repr(result))
        got.append(float(result))
    if all(g == r for g, r in zip(got, right)):
        name, *_ = _SHAPES[1]
        return CheckResult.of(True, "ch06_memory.cache.passed", language, name=_shape_name(name),
                              gib=right[1] / 2**30, gib_mha=right[1] * 8 / 2**30)
    mistakes = (
        (lambda r, s: r / 2, "one_of_two"),
        (lambda r, s: r / s[1], "one_layer"),
        (lambda r, s: r * s[2] / s[3], "query_heads"),
        (lambda r, s: r / s[7].itemsize, "elements"),
        (lambda r, s: r / s[7].itemsize * 4, "four_bytes"),
        (lambda r, s: r / s[7].itemsize * 2, "two_bytes"),
        (lambda r, s: r * 8, "bits"),
    )
    for wrong, mistake in mistakes:
        if all(math.isclose(g, wrong(r, s), rel_tol=1e-9) for g, r, s in zip(got, right, _SHAPES)):
            return CheckResult.of(False, f"ch06_memory.cache.{mistake}", language)
    for g, r, shape in zip(got, right, _SHAPES):
        if g != r:
            name, layers, heads, kv_heads, head_dim, seq_len, batch, dtype = shape
            return CheckResult.of(False, "ch06_memory.cache.wrong", language, name=_shape_name(name), layers=layers,
                                  heads=heads, kv_heads=kv_heads, head_dim=head_dim, seq_len=seq_len, batch=batch,
                                  dtype=str(dtype), expected=r, got=g)
    raise AssertionError("unreachable")  # pragma: no cover


# ----------------------------------------------------------------------------------------------
# Exercise 3: RoPE from scratch
# ----------------------------------------------------------------------------------------------


def _angles(positions: Tensor, head_dim: int, exponent_step: int = 2) -> Tensor:
    pair = torch.arange(head_dim // 2, dtype=torch.float64)  # (E/2,)
    theta = 10000.0 ** (-exponent_step * pair / head_dim)  # (E/2,)
    return positions.double()[:, None] * theta  # (L, E/2)


def _rope_half(x: Tensor, positions: Tensor, *, exponent_step: int = 2, sign: float = 1.0) -> Tensor:
    angle = _angles(positions, x.shape[-1], exponent_step)
    cos, sin = angle.cos(), sign * angle.sin()  # (L, E/2)
    x1, x2 = x.double().chunk(2, dim=-1)  # (..., L, E/2) each
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def _rope_interleaved(x: Tensor, positions: Tensor) -> Tensor:
    angle = _angles(positions, x.shape[-1])
    cos, sin = angle.cos(), angle.sin()  # (L, E/2)
    x1, x2 = x.double()[..., 0::2], x.double()[..., 1::2]  # (..., L, E/2): neighbours (2i, 2i + 1)
    return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)


def _offset_spread(fn: Callable[[Tensor, Tensor], Tensor], head_dim: int,
                   language: str | None) -> float:
    """Largest relative spread of ``<f(q, m), f(k, n)>`` along the diagonals ``m - n = const``, for the
    reader's ``f`` (called by the checker inside :func:`package_disabled`); a failure raises
    :class:`Rejected`, its verdict in ``language``."""
    gen = torch.Generator().manual_seed(7)
    q, k = torch.randn(2, head_dim, generator=gen)
    positions = torch.arange(48)
    both = torch.stack((q, k))[:, None, None, :].expand(2, 1, 48, head_dim).contiguous()  # (2, 1, P, E)
    result = call_watched(fn, both, positions, forbidden=TRANSFORMERS, language=language)
    out = as_tensor(result, phrase("ch06_memory.what.rotated"), language)
    if out.shape != both.shape:
        raise Rejected(CheckResult.of(False, "ch06_memory.rope.output_shape", language,
                                      expected=tuple(both.shape), got=tuple(out.shape)))
    scores = out[0, 0].detach().double() @ out[1, 0].detach().double().T  # (P, P): scores[m, n] = <R_m q, R_n k>
    spread = max((torch.diagonal(scores, d) - torch.diagonal(scores, d)[0]).abs().max().item()
                 for d in range(-40, 41, 4))
    return spread / max(1.0, scores.abs().max().item())


def _rope_mistake(out: Tensor, x: Tensor, positions: Tensor) -> str | None:
    """The key of the message that names the mistake whose result ``out`` is, if it is a known one."""
    if _close(out, x):
        return "ch06_memory.rope.unrotated"
    if _close(out, _rope_interleaved(x, positions)):
        return "ch06_memory.rope.interleaved"
    if _close(out, _rope_half(x, positions, sign=-1.0)):
        return "ch06_memory.rope.wrong_way"
    if _close(out, _rope_half(x, positions, exponent_step=1)):
        return "ch06_memory.rope.frequencies"
    return None


@checker
def check_rope(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(x, positions)``: rotary position embedding, half-split, base 10000.

    ``x`` is ``(B, H, L, E)`` and ``positions`` an integer tensor ``(L,)`` (not necessarily
    ``0 .. L-1``). Compared with :class:`~helpers.positional.RotaryEmbedding` and
    :func:`~helpers.positional.apply_rotary_pos_emb`, which are disabled while ``fn`` runs (and so is
    :func:`~helpers.positional.rotate_half`), and checked for the offset property: the score
    ``<f(q, m), f(k, n)>`` depends on ``m - n`` only.

    Args:
        fn: The reader's rotation.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake, e.g. the interleaved pairing, the frequencies, the direction of
        the rotation, no rotation at all, a score that depends on more than the offset.
    """
    gen = torch.Generator().manual_seed(3)
    for shape, positions in (((2, 3, 5, 8), torch.tensor([5, 0, 17, 3, 100])), ((1, 2, 6, 16), torch.arange(6))):
        x = torch.randn(*shape, generator=gen)
        cos, sin = RotaryEmbedding(shape[-1])(positions)  # (1, L, E)
        right = apply_rotary_pos_emb(x, x, cos, sin)[0]
        result = call_watched(fn, x.clone(), positions.clone(), forbidden=TRANSFORMERS, language=language)
        spread = None
        if isinstance(result, Tensor) and result.shape == x.shape:
            spread = _offset_spread(fn, 64, language)
        out = as_tensor(result, phrase("ch06_memory.what.rotated"), language)
        out = out.detach()
        if _close(out, right):
            continue
        if out.shape != right.shape:
            return CheckResult.of(False, "ch06_memory.rope.shape", language, expected=tuple(right.shape),
                                  got=tuple(out.shape))
        where = phrase("ch06_memory.rope.where", e=shape[-1], positions=positions.tolist())
        mistake = _rope_mistake(out, x, positions)
        if mistake is not None:
            return CheckResult.of(False, mistake, language, where=where)
        if spread is not None and spread > 1e-4:
            return CheckResult.of(False, "ch06_memory.rope.not_offset", language, where=where, spread=spread)
        return CheckResult.of(False, "ch06_memory.rope.differs", language, where=where,
                              diff=(out - right).abs().max().item())
    return CheckResult.of(True, "ch06_memory.rope.passed", language, spread=spread or 0.0)


# ----------------------------------------------------------------------------------------------
# Exercise 4: the bug hunt
# ----------------------------------------------------------------------------------------------


def _rotate_neighbours(x: Tensor) -> Tensor:
    """``(x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)``: a 90-degree turn of each neighbour pair."""
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


def buggy_rope_attention(x: Tensor, layer: MultiHeadAttention, rope: RotaryEmbedding) -> Tensor:
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


@torch.no_grad()
def _rope_attention(x: Tensor, layer: MultiHeadAttention, rope: RotaryEmbedding, *, pairing: str,
                    rotate_v: bool, causal: bool = True) -> Tensor:
    """Causal RoPE attention with the half-split or the neighbour pairing, and V rotated or not."""
    b, length, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q, k, v = (_split(p(x), h, e) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    cos, sin = (t[:, None] for t in rope(length))  # (1, 1, L, E)
    turn = rotate_half if pairing == "half" else _rotate_neighbours
    q, k = (t * cos + turn(t) * sin for t in (q, k))
    if rotate_v:
        v = v * cos + turn(v) * sin
    scores = q @ k.transpose(-2, -1) / math.sqrt(e)  # (B, H, L, L)
    if causal:
        scores = scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return layer.o_proj((weights @ v).transpose(1, 2).reshape(b, length, d))


@checker
def check_rope_fix(fn: Callable[[Tensor, MultiHeadAttention, RotaryEmbedding], Tensor], *,
                   language: str | None = None) -> CheckResult:
    """Check the fixed version of :func:`buggy_rope_attention` against ``layer(x, is_causal=True, rope=rope)``.

    ``MultiHeadAttention.forward`` is disabled while ``fn`` runs. When the output is wrong, the checker
    says which of the two bugs is left: the neighbour pairing used with the half-split table, or
    RoPE applied to the values (or both).

    Args:
        fn: The reader's fixed function ``fn(x, layer, rope) -> (B, L, D)``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    for d_model, heads, length in ((16, 2, 6), (32, 4, 9)):
        torch.manual_seed(100 + d_model)
        layer = MultiHeadAttention(d_model, heads).eval()
        rope = RotaryEmbedding(layer.head_dim)
        x = torch.randn(2, length, d_model)
        with torch.no_grad():
            right = layer(x, is_causal=True, rope=rope)[0]
            result = call_without_package(fn, x, layer, rope, disabled=(MultiHeadAttention.forward,),
                                          language=language)
        out = as_tensor(result, phrase("ch06_memory.what.output"), language)
        out = out.detach()
        if _close(out, right):
            continue
        where = phrase("ch06_memory.fix.where", embed_dim=d_model, heads=heads, length=length)
        if out.shape != right.shape:
            return CheckResult.of(False, "ch06_memory.fix.shape", language, where=where, expected=tuple(right.shape),
                                  got=tuple(out.shape))
        pairing, v = phrase("ch06_memory.fix.pairing_bug"), phrase("ch06_memory.fix.v_bug")
        if _close(out, _rope_attention(x, layer, rope, pairing="neighbours", rotate_v=True)):
            return CheckResult.of(False, "ch06_memory.fix.both", language, where=where, pairing=pairing, v=v)
        if _close(out, _rope_attention(x, layer, rope, pairing="neighbours", rotate_v=False)):
            return CheckResult.of(False, "ch06_memory.fix.v_fixed", language, where=where, pairing=pairing)
        if _close(out, _rope_attention(x, layer, rope, pairing="half", rotate_v=True)):
            return CheckResult.of(False, "ch06_memory.fix.pairing_fixed", language, where=where, v=v)
        if _close(out, _rope_attention(x, layer, rope, pairing="half", rotate_v=False, causal=False)):
            return CheckResult.of(False, "ch06_memory.fix.no_mask", language, where=where)
        return CheckResult.of(False, "ch06_memory.fix.differs", language, where=where,
                              diff=(out - right).abs().max().item())
    return CheckResult.of(True, "ch06_memory.fix.passed", language)


# ----------------------------------------------------------------------------------------------
# Exercise 5: predict the extrapolation ranking, then measure it
# ----------------------------------------------------------------------------------------------


def _far_accuracy(runs: dict[str, list[Any]], shift: int = 0) -> dict[str, float]:
    """Mean over seeds of the accuracy on the tokens at positions ``2 * train_len`` and later."""
    return {name: sum(sum(r.per_position[2 * r.train_len - 1 + shift:])
                      / len(r.per_position[2 * r.train_len - 1 + shift:]) for r in group) / len(group)
            for name, group in runs.items()}


@checker
def check_extrapolation_ranking(fn: Callable[[dict[str, list[Any]]], dict[str, float]],
                                runs: dict[str, list[Any]], predicted_ranking: Any, *,
                                language: str | None = None) -> CheckResult:
    """Check ``fn(runs) -> {encoding: accuracy}`` and compare the measured ranking with the prediction.

    ``runs`` is what :func:`helpers.experiments.position.extrapolation_runs` returns; the accuracy
    of an encoding is the mean, over its seeds, of the per-position accuracy on the tokens at
    positions ``2 * train_len`` and later (``run.per_position[t]`` is the accuracy of predicting
    token ``t + 1``). ``ExtrapolationRun.accuracy`` and ``position.mean_spread`` are disabled.

    Args:
        fn: The reader's accuracy past twice the training length.
        runs: The runs, by encoding.
        predicted_ranking: The encodings from best to worst, written before the run.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        Passes when the accuracies are right; the message compares the measured ranking with the
        prediction.
    """
    names = list(runs)
    if (not isinstance(predicted_ranking, (list, tuple)) or sorted(map(str, predicted_ranking)) != sorted(names)
            or len(set(predicted_ranking)) != len(names)):
        return CheckResult.of(False, "ch06_memory.ranking.no_prediction", language, names=str(names),
                              got=repr(predicted_ranking))
    from helpers.experiments import position

    right = _far_accuracy(runs)
    disabled = (position.ExtrapolationRun.accuracy, position.mean_spread)
    result = call_without_package(fn, runs, disabled=disabled, language=language)
    if not isinstance(result, dict) or sorted(result) != sorted(names):
        return CheckResult.of(False, "ch06_memory.ranking.not_dict", language, names=str(names), got=repr(result))
    if not all(isinstance(result[n], (int, float)) and not isinstance(result[n], bool)
               or isinstance(result[n], Tensor) and result[n].numel() == 1 for n in names):
        return CheckResult.of(False, "ch06_memory.ranking.not_number", language, got=repr(result))
    if all(abs(float(result[n]) - right[n]) < 1e-6 for n in names):
        measured = sorted(names, key=lambda n: -right[n])
        rank = {n: i for i, n in enumerate(measured)}
        hits = sum(a == b for a, b in zip(predicted_ranking, measured))
        moved = max(predicted_ranking, key=lambda n: abs(rank[n] - list(predicted_ranking).index(n)))
        shift = rank[moved] - list(predicted_ranking).index(moved)
        surprise = ({language: "" for language in LANGUAGES} if shift == 0 else
                    phrase("ch06_memory.ranking.lower" if shift > 0 else "ch06_memory.ranking.higher", moved=moved,
                            places=abs(shift), plural="s" if abs(shift) > 1 else ""))
        table = " > ".join(f"{n} {right[n]:.2f}" for n in measured)
        return CheckResult.of(True, "ch06_memory.ranking.passed", language, table=table, hits=hits,
                              count=len(names), surprise=surprise)
    for shift in (1, -1):
        off = _far_accuracy(runs, shift)
        if all(abs(float(result[n]) - off[n]) < 1e-6 for n in names):
            return CheckResult.of(False, "ch06_memory.ranking.off_by_one", language)
    first_seed = {n: _far_accuracy({n: runs[n][:1]})[n] for n in names}
    if any(len(g) > 1 for g in runs.values()) and all(abs(float(result[n]) - first_seed[n]) < 1e-6 for n in names):
        return CheckResult.of(False, "ch06_memory.ranking.first_seed", language)
    return CheckResult.of(False, "ch06_memory.ranking.differs", language, name=names[0], expected=right[names[0]],
                          got=float(result[names[0]]))
