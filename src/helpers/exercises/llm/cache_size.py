"""Exercise 3 of lab 7: SmolLM2's KV cache for a given context, by formula, checked against the measured cache.

Contract (stated in the lab): ``cache_bytes(config, context, batch, dtype)`` returns a number of bytes (an int, or a
float that is one): the keys and the values of every layer, for the key/value heads, ``context`` tokens of
``batch`` sequences, ``dtype.itemsize`` bytes an element; ``config`` is a
:class:`~helpers.llama.LlamaConfig` (``model.config``). The package is refused while it runs. The checker tries
SmolLM2's configuration at several contexts and types and two made-up models (a mistake is named when it
explains them all at once), then a fresh context on the real model, whose caches it fills and measures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ... import seeding
from .. import CheckResult
from ..cases import Mistake, explaining_mistake
from ..catalogue.ch07 import MESSAGES  # noqa: F401 (registers its messages)
from ..reader import call_watched, checker, draw_int, reject, verdict
from .common import check_model

__all__ = ["check_cache_size", "formula", "made_up_configs"]


def made_up_configs() -> list[Any]:
    """Two made-up Llama shapes: multi-head (4 key/value heads for 4 query heads) and grouped-query (8 for 2)."""
    from helpers.llama import LlamaConfig

    return [LlamaConfig(vocab_size=100, hidden_size=128, intermediate_size=256, num_hidden_layers=5,
                        num_attention_heads=4, num_key_value_heads=4, head_dim=32),
            LlamaConfig(vocab_size=100, hidden_size=384, intermediate_size=512, num_hidden_layers=7,
                        num_attention_heads=8, num_key_value_heads=2, head_dim=48)]


def formula(config: Any, context: int, batch: int, dtype: torch.dtype) -> int:
    """``2 * N * B * H_kv * context * E * itemsize``."""
    per_token = 2 * config.num_hidden_layers * config.num_key_value_heads * config.head_dim
    return per_token * batch * context * dtype.itemsize


MISTAKES = (  # simulate(right, case) with case = (config, context, batch, dtype)
    Mistake("ch07.cache.one_of_two", lambda r, c: r / 2),
    Mistake("ch07.cache.one_layer", lambda r, c: r / c[0].num_hidden_layers),
    Mistake("ch07.cache.query_heads", lambda r, c: r * c[0].num_attention_heads / c[0].num_key_value_heads
            if c[0].num_attention_heads != c[0].num_key_value_heads else None),
    Mistake("ch07.cache.elements", lambda r, c: r / c[3].itemsize),
    Mistake("ch07.cache.four_bytes", lambda r, c: r / c[3].itemsize * 4 if c[3].itemsize != 4 else None),
    Mistake("ch07.cache.batch", lambda r, c: r / c[2] if c[2] != 1 else None),
    Mistake("ch07.cache.bits", lambda r, c: r * 8),
)


def _number(result: Any) -> float:
    if isinstance(result, torch.Tensor) and result.numel() == 1:
        result = result.item()
    if isinstance(result, bool) or not isinstance(result, (int, float)) or not math.isfinite(result):
        raise reject("ch07.cache.not_number", type=type(result).__name__, value=repr(result))
    return float(result)


@checker
def check_cache_size(fn: Callable[..., int], model: Any) -> CheckResult:
    """Check ``fn(config, context, batch, dtype) -> bytes`` on SmolLM2 and made-up shapes, then on the measured cache.

    Args:
        fn: The reader's formula.
        model: SmolLM2-135M (``load_smollm2()[0]``): its configuration is used, and its caches filled.

    Returns:
        The verdict; passing, it gives SmolLM2's cache per token and at its context length, and with 9 key/value heads.
    """
    from helpers.llama import LlamaConfig

    model = check_model(model)
    config = model.config
    cases = [(config, 2048, 1, torch.float32), (config, 8192, 4, torch.bfloat16), (config, 100, 2, torch.float16),
             (made_up_configs()[0], 300, 3, torch.float32), (made_up_configs()[1], 1000, 1, torch.bfloat16)]
    got = [_number(call_watched(fn, LlamaConfig(**vars(c)), context, batch, dtype))
           for c, context, batch, dtype in cases]
    rights = [formula(*case) for case in cases]
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-9)  # noqa: E731
    if not all(close(g, r) for g, r in zip(got, rights)):
        mistake = explaining_mistake(got, rights, list(zip(rights, cases)), MISTAKES, close)
        if mistake is not None:
            return verdict(False, mistake.key)
        i = next(i for i, (g, r) in enumerate(zip(got, rights)) if not close(g, r))
        c, context, batch, dtype = cases[i]
        return verdict(False, "ch07.cache.wrong", layers=c.num_hidden_layers, kv_heads=c.num_key_value_heads,
                       heads=c.num_attention_heads, head_dim=c.head_dim, context=context, batch=batch,
                       dtype=str(dtype), expected=rights[i], got=got[i])
    gen = seeding.fresh_generator()
    context = draw_int(5, 24, gen)
    ids = torch.randint(1000, 20000, (1, context), generator=gen)
    caches = model.new_caches()
    with torch.no_grad():
        model(ids, caches=caches)
    held = sum(c.key.numel() * c.key.element_size() + c.value.numel() * c.value.element_size() for c in caches)
    answer = _number(call_watched(fn, LlamaConfig(**vars(config)), context, 1, caches[0].key.dtype))
    if not close(answer, held):
        return verdict(False, "ch07.cache.measured", context=context, expected=held, got=answer,
                       seed=gen.initial_seed())
    per_token = formula(config, 1, 1, torch.float32)
    return verdict(True, "ch07.cache.passed", context=context, held=held, kib=per_token / 1024,
                   length=config.max_position_embeddings,
                   mib=formula(config, config.max_position_embeddings, 1, torch.float32) / 2**20,
                   mib_mha=formula(config, config.max_position_embeddings, 1, torch.float32)
                   * config.num_attention_heads / config.num_key_value_heads / 2**20)
