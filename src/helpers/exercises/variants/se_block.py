"""Exercise 3 of lab 5: a squeeze-and-excitation block.

Contract (stated in the lab): ``se_block(x, fc1, fc2)`` takes a feature map ``(B, C, H, W)`` and two
``nn.Linear`` layers and returns ``x`` times the gates ``sigmoid(fc2(relu(fc1(mean over H, W))))`` ``(B, C, 1, 1)``.
The package, torchvision, SciPy and scikit-learn are refused while it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch05 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import LIBRARIES
from ..messages import phrase
from ..reader import allclose, as_tensor, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_se_block"]

CASES = (("6 channels", dict(channels=6, size=(3, 4, 5))), ("9 channels", dict(channels=9, size=(2, 5, 3))))


def _se(x: Tensor, fc1: Any, fc2: Any, *, squeeze: str = "mean", relu: bool = True, gate: str = "sigmoid") -> Tensor:
    squeezed = {"mean": x.mean(dim=(2, 3)), "max": x.amax(dim=(2, 3)), "sum": x.sum(dim=(2, 3))}[squeeze]
    hidden = fc1(squeezed)
    logits = fc2(torch.relu(hidden) if relu else hidden)
    weights = {"sigmoid": torch.sigmoid(logits), "softmax": torch.softmax(logits, dim=1), "none": logits}[gate]
    return x * weights[:, :, None, None]


MISTAKES = (
    Mistake("ch05.se.max", lambda x, fc1, fc2: _se(x, fc1, fc2, squeeze="max")),
    Mistake("ch05.se.sum", lambda x, fc1, fc2: _se(x, fc1, fc2, squeeze="sum")),
    Mistake("ch05.se.no_relu", lambda x, fc1, fc2: _se(x, fc1, fc2, relu=False)),
    Mistake("ch05.se.softmax", lambda x, fc1, fc2: _se(x, fc1, fc2, gate="softmax")),
    Mistake("ch05.se.no_sigmoid", lambda x, fc1, fc2: _se(x, fc1, fc2, gate="none")),
)


def _inputs(case: Case) -> tuple[Tensor, Any, Any]:
    """A feature map and layers drawn so that ``fc1``'s outputs have both signs and the ReLU changes the answer."""
    channels = case["channels"]
    fc1, fc2 = torch.nn.Linear(channels, max(1, channels // 2)).double(), torch.nn.Linear(max(1, channels // 2),
                                                                                         channels).double()
    with torch.no_grad():
        for layer in (fc1, fc2):
            layer.weight.copy_(case.randn(*layer.weight.shape, dtype=torch.float64))
            layer.bias.copy_(case.randn(*layer.bias.shape, dtype=torch.float64))
        while True:
            x = case.randn(case["size"][0], channels, *case["size"][1:], dtype=torch.float64) + case.randn(
                1, channels, 1, 1, dtype=torch.float64)
            pre = fc1(x.mean(dim=(2, 3)))
            if (pre < 0).any() and (pre > 0).any() and not allclose(_se(x, fc1, fc2), _se(x, fc1, fc2, relu=False)):
                return x, fc1, fc2


@checker
def check_se_block(fn: Callable[[Tensor, Any, Any], Tensor]) -> CheckResult:
    """Check ``fn(x, fc1, fc2)``: squeeze (spatial mean), excite (fc1, ReLU, fc2, sigmoid), scale.

    Named cases and a fresh one, drawn so that the pre-activations have both signs (an answer without the ReLU does
    not pass).

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    def one(case: Case) -> CheckResult | None:
        x, fc1, fc2 = _inputs(case)
        with torch.no_grad():
            right = _se(x, fc1, fc2)
            out = as_tensor(call_watched(fn, x, fc1, fc2, forbidden=(*LIBRARIES, "torchvision")),
                            phrase("ch05.what.feature_map"))
            if allclose(out, right):
                return None
            gates = torch.sigmoid(fc2(torch.relu(fc1(x.mean(dim=(2, 3))))))
            if out.shape == gates.shape and allclose(out, gates):
                return verdict(False, "ch05.se.weights_only")
            if out.shape != right.shape:
                return verdict(False, "ch05.se.shape", got=tuple(out.shape), expected=tuple(right.shape))
            mistake = first_mistake(out, MISTAKES, x, fc1, fc2, same=allclose)
        return verdict(False, mistake.key if mistake else "ch05.se.differs")

    fresh = lambda gen: dict(channels=draw_int(4, 10, gen), size=(draw_int(2, 4, gen), draw_int(3, 6, gen),  # noqa: E731
                                                                  draw_int(3, 6, gen)))
    return passed_unless(each_case(one, CASES, seed=5300, fresh=fresh), "ch05.se.passed")
