"""guard.package_disabled: an answer that calls the package's own version is caught, by name, and
everything is restored afterwards."""

from __future__ import annotations

import pytest
import torch

import helpers
from helpers import attention
from helpers.attention import masked_softmax
from helpers.exercises.guard import PackageCallError, package_disabled
from helpers.exercises.reader import call_reader_function
from helpers.multihead import MultiHeadAttention


def delegating(scores: torch.Tensor) -> torch.Tensor:
    return masked_softmax(scores)  # a name imported into this module's globals


def honest(scores: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scores.float(), dim=-1)


def test_every_route_to_a_disabled_function_raises_and_names_it() -> None:
    scores = torch.randn(3, 4)
    with package_disabled(masked_softmax, namespaces=[globals()]):
        for route in (lambda: attention.masked_softmax(scores), lambda: helpers.masked_softmax(scores),
                      lambda: delegating(scores)):
            with pytest.raises(PackageCallError, match="helpers.masked_softmax"):
                route()
        # the package's own users of the function are switched off too
        with pytest.raises(PackageCallError):
            attention.scaled_dot_product_attention(scores[None], scores[None], scores[None])
        torch.testing.assert_close(honest(scores), torch.softmax(scores, -1))


def test_everything_is_restored_after_the_check_and_after_an_error() -> None:
    with pytest.raises(ValueError):
        with package_disabled(masked_softmax, MultiHeadAttention.forward, namespaces=[globals()]):
            raise ValueError("the reader's code failed")
    assert attention.masked_softmax is masked_softmax and helpers.masked_softmax is masked_softmax
    assert globals()["masked_softmax"] is masked_softmax
    layer = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    assert layer(x, x, x)[0].shape == (1, 3, 8)


def test_a_disabled_method_raises_on_every_instance() -> None:
    layer = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    with package_disabled(MultiHeadAttention.forward):
        with pytest.raises(PackageCallError, match="calls helpers.MultiHeadAttention,"):
            layer(x, x, x)
    with package_disabled(MultiHeadAttention, "helpers.multihead.MultiHeadAttention.forward"):
        with pytest.raises(PackageCallError):
            layer(x, x, x)
    assert layer(x, x, x)[0].shape == (1, 3, 8)


def test_call_reader_function_turns_delegation_into_a_verdict_naming_the_function() -> None:
    with package_disabled(masked_softmax, namespaces=[globals()]):
        result, verdict = call_reader_function(delegating, torch.randn(2, 3))
    assert result is None and not verdict.passed and "calls helpers.masked_softmax" in verdict.message
    with package_disabled(masked_softmax, namespaces=[globals()]):
        result, verdict = call_reader_function(honest, torch.randn(2, 3))
    assert verdict is None and result.shape == (2, 3)


def test_a_target_that_is_not_a_function_or_path_is_refused_and_nothing_stays_patched() -> None:
    with pytest.raises(TypeError, match="package_disabled takes functions"):
        with package_disabled(3):  # type: ignore[arg-type]
            pass
    with pytest.raises(ValueError, match="cannot find 'helpers.attention.no_such_function'"):
        with package_disabled("helpers.attention.no_such_function"):
            pass
    assert attention.masked_softmax is masked_softmax
