"""Exercise 5 of lab 4: the parameters of a layer with ``num_kv_heads`` key/value heads, by formula.

Contract (stated in the lab): ``count_parameters(embed_dim, num_heads, num_kv_heads, bias)`` returns a
whole number (an ``int``; an integral float such as ``360.0`` is accepted too). Building a layer
(``MultiHeadAttention``, ``nn.Linear``, ``nn.MultiheadAttention``) or reading the package's counts
(``decoding.ModelShape``) is refused while it runs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch04 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import phrase
from ..reader import as_number, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_parameter_count", "parameters"]

LAYOUTS = (  # (name, (embed_dim, num_heads, num_kv_heads, bias)): every miscount gives a number of its own
    ("multi-head", dict(d=48, h=6, hkv=6, bias=True)),
    ("grouped-query", dict(d=64, h=8, hkv=2, bias=True)),
    ("multi-query", dict(d=40, h=5, hkv=1, bias=False)),
    ("grouped-query, no biases", dict(d=36, h=6, hkv=3, bias=False)),
    ("multi-query", dict(d=28, h=7, hkv=1, bias=True)),
)


def parameters(d: int, h: int, hkv: int, bias: bool) -> int:
    """The parameters of a layer: q_proj and o_proj ``D x D``, k_proj and v_proj ``D x (H_kv E)``, and biases."""
    kv = hkv * (d // h)
    return 2 * d * d + 2 * d * kv + ((2 * d + 2 * kv) if bias else 0)


def _fresh_layout(gen: torch.Generator) -> dict[str, object]:
    hkv = draw_int(2, 4, gen)
    h = hkv * draw_int(2, 3, gen)
    return dict(d=h * draw_int(2, 16, gen), h=h, hkv=hkv, bias=bool(draw_int(0, 1, gen)))


MISTAKES = (
    Mistake("ch04.count.full_kv", lambda d, h, hkv, bias: parameters(d, h, h, bias) if hkv != h else None),
    Mistake("ch04.count.kv_times_d", lambda d, h, hkv, bias: 2 * d * d + 2 * d * hkv * d + (
        (2 * d + 2 * hkv * d) if bias else 0)),
    Mistake("ch04.count.no_bias", lambda d, h, hkv, bias: parameters(d, h, hkv, False) if bias else None),
    Mistake("ch04.count.bias_counted", lambda d, h, hkv, bias: parameters(d, h, hkv, True) if not bias else None),
    Mistake("ch04.count.no_output", lambda d, h, hkv, bias: parameters(d, h, hkv, bias) - d * d - (d if bias else 0)),
    Mistake("ch04.count.times_heads", lambda d, h, hkv, bias: parameters(d, h, hkv, bias) * h),
    Mistake("ch04.count.times_heads", lambda d, h, hkv, bias: 4 * d * d * h),
)


@checker
def check_parameter_count(fn: Callable[[int, int, int, bool], int]) -> CheckResult:
    """Check ``fn(embed_dim, num_heads, num_kv_heads, bias) -> number of parameters`` of a layer.

    Named layouts (multi-head, grouped-query and multi-query, with and without biases), then a fresh one.
    Every package function (building a :class:`~helpers.multihead.MultiHeadAttention`, computing
    ``decoding.ModelShape(...).params_per_layer``), ``torch.nn.Linear`` and PyTorch's attention layers are
    refused while ``fn`` runs: count by formula.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        d, h, hkv, bias = case["d"], case["h"], case["hkv"], case["bias"]
        result = as_number(call_watched(fn, d, h, hkv, bias, forbidden=ATTENTION + ("torch.nn.Linear",)),
                           "ch04.count.not_int", integral=True)
        right = parameters(d, h, hkv, bias)
        if result == right:
            return None
        fields = dict(layout=phrase("ch04.count.layout", d=d, h=h, hkv=hkv, bias=bias), result=result, hkv=hkv,
                      d=d, kv=hkv * (d // h), n=2 * d + 2 * hkv * (d // h))
        mistake = first_mistake(result, MISTAKES, d, h, hkv, bias, same=lambda a, b: a == b)
        if mistake is not None:
            return verdict(False, mistake.key, **fields)
        return verdict(False, "ch04.count.wrong", layout=fields["layout"], expected=right, got=result)

    return passed_unless(each_case(one, LAYOUTS, seed=4500, fresh=_fresh_layout), "ch04.count.passed")
