"""Make sure an exercise is answered, not delegated: run the reader's code with the package's own
implementation of the thing being practised switched off.

An exercise that asks for additive scores from scratch is not answered by calling
:func:`helpers.attention.additive_scores`. A checker runs the reader's function under
:func:`package_disabled`; if the answer calls a disabled function, that call raises
:class:`DelegationError`, and :func:`helpers.exercises._reader.call_reader_function` turns it into a
verdict that names the function the exercise asks the reader to write.

Example::

    with package_disabled(attention.masked_softmax, namespaces=[answer.__globals__]):
        result, verdict = call_reader_function(answer, scores, mask)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, Callable

__all__ = ["DelegationError", "package_disabled"]


class DelegationError(RuntimeError):
    """Raised when an answer calls a function that its exercise asks the reader to write."""


def _qualified_name(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', getattr(fn, '__name__', repr(fn)))}"


def _blocked(fn: Callable[..., Any]) -> Callable[..., Any]:
    name = _qualified_name(fn)

    def blocked(*args: Any, **kwargs: Any) -> Any:
        raise DelegationError(
            f"your answer calls {name}, the package's own version of what this exercise asks you to write: "
            "write it with torch operations instead"
        )

    blocked.__name__ = getattr(fn, "__name__", "blocked")
    return blocked


def _owners(fn: Callable[..., Any]) -> list[tuple[Any, str]]:
    """Every (object, attribute) of the loaded ``helpers`` modules that holds ``fn``.

    A function is found under its own name in each ``helpers`` module that defines or re-exports
    it; a method (``MultiHeadAttention.forward``) on the class its qualified name names.
    """
    owners: list[tuple[Any, str]] = []
    qualname = getattr(fn, "__qualname__", "")
    if "." in qualname and "<locals>" not in qualname:  # a method: patch it on its class
        module = sys.modules.get(getattr(fn, "__module__", ""))
        owner: Any = module
        *path, attr = qualname.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is not None and getattr(owner, attr, None) is fn:
            owners.append((owner, attr))
        return owners
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "helpers" or module_name.startswith("helpers.")):
            continue
        for attr, value in list(vars(module).items()):
            if value is fn:
                owners.append((module, attr))
    return owners


@contextmanager
def package_disabled(
    *functions: Callable[..., Any], namespaces: Iterable[MutableMapping[str, Any]] = ()
) -> Iterator[None]:
    """Switch off the package's own implementations of ``functions`` for the duration of a check.

    Every name that refers to one of ``functions`` in the loaded ``helpers`` modules, and in each
    dict of ``namespaces`` (pass the reader's ``answer.__globals__``, where a notebook's
    ``from helpers.attention import masked_softmax`` puts its own reference), is replaced by a
    function that raises :class:`DelegationError`; everything is put back on exit, also after an
    exception. Chapter 0 says why the labs' checkers do this.

    Args:
        *functions: The package's functions or methods (e.g. ``attention.additive_scores``,
            ``MultiHeadAttention.forward``) that the exercise asks the reader to write.
        namespaces: Further dicts of names to patch, typically the reader's globals.

    Raises:
        TypeError: An item of ``functions`` is not callable.
    """
    saved: list[tuple[Any, str, Any]] = []
    saved_names: list[tuple[MutableMapping[str, Any], str, Any]] = []
    try:
        for fn in functions:
            if not callable(fn):
                raise TypeError(f"package_disabled takes functions, got {type(fn).__name__}")
            blocked = _blocked(fn)
            for owner, attr in _owners(fn):
                saved.append((owner, attr, getattr(owner, attr)))
                setattr(owner, attr, blocked)
            for namespace in namespaces:
                for name, value in list(namespace.items()):
                    if value is fn:
                        saved_names.append((namespace, name, value))
                        namespace[name] = blocked
        yield
    finally:
        for owner, attr, value in reversed(saved):
            setattr(owner, attr, value)
        for namespace, name, value in reversed(saved_names):
            namespace[name] = value
