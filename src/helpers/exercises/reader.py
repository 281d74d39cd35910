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

from .. import seeding
from . import CheckResult
from .guard import (
    CallWatch,
    PackageCallError,
    delegation_verdict,
    peeking_verdict,
    run_on_clean_stack,
    tampering_verdict,
    watching,
)


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
                         language: str | None = None, watch: CallWatch | None = None) -> tuple[Any, CheckResult | None]:
    """Call the reader's function; on failure, a CheckResult that explains it instead of an exception.

    Args:
        fn: The reader's function.
        *args: Its arguments.
        shape_hint: Appended to the message when the error looks like a shape mismatch (a phrase
            ``{language: text}`` is given in the verdict's language).
        language: The verdict's language (:mod:`helpers.exercises.messages`); ``None``: the default.
        watch: When given, the call runs under :func:`helpers.exercises.guard.watching` (the caller
            reads what it reached: see :func:`call_watched`).

    Returns:
        ``(result, None)`` when the call worked, ``(None, verdict)`` when it did not.
    """
    if not callable(fn):
        return None, CheckResult.of(False, "reader.not_callable", language, type=type(fn).__name__)
    try:
        with warnings.catch_warnings():  # the reader's warnings would end up in the page
            warnings.simplefilter("ignore")
            if watch is None:
                return fn(*args), None
            with watching(watch):
                result = run_on_clean_stack(fn, *args, watch=watch)  # no checker frame above the answer
            return result, None
    except PackageCallError as error:  # raised by the answer itself (see guard)
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
    if type(result) not in (Tensor, torch.nn.Parameter):  # a subclass can redefine what comparing it means
        raise Rejected(CheckResult.of(False, "reader.tensor_subclass", language, type=type(result).__name__,
                                      what=what))
    return result


def fresh_generator() -> torch.Generator:
    """A generator seeded from the operating system: the inputs a checker draws with it cannot be known
    to the answer in advance (no table of precomputed outputs passes). Draw shapes with it too."""
    return seeding.fresh_generator()


def fresh_int(low: int, high: int, generator: torch.Generator) -> int:
    """An integer in ``[low, high]`` drawn with ``generator`` (e.g. a fresh length or head count)."""
    return int(torch.randint(low, high + 1, (1,), generator=generator).item())


def allclose(a: Tensor, b: Tensor) -> bool:
    """Same shape and equal to float tolerance (compared in float64; NaN is never close)."""
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6))


def call_watched(fn: Any, *args: Any, forbidden: tuple[Any, ...] = (), allowed: tuple[Any, ...] = (),
                 passthrough: tuple[Callable[..., Any], ...] = (), shape_hint: str | Mapping[str, str] = "",
                 language: str | None = None) -> Any:
    """Call the reader's function while watching every call it makes; refuse one that delegates.

    The answer may not reach any function of the package (except those in ``allowed``) nor any of
    ``forbidden`` (e.g. :data:`helpers.exercises.guard.ATTENTION`), by whatever route: see
    :mod:`helpers.exercises.guard`. Compute the checker's reference before (or after) the call,
    never inside it.

    Args:
        fn: The reader's function.
        *args: Its arguments.
        forbidden: Third-party functions, classes, modules or dotted paths the answer may not reach.
        allowed: Package functions, classes or modules the answer may call.
        passthrough: The checker's own functions that call the answer (see
            :class:`~helpers.exercises.guard.CallWatch`); ``fn`` may be one of them.
        shape_hint: As in :func:`call_reader_function`.
        language: The verdict's language; ``None``: the default.

    Returns:
        What ``fn(*args)`` returned.

    Raises:
        Rejected: the call failed, reached a forbidden function (the verdict names it) or switched
            the watch off.
    """
    watch = CallWatch(forbidden, allowed, passthrough=passthrough)
    result, failure = call_reader_function(fn, *args, shape_hint=shape_hint, language=language, watch=watch)
    if watch.tampered:
        raise Rejected(tampering_verdict(language))
    if watch.reached is not None:
        raise Rejected(delegation_verdict(PackageCallError(watch.reached), language))
    if watch.peeked:
        raise Rejected(peeking_verdict(language))
    if failure is not None:
        raise Rejected(failure)
    return result


def call_without_package(fn: Any, *args: Any, disabled: tuple[Any, ...] = (), language: str | None = None,
                         allowed: tuple[Any, ...] = ()) -> Any:
    """:func:`call_watched` with ``disabled`` as its ``forbidden`` (the name the first checkers used).

    Args:
        fn: The reader's function.
        *args: Its arguments.
        disabled: Functions, classes or modules the answer may not reach, on top of the package.
        language: The verdict's language; ``None``: the default.
        allowed: Package functions the answer may call.

    Returns:
        What ``fn(*args)`` returned.

    Raises:
        Rejected: the call failed or delegated (the verdict explains how).
    """
    return call_watched(fn, *args, forbidden=disabled, allowed=allowed, language=language)
