"""Exercise 9 of lab 6.3-6.6: the memory of a rolling (sliding-window) KV cache.

Contract (stated in the lab): ``rolling_cache_gib(num_layers, num_heads, num_kv_heads, head_dim, window, seq_len,
bytes_per_value)`` returns a number of GiB (2**30 bytes): the keys and values held by a cache of ``window`` slots
after ``seq_len`` tokens of one sequence. The package is refused while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from .. import CheckResult
from ..cases import Case, Mistake, each_case, explaining_mistake
from ..catalogue.ch06_long_context import MESSAGES  # noqa: F401 (registers its messages)
from ..reader import call_watched, checker, draw_int, verdict

__all__ = ["MISTRAL_7B", "check_rolling_cache"]

MISTRAL_7B = dict(num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128, window=4096, seq_len=32768,
                  bytes_per_value=2)
"""Mistral 7B's shape at 32k tokens in 16-bit values.

Jiang et al. (2023), "Mistral 7B", section 2 and Table 1: 32 layers, 32 query heads, 8 key/value heads, head dimension
128, a sliding window of 4096 tokens."""

CASES = (  # made-up models: shorter and longer than the window, 1 and 4 bytes (a fixed 2 would pass Mistral's)
    ("Mistral 7B at 32k tokens", MISTRAL_7B),
    ("made-up, 1 byte, longer than the window", dict(num_layers=12, num_heads=24, num_kv_heads=6, head_dim=64,
                                                     window=1000, seq_len=5000, bytes_per_value=1)),
    ("made-up, 4 bytes, shorter than the window", dict(num_layers=40, num_heads=30, num_kv_heads=3, head_dim=96,
                                                       window=8192, seq_len=3000, bytes_per_value=4)),
)
_GIB = 2**30


def _formula(num_layers: int, num_heads: int, num_kv_heads: int, head_dim: int, window: int, seq_len: int,
             bytes_per_value: int) -> float:
    return 2 * num_layers * num_kv_heads * head_dim * min(seq_len, window) * bytes_per_value / _GIB


def _mistake(name: str, wrong: Callable[[float, dict[str, int]], float | None]) -> Mistake:
    return Mistake(f"ch06_long_context.rolling.{name}", wrong)


MISTAKES = (
    _mistake("one_of_two", lambda r, c: r / 2), _mistake("one_layer", lambda r, c: r / c["num_layers"]),
    _mistake("query_heads", lambda r, c: r * c["num_heads"] / c["num_kv_heads"]),
    _mistake("not_capped", lambda r, c: r * c["seq_len"] / min(c["seq_len"], c["window"])
             if c["seq_len"] > c["window"] else None),
    _mistake("always_window", lambda r, c: r * c["window"] / min(c["seq_len"], c["window"])
             if c["seq_len"] < c["window"] else None),
    _mistake("bytes", lambda r, c: r * _GIB), _mistake("mib", lambda r, c: r * 1024),
    _mistake("gb", lambda r, c: r * _GIB / 1e9), _mistake("bits", lambda r, c: r * 8),
    _mistake("fixed_bytes", lambda r, c: r / c["bytes_per_value"] * 2 if c["bytes_per_value"] != 2 else None),
    _mistake("elements", lambda r, c: r / c["bytes_per_value"] if c["bytes_per_value"] != 1 else None),
)


def _fresh(gen: torch.Generator) -> dict[str, int]:
    kv_heads, window = draw_int(1, 16, gen), draw_int(2, 16_384, gen)
    return dict(num_layers=draw_int(2, 96, gen), num_heads=kv_heads * draw_int(2, 8, gen), num_kv_heads=kv_heads,
                head_dim=16 * draw_int(1, 16, gen), window=window, seq_len=window + draw_int(1, 100_000, gen),
                bytes_per_value=(1, 2, 4)[draw_int(0, 2, gen)])


def _wrong(config: dict[str, int], got: float) -> CheckResult:
    return verdict(False, "ch06_long_context.rolling.wrong", expected=_formula(**config), got=got,
                   config=", ".join(f"{k}={v}" for k, v in config.items()))


@checker
def check_rolling_cache(fn: Callable[[int, int, int, int, int, int, int], float]) -> CheckResult:
    """Check ``fn(num_layers, num_heads, num_kv_heads, head_dim, window, seq_len, bytes_per_value) -> GiB``.

    Compared with the checker's own formula on Mistral 7B's shape at 32k tokens (:data:`.MISTRAL_7B`), on made-up
    shapes (texts shorter and longer than the window, 1 and 4 bytes a value) and on a fresh one.

    Args:
        fn: The reader's formula.

    Returns:
        The verdict, which names the mistake (keys or values only, one layer, query heads, not capped at the window,
        always the whole window, bytes / MiB / GB / bits instead of GiB, a fixed element size) and, when right, gives
        Mistral 7B's rolling and full cache at 32k tokens.
    """
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-6)  # noqa: E731
    got = []
    for _, config in CASES:
        result = call_watched(fn, *config.values())
        if isinstance(result, torch.Tensor) and result.numel() == 1:
            result = result.item()
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            return verdict(False, "ch06_long_context.rolling.not_number", type=type(result).__name__,
                           value=repr(result))
        got.append(float(result))
    rights = [_formula(**config) for _, config in CASES]
    if not all(close(g, r) for g, r in zip(got, rights)):  # the cases together tell the mistakes apart
        mistake = explaining_mistake(got, rights, [(r, config) for r, (_, config) in zip(rights, CASES)], MISTAKES,
                                     close)
        if mistake is not None:
            return verdict(False, mistake.key)
        if close(got[0], rights[0]):  # Mistral's right, a made-up shape not: a number copied from elsewhere
            return verdict(False, "ch06_long_context.rolling.table")
        i = next(i for i, (g, r) in enumerate(zip(got, rights)) if not close(g, r))
        return _wrong(CASES[i][1], got[i])

    def fresh(case: Case) -> CheckResult | None:
        config = dict(case.params)
        result = call_watched(fn, *config.values())
        if isinstance(result, torch.Tensor) and result.numel() == 1:
            result = result.item()
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            return verdict(False, "ch06_long_context.rolling.not_number", type=type(result).__name__,
                           value=repr(result))
        return None if close(result, _formula(**config)) else _wrong(config, float(result))

    failure = each_case(fresh, (), seed=6390, fresh=_fresh)
    if failure is not None:
        return failure
    rolling, full = _formula(**MISTRAL_7B), _formula(**dict(MISTRAL_7B, window=MISTRAL_7B["seq_len"]))
    return verdict(True, "ch06_long_context.rolling.passed", rolling=rolling, full=full, ratio=full / rolling,
                   seq_len=MISTRAL_7B["seq_len"], window=MISTRAL_7B["window"])
