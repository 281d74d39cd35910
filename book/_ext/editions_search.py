"""The Chinese edition's search (part of :mod:`editions`): a term finds the pages that use it.

Sphinx indexes a Chinese page by the words ``jieba`` cuts it into, but looks a reader's query up
whole: "自注意力" or "键值缓存", typed as a reader types them (no spaces), found nothing, while
"自 注意力" did. Two changes, both in the Chinese edition's search language (:class:`SearchChineseBook`):

- **the query**: its splitter (``splitQuery`` in the site's ``language_data.js``) cuts each run of
  Chinese characters into the index's own terms, longest match first, left to right; a run the index
  holds whole stays whole, and a character no term begins with is left out. The words then go to
  Sphinx's search as words typed with spaces between them (a page must hold them all);
- **the index**: besides jieba's words, a page is indexed under every glossary term
  (:func:`glossary_terms`, from chapter 0's glossary) that appears in its text, wherever it appears,
  whole (jieba may cut "因果掩码的" as "因果" and "掩码的"), single characters (键, 值) included.

So a glossary term, searched as it is written, finds every page whose text holds it
(``tests/book/test_editions_site.py`` searches each one in Chromium).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sphinx.search.zh import SearchChinese

__all__ = ["GLOSSARY_PAGE", "SPLIT_QUERY_JS", "SearchChineseBook", "glossary_terms"]

GLOSSARY_PAGE = "book/00-start/index.md"
"""The page (in each edition's folder) that holds the glossary."""

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_GLOSSARY = re.compile(r"^```\{glossary\}\n(.*?)^```", re.S | re.M)
_ALSO = re.compile(rf"又作[“\"]?([{_CJK}A-Za-z0-9 -]+?)[”\"]?(?=[，。；、（)）]|$)")


def glossary_terms(zh_root: Path) -> list[str]:
    """The Chinese glossary's terms, each name of each entry as a reader would type it.

    An entry's line is ``名称 / 名称（English）``, or ``查询、键、值（query, key, value）``: each name before
    the parenthesis is a term (split at ``/`` and ``、``); so is every name its definition gives with
    "又作" (zh.d2l.ai's familiar names).

    Args:
        zh_root: The Chinese edition's folder.

    Returns:
        The terms, in the glossary's order, each once.
    """
    path = zh_root / GLOSSARY_PAGE
    found = _GLOSSARY.search(path.read_text(encoding="utf-8")) if path.is_file() else None
    terms: dict[str, None] = {}
    for line in (found.group(1).splitlines() if found else []):
        if not line.strip():
            continue
        if line[0].isspace():  # a definition
            terms.update(dict.fromkeys(name.strip() for name in _ALSO.findall(line)))
            continue
        head = re.split(r"[（(]", line, maxsplit=1)[0]
        terms.update(dict.fromkeys(name.strip() for name in re.split(r"\s*/\s*|、", head) if name.strip()))
    return list(terms)


SPLIT_QUERY_JS = r"""
/* The Chinese edition's query splitter (book/_ext/editions_search.py): each run of Chinese characters is cut
 * into the search index's own terms, longest match first; a character no term begins with is left out. */
var splitQuery = (query) => {
  const words = query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu).filter((term) => term);
  const index = typeof Search !== "undefined" ? Search._index : null;
  if (!index) return words;
  const own = Object.prototype.hasOwnProperty;
  const known = (term) => own.call(index.terms, term) || own.call(index.titleterms, term);
  const longest = Object.keys(index.terms).reduce((most, term) => Math.max(most, term.length), 1);
  const out = [];
  words.forEach((word) => {
    (word.match(/[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+/g) || [])
      .forEach((run) => {
        if (!/^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/.test(run) || known(run)) { out.push(run); return; }
        let start = 0;
        while (start < run.length) {
          let end = Math.min(run.length, start + longest);
          while (end > start + 1 && !known(run.slice(start, end))) end -= 1;
          if (known(run.slice(start, end))) out.push(run.slice(start, end));
          start = end;
        }
      });
  });
  return out.length ? out : words;
};
"""


class SearchChineseBook(SearchChinese):
    """Sphinx's Chinese search language with the query splitter :data:`SPLIT_QUERY_JS` and the glossary's
    terms indexed whole wherever they appear."""

    js_splitter_code = SPLIT_QUERY_JS
    terms: tuple[str, ...] = ()
    """The glossary's Chinese terms (set when the Chinese edition's build starts; an English one, ``softmax``,
    is a word to Sphinx already)."""

    def split(self, input: str) -> list[str]:  # noqa: A002 (Sphinx's name)
        """jieba's words of ``input``, and every glossary term it holds."""
        words = super().split(input)
        words += [term for term in self.terms if term in input]
        return words

    def word_filter(self, stemmed_word: str) -> bool:
        """Sphinx keeps words of two characters or more; a one-character glossary term (键, 值) too."""
        return super().word_filter(stemmed_word) or stemmed_word in self.terms


def setup_search(app: Any) -> None:
    """``builder-inited`` of the Chinese edition: its search language knows the glossary's terms."""
    SearchChineseBook.terms = tuple(term for term in glossary_terms(Path(app.srcdir)) if re.search(f"[{_CJK}]", term))
