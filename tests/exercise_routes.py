"""Answers that delegate to a function instead of doing the exercise, by the routes a student who
wants the tick without the work would take: the checkers' tests feed each one and expect it refused
with the function named (see helpers.exercises.guard)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


def delegating_routes(target: Callable[..., Any],
                      adapt: Callable[..., Any] | None = None) -> dict[str, Callable[..., Any]]:
    """Answers that reach ``target`` through a default argument, a closure, a partial and a dict.

    Args:
        target: The function the exercise asks the reader to write (the package's or a library's).
        adapt: ``adapt(target, *args)`` turns a call of ``target`` into the exercise's answer
            (e.g. ``lambda f, q, k, v: f(q, k, v)[0]``); ``None``: ``target(*args)``.

    Returns:
        ``{route: answer}``.
    """
    adapt = adapt or (lambda f, *args: f(*args))

    def default_argument(*args: Any, _f: Callable[..., Any] = target) -> Any:
        return adapt(_f, *args)

    def make_closure() -> Callable[..., Any]:
        held = target

        def closure(*args: Any) -> Any:
            return adapt(held, *args)
        return closure

    bound = functools.partial(target)
    table = {"f": target}
    return {
        "default argument": default_argument,
        "closure": make_closure(),
        "partial": lambda *args: adapt(bound, *args),
        "dict": lambda *args: adapt(table["f"], *args),
    }
