"""The Chinese of every claim the book makes (:func:`helpers.claims.claim`), keyed by its English sentence.

A claim's English sentence sits in the page's code, where it guards the prose; its Chinese sits here, one module a
chapter (``ch01.py`` for chapter 1's pages and lab), so the code cells of both editions stay the same.
``tests/test_claims.py`` checks that every claim of the English pages and labs has an entry and that no entry is
left without its claim. Each Chinese sentence follows "本书构建时发现" and ends without a full stop, as its English
follows "The book found that".
"""

from __future__ import annotations

from . import ch00, ch01, ch02, ch03, ch04, ch05, ch06, ch07

__all__ = ["STATEMENTS_ZH"]

STATEMENTS_ZH: dict[str, str] = {}
"""English sentence -> Chinese sentence, every chapter's."""
for _chapter in (ch00, ch01, ch02, ch03, ch04, ch05, ch06, ch07):
    STATEMENTS_ZH.update(_chapter.STATEMENTS_ZH)
