"""Exercise 1 of lab 6.3-6.6: one decoding step with a KV cache and RoPE.

Contract (stated in the lab): ``decode_step(x_new, layer, cache, rope)`` takes the new token ``(B, 1, D)``, a
:class:`~helpers.multihead.MultiHeadAttention` (grouped-query possibly), its :class:`~helpers.multihead.KVCache`
(appended to in place with ``cache.update``, keys rotated as the package stores them) and a
:class:`~helpers.positional.RotaryEmbedding`, and returns the new token's output ``(B, 1, D)``. The package is
refused except ``KVCache.update``, the rotation and ``repeat_kv``; so is transformers.
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
from ..reader import allclose, as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .common import close, seeded_layer, split

__all__ = ["check_decode_step"]

CASES = (  # (batch, heads, kv_heads, head_dim, prefix, length)
    ("multi-head, a prompt of 3", dict(config=(2, 3, 3, 4, 3, 6))),
    ("grouped-query, 6 heads of 2 key/value heads", dict(config=(1, 6, 2, 2, 2, 5))),
    ("an empty prompt", dict(config=(2, 4, 2, 6, 0, 3))),
)


@torch.no_grad()
def decoded(layer: Any, rope: Any, x: Tensor, prefix: int, mistake: str | None = None) -> Tensor:
    """Decode tokens ``prefix .. T-1`` of ``x`` one by one, right or with one named ``mistake``: ``"no_append"`` (the
    cache never grows), ``"position_zero"`` (every position 0), ``"position_after"`` (read after appending),
    ``"top_left"`` (the new query sees key 0 only), ``"tile"`` (query head h uses key/value head h % H_kv)."""
    batch, length, _ = x.shape
    heads, kv_heads, e = layer.num_heads, layer.num_kv_heads, layer.head_dim
    q, k, v = split(layer.q_proj(x), heads, e), split(layer.k_proj(x), kv_heads, e), split(layer.v_proj(x), kv_heads, e)
    cos, sin = rope(length + 1)  # (1, T + 1, E)
    from helpers.positional import apply_rotary_pos_emb

    keys = apply_rotary_pos_emb(q[:, :, :prefix], k[:, :, :prefix], cos[:, :prefix], sin[:, :prefix])[1]
    values, groups, outs = v[:, :, :prefix], heads // kv_heads, []
    for p in range(prefix, length):
        where = {"position_zero": 0, "position_after": p + 1}.get(mistake or "", p)
        qp, kp = apply_rotary_pos_emb(q[:, :, p:p + 1], k[:, :, p:p + 1], cos[:, where:where + 1],
                                      sin[:, where:where + 1])  # (B, H, 1, E), (B, H_kv, 1, E)
        k_all, v_all = torch.cat((keys, kp), dim=2), torch.cat((values, v[:, :, p:p + 1]), dim=2)  # (B, H_kv, S, E)
        if mistake != "no_append":
            keys, values = k_all, v_all
        if mistake == "tile":
            k_all, v_all = k_all.repeat(1, groups, 1, 1), v_all.repeat(1, groups, 1, 1)  # (B, H, S, E)
        else:
            k_all, v_all = k_all.repeat_interleave(groups, dim=1), v_all.repeat_interleave(groups, dim=1)
        scores = qp @ k_all.transpose(-2, -1) / math.sqrt(e)  # (B, H, 1, S)
        if mistake == "top_left":
            scores[..., 1:] = float("-inf")
        outs.append(torch.softmax(scores, dim=-1) @ v_all)  # (B, H, 1, E)
    return layer.o_proj(torch.cat(outs, dim=2).transpose(1, 2).reshape(batch, length - prefix, heads * e))


MISTAKES = tuple(Mistake(f"ch06_memory.decode.{name}", lambda layer, rope, x, prefix, name=name: (
    None if name == "tile" and layer.num_kv_heads in (1, layer.num_heads) else decoded(layer, rope, x, prefix, name)))
    for name in ("no_append", "position_zero", "position_after", "top_left", "tile"))


def _fresh(gen: torch.Generator) -> dict[str, tuple[int, ...]]:
    kv_heads = draw_int(2, 3, gen)
    heads, prefix = kv_heads * draw_int(2, 3, gen), draw_int(1, 5, gen)
    return dict(config=(draw_int(1, 3, gen), heads, kv_heads, 2 * draw_int(1, 4, gen), prefix,
                        prefix + draw_int(2, 4, gen)))


@checker
def check_decode_step(fn: Callable[[Tensor, Any, Any, Any], Tensor]) -> CheckResult:
    """Check ``fn(x_new, layer, cache, rope)``: one step of causal self-attention with a KV cache and RoPE.

    On named layers (multi-head, grouped-query, an empty prompt) and a fresh one, the checker fills a
    :class:`~helpers.multihead.KVCache` with a prompt, then calls ``fn`` for each following token and compares the
    outputs with one full causal pass ``layer(x, is_causal=True, rope=rope)``, and the cache with the keys and values
    of all tokens.

    Args:
        fn: The reader's step.

    Returns:
        The verdict, which names the mistake, e.g. no append, a wrong position, a mask on the single query,
        key/value heads shared the wrong way.
    """
    from helpers.attention import repeat_kv
    from helpers.multihead import KVCache
    from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb, rotate_half

    if not callable(fn):
        return verdict(False, "reader.not_callable", type=type(fn).__name__)
    allowed = (KVCache.update, RotaryEmbedding.forward, apply_rotary_pos_emb, rotate_half, repeat_kv)

    def one(case: Case) -> CheckResult | None:
        batch, heads, kv_heads, head_dim, prefix, length = case["config"]
        d_model = heads * head_dim
        layer = seeded_layer(draw_int(0, 2**31, case.generator), d_model, heads, kv_heads)
        rope, x = RotaryEmbedding(head_dim), case.randn(batch, length, d_model)
        where = phrase("ch06_memory.decode.where", embed_dim=d_model, heads=heads, kv_heads=kv_heads, prefix=prefix)
        with torch.no_grad():
            right = layer(x, is_causal=True, rope=rope)[0][:, prefix:]  # (B, T - P, D)
            full_cache, cache = KVCache(), KVCache()
            layer(x, kv_cache=full_cache, rope=rope, is_causal=True)
            if prefix:
                layer(x[:, :prefix], kv_cache=cache, rope=rope, is_causal=True)

            def decode_all() -> list[Any]:
                return [fn(x[:, p:p + 1], layer, cache, rope) for p in range(prefix, length)]

            results = call_watched(decode_all, passthrough=(decode_all,), allowed=allowed, forbidden=TRANSFORMERS,
                                   given=(layer, cache, rope))
        outs = [as_tensor(result, phrase("ch06_memory.what.new_output")) for result in results]
        for out in outs:
            if out.shape != (batch, 1, d_model):
                return verdict(False, "ch06_memory.decode.step_shape", where=where, batch=batch, embed_dim=d_model,
                               got=tuple(out.shape))
        out = torch.cat(outs, dim=1).detach()  # (B, T - P, D)
        if prefix and cache.seq_len == prefix:
            return verdict(False, "ch06_memory.decode.prompt_only", where=where, prefix=prefix, steps=length - prefix)
        if allclose(out, right) or close(out, right):
            if cache.seq_len != length:
                return verdict(False, "ch06_memory.decode.cache_length", where=where, seq_len=cache.seq_len,
                               length=length)
            if cache.key is None or cache.value is None or not (
                    close(cache.key.detach(), full_cache.key) and close(cache.value.detach(), full_cache.value)):
                return verdict(False, "ch06_memory.decode.cache_content", where=where)
            return None
        if cache.seq_len > length:
            return verdict(False, "ch06_memory.decode.too_long", where=where, seq_len=cache.seq_len, length=length)
        mistake = first_mistake(out, MISTAKES, layer, rope, x, prefix, same=close)
        if mistake is not None:
            return verdict(False, mistake.key, where=where)
        return verdict(False, "ch06_memory.decode.differs", where=where, diff=(out - right).abs().max().item())

    return passed_unless(each_case(one, CASES, seed=6310, fresh=_fresh), "ch06_memory.decode.passed")
