"""The Chinese edition at build time: its checks and the rewriting of its pages (part of :mod:`editions`).

Before the build, the Chinese edition checks that its search can index Chinese (``jieba``) and
that its code cells are its English pages' (the notebook cache matches a notebook by its code),
and runs a notebook missing from the cache in its English page's folder. When a page is resolved,
it replaces each figure's caption and text alternative by the Chinese ones the page gives
(``figure-text``), a glued English phrase by its Chinese (``glue_text``), a quiz's questions by
those of its Chinese file, and renders ``edition-status`` (the Chinese intro).
"""


import html
import json
import re
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx.transforms import SphinxTransform

import editions_figures
import editions_search
from editions_drift import Drift, check, code_differences, english_revision
from editions_records import ZH, quiz_sources, source_path, split_front_matter, toc_docnames, zh_path
from editions_switch import edition_of, english_inventory, english_root, raw_outputs, set_raw
from helpers.viz.quiz import fill_glued, glued_keys

__all__ = [
    "GLUE_TEXT_KEY",
    "OUTPUT_TEXT_FILE",
    "QUIZ_STRINGS",
    "EditionStatus",
    "FigureText",
    "edition_status",
    "english_figure_text",
    "figure_text",
    "load_output_text",
    "numbers_not_in",
    "paste_glued",
    "status_sentences",
    "translate_figure",
    "translate_glued",
    "translate_output_text",
    "translate_quiz",
]


def _execute_in_english_folders(srcdir: Path) -> None:
    """Chinese edition: a notebook the cache lacks runs in its English page's folder.

    A code cell that reads a file relative to its page (a chapter's quiz, ``../quizzes/ch03.json``)
    then reads the English file, as in the English build, so that the run is the English run and
    its outputs are the ones the English build caches. (myst-nb runs a notebook in its source's
    folder, ``NotebookClientCache.path.parent``: this wraps ``start_client`` to point ``path`` at the
    English page for the time of the run.)
    """
    from myst_nb.core.execute.cache import NotebookClientCache

    original = NotebookClientCache.start_client
    if getattr(original, "_editions_english_folder", False):
        return

    def start_client(self: Any) -> None:
        chinese = self._path
        english = None
        if chinese is not None:
            try:
                english = srcdir.parent / Path(chinese).resolve().relative_to(srcdir)
            except ValueError:
                english = None
        if english is None or not english.is_file():
            return original(self)
        self._path = english
        try:
            return original(self)
        finally:
            self._path = chinese

    start_client._editions_english_folder = True  # type: ignore[attr-defined]
    NotebookClientCache.start_client = start_client


def _builder_inited(app: Any) -> None:
    """Chinese edition: checks its search can index Chinese, and that its code is the English code."""
    if edition_of(app) != "zh" or app.builder.format != "html":
        return
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    _execute_in_english_folders(Path(app.srcdir).resolve())
    editions_search.setup_search(app)
    try:
        import jieba
    except ImportError:
        logger.warning("jieba is not installed: Sphinx's Chinese search indexes no Chinese word (pip install jieba)",
                       type="editions", subtype="search")
    else:
        import logging as std_logging

        jieba.setLogLevel(std_logging.WARNING)  # not its "Building prefix dict..." on every build
    root = english_root(app)
    for docname in toc_docnames(Path(app.srcdir)):
        chinese, english = source_path(Path(app.srcdir), docname), source_path(root, docname)
        if chinese is None or english is None:
            if english is None:
                logger.warning("%s has no English page %s", docname, docname, type="editions", subtype="source")
            continue
        differences = code_differences(english, chinese)
        if differences:
            logger.warning("%s: its code cells differ from %s's (%s): run python book/_ext/editions.py "
                           "--sync-code %s", chinese.relative_to(root), english.relative_to(root),
                           "; ".join(differences[:3]), chinese.relative_to(root), type="editions", subtype="code")




class figure_text(nodes.General, nodes.Element):  # noqa: N801 (docutils names its nodes in lower case)
    """A figure's Chinese caption and text alternative, applied to the code cell before it."""


_GLUE_TEXT_ROLE = re.compile(r"\{glue:text\}`([^`]+)`")
"""A glued number in a caption or text alternative, written as in the prose: ``{glue:text}`key:.2f```."""


def paste_glued(text: str, lookup: Any) -> str:
    """``text`` with each ``{glue:text}`key:format``` replaced by the glued value, formatted as the prose's role does.

    Args:
        text: A caption or text alternative.
        lookup: ``lookup(key)`` gives the glued output's ``text/plain`` (raises ``KeyError`` when missing).

    Returns:
        The text with the values in place.

    Raises:
        KeyError: a key that the page does not glue.
    """
    from myst_nb.core.variables import format_plain_text

    def paste(match: re.Match[str]) -> str:
        key, _, spec = match.group(1).rpartition(":") if ":" in match.group(1) else (match.group(1), "", "s")
        return format_plain_text(lookup(key), spec or "s")

    return _GLUE_TEXT_ROLE.sub(paste, text)


def _glued_text(document: Any, key: str) -> str:
    from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data

    try:
        data = retrieve_glue_data(document, key).data
    except RetrievalError as error:
        raise KeyError(key) from error
    if "text/plain" not in data:
        raise KeyError(key)
    return data["text/plain"]


_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
_WORD_NUMBERS = frozenset({"0", "1"})
"""Numbers a Chinese text writes as digits where English writes a word ("zero-mean", "a millisecond")."""


def numbers_not_in(chinese: str, english: str) -> list[str]:
    """The numbers of a Chinese caption or text alternative that the English one of the same figure does
    not show in this build (0 and 1 aside: English often writes them as words).

    The English caption takes its numbers from the run (f-strings); a number typed into the Chinese text
    is right only while it is one of those, so a number missing there is a typed result that drifted.
    """
    shown = {number.replace(",", "") for number in _NUMBER.findall(english)}
    return [number for number in _NUMBER.findall(chinese)
            if number.replace(",", "") not in shown and number not in _WORD_NUMBERS]


class FigureText(Directive):
    """``figure-text``: the Chinese caption (its content) and text alternative (``:alt:``) of the
    figure drawn by the code cell just before it. A number from the run is written as in the prose,
    ``{glue:text}`key:format```, and filled in from the page's glued values."""

    has_content = True
    option_spec = {"alt": directives.unchanged_required}

    def run(self) -> list[Any]:
        """The :class:`figure_text` node, applied to the figure at the end of the build."""
        caption = " ".join("\n".join(self.content).split())
        if not caption or not self.options.get("alt"):
            raise self.error("figure-text needs the caption as its content and the text alternative as :alt:")
        alt = " ".join(self.options["alt"].split())
        document = self.state.document
        try:
            caption, alt = (paste_glued(text, lambda key: _glued_text(document, key)) for text in (caption, alt))
        except KeyError as error:
            raise self.error(f"figure-text: the page glues no {error.args[0]!r}") from None
        node = figure_text()
        node["caption"], node["alt"] = caption, alt
        node.source, node.line = self.state_machine.get_source_and_line(self.lineno)
        return [node]


_FIGCAPTION = re.compile(r"<figcaption>(.*?)</figcaption>", re.DOTALL)
_ALT_PARAGRAPH = re.compile(r'<p id="[^"]*-alt" class="book-figure-alt"[^>]*>(.*?)</p>', re.DOTALL)
_GROUP_LABEL = re.compile(r'<figure class="book-figure"><div role="group" aria-label="([^"]*)"')
_PLOTLY_LABEL = re.compile(r'<div class="book-plotly" role="group" aria-label="([^"]*)"')  # a figure without a title


def english_figure_text(markup: str) -> str | None:
    """The English caption and text alternative of a captioned figure's HTML, as one plain text (``None``: none)."""
    found = _FIGCAPTION.search(markup)
    if found is None:
        return None
    alt_found = _ALT_PARAGRAPH.search(markup) or _GROUP_LABEL.search(markup) or _PLOTLY_LABEL.search(markup)
    return html.unescape(found.group(1) + " " + (alt_found.group(1) if alt_found else ""))


def translate_figure(markup: str, caption: str, alt: str) -> str | None:
    """A captioned figure's HTML (``helpers.viz.captioned``) with another caption and text alternative.

    Args:
        markup: The figure's HTML output.
        caption: The new caption (plain text).
        alt: The new text alternative (plain text).

    Returns:
        The new HTML, or ``None`` when ``markup`` holds no captioned figure.
    """
    found = _FIGCAPTION.search(markup)
    if found is None:
        return None
    alt_found = _ALT_PARAGRAPH.search(markup) or _GROUP_LABEL.search(markup) or _PLOTLY_LABEL.search(markup)
    if alt_found is not None and alt_found.group(1):
        markup = markup.replace(f'aria-label="{alt_found.group(1)}"', f'aria-label="{html.escape(alt)}"')
        markup = markup.replace(f">{alt_found.group(1)}</p>", f">{html.escape(alt)}</p>")
    return _FIGCAPTION.sub(lambda _: f"<figcaption>{html.escape(caption)}</figcaption>", markup, count=1)


def _is_code_cell(node: Any) -> bool:
    return getattr(node, "get", None) is not None and node.get("nb_element") == "cell_code"


def _apply_figure_texts(app: Any, doctree: Any, docname: str) -> None:
    """Each ``figure-text`` onto the figure of the code cell before it; a captioned figure left in
    English is reported."""
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    translated = set()
    for node in list(doctree.findall(figure_text)):
        parent = node.parent
        index = parent.index(node)
        cell = next((sibling for sibling in reversed(parent.children[:index]) if _is_code_cell(sibling)), None)
        done = False
        if cell is not None:
            for output in raw_outputs(cell):
                english = english_figure_text(output.astext())
                new = translate_figure(output.astext(), node["caption"], node["alt"])
                if new is not None and id(output) not in translated:
                    drifted = numbers_not_in(node["caption"] + " " + node["alt"], english or "")
                    if drifted:
                        logger.warning("figure-text: %s not in the English caption or text alternative of this "
                                       "figure in this build (a typed number: glue it, {glue:text}`key:format`)",
                                       ", ".join(drifted), location=node, type="editions", subtype="figure")
                    set_raw(output, new)
                    translated.add(id(output))
                    done = True
                    break
        if not done:
            logger.warning("figure-text: no captioned figure in the code cell before it", location=node,
                           type="editions", subtype="figure")
        parent.remove(node)
    for output in raw_outputs(doctree):
        match = _FIGCAPTION.search(output.astext())
        if match and id(output) not in translated:
            logger.warning("a figure's caption is still English (add a figure-text after its cell): %s",
                           html.unescape(match.group(1))[:120], location=(docname, output.line),
                           type="editions", subtype="figure")


GLUE_TEXT_KEY = "glue_text"
"""The front-matter key of a Chinese page's translations of the English phrases its code glues."""
_ENGLISH_PHRASE = re.compile(r"[A-Za-z]{3,}")


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _straight_quotes(text: str) -> str:
    return text.translate(_QUOTES)


def translate_glued(text: str, phrases: dict[str, str]) -> str | None:
    """A glued English phrase in Chinese, by a page's ``glue_text`` table.

    Args:
        text: The glued value, e.g. ``"3 of them"``.
        phrases: ``{English pattern: Chinese pattern}``; ``{name}`` in a pattern stands for any text,
            carried over (``{"{n} of them": "有 {n} 个"}``).

    Returns:
        The Chinese text, or ``None`` when no pattern matches. Typographic quotes, which Sphinx's
        smartquotes writes in the page (``kernel’s``), match the straight ones a pattern is written with.
    """
    text = _straight_quotes(text)
    for english, chinese in phrases.items():
        parts = re.split(r"\{(\w+)\}", _straight_quotes(english))
        pattern = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts))
        match = re.fullmatch(pattern, text.strip())
        if match:
            return chinese.format(**match.groupdict())
    return None


def _apply_glue_text(app: Any, doctree: Any, docname: str) -> None:
    """Glued English phrases (``{glue:text}`` of a value such as ``"none of them"``) in Chinese."""
    from sphinx.util import logging

    source = source_path(Path(app.srcdir), docname)
    if source is None or source.suffix != ".md":
        return
    phrases = (yaml.safe_load(split_front_matter(source.read_text(encoding="utf-8"))[0]) or {}).get(GLUE_TEXT_KEY)
    for node in doctree.findall(nodes.inline):
        if "pasted-text" not in node.get("classes", []):
            continue
        text = node.astext()
        chinese = translate_glued(text, phrases or {})
        if chinese is not None:
            node.children = [nodes.Text(chinese)]
        elif len(_ENGLISH_PHRASE.findall(text)) >= 2:
            logging.getLogger(__name__).warning(
                "the glued text %r is English: give its Chinese in the page's front matter (%s:)", text,
                GLUE_TEXT_KEY, location=node, type="editions", subtype="glue")


OUTPUT_TEXT_FILE = "output_text.yml"
"""The Chinese edition's file (in ``zh/``) of the English words that code cells print in tables and notes."""
_CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")
_UNITS = re.compile(r"\b(?:[KMGT]iB|[KMGT]B|ms|GHz)\b")
"""Units that a printed number carries: not English words (``0.5 GiB`` needs no translation)."""
_SKIPPED_OUTPUT_NODES = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw,
                         nodes.FixedTextElement)


def load_output_text(zh_root: Path) -> tuple[set[str], dict[str, str]]:
    """The Chinese edition's translations of printed tables (``zh/output_text.yml``).

    Args:
        zh_root: The Chinese edition's folder.

    Returns:
        ``(names, text)``: the printed names that stay English (a dtype, a function's name), and
        ``{English: Chinese}`` for the rest; ``{name}`` in a pattern stands for any text, carried over.
    """
    path = zh_root / OUTPUT_TEXT_FILE
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    data = data or {}
    return set(data.get("names") or []), {str(k): str(v) for k, v in (data.get("text") or {}).items()}


def translate_output_text(text: str, names: set[str], phrases: dict[str, str]) -> str | None:
    """One piece of text that a code cell printed (a table's cell, a note under it), in Chinese.

    Args:
        text: The text, as the English run printed it.
        names: Printed names that stay English.
        phrases: ``{English: Chinese}``, exact or with ``{name}`` placeholders (as ``glue_text``).

    Returns:
        The text to show (Chinese, or the name itself), or ``None`` when it reads as English and no entry
        covers it. Text with no English word (numbers, symbols, Chinese) is returned as it is.
    """
    core = text.strip()
    head, tail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    straight = {_straight_quotes(english): chinese for english, chinese in phrases.items()}
    if core not in names and _straight_quotes(core) in straight:  # an entry first: a short word ("no") too
        return head + straight[_straight_quotes(core)] + tail
    if not _ENGLISH_PHRASE.search(_UNITS.sub("", core)) or _CJK.search(core) or core in names:
        return text
    patterns = {english: chinese for english, chinese in phrases.items() if "{" in english}
    chinese = translate_glued(core, patterns)
    return None if chinese is None else head + chinese + tail


def _inside(node: Any, kinds: tuple[type, ...]) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kinds):
            return True
        if isinstance(parent, nodes.Element) and "pasted-text" in parent.get("classes", []):
            return True
        parent = parent.parent
    return False


def _apply_output_text(app: Any, doctree: Any, docname: str) -> None:
    """The tables and notes that code cells print (Markdown outputs) in Chinese, from ``zh/output_text.yml``;
    a piece of English printed text that the file does not cover is a warning (``-W``: the build fails)."""
    from sphinx.util import logging

    names, phrases = load_output_text(Path(app.srcdir))
    for container in doctree.findall(nodes.container):
        if "cell_output" not in container.get("classes", []):
            continue
        for text_node in list(container.findall(nodes.Text)):
            if _inside(text_node, _SKIPPED_OUTPUT_NODES):
                continue
            text = str(text_node)
            chinese = translate_output_text(text, names, phrases)
            if chinese is None:
                logging.getLogger(__name__).warning(
                    "printed text %r is English: give its Chinese in zh/%s (text:, or names: for a name that "
                    "stays English)", text.strip()[:160], OUTPUT_TEXT_FILE, location=(docname, container.line),
                    type="editions", subtype="output")
            elif chinese != text:
                text_node.parent.replace(text_node, nodes.Text(chinese))


QUIZ_STRINGS = {"'Check'": "'核对'", '"Correct!"': '"正确！"', '"Correct"': '"正确"',
                '"Incorrect -- try again."': '"不对，再试一次。"', '"Incorrect. Try again."': '"不对，再试一次。"',
                '"Type numeric answer here:"': '"输入数值答案："'}
"""The quiz's own interface strings (helpers.viz.quiz's button, jupyterquiz's default feedback) in Chinese."""
_QUIZ_VARIABLE = re.compile(r"var questions([A-Za-z]+)=")
_QUIZ_GLUED = re.compile(r'<script type="application/json" class="book-quiz-glued">(.*?)</script>', re.S)
"""The run's values a quiz was given (``helpers.viz.quiz``), which fill the Chinese questions too."""


def translate_quiz(markup: str, questions: list[dict[str, Any]]) -> str | None:
    """A quiz's HTML (``helpers.viz.quiz``) showing other questions, with its buttons in Chinese.

    Args:
        markup: The quiz's HTML output.
        questions: The questions to show instead (jupyterquiz's format); their
            ``{glue:text}`key:format``` take the values the English quiz was given.

    Returns:
        The new HTML, or ``None`` when ``markup`` holds no quiz.
    """
    found = _QUIZ_VARIABLE.search(markup)
    if found is None:
        return None
    values = _QUIZ_GLUED.search(markup)
    if values is not None or glued_keys(questions):  # the run's numbers, as the English quiz was given them
        questions = fill_glued(questions, json.loads(values.group(1).replace("<\\/", "</")) if values else {})
    old, end = json.JSONDecoder().raw_decode(markup, found.end())
    if len(old) != len(questions):
        raise ValueError(f"questions: {len(questions)} questions for a quiz of {len(old)}")
    markup = markup[:found.end()] + json.dumps(questions).replace("</", "<\\/") + markup[end:]
    for english, chinese in QUIZ_STRINGS.items():
        markup = markup.replace(english, chinese)
    return markup


def _apply_quizzes(app: Any, doctree: Any, docname: str) -> None:
    """A quiz in a Chinese page shows the questions of its Chinese file."""
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    root = english_root(app)
    english = source_path(root, docname)
    if english is None:
        return
    quizzes = quiz_sources(english.relative_to(root).as_posix(), root)
    outputs = [node for node in raw_outputs(doctree) if _QUIZ_VARIABLE.search(node.astext())]
    for quiz, output in zip(quizzes, outputs):
        chinese = zh_path(quiz, root)
        if not chinese.is_file():
            logger.warning("the quiz %s has no Chinese file %s", quiz, chinese.relative_to(root),
                           location=docname, type="editions", subtype="quiz")
            continue
        try:
            new = translate_quiz(output.astext(), json.loads(chinese.read_text(encoding="utf-8")))
        except ValueError as error:
            logger.warning("%s: %s", chinese.relative_to(root), error, location=docname, type="editions",
                           subtype="quiz")
            continue
        if new is not None:
            set_raw(output, new)



class edition_status(nodes.General, nodes.Element):  # noqa: N801
    """Where ``edition-status`` goes: filled when the page is resolved, from the sources as they are then."""


class EditionStatus(Directive):
    """``edition-status``: the English revision this edition follows, and the pages still to
    translate or to update."""

    def run(self) -> list[Any]:
        """The :class:`edition_status` node."""
        return [edition_status()]


def status_sentences(drift: Drift, revision: tuple[str, str, bool], pages: dict[str, str]) -> list[str]:
    """The Chinese intro's statement of which English revision the edition follows.

    Args:
        drift: :func:`check`'s result.
        revision: :func:`english_revision`'s result.
        pages: ``{English page: its title}`` for naming pages.

    Returns:
        Sentences (plain text) for the page.
    """
    short, date, dirty = revision
    if short:
        followed = f"本版译文对应英文版的修订 {short}（{date}）" + ("，外加其后尚未提交的改动" if dirty else "") + "。"
    else:
        followed = "本版译文对应构建时的英文源文件（构建目录不是 git 仓库，无法给出修订号）。"
    sentences = [followed]
    stale = [page.removeprefix(f"{ZH}/") for page in drift.stale]
    if stale or drift.missing:
        names = "、".join(pages.get(page, page) for page in [*stale, *drift.missing])
        sentences.append(f"以下页面的英文原文在此之后有改动，译文尚待更新：{names}。")
    else:
        sentences.append("已译的每一页都与这一修订的英文原文一致。")
    if drift.pending:
        sentences.append(f"英文版还有 {len(drift.pending)} 页尚未译出：中文版的目录里暂时没有它们，"
                         "正文中指向它们的链接会打开英文原文。")
    return sentences


def _fill_status(app: Any, doctree: Any, docname: str) -> None:
    found = list(doctree.findall(edition_status))
    if not found:
        return
    root = english_root(app)
    drift = check(root)
    titles = {}
    for docname_en, title in english_inventory(app).get("std:doc", {}).items():
        path = source_path(root, docname_en)
        if path is not None:
            titles[path.relative_to(root).as_posix()] = f"“{title[3]}”"
    sentences = status_sentences(drift, english_revision(root), titles)
    for node in found:
        node.replace_self([nodes.paragraph("", sentence) for sentence in sentences])


def _status_outdated(app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """``env-get-outdated``: a page with ``edition-status`` is rebuilt every time (the English pages it
    reports on are not its dependencies)."""
    pages = []
    for docname in env.found_docs:
        path = source_path(Path(app.srcdir), docname)
        if path is not None and path.suffix == ".md" and "{edition-status}" in path.read_text(encoding="utf-8"):
            pages.append(docname)
    return pages


def _translate_figures(app: Any, doctree: Any, docname: str) -> None:
    """``doctree-resolved``, before the generated text alternatives are swapped (:mod:`editions_switch`):
    in Chinese, each figure's own text from ``zh/figure_text.yml`` (:mod:`editions_figures`)."""
    if edition_of(app) == "zh":
        editions_figures.apply_figure_text(app, doctree, docname, raw_outputs, set_raw)


def _rewrite_page(app: Any, doctree: Any, docname: str) -> None:
    """``doctree-resolved``: in Chinese, the figures' captions, the quizzes and the glued phrases; an
    English page's ``figure-text`` nodes (it has none to apply) are dropped."""
    if edition_of(app) == "zh":
        _apply_figure_texts(app, doctree, docname)
        _apply_quizzes(app, doctree, docname)
        _apply_glue_text(app, doctree, docname)
        _apply_output_text(app, doctree, docname)
    else:  # a figure-text is the Chinese edition's
        for node in list(doctree.findall(figure_text)):
            node.parent.remove(node)


SITE_WORDS = {
    'title="Link to this definition"': 'title="链接到此定义"',
    'title="Link to this heading"': 'title="链接到此标题"',
    'title="Link to this term"': 'title="链接到此术语"',
    'aria-label="Toggle hidden content"': 'aria-label="显示或隐藏内容"',
    'placeholder="Search this book..."': 'placeholder="搜索本书……"',
    'aria-label="Search this book..."': 'aria-label="搜索本书……"',
    'aria-label="Main"': 'aria-label="主导航"',
    'aria-label="Page"': 'aria-label="本页导航"',
    'title="Toggle primary sidebar"': 'title="显示或隐藏目录"',
    'title="Toggle secondary sidebar"': 'title="显示或隐藏本页目录"',
    'aria-label="Color mode"': 'aria-label="颜色模式"',
    'data-bs-title="Color mode"': 'data-bs-title="颜色模式"',
    'title="System Settings"': 'title="跟随系统设置"',
    'title="Light"': 'title="浅色"',
    'title="Dark"': 'title="深色"',
    'Layer: <select id="layer">': '层：<select id="layer">',  # BertViz's head view (6.1)
    # sphinx-book-theme's launch buttons and print button: its zh_CN catalogue has no "Launch on" and no
    # "Launch interactive content", and writes "Print to PDF" in Taiwan's usage (列印成 PDF)
    'title="Launch on Binder"': 'title="在 Binder 上启动"',
    'title="Launch on JupyterHub"': 'title="在 JupyterHub 上启动"',
    'title="Launch on Colab"': 'title="在 Colab 上启动"',
    'title="Launch on Deepnote"': 'title="在 Deepnote 上启动"',
    'aria-label="Launch interactive content"': 'aria-label="启动交互式内容"',
    'title="Launch interactive content"': 'title="启动交互式内容"',
    "列印成 PDF": "打印为 PDF",
    'alt="Binder logo"': 'alt="Binder 标志"',
    'alt="JupyterHub logo"': 'alt="JupyterHub 标志"',
    'alt="Colab logo"': 'alt="Colab 标志"',
    'alt="Deepnote logo"': 'alt="Deepnote 标志"',
}
"""The themes' own words that their Chinese catalogues lack (sphinx-book-theme, pydata-sphinx-theme,
sphinx-togglebutton, Sphinx's permalinks) and BertViz's menu label, as they stand in the HTML, and their Chinese."""

TOGGLE_HINTS = {"togglebutton_hint": "点击显示", "togglebutton_hint_hide": "点击隐藏"}
"""sphinx-togglebutton's hints (its configuration values) in Chinese."""


def localise_site_words(markup: str) -> str:
    """A Chinese page's HTML with the themes' English words (:data:`SITE_WORDS`) in Chinese."""
    for english, chinese in SITE_WORDS.items():
        markup = markup.replace(english, chinese)
    return markup


def _config_inited(app: Any, config: Any) -> None:
    if edition_of(app) == "zh":
        for name, value in TOGGLE_HINTS.items():
            if name in config:  # registered by sphinx-togglebutton, which Jupyter Book loads
                setattr(config, name, value)


def _translate_site_words(app: Any, exception: Exception | None) -> None:
    """``build-finished``, Chinese edition: every page's theme words in Chinese, and its widgets' labels."""
    if exception is not None or edition_of(app) != "zh" or app.builder.format != "html":
        return
    from sphinx.util import logging

    outdir = Path(app.outdir)
    table = editions_figures.load_figure_text(Path(app.srcdir))
    for page in outdir.rglob("*.html"):
        if "_static" in page.relative_to(outdir).parts:
            continue
        text = page.read_text(encoding="utf-8")
        translated, missing = editions_figures.translate_widget_state(localise_site_words(text), table)
        if missing:  # the widgets' labels: the figures' table, as the figures' own text
            logging.getLogger(__name__).warning(
                "%s: its widgets have %d English strings to translate in zh/%s:\n%s", page.relative_to(outdir),
                len(missing), editions_figures.FIGURE_TEXT_FILE, editions_figures.missing_yaml(missing),
                type="editions", subtype="figure_text")
        if translated != text:
            page.write_text(translated, encoding="utf-8")


_SECTION_ID = re.compile(r'<section\b[^>]*?\bid="([^"]+)"')
_AUTOMATIC_ID = re.compile(r"id\d+")
"""The ids docutils makes up for a heading it cannot spell in ASCII."""


def english_section_ids(english_html: Path) -> list[str]:
    """The ids of an English page's sections, in the order of the page (its built HTML)."""
    if not english_html.is_file():
        return []
    return _SECTION_ID.findall(english_html.read_text(encoding="utf-8"))


class EnglishSectionIds(SphinxTransform):
    """A Chinese page's sections get the ids of the English page's, in order: ``#why-not-cosine``
    instead of ``#id5``, the same anchor in both editions, so a deep link means something and the
    language switch can keep the reader's place (``book.js`` carries the anchor across). Runs while
    the page is read, before its table of contents is collected; the English build has written its
    pages by then. Sections pair in order; a Chinese page may end with sections of its own, which keep
    their ids, and a page with fewer sections than the English one keeps all its own."""

    default_priority = 700

    def apply(self, **kwargs: Any) -> None:
        if edition_of(self.app) != "zh":
            return
        english = Path(self.app.config.editions_english_html) / f"{self.env.docname}.html"
        sections = list(self.document.findall(nodes.section))
        ids = english_section_ids(english)
        if not ids or len(sections) < len(ids):
            return
        # sections of the Chinese edition's own (the intro's "about this edition") come last and keep theirs
        for section, new_id in zip(sections, ids):
            if section["ids"][:1] == [new_id] or _AUTOMATIC_ID.fullmatch(new_id):
                continue  # already it, or the English page has no meaningful id here either
            owner = self.document.ids.get(new_id)
            if owner is not None and owner is not section:
                continue  # taken on this page by something else: keep the section's own
            section["ids"] = [new_id] + [i for i in section["ids"] if i != new_id]
            self.document.ids[new_id] = section


def setup(app: Any) -> None:
    """Registers the Chinese edition's directives, checks and rewriting (loaded by both editions: an
    English build drops a stray ``figure-text``)."""
    app.add_node(figure_text)
    app.add_node(edition_status)
    app.add_directive("figure-text", FigureText)
    app.add_directive("edition-status", EditionStatus)
    app.add_transform(EnglishSectionIds)
    app.connect("config-inited", _config_inited, priority=100)  # before sphinx-togglebutton writes its hints (500)
    app.connect("builder-inited", _builder_inited)
    app.connect("build-finished", _translate_site_words)
    app.add_search_language(editions_search.SearchChineseBook)  # used by the Chinese edition only (zh_CN)
    app.connect("doctree-resolved", _translate_figures, priority=400)
    app.connect("doctree-resolved", _rewrite_page)
    app.connect("doctree-resolved", _fill_status)
    app.connect("env-get-outdated", _status_outdated)
