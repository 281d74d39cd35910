"""The reader's language: English or Chinese, for every sentence the package prints (checkers, claims).

The book has two editions that run the same code, so the code cannot say which language to print in.
Which one is used, first match wins:

1. a function's ``language`` argument, where it has one;
2. :func:`set_language` (e.g. ``helpers.language.set_language("zh")`` in a notebook);
3. the environment variable ``HELPERS_LANGUAGE`` (the Chinese edition's Colab notebooks set it in their
   first cell);
4. the notebook the kernel runs: a notebook of the Chinese edition (under ``zh/notebooks/`` or
   ``zh/book/``) is read in Chinese. Jupyter Server tells a kernel its notebook's path
   (``JPY_SESSION_NAME``); a kernel also starts in its notebook's folder (the working directory);
5. ``"en"``.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

__all__ = ["LANGUAGES", "ENVIRONMENT_VARIABLE", "set_language", "get_language", "resolve_language"]

LANGUAGES = ("en", "zh")
"""The languages of the book; the first is the default and the fallback."""
ENVIRONMENT_VARIABLE = "HELPERS_LANGUAGE"
"""The environment variable that names the reader's language (``en`` or ``zh``)."""

_chosen: str | None = None


def _check_language(language: str, argument: str = "language") -> str:
    if language not in LANGUAGES:
        raise ValueError(f"{argument} must be one of {LANGUAGES}, got {language!r}")
    return language


def set_language(language: str | None) -> None:
    """Sets the reader's language for this session (checkers' messages, claims) (``None``: back to the default).

    Args:
        language: ``"en"``, ``"zh"`` or ``None``.

    Raises:
        ValueError: ``language`` is not one of :data:`~helpers.language.LANGUAGES`.
    """
    global _chosen
    _chosen = None if language is None else _check_language(language)


_EDITION_FOLDERS = ("notebooks", "book")
"""The folders of an edition's notebooks — ``<language>/notebooks/...``, ``<language>/book/...``."""


def _edition_language(path: str | os.PathLike[str]) -> str | None:
    """The language of the edition a path lies in (``.../zh/notebooks/lab.ipynb``: ``"zh"``), or ``None``."""
    parts = PurePath(path).parts
    for here, below in zip(parts, parts[1:]):
        if here in LANGUAGES[1:] and below in _EDITION_FOLDERS:
            return here
    return None


def get_language() -> str:
    """The reader's language when a function is not given one (see the module's docstring).

    Returns:
        One of :data:`~helpers.language.LANGUAGES`.

    Raises:
        ValueError: ``HELPERS_LANGUAGE`` names a language not in :data:`~helpers.language.LANGUAGES`.
    """
    if _chosen is not None:
        return _chosen
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return _check_language(os.environ[ENVIRONMENT_VARIABLE], ENVIRONMENT_VARIABLE)
    try:
        folder = Path.cwd()
    except OSError:  # a working directory that was removed
        folder = Path()
    return (_edition_language(os.environ.get("JPY_SESSION_NAME", "")) or _edition_language(folder)
            or LANGUAGES[0])


def resolve_language(language: str | None) -> str:
    """``language`` if given (checked), else :func:`get_language`.

    Args:
        language: A checker's ``language`` argument.

    Returns:
        One of :data:`~helpers.language.LANGUAGES`.

    Raises:
        ValueError: ``language`` is not one of :data:`~helpers.language.LANGUAGES`.
    """
    return get_language() if language is None else _check_language(language)
