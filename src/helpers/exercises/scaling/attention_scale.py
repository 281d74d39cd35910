"""Exercise 5 of lab 3: the right scale for a head layout (MHA, GQA, MQA).

Contract (stated in the lab): ``my_scale(embed_dim, num_heads, num_kv_heads)`` returns the factor on ``q · k``, a
number: ``1 / sqrt(head_dim)`` with ``head_dim = embed_dim / num_heads``. The package is refused while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from .. import CheckResult
from ..cases import Case, each_case
from ..catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..reader import call_watched, checker, draw_int, passed_unless, verdict
from .common import near, number

__all__ = ["check_attention_scale", "scale_mistakes", "told_apart"]

CASES = (  # (embed_dim, num_heads, num_kv_heads): the grouped-query layout first, where every mistake is told apart
    ("grouped-query, 8 heads, 2 key/value heads", dict(layout=(96, 8, 2))),
    ("multi-head, 4 heads", dict(layout=(40, 4, 4))),
    ("multi-query, 6 heads", dict(layout=(48, 6, 1))),
    ("one head", dict(layout=(20, 1, 1))),
)


def scale_mistakes(embed_dim: int, num_heads: int, num_kv_heads: int) -> list[tuple[float, str]]:
    """The scale each usual mistake gives for one head layout, with the mistake's key."""
    head_dim, kv_dim = embed_dim // num_heads, embed_dim // num_kv_heads
    return [(1 / math.sqrt(embed_dim), "model_dim"), (math.sqrt(head_dim), "multiplier"), (1 / head_dim, "no_sqrt"),
            (1 / math.sqrt(kv_dim), "kv_heads"), (1 / math.sqrt(num_heads), "num_heads"),
            (math.sqrt(embed_dim), "two_mistakes")]


def told_apart(embed_dim: int, num_heads: int, num_kv_heads: int) -> bool:
    """Whether every mistake that misses the right scale gives a number of its own (``head_dim = 4`` with 16 heads
    gives ``1/head_dim = 1/sqrt(num_heads)``: such a layout could not say which mistake was made)."""
    right = 1 / math.sqrt(embed_dim // num_heads)
    values = [v for v, _ in scale_mistakes(embed_dim, num_heads, num_kv_heads) if not near(v, right, 1e-6)]
    return all(not near(a, b, 1e-6) for i, a in enumerate(values) for b in values[i + 1:])


def _fresh(gen: torch.Generator) -> dict[str, tuple[int, int, int]]:
    """A fresh grouped-query layout whose mistakes are told apart, ``head_dim`` never 1 nor ``num_heads``."""
    heads = (4, 6, 8, 12, 16)[draw_int(0, 4, gen)]
    divisors = [d for d in range(2, heads) if heads % d == 0]
    kv = divisors[draw_int(0, len(divisors) - 1, gen)]
    while True:
        head_dim = draw_int(2, 48, gen)
        if head_dim != heads and told_apart(heads * head_dim, heads, kv):
            return dict(layout=(heads * head_dim, heads, kv))


@checker
def check_attention_scale(fn: Callable[[int, int, int], float]) -> CheckResult:
    """Check ``fn(embed_dim, num_heads, num_kv_heads) -> scale`` on named head layouts and a fresh one.

    The factor on ``q . k`` must be ``1 / sqrt(head_dim)`` with ``head_dim = embed_dim / num_heads``: each head's
    dot product runs over ``head_dim`` features, whatever the number of key/value heads. The package is refused
    while ``fn`` runs (``logit_scale_of``, ``MultiHeadAttention``...).

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (``d_model`` for ``head_dim``, a missing square root, a multiplier instead
        of a divisor, the key/value heads).
    """
    def one(case: Case) -> CheckResult | None:
        embed_dim, num_heads, num_kv_heads = case["layout"]
        layout = f"embed_dim={embed_dim}, num_heads={num_heads}, num_kv_heads={num_kv_heads}"
        value = number(call_watched(fn, embed_dim, num_heads, num_kv_heads), phrase("ch03.what.scale", layout=layout))
        head_dim = embed_dim // num_heads
        right = 1 / math.sqrt(head_dim)
        if near(value, right, 1e-6):
            return None
        for candidate, mistake in scale_mistakes(embed_dim, num_heads, num_kv_heads):
            if near(value, candidate, 1e-6):
                return verdict(False, f"ch03.scale.{mistake}", layout=layout, value=value, embed_dim=embed_dim,
                               head_dim=head_dim, kv_dim=embed_dim // num_kv_heads)
        return verdict(False, "ch03.scale.wrong", layout=layout, right=right, value=value)

    return passed_unless(each_case(one, CASES, seed=3500, fresh=_fresh), "ch03.scale.passed")
