"""Checkers for the labs' exercises.

Each checker takes the reader's answer (a tensor, a number or a function), never raises on a wrong
answer, and returns a :class:`.CheckResult` whose message says *what* is wrong (a shape, a scale, a
mask, a sign...), not only that something is. The labs import one module per lab's chapter,
:mod:`helpers.exercises.ch01` ... :mod:`helpers.exercises.ch06_long_context`; behind each, one
module per exercise, in one package per lab (``helpers/exercises/bottleneck/``, ``dot_product/``,
``scaling/``, ``multihead/``, ``variants/``, ``training/``, ``memory_position/``).

What every checker shares:

- :mod:`~helpers.exercises.reader`: the decorator :func:`~helpers.exercises.reader.checker` (a
  :class:`~helpers.exercises.reader.Rejected` raised inside becomes the verdict; the ``language``
  argument is put in force for every message), calling the answer safely
  (:func:`~helpers.exercises.reader.call_watched`) and type-checking what it returns;
- :mod:`~helpers.exercises.guard` and :mod:`~helpers.exercises.running`: what the answer may not
  call, and where it runs (a fresh thread, a time limit, an interrupt that stops it);
- :mod:`~helpers.exercises.cases`: named seeded cases, one fresh case whose seed the verdict gives,
  and the :class:`~helpers.exercises.cases.Mistake` tables that name what a wrong answer did;
- :mod:`~helpers.exercises.messages`: the catalogue of messages, in English and Chinese.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .messages import _language, get_language, portable_fields, resolve_language, set_language, text

__all__ = ["CheckResult", "get_language", "set_language"]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of an exercise checker.

    Attributes:
        passed: Whether the answer is right.
        message: What is right or wrong, in one or two sentences a student can act on.
        key: The catalogue message ``message`` was rendered from (:mod:`helpers.exercises.messages`),
            or ``None`` for a message written inline (not translatable).
        fields: The values put into that message.
        language: The language of ``message``.
    """

    passed: bool
    message: str
    key: str | None = field(default=None, repr=False, compare=False)
    fields: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    language: str = field(default="en", repr=False, compare=False)

    @classmethod
    def of(cls, passed: bool, key: str, language: str | None = None, /, **fields: Any) -> CheckResult:
        """A verdict whose message is the catalogue's ``key``, rendered in ``language``.

        Args:
            passed: Whether the answer is right.
            key: The message's key in :data:`helpers.exercises.messages.CATALOGUE`.
            language: ``"en"``, ``"zh"``, or ``None``: the running checker's, else :func:`.get_language`.
            **fields: The values of the message's fields.

        Returns:
            The verdict, which keeps ``key`` and ``fields`` so that it can be rendered again in
            another language (:meth:`.in_language`).
        """
        language = _language(language)
        fields = portable_fields(fields)
        return cls(passed, text(key, language, **fields), key, fields, language)

    def in_language(self, language: str) -> CheckResult:
        """The same verdict in ``language`` (unchanged when its message is not from the catalogue).

        Args:
            language: ``"en"`` or ``"zh"``.

        Returns:
            A :class:`.CheckResult`.
        """
        language = resolve_language(language)
        if self.key is None:
            return self
        return replace(self, message=text(self.key, language, **self.fields), language=language)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return text("verdict.passed" if self.passed else "verdict.failed", self.language) + self.message

    def _repr_html_(self) -> str:
        # Dark green / dark red: at least 5:1 on the page (white) and on the light panel the site's
        # dark theme puts behind HTML outputs (#ced6dd), as WCAG 1.4.3 asks of text.
        colour = "#116329" if self.passed else "#9f1d16"
        stored = ""
        if self.key is not None:  # what the book's build needs to render the verdict in the other edition
            record = json.dumps({"passed": self.passed, "key": self.key, "fields": dict(self.fields)},
                                ensure_ascii=False, sort_keys=True)
            stored = f' data-check="{html.escape(record)}"'
        return f'<p style="color:{colour}; font-weight:600"{stored}>{html.escape(str(self))}</p>'
