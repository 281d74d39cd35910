"""Make sure an exercise is answered, not delegated: run the reader's code with the package's own
implementation of the thing being practised switched off.

An exercise that asks for multi-head attention from scratch is not answered by calling
``helpers.MultiHeadAttention``: such an answer passes any numerical comparison and teaches
nothing. A checker runs the reader's function under :func:`package_disabled`; if the answer calls
a disabled function, that call raises :class:`PackageCallError`, and
:func:`helpers.exercises.reader.call_reader_function` turns it into a verdict
(:func:`delegation_verdict`) that names the function the exercise asks the reader to write.

Example::

    with package_disabled(MultiHeadAttention.forward, namespaces=[answer.__globals__]):
        result, verdict = call_reader_function(answer, x, layer)

Targets are functions, methods, classes (their ``forward``) or dotted paths
(``"helpers.multihead.MultiHeadAttention.forward"``). A method is replaced on its class, so every
instance and import path sees it; a module-level function in every loaded ``helpers`` module that
holds it (the package's own callers are switched off too) and in each dict of ``namespaces`` (the
reader's globals, where ``from helpers.attention import f`` put its own reference). Everything is
restored on exit, also after an exception. Used by the labs' checkers, from chapter 4 on.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

from . import CheckResult

__all__ = ["PackageCallError", "package_disabled", "delegation_verdict", "public_name"]


class PackageCallError(RuntimeError):
    """Raised when an answer calls a package function that its exercise asks the reader to write.

    Attributes:
        name: The public name of the function called (``"helpers.MultiHeadAttention"``).
    """

    def __init__(self, name: str) -> None:
        super().__init__(f"your answer calls {name}, which this exercise asks you to write yourself")
        self.name = name


def _resolve(path: str) -> Any:
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for name in parts[split:]:
                owner = getattr(owner, name)
        except AttributeError:
            break
        return owner
    raise ValueError(f"cannot find {path!r}: give a dotted path such as 'helpers.multihead.MultiHeadAttention.forward'")


def public_name(fn: Callable[..., Any]) -> str:
    """``helpers.X`` when the package exports the function (or the method's class) as ``X``."""
    import helpers

    qualname = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
    head = qualname.split(".")[0]
    exported = getattr(helpers, head, None)
    if "." in qualname:  # a method: name its class, and the method unless it is forward/__call__
        cls = sys.modules.get(getattr(fn, "__module__", ""), None)
        cls = getattr(cls, head, None) if cls is not None else None
        base = f"helpers.{head}" if cls is not None and exported is cls else f"{fn.__module__}.{head}"
        method = qualname.split(".")[-1]
        return base if method in ("forward", "__call__") else f"{base}.{method}"
    return f"helpers.{qualname}" if exported is fn else f"{getattr(fn, '__module__', '?')}.{qualname}"


def _owners(fn: Callable[..., Any]) -> list[tuple[Any, str]]:
    """Every (object, attribute) that holds ``fn``: its class for a method, else each ``helpers`` module."""
    qualname = getattr(fn, "__qualname__", "")
    if "." in qualname and "<locals>" not in qualname:
        owner: Any = sys.modules.get(getattr(fn, "__module__", ""))
        *path, attr = qualname.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        return [(owner, attr)] if owner is not None and owner.__dict__.get(attr) is fn else []
    return [(module, attr) for name, module in list(sys.modules.items())
            if module is not None and (name == "helpers" or name.startswith("helpers."))
            for attr, value in list(vars(module).items()) if value is fn]


def _as_function(target: Any) -> Callable[..., Any]:
    if isinstance(target, str):
        target = _resolve(target)
    if isinstance(target, type):
        target = target.__dict__.get("forward", target.__call__)
    if not callable(target):
        raise TypeError(f"package_disabled takes functions, methods, classes or dotted paths, got "
                        f"{type(target).__name__}")
    return target


@contextmanager
def package_disabled(*targets: Callable[..., Any] | str,
                     namespaces: Iterable[MutableMapping[str, Any]] = ()) -> Iterator[None]:
    """Within the block, calling any of ``targets`` raises :class:`PackageCallError`.

    Args:
        *targets: Functions, methods, classes (their ``forward``) or dotted paths.
        namespaces: Further dicts of names to patch, typically the reader's ``answer.__globals__``.

    Raises:
        TypeError: A target is not callable.
        ValueError: A dotted path names nothing.
    """
    saved: list[tuple[Any, str, Any]] = []
    saved_names: list[tuple[MutableMapping[str, Any], str, Any]] = []
    namespaces = list(namespaces)
    try:
        for target in targets:
            fn = _as_function(target)
            name = public_name(fn)

            def blocked(*args: Any, _name: str = name, **kwargs: Any) -> Any:
                raise PackageCallError(_name)

            for owner, attr in _owners(fn):
                saved.append((owner, attr, owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)))
                setattr(owner, attr, blocked)
            for namespace in namespaces:
                for key, value in list(namespace.items()):
                    if value is fn:
                        saved_names.append((namespace, key, value))
                        namespace[key] = blocked
        yield
    finally:
        for owner, attr, value in reversed(saved):
            setattr(owner, attr, value)
        for namespace, key, value in reversed(saved_names):
            namespace[key] = value


def delegation_verdict(error: PackageCallError, language: str | None = None) -> CheckResult:
    """The verdict for an answer that called a disabled package function.

    Args:
        error: What :func:`package_disabled` raised.
        language: The verdict's language (:mod:`helpers.exercises.messages`); ``None``: the default.

    Returns:
        A failed :class:`~helpers.exercises.CheckResult` that names the function called.
    """
    return CheckResult.of(False, "guard.delegates", language, name=error.name)
