"""SmolLM2-135M's KV cache: its size from the configuration and on the cache, what GQA saves, and its speed (chapter 7).

A decoder keeps, for every layer, the keys and values of every token it has read: ``2 (K and V)
x N layers x H_kv heads x E`` numbers a token (:func:`bytes_per_token`). SmolLM2 shares each
key/value head among 3 query heads (grouped-query attention, Ainslie et al., 2023): with a
key/value head per query head (``H_kv = H = 9``) the cache would be 3 times as large.
:func:`measured_bytes_per_token` reads it off the caches after a prefill; :func:`decode_times`
times greedy decoding with the cache and without it (the whole text run again at every step),
which give the same tokens.

Shape legend:
    B     texts
    L     prompt tokens; T new tokens
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch import Tensor

from ..checks import check_positive_int
from ..llama import LlamaConfig, LlamaForCausalLM
from ..multihead import KVCache

__all__ = ["bytes_per_token", "measured_bytes_per_token", "DecodeTimes", "decode_times"]


def bytes_per_token(config: LlamaConfig, dtype: torch.dtype = torch.float32, num_kv_heads: int | None = None) -> int:
    """The bytes the KV cache holds for one token: ``2 * N * H_kv * E * itemsize``.

    Args:
        config: the model's sizes.
        dtype: the cache's element type.
        num_kv_heads: ``H_kv`` to assume instead of the model's (e.g. ``H`` for multi-head attention).

    Returns:
        Bytes a token, all layers, keys and values.
    """
    heads = config.num_key_value_heads if num_kv_heads is None else check_positive_int("num_kv_heads", num_kv_heads)
    return 2 * config.num_hidden_layers * heads * config.head_dim * dtype.itemsize


def measured_bytes_per_token(caches: list[KVCache]) -> float:
    """The bytes the caches hold (keys and values, every layer) divided by the tokens cached and the batch."""
    held = sum(c.key.numel() * c.key.element_size() + c.value.numel() * c.value.element_size() for c in caches)
    first = caches[0].key
    return held / (first.size(0) * first.size(2))


@dataclass(frozen=True)
class DecodeTimes:
    """Greedy decoding timed with and without the cache.

    Attributes:
        prompt_tokens: ``L``.
        new_tokens: ``T``.
        with_cache: seconds, best of the repeats.
        without_cache: seconds, best of the repeats.
        same_tokens: whether both gave the same tokens.
    """

    prompt_tokens: int
    new_tokens: int
    with_cache: float
    without_cache: float
    same_tokens: bool

    @property
    def speed_up(self) -> float:
        """``without_cache / with_cache``."""
        return self.without_cache / self.with_cache


@torch.no_grad()
def decode_times(model: LlamaForCausalLM, input_ids: Tensor, new_tokens: int, repeats: int = 2) -> DecodeTimes:
    """Times ``model.generate`` with the cache and with ``use_cache=False`` (best of ``repeats`` each).

    Shape:
        input_ids: ``(B, L)``.
    """
    check_positive_int("new_tokens", new_tokens)
    check_positive_int("repeats", repeats)
    best = {True: float("inf"), False: float("inf")}
    out = {}
    for _ in range(repeats):
        for use_cache in (True, False):
            start = time.perf_counter()
            out[use_cache] = model.generate(input_ids, new_tokens, use_cache=use_cache)
            best[use_cache] = min(best[use_cache], time.perf_counter() - start)
    return DecodeTimes(input_ids.size(1), new_tokens, best[True], best[False], torch.equal(out[True], out[False]))
