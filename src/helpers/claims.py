"""Claims: the guards of what the book says about its results (chapter 0; ``book/AUTHORING.md``).

Every sentence of the book about a result ("additive attention is slower than the dot product", "every seed
trains") is followed, in the cell that produces the result, by a claim that checks it::

    claim(ratio > 2, "additive attention costs over twice the dot product", ratio=ratio)

The sentence says what the book found; the keyword arguments are this run's numbers. Its Chinese is looked up
in :data:`helpers.claim_text.STATEMENTS_ZH` (a test checks that every claim of the book has one).
What a claim that does not hold does depends on ``HELPERS_CLAIMS``:

- ``strict`` (the book's build and the replication run, ``scripts/replicate.sh``): it raises
  :class:`ClaimFailed`, an ``AssertionError``, and the build fails: the book never publishes a sentence its
  own run contradicts.
- unset, or ``report`` (a reader's kernel: JupyterLab, Colab, a hub): it prints one sentence in the reader's
  language (:mod:`helpers.language`) saying what the book found and what this run found, and the notebook
  goes on. A reader's CPU, seeds or thread count may differ from the build's, and "Run all" should not stop
  at a hidden cell because of it.

With ``HELPERS_CLAIMS_LOG=<file>`` every claim checked, held or not, is appended to that file as a line of JSON
(its sentence, whether it held, this run's numbers): the replication run reads it to list the claims that fail
and to show how far from its threshold each one is under every variation.

A claim is for a *finding*: something that should hold wherever the book runs (a rate over seeds with a
margin, a ratio far from its threshold). A description of this run ("1 of 3 seeds ...") is glued, not
claimed; an identity (the readable version equals PyTorch's) is checked with ``torch.testing.assert_close``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from .claim_text import STATEMENTS_ZH
from .language import get_language

__all__ = ["MODE_VARIABLE", "LOG_VARIABLE", "ClaimFailed", "claims_mode", "claim"]

MODE_VARIABLE = "HELPERS_CLAIMS"
"""The environment variable that makes a failed claim raise (``strict``) or report (unset, ``report``)."""
LOG_VARIABLE = "HELPERS_CLAIMS_LOG"
"""The environment variable naming a file to which every claim checked is appended (one JSON line each)."""

_MODES = ("strict", "report")

_SENTENCE = {
    "en": "The book found that {statement}, but this run did not ({found}); the text describes the book's build.",
    "zh": "本书构建时发现{statement}，但这次运行没有（{found}）；正文描述的是本书构建时的结果。",
}


class ClaimFailed(AssertionError):
    """A claim of the book that this run contradicts (raised under ``HELPERS_CLAIMS=strict``)."""


def claims_mode() -> str:
    """``"strict"`` or ``"report"``, from ``HELPERS_CLAIMS`` (unset or empty: ``"report"``).

    Returns:
        The mode.

    Raises:
        ValueError: ``HELPERS_CLAIMS`` names another mode.
    """
    mode = os.environ.get(MODE_VARIABLE, "").strip().lower() or "report"
    if mode not in _MODES:
        raise ValueError(f"{MODE_VARIABLE} must be one of {_MODES} (or unset), got {os.environ[MODE_VARIABLE]!r}")
    return mode


def _number(value: float) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def _shown(value: Any) -> str:
    """A value as the sentence shows it: numbers to 4 significant digits, containers element by element."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # a tensor or an array
        value = value.tolist()
    if isinstance(value, (bool, int, float)):
        return _number(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key}: {_shown(item)}" for key, item in value.items()) + "}"
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    return str(value)


def _plain(value: Any) -> Any:
    """A value as JSON can store it: tensors and arrays as lists, mappings with string keys, the rest by ``str``."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [_plain(item) for item in value]
    return str(value)


def _truth(holds: Any) -> bool:
    if hasattr(holds, "numel"):  # a tensor: one element, or it has no single truth
        if holds.numel() != 1:
            raise TypeError(f"holds must be one truth value, got a tensor of shape {tuple(holds.shape)}")
    elif hasattr(holds, "ndim") and holds.size != 1:  # likewise an array
        raise TypeError(f"holds must be one truth value, got an array of shape {holds.shape}")
    return bool(holds)


def claim(holds: Any, statement: str, /, **found: Any) -> bool:
    """Checks one of the book's findings in this run.

    Args:
        holds: Whether the finding holds in this run (a bool, or a one-element tensor or array).
        statement: What the book found, in English, as a clause that follows "The book found that"
            (e.g. ``"additive attention costs over twice the dot product"``); its Chinese, which follows
            "本书构建时发现", is ``STATEMENTS_ZH[statement]`` (English when it has none).
        **found: This run's numbers behind the finding, shown when it does not hold
            (e.g. ``ratio=1.7``).

    Returns:
        ``True`` when the finding holds; ``False`` when it does not (report mode).

    Raises:
        ClaimFailed: The finding does not hold and ``HELPERS_CLAIMS=strict``.
        TypeError: ``holds`` has several elements, or ``statement`` is not a non-empty string.
        ValueError: ``HELPERS_CLAIMS`` names an unknown mode.
    """
    if not isinstance(statement, str) or not statement.strip():
        raise TypeError(f"statement must be a non-empty string, got {statement!r}")
    mode = claims_mode()
    held = _truth(holds)
    shown = ", ".join(f"{name} = {_shown(value)}" for name, value in found.items())
    log = os.environ.get(LOG_VARIABLE)
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(json.dumps({"statement": statement, "holds": held, "found": shown,
                                   "values": {name: _plain(value) for name, value in found.items()}},
                                  ensure_ascii=False) + "\n")
    if held:
        return True
    if mode == "strict":
        raise ClaimFailed(f"The book's claim does not hold in this run: {statement} ({shown or 'no numbers given'})")
    language = get_language()
    said = STATEMENTS_ZH.get(statement, statement) if language == "zh" else statement
    text = _SENTENCE[language].format(statement=said,
                                      found=shown or ("见上面的输出" if language == "zh" else "see the output above"))
    print(text)
    return False
