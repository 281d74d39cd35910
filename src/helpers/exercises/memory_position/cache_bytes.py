"""Exercise 2 of lab 6.3-6.6: the KV cache of a real model, by formula.

Contract (stated in the lab): ``cache_bytes(num_layers, num_heads, num_kv_heads, head_dim, seq_len, batch, dtype)``
returns a number of bytes (an int, or a float that is one): the keys and the values of every layer, for the
key/value heads, ``dtype.itemsize`` bytes an element. The package is refused while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .. import CheckResult
from ..cases import Case, Mistake, each_case, explaining_mistake
from ..catalogue.ch06_memory import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..reader import call_watched, checker, draw_int, verdict

__all__ = ["check_cache_bytes", "SHAPES"]

SHAPES = (  # name, layers, query heads, key/value heads, head_dim, length, batch, dtype
    ("7B MHA (Llama-2-7B)", 32, 32, 32, 128, 4096, 1, torch.bfloat16),
    ("70B GQA-8 (Llama-2-70B)", 80, 64, 8, 128, 4096, 8, torch.float16),
    ("7B MQA (Falcon-7B)", 32, 71, 1, 64, 2048, 16, torch.float32),
    ("70B GQA-8 in float8", 80, 64, 8, 128, 32768, 2, torch.float8_e4m3fn),
    ("made-up, float64", 6, 12, 4, 48, 1000, 3, torch.float64),
)
_NAMES_ZH = {"70B GQA-8 in float8": "float8 下的 70B GQA-8", "made-up, float64": "虚构的模型，float64"}
"""The names of :data:`.SHAPES` that read differently in Chinese (the others are the same in both)."""

_FRESH_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2)


def _formula(shape: tuple[Any, ...]) -> int:
    _, layers, _, kv_heads, head_dim, seq_len, batch, dtype = shape
    return 2 * layers * batch * kv_heads * seq_len * head_dim * dtype.itemsize


MISTAKES = (
    Mistake("ch06_memory.cache.one_of_two", lambda r, s: r / 2),
    Mistake("ch06_memory.cache.one_layer", lambda r, s: r / s[1]),
    Mistake("ch06_memory.cache.query_heads", lambda r, s: r * s[2] / s[3] if s[2] != s[3] else None),
    Mistake("ch06_memory.cache.elements", lambda r, s: r / s[7].itemsize),
    Mistake("ch06_memory.cache.four_bytes", lambda r, s: r / s[7].itemsize * 4 if s[7].itemsize != 4 else None),
    Mistake("ch06_memory.cache.two_bytes", lambda r, s: r / s[7].itemsize * 2 if s[7].itemsize != 2 else None),
    Mistake("ch06_memory.cache.bits", lambda r, s: r * 8),
)


def _fresh(gen: torch.Generator) -> dict[str, tuple[Any, ...]]:
    kv_heads = draw_int(1, 16, gen)
    return dict(shape=(None, draw_int(1, 96, gen), kv_heads * draw_int(1, 8, gen), kv_heads, 16 * draw_int(1, 16, gen),
                       draw_int(1, 50_000, gen), draw_int(1, 64, gen), _FRESH_DTYPES[draw_int(0, 5, gen)]))


def _number(result: Any) -> float | None:
    if isinstance(result, torch.Tensor) and result.numel() == 1:
        result = result.item()
    return float(result) if isinstance(result, (int, float)) and not isinstance(result, bool) else None


def _wrong(shape: tuple[Any, ...], got: float) -> CheckResult:
    name, layers, heads, kv_heads, head_dim, seq_len, batch, dtype = shape
    name = {"en": name, "zh": _NAMES_ZH.get(name, name)} if name else phrase("ch06_memory.cache.made_up")
    return verdict(False, "ch06_memory.cache.wrong", name=name, layers=layers, heads=heads, kv_heads=kv_heads,
                   head_dim=head_dim, seq_len=seq_len, batch=batch, dtype=str(dtype), expected=_formula(shape), got=got)


@checker
def check_cache_bytes(fn: Callable[..., int]) -> CheckResult:
    """Check ``fn(num_layers, num_heads, num_kv_heads, head_dim, seq_len, batch, dtype) -> bytes``.

    Compared with the formula of :func:`helpers.memory.kv_cache_bytes` on the shapes of Llama-2-7B (multi-head),
    Llama-2-70B (grouped-query), Falcon-7B (multi-query), one in float8 and one made up, then on a fresh made-up
    shape; a mistake is named when it explains every shape at once.

    Args:
        fn: The reader's formula.

    Returns:
        The verdict, which names the mistake, e.g. keys or values only, one layer, elements or a fixed size instead
        of ``dtype.itemsize`` bytes, bits, query heads instead of key/value heads.
    """
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-9)  # noqa: E731
    got = []
    for shape in SHAPES:
        raw = call_watched(fn, *shape[1:])
        result = _number(raw)
        if result is None:
            return verdict(False, "ch06_memory.cache.not_number", type=type(raw).__name__, value=repr(raw))
        got.append(result)
    rights = [_formula(shape) for shape in SHAPES]
    if got != rights:  # the shapes together tell the mistakes apart (2 bytes of float16: keys only, or elements?)
        mistake = explaining_mistake(got, rights, list(zip(rights, SHAPES)), MISTAKES, close)
        if mistake is not None:
            return verdict(False, mistake.key)
        if got[:4] == rights[:4]:  # every real model right, the made-up one not: a table of them
            return verdict(False, "ch06_memory.cache.table", count=4)
        i = next(i for i, (g, r) in enumerate(zip(got, rights)) if g != r)
        return _wrong(SHAPES[i], got[i])

    def fresh(case: Case) -> CheckResult | None:
        raw = call_watched(fn, *case["shape"][1:])
        result = _number(raw)
        if result is None:
            return verdict(False, "ch06_memory.cache.not_number", type=type(raw).__name__, value=repr(raw))
        return None if result == _formula(case["shape"]) else _wrong(case["shape"], result)

    failure = each_case(fresh, (), seed=6320, fresh=_fresh)
    if failure is not None:
        return failure
    name = SHAPES[1][0]
    right = _formula(SHAPES[1])
    return verdict(True, "ch06_memory.cache.passed", name={"en": name, "zh": _NAMES_ZH.get(name, name)},
                   gib=right / 2**30, gib_mha=right * 8 / 2**30)
