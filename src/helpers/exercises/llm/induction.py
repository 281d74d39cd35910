"""Exercise 1 of lab 7: find the induction heads of SmolLM2-135M.

Contract (stated in the lab): ``induction_scores(weights, n)`` takes every layer's attention weights on ``B``
sequences, each two copies of the same ``n`` tokens, ``(N, B, H, 2n, 2n)``, and returns ``(N, H)``: for each
layer and head, the mean weight that the queries of the second copy (``t = n .. 2n - 1``) put on the token after
the earlier occurrence of their own token (``t - n + 1``), averaged over the sequences too. The package is
refused while it runs. The checker tries it on weights drawn at random (named cases), then on the real model's
weights on random sequences it draws itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch07 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..reader import allclose, as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .common import check_model, model_weights, random_weights

__all__ = ["check_induction_scores", "induction", "CASES"]

CASES = (  # N layers, B sequences, H heads, n tokens a copy: N != H, so that a transposed answer shows
    ("2 layers, 3 heads, copies of 4", dict(layers=2, batch=2, heads=3, n=4)),
    ("3 layers, 2 heads, copies of 5", dict(layers=3, batch=1, heads=2, n=5)),
    ("1 layer, 4 heads, copies of 3", dict(layers=1, batch=3, heads=4, n=3)),
)


def induction(weights: Tensor, n: int, shift: int = 1, last: int = 0) -> Tensor:
    """The reference score: mean weight of queries ``n .. 2n - 1 - last`` on ``t - n + shift``; ``(N, H)``."""
    t = torch.arange(n, 2 * n - last)
    return weights[..., t, t - n + shift].mean(dim=(1, 3))  # (N, B, H, n) -> (N, H)


MISTAKES = (
    Mistake("ch07.induction.same_token", lambda w, n: induction(w, n, shift=0)),
    Mistake("ch07.induction.previous", lambda w, n: w[..., torch.arange(1, 2 * n), torch.arange(0, 2 * n - 1)]
            .mean(dim=(1, 3))),
    Mistake("ch07.induction.last_query", lambda w, n: induction(w, n, last=1)),
    Mistake("ch07.induction.sum", lambda w, n: induction(w, n) * n * w.size(1)),
    Mistake("ch07.induction.sum_queries", lambda w, n: induction(w, n) * n),
    Mistake("ch07.induction.transposed", lambda w, n: induction(w, n).T),
)


def _fresh(gen: torch.Generator) -> dict[str, int]:
    return dict(batch=2, n=draw_int(10, 16, gen))


@checker
def check_induction_scores(fn: Callable[[Tensor, int], Tensor], model: Any) -> CheckResult:
    """Check ``fn(weights, n) -> (N, H)`` induction scores; then run it on ``model``'s own weights.

    Three named cases of random causal weights (``CASES``), then the model on two random token sequences of a
    fresh length, each written twice, drawn with a fresh generator; the verdict names the top heads it found.

    Args:
        fn: The reader's function.
        model: SmolLM2-135M (``load_smollm2()[0]``).

    Returns:
        The verdict.
    """
    from helpers.experiments.llm_text import repeated_random_tokens

    model = check_model(model)
    found: dict[str, Tensor] = {}

    def one(case: Case) -> CheckResult | None:
        n = case["n"]
        if case.name == "fresh":
            ids = repeated_random_tokens(case["batch"], n, 0, generator=case.generator)
            weights = model_weights(model, ids)
        else:
            weights = random_weights(case.generator, case["layers"], case["batch"], case["heads"], 2 * n)
        out = as_tensor(call_watched(fn, weights.clone(), n), phrase("ch07.what.scores"))
        right = induction(weights, n)
        if allclose(out, right, rtol=1e-4, atol=1e-5):
            found["scores"] = right
            return None
        if out.shape == weights.shape[:3]:
            return verdict(False, "ch07.induction.per_sequence", shape=tuple(out.shape))
        mistake = first_mistake(out, MISTAKES, weights, n, same=lambda a, b: allclose(a, b, rtol=1e-4, atol=1e-5))
        if mistake is not None:
            return verdict(False, mistake.key)
        if out.shape != right.shape:
            return verdict(False, "ch07.induction.shape", expected=tuple(right.shape), got=tuple(out.shape))
        return verdict(False, "ch07.induction.wrong", case=case.name)

    failure = each_case(one, CASES, seed=7100, fresh=_fresh)
    if failure is not None:
        return failure
    scores = found["scores"]
    top = scores.flatten().argsort(descending=True)[:3].tolist()
    heads = ", ".join(f"{i // scores.size(1)}.{i % scores.size(1)} ({scores.flatten()[i]:.2f})" for i in top)
    return passed_unless(None, "ch07.induction.passed", heads=heads)
