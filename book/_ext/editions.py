"""The book's two editions, English (the source) and Chinese (``zh/``), kept in step.

A local Sphinx extension (build tooling, never imported by a reader) loaded by both editions'
``_config.yml`` (``sphinx: local_extensions: editions: book/_ext``, ``../book/_ext`` from ``zh/``),
and a command line for translators. The Chinese edition is a second Jupyter Book, ``zh/``, whose
pages mirror the English paths (``zh/book/03-scaling/index.md`` translates
``book/03-scaling/index.md``); ``scripts/build-zh.sh`` builds it into ``_build/html/zh/`` after the
English one, sharing its notebook cache. ``zh/TRANSLATING.md`` is the translators' guide.

At build time, in both editions, this extension

- puts a language switch in the header of every page: a relative link to the same page in the
  other edition (to the other edition's first page where that page is not translated yet), so it
  works over http and from ``file://`` alike, plus ``<link rel="alternate" hreflang>`` in the head;
- renders the lab checkers' stored verdicts in the edition's language (a verdict keeps its
  message's key and values: :mod:`helpers.exercises.messages`).

In the Chinese edition only, it also

- replaces each figure's caption and text alternative by the Chinese ones given in the page
  (a ``figure-text`` directive right after the code cell that draws the figure: the cell's code,
  and so its English caption, stays identical to the English page's);
- draws each figure's own text (title, axes, legend, sliders, menus, hover text, annotations) in
  Chinese from ``zh/figure_text.yml``, and warns (an error under ``-W``) on every string it lacks
  (:mod:`editions_figures`);
- lets its search find a Chinese term typed as a reader types it (:mod:`editions_search`);
- shows a chapter's quiz from its Chinese file (``zh/book/quizzes/chNN.json``), the page's code
  still naming the English one, and the quiz's buttons in Chinese;
- resolves a reference to a page, label or API object that the Chinese edition does not hold yet
  to the English page (``objects.inv`` of the English build), so that a partly translated edition
  builds with ``-n -W`` and its links lead somewhere;
- takes its launch buttons (JupyterHub, Binder, Colab) from the English ``_config.yml``'s
  ``repository`` and ``launch_buttons``, the one place that names them (:mod:`editions_launch`);
- renders ``edition-status`` (the Chinese intro): the English revision the edition follows, and
  the pages still to translate or to update;
- warns (an error under ``-W``) when a Chinese page's code cells differ from its English page's
  (the notebook cache matches a notebook by its code: it would be executed again, and its numbers
  could differ), and when ``jieba`` is missing (Sphinx's Chinese search then indexes no Chinese word).

The drift check: each Chinese page records, in its front matter (a lab: in its notebook metadata),
the English files it translates and a hash of each of their blocks (paragraphs, figure captions,
quiz questions). ``tests/test_editions.py`` fails when an English page has no Chinese page (and is
not listed in ``zh/UNTRANSLATED.txt``) or when a recorded hash no longer matches, printing the
English blocks that changed. Command line::

    python book/_ext/editions.py --check                      # the drift report (exit 1 on drift)
    python book/_ext/editions.py --update zh/book/...md       # re-record, once the translation is updated
    python book/_ext/editions.py --start book/03-scaling/index.md   # a new Chinese page to translate
    python book/_ext/editions.py --sync-code zh/book/...md    # the English page's code cells, prose untouched

This module is the extension's entry (``setup``) and the command line; the work is done, one
concern a module, by

- :mod:`editions_records`: the editions' pages, their blocks and hashes, a Chinese page's record;
- :mod:`editions_drift`: the drift check and the translators' tools (``--start``, ``--update``,
  ``--sync-code``);
- :mod:`editions_switch`: at build time in both editions, the language switch, the verdicts'
  language and the Chinese edition's links to English pages;
- :mod:`editions_zh`: at build time in the Chinese edition, its checks and the rewriting of its
  pages (captions, quizzes, glued phrases, ``edition-status``);
- :mod:`editions_launch`: the Chinese edition's launch buttons, from the English ``_config.yml``;
- :mod:`editions_figures`: the Chinese edition's figures, their own text in Chinese (and its command
  line, ``python book/_ext/editions_figures.py --missing``: what the table still lacks in a built site);
- :mod:`editions_search`: the Chinese edition's search (the query split into the index's terms, the
  glossary's terms indexed whole).

Their public names are importable from here too (``import editions; editions.check()``).
"""

from __future__ import annotations

import sys
from typing import Any

import editions_drift
import editions_launch
import editions_records
import editions_switch
import editions_zh
from editions_drift import *  # noqa: F403 (each part's public names, importable from here)
from editions_records import *  # noqa: F403
from editions_switch import *  # noqa: F403
from editions_zh import *  # noqa: F403

__all__ = [*editions_records.__all__, *editions_drift.__all__, *editions_switch.__all__, *editions_zh.__all__, "setup"]


def setup(app: Any) -> dict[str, Any]:
    """The Sphinx extension (both editions): the switch and verdicts, then the Chinese edition's part."""
    editions_switch.setup(app)
    editions_zh.setup(app)
    editions_launch.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.exit(editions_drift.main())
