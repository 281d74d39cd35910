"""Checkers for the exercises of chapter 6.3–6.5, "memory, decoding and position"
(``notebooks/06-memory-position-lab.ipynb``).

Each checker runs the reader's function under :func:`helpers.exercises.reader.call_watched`, which
watches every call it makes: every function of the package is refused (by whatever route it is
reached: a default argument, a closure, a partial, a dict) except the few an exercise names, and so
are the third-party equivalents of the thing practised. The inputs are drawn afresh at every call
(:func:`helpers.exercises.reader.fresh_generator`): shapes, positions, prompt lengths, dtypes, so no
table of answers passes. The references are computed outside the watch. The messages name the
typical mistakes.

- :func:`check_decode_step`: one KV-cache decoding step from scratch, against the full causal pass
  (names a cache that is never appended to, a position that restarts at 0 or is read after
  appending, a causal mask that hides the cache from the single new query, key/value heads shared
  the wrong way).
- :func:`check_cache_bytes`: the KV cache of real model shapes, and of fresh ones, by formula (names
  the missing factor 2, layers, bytes per element, query heads counted instead of key/value heads).
- :func:`check_rope`: RoPE from scratch, against a float64 rotation, and the offset property (the
  score depends only on ``m - n``); transformers' rotary code is refused.
- :func:`buggy_rope_attention`, :func:`check_rope_fix`: the bug hunt (interleaved pairing with a
  half-split table, and RoPE applied to the values); the checker says which bug is left, and names
  the fixes that are not one (a consistent interleaved RoPE, one of q and k left unrotated).
- :func:`check_extrapolation_ranking`: the ranking of the encodings, recorded with :func:`predict`
  before the run; the reader's accuracy past twice the training length, tried on runs the checker
  makes up (so it cannot be precomputed); one of the reader's runs re-trained to show it is real.
- :func:`check_online_softmax`: attention one block of keys at a time with a running max and sum,
  against dense attention (scores of ±1000, a block size that does not divide ``S``), and its peak
  memory measured (names the missing rescale, the missing max, a softmax per block, the last
  block dropped).

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch06_memory`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from helpers.attention import repeat_kv
from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch06_memory import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.guard import ATTENTION, TRANSFORMERS
from helpers.exercises.messages import LANGUAGES, phrase
from helpers.exercises.predictions import predict, recorded, reveal
from helpers.exercises.reader import (
    Rejected,
    allclose,
    as_tensor,
    call_reader,
    call_watched,
    checker,
    fresh_generator,
    fresh_int,
)
from helpers.multihead import KVCache, MultiHeadAttention
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb, rotate_half

from .. import seeding

__all__ = ["check_decode_step", "check_cache_bytes", "check_rope", "buggy_rope_attention", "check_rope_fix",
           "check_extrapolation_ranking", "check_online_softmax", "predict", "RANKING"]

RANKING = "ch06_memory.ranking"
"""The key under which exercise 5's ranking is recorded — ``ex.predict(ex.RANKING, [...])``."""


def _close(a: Tensor, b: Tensor, tol: float = 1e-5) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=max(1e-4, tol), atol=tol))


def _split(t: Tensor, heads: int, head_dim: int) -> Tensor:
    batch, length, _ = t.shape
    return t.view(batch, length, heads, head_dim).transpose(1, 2)  # (B, heads, L, E)


def _pick(options: tuple[Any, ...], gen: torch.Generator) -> Any:
    return options[fresh_int(0, len(options) - 1, gen)]


def _seeded_layer(seed: int, d_model: int, heads: int, kv_heads: int | None = None) -> MultiHeadAttention:
    """A layer with weights drawn from ``seed``, without touching the reader's global random state."""
    with torch.random.fork_rng(devices=[]):
        seeding.manual_seed(seed)
        return MultiHeadAttention(d_model, heads, num_kv_heads=kv_heads).eval()


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

_DECODE_ALLOWED = (KVCache.update, RotaryEmbedding.forward, apply_rotary_pos_emb, rotate_half, repeat_kv)
"""What a decode step may call: the cache's ``update`` it appends with, the rotation (the table, and
``apply_rotary_pos_emb`` or its ``rotate_half``) and the key/value head repeat; not the layer's forward."""


def _decode_configs(gen: torch.Generator) -> list[tuple[int, int, int, int, int, int]]:
    """Fresh (batch, heads, kv_heads, head_dim, prefix, length): multi-head, grouped-query, empty prompt."""
    configs = []
    for kind in ("mha", "gqa", "empty"):
        head_dim = 2 * fresh_int(1, 4, gen)
        if kind == "mha":
            heads = kv_heads = fresh_int(1, 3, gen)
        else:
            kv_heads = fresh_int(2, 3, gen) if kind == "gqa" else fresh_int(1, 2, gen)
            heads = kv_heads * fresh_int(2, 3, gen)
        prefix = 0 if kind == "empty" else fresh_int(1, 5, gen)
        configs.append((fresh_int(1, 3, gen), heads, kv_heads, head_dim, prefix, prefix + fresh_int(2, 4, gen)))
    return configs


@checker
def check_decode_step(fn: Callable[[Tensor, MultiHeadAttention, KVCache, RotaryEmbedding], Tensor], *,
                      language: str | None = None) -> CheckResult:
    """Check ``fn(x_new, layer, cache, rope)``: one step of causal self-attention with a KV cache and RoPE.

    On fresh shapes at every call (a multi-head layer, a grouped-query one, and an empty prompt), the
    checker fills a :class:`~helpers.multihead.KVCache` with a prompt (rotated keys and values of
    ``P`` tokens, as the package stores them), then calls ``fn`` for each following token and
    compares the outputs with one full causal pass ``layer(x, is_causal=True, rope=rope)``, and the
    cache with the keys and values of all tokens. While ``fn`` runs, the package is refused except
    ``KVCache.update``, the rotation (``rope(...)``, ``apply_rotary_pos_emb``, ``rotate_half``) and
    ``repeat_kv``; so is transformers.

    Args:
        fn: The reader's step: ``x_new`` ``(B, 1, D)``, the layer, the cache (appended to in place),
            the rotary embedding; returns the new token's output ``(B, 1, D)``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake, e.g. no append, a wrong position, a mask on the single query,
        key/value heads shared the wrong way.
    """
    if not callable(fn):
        return call_reader(fn, language=language)
    gen = fresh_generator()
    for batch, heads, kv_heads, head_dim, prefix, length in _decode_configs(gen):
        d_model = heads * head_dim
        layer = _seeded_layer(fresh_int(0, 2**31, gen), d_model, heads, kv_heads)
        rope = RotaryEmbedding(head_dim)
        x = torch.randn(batch, length, d_model, generator=gen)
        where = phrase("ch06_memory.decode.where", embed_dim=d_model, heads=heads, kv_heads=kv_heads, prefix=prefix)
        with torch.no_grad():
            right = layer(x, is_causal=True, rope=rope)[0][:, prefix:]  # (B, T - P, D)
            full_cache = KVCache()
            layer(x, kv_cache=full_cache, rope=rope, is_causal=True)
            cache = KVCache()
            if prefix:
                layer(x[:, :prefix], kv_cache=cache, rope=rope, is_causal=True)

            def decode_all(cache: KVCache = cache, x: Tensor = x, layer: MultiHeadAttention = layer,
                           rope: RotaryEmbedding = rope) -> list[Any]:
                return [fn(x[:, p:p + 1], layer, cache, rope) for p in range(prefix, length)]

            results = call_watched(decode_all, passthrough=(decode_all,), allowed=_DECODE_ALLOWED,
                                   forbidden=TRANSFORMERS, language=language)
        outs = []
        for result in results:
            out = as_tensor(result, phrase("ch06_memory.what.new_output"), language)
            if out.shape != (batch, 1, d_model):
                return CheckResult.of(False, "ch06_memory.decode.step_shape", language, where=where, batch=batch,
                                      embed_dim=d_model, got=tuple(out.shape))
            outs.append(out)
        out = torch.cat(outs, dim=1).detach()  # (B, T - P, D)
        if prefix and cache.seq_len == prefix:
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
            if mistake.get("kv_map") == "tile" and kv_heads in (1, heads):
                continue  # tiling and interleaving are the same here
            if _close(out, _simulated_decode(layer, rope, x, prefix, **mistake)):
                return CheckResult.of(False, key, language, where=where)
        return CheckResult.of(False, "ch06_memory.decode.differs", language, where=where,
                              diff=(out - right).abs().max().item())
    return CheckResult.of(True, "ch06_memory.decode.passed", language)


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

_FRESH_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2)


def _shape_name(name: str) -> dict[str, str]:
    return {"en": name, "zh": _SHAPE_NAMES_ZH.get(name, name)}


def _fresh_shapes(gen: torch.Generator, count: int = 4) -> list[tuple[Any, ...]]:
    """Made-up models: fresh layers, heads (the key/value heads divide them), lengths, batches, dtypes."""
    shapes = []
    for _ in range(count):
        kv_heads = fresh_int(1, 16, gen)
        heads = kv_heads * fresh_int(1, 8, gen)
        shapes.append((None, fresh_int(1, 96, gen), heads, kv_heads, 16 * fresh_int(1, 16, gen),
                       fresh_int(1, 50_000, gen), fresh_int(1, 64, gen), _pick(_FRESH_DTYPES, gen)))
    return shapes


def _cache_formula(shape: tuple[Any, ...]) -> int:
    _, layers, _, kv_heads, head_dim, seq_len, batch, dtype = shape
    return 2 * layers * batch * kv_heads * seq_len * head_dim * dtype.itemsize


@checker
def check_cache_bytes(fn: Callable[[int, int, int, int, int, int, torch.dtype], int], *,
                      language: str | None = None) -> CheckResult:
    """Check ``fn(num_layers, num_heads, num_kv_heads, head_dim, seq_len, batch, dtype) -> bytes``.

    Compared with the formula of :func:`helpers.memory.kv_cache_bytes` on the shapes of Llama-2-7B
    (multi-head), Llama-2-70B (grouped-query) and Falcon-7B (multi-query), and on made-up shapes and
    element types drawn afresh at every call; the package is refused while ``fn`` runs.

    Args:
        fn: The reader's formula.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake, e.g. keys or values only, one layer, elements or a fixed size
        instead of ``dtype.itemsize`` bytes, bits, query heads instead of key/value heads.
    """
    shapes = list(_SHAPES) + _fresh_shapes(fresh_generator())
    got: list[float] = []
    right = [_cache_formula(shape) for shape in shapes]
    for _, layers, heads, kv_heads, head_dim, seq_len, batch, dtype in shapes:
        result = call_watched(fn, layers, heads, kv_heads, head_dim, seq_len, batch, dtype, language=language)
        if isinstance(result, Tensor) and result.numel() == 1 and not result.is_floating_point():
            result = int(result.item())
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
    known = len(_SHAPES)
    for wrong, mistake in mistakes:
        if all(math.isclose(g, wrong(r, s), rel_tol=1e-9) for g, r, s in zip(got, right, shapes)):
            return CheckResult.of(False, f"ch06_memory.cache.{mistake}", language)
    if all(g == r for g, r in zip(got[:known], right[:known])):
        return CheckResult.of(False, "ch06_memory.cache.table", language, count=known)
    for g, r, shape in zip(got, right, shapes):
        if g != r:
            name, layers, heads, kv_heads, head_dim, seq_len, batch, dtype = shape
            name = _shape_name(name) if name else phrase("ch06_memory.cache.made_up")
            return CheckResult.of(False, "ch06_memory.cache.wrong", language, name=name, layers=layers,
                                  heads=heads, kv_heads=kv_heads, head_dim=head_dim, seq_len=seq_len, batch=batch,
                                  dtype=str(dtype), expected=r, got=g)
    raise AssertionError("unreachable")  # pragma: no cover


# ----------------------------------------------------------------------------------------------
# Exercise 3: RoPE from scratch
# ----------------------------------------------------------------------------------------------

_ROPE_TOL = 1e-4
"""Float32 angles of positions up to a few hundred are off by ~1e-5 rad: the tolerance of exercise 3."""


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


def _offset_spread(fn: Callable[[Tensor, Tensor], Tensor], gen: torch.Generator,
                   language: str | None) -> float:
    """Largest relative spread of ``<f(q, m), f(k, n)>`` along the diagonals ``m - n = const``, for the
    reader's ``f`` on a fresh query, key, head dim and start position; a failure raises :class:`Rejected`."""
    head_dim, count, first = 2 * fresh_int(8, 32, gen), 48, fresh_int(0, 64, gen)
    q, k = torch.randn(2, head_dim, generator=gen)
    positions = torch.arange(first, first + count)
    both = torch.stack((q, k))[:, None, None, :].expand(2, 1, count, head_dim).contiguous()  # (2, 1, P, E)
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
    if _close(out, x, _ROPE_TOL):
        return "ch06_memory.rope.unrotated"
    if _close(out, _rope_interleaved(x, positions), _ROPE_TOL):
        return "ch06_memory.rope.interleaved"
    if _close(out, _rope_half(x, positions, sign=-1.0), _ROPE_TOL):
        return "ch06_memory.rope.wrong_way"
    if _close(out, _rope_half(x, positions, exponent_step=1), _ROPE_TOL):
        return "ch06_memory.rope.frequencies"
    return None


@checker
def check_rope(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(x, positions)``: rotary position embedding, half-split, base 10000.

    ``x`` is ``(B, H, L, E)`` and ``positions`` an integer tensor ``(L,)`` (not necessarily
    ``0 .. L-1``), both drawn afresh at every call (shapes, head dims, positions in any order up to a
    few hundred). Compared with the rotation computed in float64 (the package's
    :class:`~helpers.positional.RotaryEmbedding` and :func:`~helpers.positional.apply_rotary_pos_emb`
    give the same), and checked for the offset property: the score ``<f(q, m), f(k, n)>`` depends on
    ``m - n`` only. The package and transformers (its ``LlamaRotaryEmbedding``,
    ``apply_rotary_pos_emb``) are refused while ``fn`` runs.

    Args:
        fn: The reader's rotation.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake, e.g. the interleaved pairing, the frequencies, the direction of
        the rotation, no rotation at all, a score that depends on more than the offset.
    """
    gen = fresh_generator()
    spread = None
    for _ in range(2):
        length = fresh_int(3, 8, gen)
        shape = (fresh_int(1, 2, gen), fresh_int(1, 3, gen), length, 2 * fresh_int(2, 12, gen))
        positions = torch.randint(0, 300, (length,), generator=gen)
        x = torch.randn(*shape, generator=gen)
        right = _rope_half(x, positions)
        result = call_watched(fn, x.clone(), positions.clone(), forbidden=TRANSFORMERS, language=language)
        if isinstance(result, Tensor) and result.shape == x.shape:
            spread = _offset_spread(fn, gen, language)
        out = as_tensor(result, phrase("ch06_memory.what.rotated"), language)
        out = out.detach()
        if _close(out, right, _ROPE_TOL):
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
                    rotate_v: bool, causal: bool = True, rotate: str = "qk") -> Tensor:
    """Causal RoPE attention with one pairing, V rotated or not, and ``rotate`` naming what else is.

    ``pairing``: "half" (rotate_half with the table), "neighbours" (the quarter turn with the
    half-split table: the bug), "interleaved" (the quarter turn with the table made interleaved: a
    consistent RoPE, but not the layer's). ``rotate``: "qk", "q" or "k".
    """
    b, length, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q, k, v = (_split(p(x), h, e) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    cos, sin = (t[:, None] for t in rope(length))  # (1, 1, L, E)
    if pairing == "interleaved":  # the angle of pair i at features 2i and 2i + 1
        cos, sin = (t[..., : e // 2].repeat_interleave(2, dim=-1) for t in (cos, sin))
    turn = rotate_half if pairing == "half" else _rotate_neighbours
    if "q" in rotate:
        q = q * cos + turn(q) * sin
    if "k" in rotate:
        k = k * cos + turn(k) * sin
    if rotate_v:
        v = v * cos + turn(v) * sin
    scores = q @ k.transpose(-2, -1) / math.sqrt(e)  # (B, H, L, L)
    if causal:
        scores = scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return layer.o_proj((weights @ v).transpose(1, 2).reshape(b, length, d))


_FIX_ALLOWED = (RotaryEmbedding.forward, apply_rotary_pos_emb, rotate_half, buggy_rope_attention)
"""What the fixed attention may call: the rotation (the bug hunt is about using it right), not the layer;
and the buggy function itself, so that handing it in unchanged is told which bugs are left."""


@checker
def check_rope_fix(fn: Callable[[Tensor, MultiHeadAttention, RotaryEmbedding], Tensor], *,
                   language: str | None = None) -> CheckResult:
    """Check the fixed version of :func:`buggy_rope_attention` against ``layer(x, is_causal=True, rope=rope)``.

    On fresh layers, widths, head counts and lengths at every call. While ``fn`` runs the package is
    refused (``MultiHeadAttention.forward`` among it) except the rotation (``rope(...)``,
    ``apply_rotary_pos_emb``, ``rotate_half``), and so is transformers. When the output is wrong, the
    checker says which of the two bugs is left (the neighbour pairing used with the half-split
    table, RoPE applied to the values, or both), or which "fix" is not one: a consistent interleaved
    RoPE (not the layer's convention), the query or the key left unrotated, the causal mask gone.

    Args:
        fn: The reader's fixed function ``fn(x, layer, rope) -> (B, L, D)``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    gen = fresh_generator()
    for _ in range(2):
        heads, head_dim, length = fresh_int(1, 4, gen), 2 * fresh_int(2, 6, gen), fresh_int(3, 10, gen)
        d_model = heads * head_dim
        layer = _seeded_layer(fresh_int(0, 2**31, gen), d_model, heads)
        rope = RotaryEmbedding(layer.head_dim)
        x = torch.randn(fresh_int(1, 3, gen), length, d_model, generator=gen)
        with torch.no_grad():
            right = layer(x, is_causal=True, rope=rope)[0]
            result = call_watched(fn, x.clone(), layer, rope, allowed=_FIX_ALLOWED, forbidden=TRANSFORMERS,
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
        candidates = (
            (dict(pairing="neighbours", rotate_v=True), "ch06_memory.fix.both", dict(pairing=pairing, v=v)),
            (dict(pairing="neighbours", rotate_v=False), "ch06_memory.fix.v_fixed", dict(pairing=pairing)),
            (dict(pairing="half", rotate_v=True), "ch06_memory.fix.pairing_fixed", dict(v=v)),
            (dict(pairing="interleaved", rotate_v=False), "ch06_memory.fix.interleaved", {}),
            (dict(pairing="interleaved", rotate_v=True), "ch06_memory.fix.interleaved", {}),
            (dict(pairing="half", rotate_v=False, rotate="q"), "ch06_memory.fix.one_side", dict(side="k")),
            (dict(pairing="half", rotate_v=False, rotate="k"), "ch06_memory.fix.one_side", dict(side="q")),
            (dict(pairing="half", rotate_v=False, causal=False), "ch06_memory.fix.no_mask", {}),
        )
        for mistake, key, fields in candidates:
            if _close(out, _rope_attention(x, layer, rope, **mistake)):
                return CheckResult.of(False, key, language, where=where, **fields)
        return CheckResult.of(False, "ch06_memory.fix.differs", language, where=where,
                              diff=(out - right).abs().max().item())
    return CheckResult.of(True, "ch06_memory.fix.passed", language)


# ----------------------------------------------------------------------------------------------
# Exercise 5: predict the extrapolation ranking, then measure it
# ----------------------------------------------------------------------------------------------


def _far_accuracy(runs: Mapping[str, list[Any]], shift: int = 0, start: Callable[[int], int] | None = None,
                  seeds: int | None = None) -> dict[str, float]:
    """Mean over seeds of the accuracy on the tokens at positions ``2 * train_len`` and later.

    ``shift`` moves the first index by that much (the off-by-one mistakes), ``start`` replaces it
    (``start(train_len)`` is the first index of ``per_position`` counted), ``seeds`` keeps the first
    runs only."""
    result = {}
    for name, group in runs.items():
        values = []
        for run in group[:seeds]:
            first = start(run.train_len) if start is not None else 2 * run.train_len - 1 + shift
            far = run.per_position[first:]
            values.append(sum(far) / len(far))
        result[name] = sum(values) / len(values)
    return result


_RANKING_MISTAKES = (  # a wrong accuracy, as _far_accuracy's arguments, and its message
    (dict(shift=1), "ch06_memory.ranking.off_by_one"),
    (dict(shift=-1), "ch06_memory.ranking.off_by_one"),
    (dict(seeds=1), "ch06_memory.ranking.first_seed"),
    (dict(start=lambda t: t - 1), "ch06_memory.ranking.from_train_len"),
    (dict(start=lambda t: 0), "ch06_memory.ranking.all_positions"),
)


def _probe_runs(names: list[str], gen: torch.Generator) -> dict[str, list[Any]]:
    """Runs made up by the checker: the reader's names in a fresh order, fresh lengths, seeds and accuracies."""
    from helpers.experiments.position import ExtrapolationRun

    train_len = fresh_int(3, 10, gen)
    test_len = 2 * train_len + fresh_int(3, 12, gen)
    order = torch.randperm(len(names), generator=gen).tolist()
    probe = {}
    for rank, i in enumerate(order):
        count = fresh_int(2, 3, gen) if rank == 0 else fresh_int(1, 3, gen)  # one group at least has 2 seeds
        probe[names[i]] = [ExtrapolationRun(names[i], seed, train_len,
                                            torch.rand(test_len - 1, generator=gen, dtype=torch.float64).tolist())
                           for seed in range(count)]
    return probe


def _number(value: Any) -> float | None:
    if isinstance(value, Tensor) and value.numel() == 1:
        return float(value.item())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _ranking_verdict(predicted: Any, late: bool, right: dict[str, float], language: str | None) -> CheckResult:
    names = list(right)
    measured = sorted(names, key=lambda n: -right[n])
    rank = {n: i for i, n in enumerate(measured)}
    hits = sum(a == b for a, b in zip(predicted, measured))
    moved = max(predicted, key=lambda n: abs(rank[n] - list(predicted).index(n)))
    shift = rank[moved] - list(predicted).index(moved)
    surprise = ({language: "" for language in LANGUAGES} if shift == 0 else
                phrase("ch06_memory.ranking.lower" if shift > 0 else "ch06_memory.ranking.higher", moved=moved,
                       places=abs(shift), plural="s" if abs(shift) > 1 else ""))
    table = " > ".join(f"{n} {right[n]:.2f}" for n in measured)
    outcome = "late" if late else ("right" if hits == len(names) else "wrong")
    verdict = phrase(f"ch06_memory.ranking.{outcome}", predicted=" > ".join(predicted))
    return CheckResult.of(True, "ch06_memory.ranking.passed", language, verdict=verdict, table=table, hits=hits,
                          count=len(names), surprise=surprise)


@checker
def check_extrapolation_ranking(fn: Callable[[dict[str, list[Any]]], dict[str, float]],
                                runs: dict[str, list[Any]], settings: Mapping[str, Any], *,
                                language: str | None = None) -> CheckResult:
    """Check ``fn(runs) -> {encoding: accuracy}``, then compare the measured ranking with the prediction.

    The ranking must have been recorded before, with ``predict(RANKING, [best, ..., worst])``; the
    checker refuses to show the result without it, and says so when it was recorded after the result
    was shown. ``runs`` is what ``helpers.experiments.position.extrapolation_runs(encodings, seeds,
    **settings)`` returned; the accuracy of an encoding is the mean, over its seeds, of the
    per-position accuracy on the tokens at positions ``2 * train_len`` and later
    (``run.per_position[t]`` is the accuracy of predicting token ``t + 1``).

    ``fn`` is tried on runs the checker makes up (the reader's encodings, fresh lengths, seeds and
    accuracies), so no precomputed answer passes, and compared with the checker's own computation;
    the package is refused while it runs. One of ``runs``, drawn afresh, is trained again with
    ``settings`` and must come out the same: runs that training did not produce are refused. The
    measured ranking is the checker's own computation on ``runs``.

    Args:
        fn: The reader's accuracy past twice the training length.
        runs: The runs, by encoding.
        settings: The keyword arguments ``runs`` was made with (``train_len``, ``test_len``, ``steps``...),
            besides the encodings and the seeds.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        Passes when the accuracies are right; the message says whether the prediction was right,
        then shows the measured ranking.
    """
    from helpers.experiments import position

    if (not isinstance(runs, dict) or not runs or not all(
            isinstance(g, list) and g and all(isinstance(r, position.ExtrapolationRun) for r in g)
            for g in runs.values())):
        return CheckResult.of(False, "ch06_memory.ranking.not_runs", language, got=type(runs).__name__)
    names = list(runs)
    prediction = recorded(RANKING)
    if prediction is None:
        return CheckResult.of(False, "ch06_memory.ranking.no_prediction", language, names=str(names))
    predicted = prediction.value
    if (not isinstance(predicted, (list, tuple)) or sorted(map(str, predicted)) != sorted(names)
            or len(set(predicted)) != len(names)):
        return CheckResult.of(False, "ch06_memory.ranking.bad_prediction", language, names=str(names),
                              got=repr(predicted))
    gen = fresh_generator()
    for _ in range(2):
        probe = _probe_runs(names, gen)
        right = _far_accuracy(probe)
        result = call_watched(fn, probe, language=language)
        if not isinstance(result, dict) or sorted(map(str, result)) != sorted(names):
            return CheckResult.of(False, "ch06_memory.ranking.not_dict", language, names=str(names),
                                  got=repr(result))
        values = {n: _number(result[n]) for n in names}
        if any(value is None for value in values.values()):
            return CheckResult.of(False, "ch06_memory.ranking.not_number", language, got=repr(result))
        if all(abs(values[n] - right[n]) < 1e-9 for n in names):
            continue
        for mistake, key in _RANKING_MISTAKES:
            wrong = _far_accuracy(probe, **mistake)
            if all(abs(values[n] - wrong[n]) < 1e-9 for n in names):
                return CheckResult.of(False, key, language)
        name = names[0]
        return CheckResult.of(False, "ch06_memory.ranking.differs", language, name=name, expected=right[name],
                              got=values[name], train_len=probe[name][0].train_len,
                              length=len(probe[name][0].per_position))
    return _rerun_and_reveal(runs, settings, predicted, prediction.late, gen, language)


def _rerun_and_reveal(runs: dict[str, list[Any]], settings: Any, predicted: Any, late: bool,
                      gen: torch.Generator, language: str | None) -> CheckResult:
    """Train one of ``runs`` again (drawn with ``gen``): it must be reproduced; then reveal the ranking."""
    from helpers.experiments import position

    if not isinstance(settings, Mapping) or {"encodings", "seeds"} & set(settings):
        return CheckResult.of(False, "ch06_memory.ranking.settings", language, got=repr(settings))
    flat = [run for group in runs.values() for run in group]
    run = flat[fresh_int(0, len(flat) - 1, gen)]
    try:
        again = position.extrapolation_runs((run.positional,), seeds=(run.seed,), **settings)[run.positional][0]
    except (TypeError, ValueError) as error:
        return CheckResult.of(False, "ch06_memory.ranking.settings", language, got=f"{settings!r}: {error}")
    if (again.train_len != run.train_len or len(again.per_position) != len(run.per_position)
            or any(abs(a - b) > 1e-6 for a, b in zip(again.per_position, run.per_position))):
        return CheckResult.of(False, "ch06_memory.ranking.not_reproduced", language, name=run.positional,
                              seed=run.seed)
    reveal(RANKING)
    return _ranking_verdict(list(predicted), late, _far_accuracy(runs), language)


# ----------------------------------------------------------------------------------------------
# Exercise 6: exact attention one block of keys at a time (the online softmax)
# ----------------------------------------------------------------------------------------------


def _online(q: Tensor, k: Tensor, v: Tensor, block: int, *, rescale_sum: bool = True, rescale_out: bool = True,
            subtract_max: bool = True, max_start: float = float("-inf"), per_block: str = "",
            drop_tail: bool = False, scaled: bool = True) -> Tensor:
    """The online softmax in float64, right or with one named mistake.

    ``per_block``: "" (one running softmax), "sum" or "mean" (a softmax per block, the blocks'
    outputs summed or averaged). ``max_start``: the running max before the first block.
    """
    q, k, v = q.double(), k.double(), v.double()
    q = q / math.sqrt(q.shape[-1]) if scaled else q
    stop = k.shape[-2] - k.shape[-2] % block if drop_tail and k.shape[-2] % block else k.shape[-2]
    m = q.new_full((*q.shape[:-1], 1), max_start)  # (B, H, L, 1)
    total = q.new_zeros((*q.shape[:-1], 1))  # (B, H, L, 1)
    out = q.new_zeros((*q.shape[:-1], v.shape[-1]))  # (B, H, L, Ev)
    blocks = 0
    for start in range(0, stop, block):
        scores = q @ k[..., start:start + block, :].transpose(-2, -1)  # (B, H, L, b)
        vb = v[..., start:start + block, :]  # (B, H, b, Ev)
        blocks += 1
        if per_block:
            out = out + torch.softmax(scores, dim=-1) @ vb
            continue
        new = torch.maximum(m, scores.amax(dim=-1, keepdim=True)) if subtract_max else torch.zeros_like(m)
        alpha = torch.exp(m - new) if subtract_max else torch.ones_like(m)
        p = torch.exp(scores - new)  # (B, H, L, b)
        total = (total * alpha if rescale_sum else total) + p.sum(dim=-1, keepdim=True)
        out = (out * alpha if rescale_out else out) + p @ vb
        m = new
    if per_block:
        return out / blocks if per_block == "mean" else out
    return out / total


_ONLINE_MISTAKES = (  # a mistake, simulated by _online, and the key of its message
    (dict(rescale_sum=False, rescale_out=False), "ch06_memory.online.no_rescale"),
    (dict(rescale_sum=False), "ch06_memory.online.sum_not_rescaled"),
    (dict(rescale_out=False), "ch06_memory.online.out_not_rescaled"),
    (dict(per_block="sum"), "ch06_memory.online.per_block"),
    (dict(per_block="mean"), "ch06_memory.online.per_block"),
    (dict(drop_tail=True), "ch06_memory.online.tail"),
    (dict(scaled=False), "ch06_memory.online.scale"),
    (dict(subtract_max=False), "ch06_memory.online.no_max"),
    (dict(max_start=0.0), "ch06_memory.online.max_zero"),
)


def _dense(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, L, S)
    return torch.softmax(scores, dim=-1) @ v.double()  # (B, H, L, Ev)


def _online_cases(gen: torch.Generator) -> list[tuple[str, Tensor, Tensor, Tensor, int]]:
    """Fresh (name, q, k, v, block): ordinary scores, then scores of ±1000 (all, none or some keys high)."""
    cases = []
    b, h, e, ev = fresh_int(1, 2, gen), fresh_int(1, 3, gen), fresh_int(2, 8, gen), fresh_int(1, 6, gen)
    block = fresh_int(2, 5, gen)
    s = block * fresh_int(2, 4, gen) + fresh_int(1, block - 1, gen)  # the block size does not divide S
    length = fresh_int(1, 6, gen)
    q = torch.randn(b, h, length, e, generator=gen) * 2
    cases.append(("ordinary", q, torch.randn(b, h, s, e, generator=gen), torch.randn(b, h, s, ev, generator=gen),
                  block))
    # Scores of ±1000: feature 0 sets the sign of a key, feature 1 is the same for all keys; rows of the
    # queries pick mixed (+1000 and -1000 in one row), all +1000 or all -1000. The first block is all -1000
    # in mixed rows: the running max then jumps by 2000.
    e = max(e, 3)
    block = fresh_int(2, 4, gen)
    s = block * fresh_int(2, 4, gen) + fresh_int(1, block - 1, gen)
    length = 3 * fresh_int(1, 2, gen)
    k = torch.randn(b, h, s, e, generator=gen)
    sign = torch.where(torch.rand(b, h, s, generator=gen) < 0.5, -1.0, 1.0)
    sign[..., :block] = -1.0
    sign[..., -1] = 1.0
    k[..., 0], k[..., 1] = sign, 1.0
    q = torch.randn(b, h, length, e, generator=gen)
    big = 1000.0 * math.sqrt(e)
    q[..., 0] = torch.tensor([big, 0.0, 0.0]).repeat(length // 3)
    q[..., 1] = torch.tensor([0.0, big, -big]).repeat(length // 3)
    cases.append(("large", q, k, torch.randn(b, h, s, ev, generator=gen), block))
    return cases


def _online_where(name: str, q: Tensor, k: Tensor, v: Tensor, block: int) -> dict[str, str]:
    return phrase(f"ch06_memory.online.where_{name}", q=tuple(q.shape), k=tuple(k.shape), v=tuple(v.shape),
                  block=block)


@checker
def check_online_softmax(fn: Callable[[Tensor, Tensor, Tensor, int], Tensor], *,
                         language: str | None = None) -> CheckResult:
    """Check ``fn(q, k, v, block_size)``: softmax attention one block of keys at a time (online softmax).

    ``q`` ``(B, H, L, E)``, ``k`` ``(B, H, S, E)``, ``v`` ``(B, H, S, Ev)``, scale ``1/sqrt(E)``, no
    mask; returns ``(B, H, L, Ev)``. Compared with dense attention computed in float64, on fresh shapes
    at every call, a block size that does not divide ``S``, and scores of ±1000 (rows with every
    score at +1000, every score at -1000, and both, the running max jumping by 2000). Then the peak
    memory is measured with :class:`helpers.memory.TensorMemoryTracker` on a longer sequence: no
    tensor may be as large as the ``L x S`` scores of one head, and the live tensors together may not
    reach their bytes. The package (its ``online_softmax_attention``, ``chunked_attention``...) and
    PyTorch's fused attention are refused while ``fn`` runs.

    Args:
        fn: The reader's blocked attention.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake, e.g. the running sum or output not rescaled when the max
        changes, no max subtracted (overflow), a softmax per block, the last partial block dropped.
    """
    from helpers.memory import TensorMemoryTracker

    gen = fresh_generator()
    for name, q, k, v, block in _online_cases(gen):
        right = _dense(q, k, v)
        result = call_watched(fn, q.clone(), k.clone(), v.clone(), block, forbidden=ATTENTION,
                              language=language)
        out = as_tensor(result, phrase("ch06_memory.what.online"), language).detach()
        where = _online_where(name, q, k, v, block)
        if out.shape != right.shape:
            return CheckResult.of(False, "ch06_memory.online.shape", language, where=where,
                                  expected=tuple(right.shape), got=tuple(out.shape))
        tol = 1e-5 if name == "ordinary" else 1e-3  # float32 scores of 1000 are rounded to ~6e-5
        if _close(out, right, tol):
            continue
        for mistake, key in _ONLINE_MISTAKES:
            wrong = _online(q, k, v, block, **mistake)
            if _close(wrong, right, tol):
                continue  # on these inputs the mistake does no harm
            if out.shape == wrong.shape and bool(torch.allclose(out.double(), wrong, rtol=1e-3, atol=tol,
                                                                equal_nan=True)):
                return CheckResult.of(False, key, language, where=where)
        if not bool(torch.isfinite(out).all()):
            return CheckResult.of(False, "ch06_memory.online.not_finite", language, where=where)
        return CheckResult.of(False, "ch06_memory.online.differs", language, where=where,
                              diff=(out.double() - right).abs().max().item())
    # Memory: one head, many keys, few features: the L x S scores dwarf q, k, v and the running state.
    length, e, block = 32, 2, 16
    s = 512 + fresh_int(1, 15, gen)
    q, k, v = (torch.randn(1, 1, n, e, generator=gen) for n in (length, s, s))
    with TensorMemoryTracker() as tracker:
        result = call_watched(fn, q, k, v, block, forbidden=ATTENTION, allowed=(TensorMemoryTracker._free,),
                              language=language)
    out = as_tensor(result, phrase("ch06_memory.what.online"), language).detach()
    where = _online_where("memory", q, k, v, block)
    if not _close(out, _dense(q, k, v)):
        return CheckResult.of(False, "ch06_memory.online.differs", language, where=where,
                              diff=(out.double() - _dense(q, k, v)).abs().max().item()
                              if out.shape == (1, 1, length, e) else float("nan"))
    if tracker.max_numel >= length * s:
        return CheckResult.of(False, "ch06_memory.online.matrix", language, where=where,
                              shape=tracker.max_shape, length=length, keys=s)
    if tracker.peak_bytes >= 4 * length * s:
        return CheckResult.of(False, "ch06_memory.online.peak", language, where=where,
                              kib=tracker.peak_bytes / 1024, matrix_kib=4 * length * s / 1024)
    return CheckResult.of(True, "ch06_memory.online.passed", language, kib=tracker.peak_bytes / 1024,
                          matrix_kib=4 * length * s / 1024, length=length, keys=s, block=block)
