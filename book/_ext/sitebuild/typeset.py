"""Math typeset when the book is built, so that a page with math needs no MathJax (1.2 MB) in the
browser.

MathJax (the site's copy, :mod:`sitebuild.vendor`) runs in Node.js (:class:`MathRenderer`)
and :func:`prerender_math` writes into each page the markup it would write in the browser (CHTML,
with hidden MathML for screen readers) and the CSS of the characters used (about 10 kB), for
Sphinx's math and for the formulas of the chapters' quizzes (jupyterquiz's question data).
MathJax is loaded only by a page that has math left to typeset (no Node.js at build time, or
math written some other way) or embedded widgets (their labels): :func:`page_has_math` tells.
:class:`sitebuild.templates.PageTemplates` calls all this for every page.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html import unescape as _unescape
from pathlib import Path
from typing import Any

__all__ = ["MATH_STYLE_ID", "MathRenderer", "page_has_math", "prerender_math"]

# Sphinx writes each math node as a <span> (inline, "\(...\)") or a <div> (display, "\[...\]",
# after an equation number) of class "math", its TeX HTML-escaped (no "<" in it); myst-parser
# tells MathJax to typeset inside these classes only.
_INLINE_MATH = re.compile(r'(<span class="math notranslate nohighlight[^"]*"[^>]*>)\\\(([^<]*?)\\\)(</span>)')
_DISPLAY_MATH = re.compile(r'(<div class="math notranslate nohighlight[^"]*"[^>]*>\s*(?:<span class="eqno">[^<]*'
                           r'(?:<a [^>]*>[^<]*</a>)?</span>)?\s*)\\\[([^<]*?)\\\](\s*</div>)')
_MATHJAX_CLASSES = re.compile(r'class="(?:[^"]*\s)?(?:tex2jax_process|mathjax_process|output_area)(?:\s[^"]*)?"')
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MATH_STYLE_ID = "book-mathjax-chtml"
"""The ``id`` of the ``<style>`` that a page with build-time math carries (MathJax's CHTML rules)."""


def page_has_math(html: str) -> bool:
    r"""Whether a page holds math that is left for MathJax to typeset in the browser.

    Args:
        html: A page's HTML (or its body).

    Returns:
        True when an element of class ``math`` still holds its TeX (``\(...\)`` or ``\[...\]``:
        not typeset at build time), when an element has one of the other classes MathJax is told
        to process (``tex2jax_process``, ``mathjax_process``, ``output_area``), when a quiz's
        texts hold TeX (``$...$``), or when the page embeds widgets (whose labels MathJax may
        typeset).
    """
    return bool(_INLINE_MATH.search(html) or _DISPLAY_MATH.search(html) or _MATHJAX_CLASSES.search(html)
                or _WIDGET_STATE in html or _quiz_has_tex(html))


_MATHJAX_WORKER = r"""
const settings = JSON.parse(process.env.BOOK_MATHJAX);
require(settings.dir + '/node-main.js').init({
  loader: {paths: {mathjax: settings.dir},
           load: ['input/tex', 'output/chtml', 'adaptors/liteDOM', 'a11y/assistive-mml']},
  tex: settings.tex, chtml: {fontURL: '@FONTS@'}, startup: {typeset: false},
}).then((MathJax) => {
  const adaptor = MathJax.startup.adaptor;
  let queue = Promise.resolve();
  require('readline').createInterface({input: process.stdin}).on('line', (line) => {
    queue = queue.then(async () => {
      const request = JSON.parse(line);
      MathJax.startup.output.clearCache();  // the stylesheet of this page's characters only
      const html = [];
      for (const [tex, display] of request.math) {
        html.push(adaptor.outerHTML(await MathJax.tex2chtmlPromise(tex, {display})));
      }
      return {html, css: adaptor.textContent(MathJax.chtmlStylesheet())};
    }).catch((error) => ({error: String(error && error.message || error)}))
      .then((reply) => { process.stdout.write(JSON.stringify(reply) + '\n'); });
  });
}).catch((error) => { console.error(error); process.exit(1); });
"""


# MathJax's markup carries what the browser does not need: the MathML namespace (implied inside
# HTML), MathJax's own bookkeeping attributes, an old Internet Explorer attribute, and the same
# inline style on every container (moved into the stylesheet). About a seventh of the bytes.
_REDUNDANT = re.compile(r' xmlns="http://www\.w3\.org/1998/Math/MathML"| data-mjx-[a-z-]+="[^"]*"| unselectable="on"')
_CONTAINER_STYLE = ' style="position: relative;"'
_CONTAINER_CSS = "\nmjx-container[jax=\"CHTML\"] {position: relative;}"


def _compact(markup: str) -> str:
    """MathJax's CHTML markup of a formula without the redundant parts (see :data:`_REDUNDANT`)."""
    if markup.startswith('<mjx-container class="MathJax" jax="CHTML"'):
        markup = markup.replace(_CONTAINER_STYLE, "", 1)
    return _REDUNDANT.sub("", markup)


class MathRenderer:
    """MathJax in Node.js (the site's own copy): TeX in, the CHTML markup MathJax would write in
    the browser out, with the stylesheet of the characters used. One process, reused.

    Args:
        mathjax: The vendored MathJax folder (``_static/vendor/mathjax``).
        tex: MathJax's ``tex`` options (e.g. ``mathjax3_config["tex"]``: macros, packages).

    Raises:
        RuntimeError: If Node.js is not installed or MathJax's Node.js files are missing.
    """

    def __init__(self, mathjax: str | os.PathLike[str], tex: dict[str, Any] | None = None) -> None:
        node = shutil.which("node")
        folder = Path(mathjax).resolve()
        if node is None:
            raise RuntimeError("Node.js (`node`) is needed to typeset math at build time")
        if not (folder / "node-main.js").is_file():
            raise RuntimeError(f"{folder} has no node-main.js: run `PYTHONPATH=book/_ext python -m sitebuild.vendor`")
        tex = {"packages": {"[+]": ["ams"]}, **(tex or {})}
        env = {**os.environ, "BOOK_MATHJAX": json.dumps({"dir": str(folder), "tex": tex})}
        self._process = subprocess.Popen([node, "-e", _MATHJAX_WORKER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)

    def render(self, formulas: list[tuple[str, bool]]) -> tuple[list[str], str]:
        """Typesets ``formulas``.

        Args:
            formulas: ``(tex, display)`` pairs, TeX without its delimiters.

        Returns:
            The CHTML markup of each formula (an ``<mjx-container>`` with its hidden MathML for
            screen readers; what MathJax writes in the browser, less the attributes the browser
            does not need) and the CSS they need (font URLs as ``@FONTS@``).

        Raises:
            RuntimeError: If the Node.js process has stopped or MathJax failed (a TeX error is
                not a failure: MathJax typesets it as an error message, ``data-mjx-error``).
        """
        if self._process.stdin is None or self._process.stdout is None:
            raise RuntimeError("MathJax (Node.js) has no pipes")
        try:
            self._process.stdin.write(json.dumps({"math": formulas}) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        except (BrokenPipeError, OSError) as error:
            raise RuntimeError(f"MathJax (Node.js) stopped: {error}") from error
        if not line:
            raise RuntimeError(f"MathJax (Node.js) stopped (exit {self._process.poll()})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"MathJax (Node.js) failed: {reply['error']}")
        return [_compact(markup) for markup in reply["html"]], reply["css"] + _CONTAINER_CSS

    def close(self) -> None:
        """Ends the Node.js process."""
        if self._process.poll() is None:
            try:
                self._process.stdin.close()  # type: ignore[union-attr]
                self._process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()


# jupyterquiz (the chapters' self-check quizzes, helpers.viz.quiz) embeds its questions as
# `var questions<id>=[...]` in a script and turns "$...$" ("$$...$$") in their texts into "\(...\)"
# ("\[...\]") for MathJax when it shows them.
_QUIZ_DATA = re.compile(r"\bvar questions(\w+)=")
_QUIZ_TEX = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_QUIZ_TEXTS = ("question", "answer", "feedback")


def _quiz_blocks(html: str) -> list[tuple[int, int, Any]]:
    """The question lists of the page's quizzes: ``(start, end, questions)`` of each JSON array."""
    blocks, decoder = [], json.JSONDecoder()
    for match in _QUIZ_DATA.finditer(html):
        try:
            questions, end = decoder.raw_decode(html, match.end())
        except json.JSONDecodeError:
            continue
        if isinstance(questions, list):
            blocks.append((match.end(), end, questions))
    return blocks


def _quiz_texts(questions: Any) -> list[tuple[dict[str, Any], str]]:
    """``(holder, key)`` of every text of a quiz that jupyterquiz shows as HTML (and typesets)."""
    found = []
    for question in questions if isinstance(questions, list) else []:
        if not isinstance(question, dict):
            continue
        found += [(question, key) for key in _QUIZ_TEXTS if isinstance(question.get(key), str)]
        for answer in question.get("answers") or []:
            if isinstance(answer, dict):
                found += [(answer, key) for key in _QUIZ_TEXTS if isinstance(answer.get(key), str)]
    return found


def _quiz_has_tex(html: str) -> bool:
    return any(_QUIZ_TEX.search(holder[key]) for _, _, questions in _quiz_blocks(html)
               for holder, key in _quiz_texts(questions))


def prerender_math(html: str, renderer: MathRenderer, fonts: str) -> tuple[str, list[str]]:
    """Typesets a page's math at build time, so that the page needs no MathJax in the browser.

    Args:
        html: The page's HTML.
        renderer: The MathJax process.
        fonts: The URL of MathJax's CHTML fonts relative to the page
            (``.../_static/vendor/mathjax/output/chtml/fonts/woff-v2``).

    Returns:
        The page with each math element's TeX, and each formula in the texts of its quizzes
        (jupyterquiz's question data), replaced by MathJax's CHTML markup, and MathJax's
        stylesheet in its ``<head>`` (the page unchanged when it has no math); and the TeX
        errors MathJax reported (``"message: tex"``).
    """
    elements = [(m, True) for m in _DISPLAY_MATH.finditer(html)] + [(m, False) for m in _INLINE_MATH.finditer(html)]
    elements.sort(key=lambda item: item[0].start())
    formulas = [(_unescape(m.group(2)), display) for m, display in elements]
    quizzes = _quiz_blocks(html)
    quiz_formulas: list[list[re.Match[str]]] = []
    for _, _, questions in quizzes:
        for holder, key in _quiz_texts(questions):
            matches = list(_QUIZ_TEX.finditer(holder[key]))
            quiz_formulas.append(matches)
            formulas += [(next(g for g in m.groups() if g is not None), m.lastindex in (1, 4)) for m in matches]
    if not formulas:
        return html, []
    markup, css = renderer.render(formulas)
    errors = [f"{error}: {tex.strip()}" for (tex, _), chtml in zip(formulas, markup)
              for error in re.findall(r'data-mjx-error="([^"]*)"', chtml)]
    rendered = iter(markup)
    replacements = [(m.start(), m.end(), m.group(1) + next(rendered) + m.group(3)) for m, _ in elements]
    texts = iter(quiz_formulas)
    for start, end, questions in quizzes:
        for holder, key in _quiz_texts(questions):
            holder[key] = _QUIZ_TEX.sub(lambda _: next(rendered), holder[key]) if next(texts) else holder[key]
        replacements.append((start, end, json.dumps(questions).replace("</", "<\\/")))
    parts, last = [], 0
    for start, end, text in sorted(replacements):
        parts += [html[last:start], text]
        last = end
    parts.append(html[last:])
    html = "".join(parts)
    style = f'<style id="{MATH_STYLE_ID}">{css.replace("@FONTS@", fonts)}</style>\n'
    head_end = html.find("</head>")
    html = html[:head_end] + style + html[head_end:] if head_end >= 0 else style + html
    return html, errors
