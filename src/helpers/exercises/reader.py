"""What every checker needs to handle a reader's answer safely: call it, type-check it, compare it.

A checker reads as its logic: the helpers here that meet a wrong answer (a function that raises,
a result that is not a tensor...) raise :class:`.Rejected`, which carries the verdict, and the
decorator :func:`.checker` on every public checker turns it into the checker's return value. So a
checker never raises on a wrong answer, and writes no ``if failure is not None: return failure``.

The decorator also takes the checker's ``language`` argument and puts it in force for every message
rendered while the checker runs (:func:`helpers.exercises.messages.speaking`): a checker writes
``verdict(False, "ch04.split.shape", got=...)`` and never passes a language on by hand.
"""

from __future__ import annotations

import functools
import math
import sysconfig
import traceback
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch
from torch import Tensor

from . import CheckResult
from .guard import CallWatch
from .messages import speaking
from .running import AnswerStopped, TimeLimitExceeded, run_answer

__all__ = ["Rejected", "checker", "verdict", "reject", "passed_unless", "call_watched", "as_tensor", "as_number",
           "allclose", "draw_int"]


class Rejected(Exception):  # noqa: N818 (a verdict, not an error: the answer is rejected)
    """A wrong answer met inside a checker: ``Rejected(verdict)`` carries the failed
    :class:`~helpers.exercises.CheckResult` that explains what is wrong, which :func:`.checker` returns."""

    @property
    def verdict(self) -> CheckResult:
        """The verdict this rejection carries."""
        return self.args[0]


def verdict(passed: bool, key: str, /, **fields: Any) -> CheckResult:
    """The verdict whose message is the catalogue's ``key``, in the running checker's language."""
    return CheckResult.of(passed, key, **fields)


def reject(key: str, /, **fields: Any) -> Rejected:
    """A :class:`.Rejected` that carries the failed verdict ``key`` (``raise reject("...", got=...)``)."""
    return Rejected(CheckResult.of(False, key, **fields))


def passed_unless(failure: CheckResult | None, key: str, /, **fields: Any) -> CheckResult:
    """``failure`` if there is one, else the passed verdict ``key`` (a failed verdict is falsy: no ``or``)."""
    return failure if failure is not None else CheckResult.of(True, key, **fields)


def checker(fn: Callable[..., CheckResult]) -> Callable[..., CheckResult]:
    """Decorator of a public checker: its ``language`` argument in force, a :class:`.Rejected` its verdict.

    The decorated checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
    as a keyword argument on top of its own, and every message rendered while it runs is in that language.

    Args:
        fn: The checker.

    Returns:
        The checker, returning the verdict a :class:`.Rejected` carries instead of raising it.
    """
    @functools.wraps(fn)
    def checked(*args: Any, language: str | None = None, **kwargs: Any) -> CheckResult:
        with speaking(language):
            try:
                return fn(*args, **kwargs)
            except Rejected as rejected:
                return rejected.verdict

    return checked


_LIBRARY_PATHS = tuple(sorted({path for key in ("stdlib", "platstdlib", "purelib", "platlib")
                               if (path := sysconfig.get_paths().get(key))}))


def _stub_verdict(error: NotImplementedError, fn: Any) -> CheckResult | None:
    """The verdict for a stub that raised ``NotImplementedError``, naming it; ``None`` when a library raised it."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames or frames[-1].filename.startswith(_LIBRARY_PATHS) or "/helpers/" in frames[-1].filename:
        return None
    name = frames[-1].name
    if name == getattr(fn, "__name__", None) or name in ("<lambda>", "<module>"):
        return verdict(False, "reader.stub", name=f"{name}" if name != "<lambda>" else "the function")
    return verdict(False, "reader.stub_called", name=name)


def call_watched(fn: Any, *args: Any, forbidden: Iterable[Any] = (), allowed: Iterable[Any] = (),
                 passthrough: Iterable[Callable[..., Any]] = (), shape_hint: str | Mapping[str, str] = "",
                 watch: CallWatch | None = None, modes: Iterable[Any] = (), limit: float | None = None,
                 given: Iterable[Any] = ()) -> Any:
    """Call the reader's function in a thread of its own, watching what it calls; refuse one that delegates.

    The answer may not reach any function of the package (except those in ``allowed`` and the property
    getters of its arguments) nor any of ``forbidden`` (e.g. :data:`helpers.exercises.targets.ATTENTION`),
    by whatever route: see :mod:`helpers.exercises.guard`; it runs in a fresh thread and is stopped past
    its time limit: see :mod:`helpers.exercises.running`.

    Args:
        fn: The reader's function.
        *args: Its arguments.
        forbidden: Third-party functions, classes, modules or dotted paths the answer may not reach.
        allowed: Package functions, classes or modules the answer may call.
        passthrough: The checker's own functions that call the answer; ``fn`` may be one of them.
        shape_hint: Appended to the message when the error looks like a shape mismatch (a phrase
            ``{language: text}`` is given in the verdict's language).
        watch: A :class:`~helpers.exercises.guard.CallWatch` to use (the caller reads its counts); when given,
            ``forbidden``, ``allowed`` and ``passthrough`` are its own.
        modes: PyTorch modes of the checker to run the answer under (entered in its thread).
        limit: Seconds the call may run (``None``: :data:`helpers.exercises.running.TIME_LIMIT`).
        given: Objects the answer is given besides its arguments (held by a passthrough): their package
            properties may be read, as the arguments' may.

    Returns:
        What ``fn(*args)`` returned.

    Raises:
        Rejected: the call failed, reached a forbidden function (the verdict names it), switched the
            watch off, read the checker's frames, or ran past its limit.
    """
    if not callable(fn):
        raise reject("reader.not_callable", type=type(fn).__name__)
    if watch is None:
        watch = CallWatch(forbidden, allowed, passthrough=passthrough, arguments=(*args, *given))
    failure: CheckResult | None = None
    try:
        with warnings.catch_warnings():  # the reader's warnings would end up in the page
            warnings.simplefilter("ignore")
            kwargs = {} if limit is None else {"limit": limit}
            result = run_answer(fn, *args, watch=watch, modes=modes, **kwargs)
    except TimeLimitExceeded as error:
        raise reject("reader.time_limit" if error.stopped else "reader.time_limit_stuck", seconds=error.seconds)
    except NotImplementedError as error:
        failure = _stub_verdict(error, fn)
        if failure is None:  # raised by a library, not a stub
            failure = verdict(False, "reader.raised", type="NotImplementedError", error=str(error), hint="")
    except (Exception, AnswerStopped) as error:  # the reader's code may fail in any way: report it, never raise
        hint = shape_hint if shape_hint and ("shape" in str(error) or "size" in str(error)) else ""
        failure = verdict(False, "reader.raised", type=type(error).__name__, error=str(error), hint=hint)
    if watch.tampered:
        raise reject("guard.tampers")
    if watch.reached is not None:
        raise reject("guard.delegates", name=watch.reached)
    if watch.peeked:
        raise reject("guard.peeks")
    if failure is not None:
        raise Rejected(failure)
    return result


def as_tensor(result: Any, what: str | Mapping[str, str]) -> Tensor:
    """``result`` if the reader returned a plain tensor, else :class:`.Rejected` naming ``what`` was expected.

    Args:
        result: What the reader's function returned.
        what: What it should have returned, e.g. ``"attention output, shape (B, L, D)"``, or that
            phrase in every language, ``{"en": ..., "zh": ...}``.

    Returns:
        ``result``.

    Raises:
        Rejected: ``result`` is not a tensor (the verdict says what it is), or a subclass of one.
    """
    if result is None:
        raise reject("reader.returned_none", what=what)
    if not isinstance(result, Tensor):
        raise reject("reader.not_a_tensor", type=type(result).__name__, what=what)
    if type(result) not in (Tensor, torch.nn.Parameter):  # a subclass can redefine what comparing it means
        raise reject("reader.tensor_subclass", type=type(result).__name__, what=what)
    return result


def as_number(result: Any, key: str, /, integral: bool = False, **fields: Any) -> float:
    """``result`` as a finite number (a one-element tensor, an int, a float), else :class:`.Rejected` with ``key``.

    Args:
        result: What the reader's function returned.
        key: The message that says what number was expected (fields ``type`` and ``value`` are given).
        integral: Whether the number is a count: a float must then be integral (``360.0`` is 360).
        **fields: The message's other fields.

    Returns:
        The number (an ``int`` when ``integral``).

    Raises:
        Rejected: ``result`` is not such a number.
    """
    if isinstance(result, Tensor) and result.numel() == 1:
        result = result.item()
    number = isinstance(result, (int, float)) and not isinstance(result, bool)
    if not number or not math.isfinite(result) or (integral and not float(result).is_integer()):
        raise reject(key, type=type(result).__name__, value=repr(result), **fields)
    return int(result) if integral else float(result)


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Same shape and equal to float tolerance (compared in float64; NaN is never close)."""
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol))


def draw_int(low: int, high: int, generator: torch.Generator) -> int:
    """An integer in ``[low, high]`` drawn with ``generator`` (a length, a head count)."""
    return int(torch.randint(low, high + 1, (1,), generator=generator).item())
