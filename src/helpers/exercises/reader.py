"""What every checker needs to handle a reader's answer safely: call it, type-check it, compare it.

A checker reads as its logic: the helpers here that meet a wrong answer (a function that raises,
a result that is not a tensor...) raise :class:`Rejected`, which carries the verdict, and the
decorator :func:`checker` on every public checker turns it into the checker's return value. So a
checker never raises on a wrong answer, and writes no ``if failure is not None: return failure``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from . import CheckResult
from .guard import PackageCallError, delegation_verdict, package_disabled, public_name


class Rejected(Exception):  # noqa: N818 (a verdict, not an error: the answer is rejected)
    """A wrong answer met inside a checker: ``Rejected(verdict)`` carries the failed
    :class:`~helpers.exercises.CheckResult` that explains what is wrong, which :func:`checker` returns."""

    @property
    def verdict(self) -> CheckResult:
        """The verdict this rejection carries."""
        return self.args[0]


def checker(fn: Callable[..., CheckResult]) -> Callable[..., CheckResult]:
    """Decorator of a public checker: a :class:`Rejected` raised inside it becomes its verdict.

    Args:
        fn: The checker.

    Returns:
        The checker, returning the verdict a :class:`Rejected` carries instead of raising it.
    """
    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> CheckResult:
        try:
            return fn(*args, **kwargs)
        except Rejected as rejected:
            return rejected.verdict

    return checked


def call_reader_function(fn: Any, *args: Any, shape_hint: str | Mapping[str, str] = "",
                         language: str | None = None) -> tuple[Any, CheckResult | None]:
    """Call the reader's function; on failure, a CheckResult that explains it instead of an exception.

    Args:
        fn: The reader's function.
        *args: Its arguments.
        shape_hint: Appended to the message when the error looks like a shape mismatch (a phrase
            ``{language: text}`` is given in the verdict's language).
        language: The verdict's language (:mod:`helpers.exercises.messages`); ``None``: the default.

    Returns:
        ``(result, None)`` when the call worked, ``(None, verdict)`` when it did not.
    """
    if not callable(fn):
        return None, CheckResult.of(False, "reader.not_callable", language, type=type(fn).__name__)
    try:
        with warnings.catch_warnings():  # the reader's warnings would end up in the page
            warnings.simplefilter("ignore")
            return fn(*args), None
    except PackageCallError as error:  # the answer calls the package's own version (see guard.package_disabled)
        return None, delegation_verdict(error, language)
    except NotImplementedError:
        return None, CheckResult.of(False, "reader.stub", language)
    except Exception as error:  # the reader's code may fail in any way: report it, never raise
        hint = shape_hint if shape_hint and ("shape" in str(error) or "size" in str(error)) else ""
        return None, CheckResult.of(False, "reader.raised", language, type=type(error).__name__, error=str(error),
                                    hint=hint)


def call_reader(fn: Any, *args: Any, shape_hint: str | Mapping[str, str] = "",
                language: str | None = None) -> Any:
    """:func:`call_reader_function` that returns the result alone and raises its verdict on failure.

    Args:
        fn: The reader's function.
        *args: Its arguments.
        shape_hint: As in :func:`call_reader_function`.
        language: The verdict's language; ``None``: the default.

    Returns:
        What ``fn(*args)`` returned.

    Raises:
        Rejected: the call failed (the verdict explains how).
    """
    result, failure = call_reader_function(fn, *args, shape_hint=shape_hint, language=language)
    if failure is not None:
        raise Rejected(failure)
    return result


def as_tensor(result: Any, what: str | Mapping[str, str], language: str | None = None) -> Tensor:
    """``result`` if the reader returned a tensor, else :class:`Rejected` naming ``what`` was expected.

    Args:
        result: What the reader's function returned.
        what: What it should have returned, e.g. ``"attention output, shape (B, L, D)"``, or that
            phrase in every language, ``{"en": ..., "zh": ...}``.
        language: The verdict's language; ``None``: the default.

    Returns:
        ``result``.

    Raises:
        Rejected: ``result`` is not a tensor (the verdict says what it is).
    """
    if result is None:
        raise Rejected(CheckResult.of(False, "reader.returned_none", language, what=what))
    if not isinstance(result, Tensor):
        raise Rejected(CheckResult.of(False, "reader.not_a_tensor", language, type=type(result).__name__, what=what))
    return result


def allclose(a: Tensor, b: Tensor) -> bool:
    """Same shape and equal to float tolerance (compared in float64; NaN is never close)."""
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6))


def reader_globals(fn: Any) -> list[dict[str, Any]]:
    """The reader's globals (a notebook's own imports of the package's functions live there), as
    the ``namespaces`` of :func:`helpers.exercises.guard.package_disabled`."""
    namespace = getattr(fn, "__globals__", None)
    return [namespace] if isinstance(namespace, dict) else []


def call_without_package(fn: Any, *args: Any, disabled: tuple[Any, ...], language: str | None = None) -> Any:
    """Call the reader's function with the package's own versions of ``disabled`` switched off.

    An answer that delegates to one of them (or is one of them) gets a verdict that names it; see
    :func:`helpers.exercises.guard.package_disabled`. Compute the checker's reference before.

    Args:
        fn: The reader's function.
        *args: Its arguments.
        disabled: The package's functions, methods or classes the exercise asks the reader to write.
        language: The verdict's language; ``None``: the default.

    Returns:
        What ``fn(*args)`` returned.

    Raises:
        Rejected: the call failed or delegated (the verdict explains how).
    """
    if any(fn is target for target in disabled):  # the package's own function handed in as the answer
        raise Rejected(delegation_verdict(PackageCallError(public_name(fn)), language))
    with package_disabled(*disabled, namespaces=reader_globals(fn)):
        return call_reader(fn, *args, language=language)
