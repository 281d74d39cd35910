"""The Chinese edition's figures in Chinese (part of :mod:`editions`).

A figure of the book is drawn by the English code (the Chinese page's code cells are the English
page's, character for character), so its title, axis titles, legend, slider and menu labels, hover
text and annotations are English in the executed notebook. When the Chinese edition is built, each
figure's Plotly data in the page (the ``var spec = {...}`` of :func:`helpers.viz.renderer.figure_html`)
is rewritten from the table ``zh/figure_text.yml``:

- ``names``: words and names that stay English by the style guide (``zh/STYLE.md``: model names,
  names from code, units, the field's English words such as softmax);
- ``text``: ``{English: Chinese}``, a whole string, or a pattern in which ``{name}`` stands for any
  text, carried over (translated too when the table has it): ``"head {h}": "头 {h}"``. Plotly's own
  placeholders (``%{y:.2f}``) and markup (``<br>``, ``<b>``) are written as they are in the figure;
  a string of several lines (``<br>``) may also be translated line by line.

The figure's accessible name (its title) and its generated text alternative
(:func:`helpers.viz.renderer.describe_figure`, made again from the translated figure) follow. A string
left English that the table does not cover is a build warning (an error under ``-W``) that lists every
such string of the figure, ready to paste into the table; ``python book/_ext/editions_figures.py
--missing`` lists them for a whole built site. The code cells stay identical: only the page changes.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "FIGURE_TEXT_FILE",
    "FigureTable",
    "english_words",
    "figure_specs",
    "load_figure_text",
    "missing_yaml",
    "translate_figure_html",
    "translate_spec",
    "translate_widget_state",
]

FIGURE_TEXT_FILE = "figure_text.yml"
"""The Chinese edition's table (in ``zh/``) of the English text drawn in figures."""

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_TAG = re.compile(r"<[^>]*>")
_PLOTLY_FIELD = re.compile(r"%\{[^}]*\}")
_CODE_WORD = re.compile(r"`[^`]*`|\b\w*_\w*\b|\b\w+(?:\.\w+)+\b|\b[A-Za-z]+\d\w*|\b\d+[A-Za-z]+\b")
"""Names from code (``scaled_dot``, ``torch.float16``, ``W_q``, ``fp16``, ``L6``, ``10x``), which stay as they are."""
_DOTTED = re.compile(r"(?<![A-Za-z0-9_/])[A-Za-z_][\w/]*(?:\.[A-Za-z_]\w*)+")
"""A dotted name from code (``helpers.multihead.RollingKVCache.update``, ``torch.float16``)."""
_UNIT = re.compile(r"\b(?:[KMGT]i?B|[kMG]Hz|[mµμn]s|s|ms|px|dB)\b")
_WORD = re.compile(r"[A-Za-z]+")
_SHORT_WORDS = frozenset({"of", "in", "on", "to", "vs", "by", "at", "is", "no", "or", "as", "an", "if", "it", "up",
                          "we", "be", "do", "so"})
"""Two-letter words that are English words (other two-letter runs are symbols: ``lr``, ``dk``, ``Wq``)."""
_PLACEHOLDER = re.compile(r"(?<!%)\{(\w+)\}")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_LINE = re.compile(r"(<br\s*/?>)", re.I)

TEXT_KEYS = frozenset({"text", "title", "name", "label", "prefix", "suffix", "hovertemplate", "hovertext",
                       "texttemplate", "ticktext", "meta", "customdata"})
"""Keys of a Plotly figure (or of a relayout/restyle path's last part) whose strings a reader reads."""
CATEGORY_KEYS = frozenset({"x", "y", "labels"})
"""Keys of a trace whose strings may be category names ("dot", "cosine"): translated where the table
has them, not reported (a heatmap's axes are the tokens of a sentence, which are data)."""
_NOT_A_TRACE = frozenset({"method", "args", "steps", "buttons", "traces", "baseframe", "frames"})
"""Keys of a dict whose ``name`` is an identifier (a frame, a slider, a step, a menu button), not a label."""
_NAMED_IDS = frozenset({"frames", "sliders", "steps", "updatemenus", "buttons"})
"""Lists whose items' ``name`` is an identifier (a slider step's ``args`` name the frames it shows)."""
_NO_PLOTLY = ('"This interactive figure needs plotly.js, which this page did not load. "\n'
              '      + "Open the notebook in JupyterLab, or the page on the book\'s site."')
_NO_PLOTLY_ZH = '"这张交互图需要 plotly.js，而本页没有加载它。请在 JupyterLab 中打开笔记本，或打开本书网站上的这一页。"'


@dataclass
class FigureTable:
    """``zh/figure_text.yml``: the names that stay English and the Chinese of the rest.

    Args:
        names: Words and names that stay English (matched as whole words, longest first).
        text: ``{English: Chinese}``; an English key with ``{name}`` is a pattern.
    """

    names: set[str] = field(default_factory=set)
    text: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._exact = {_normal(english): chinese for english, chinese in self.text.items()
                       if not _PLACEHOLDER.search(english)}
        self._patterns = []
        for english, chinese in self.text.items():
            parts = _PLACEHOLDER.split(_normal(english))
            if len(parts) > 1:
                regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts))
                self._patterns.append((re.compile(regex, re.S), chinese))
        # the longest pattern first: "{n} heads (menu)" before "{n} heads"
        self._patterns.sort(key=lambda item: -len(item[0].pattern))
        self._names = _names_pattern(self.names)
        self._memo: dict[tuple[str, bool], str | None] = {}

    def is_english(self, text: str) -> bool:
        """Whether ``text`` holds English words outside the names that stay (:func:`english_words`)."""
        return bool(english_words(text, self._names))

    def translate(self, text: str, *, strict: bool = True) -> str | None:
        """``text`` in Chinese.

        Args:
            text: A string of a figure.
            strict: ``False`` for a category name: only an entry of the table changes it.

        Returns:
            The Chinese text, ``text`` itself when it reads as no English, or ``None`` when it is English
            and the table covers it neither whole, nor by a pattern, nor line by line (``<br>``).
        """
        if (text, strict) not in self._memo:
            self._memo[text, strict] = self._translate(text, strict)
        return self._memo[text, strict]

    def _translate(self, text: str, strict: bool) -> str | None:
        normal = _normal(text)
        if normal in self._exact:
            return _keep_space(text, self._exact[normal])
        for pattern, chinese in self._patterns:
            match = pattern.fullmatch(normal)
            if match:
                values = {name: self.translate(value) for name, value in match.groupdict().items()}
                if all(value is not None for value in values.values()):
                    return _keep_space(text, _PLACEHOLDER.sub(lambda m: values.get(m[1], m[0]), chinese))
        if not strict:
            return text
        if not self.is_english(text):
            return text
        lines = _LINE.split(text)
        if len(lines) > 1:
            translated = [line if i % 2 else self.translate(line) if line.strip() else line
                          for i, line in enumerate(lines)]
            if all(line is not None for line in translated):
                return "".join(translated)  # type: ignore[arg-type]
        return None

    def missing(self, text: str) -> list[str]:
        """The pieces of ``text`` to add to the table: its English lines (``<br>``) not covered, else ``text``."""
        if self.translate(text) is not None:
            return []
        lines = [line for i, line in enumerate(_LINE.split(text)) if not i % 2 and line.strip()]
        if len(lines) > 1:
            return [line.strip() for line in lines if self.translate(line) is None]
        return [text.strip()]


def _normal(text: str) -> str:
    return " ".join(text.translate(_QUOTES).split())


def _names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern for the names that stay English, each a whole word, the longest first."""
    names = sorted(names, key=len, reverse=True)  # a name ends where Latin letters, digits, _ and - end (next to
    # Chinese too: \w would count 和 in 和GRU as part of the word)
    if not names:
        return None
    return re.compile("|".join(rf"(?<![A-Za-z0-9_-]){re.escape(name)}(?![A-Za-z0-9_-])" for name in names))


def _keep_space(original: str, chinese: str) -> str:
    """``chinese`` with the spaces around ``original`` (a label's separator: ``"seed: "``), none after a
    full-width punctuation mark, which holds its own space (``"种子："``)."""
    head = original[: len(original) - len(original.lstrip())]
    tail = original[len(original.rstrip()):]
    if re.search(r"[\u3000-\u303f\uff00-\uffef]$", chinese):
        tail = ""
    return head + chinese + tail


def english_words(text: str, names: re.Pattern[str] | Iterable[str] | None = None) -> list[str]:
    """The English words of a figure's string, after what stays English by the style guide is set aside.

    Markup, Plotly's placeholders (``%{y}``), names from code (``scaled_dot``, ``torch.float16``), units
    (``ms``, ``KiB``), single letters (variables) and two-letter symbols (``lr``) are not words; ``names``
    (the table's) are taken out first, whole.

    Args:
        text: The string.
        names: The names that stay English: a compiled pattern, or the names.

    Returns:
        The English words left, in order (empty: nothing to translate).
    """
    if not isinstance(names, re.Pattern) and names is not None:
        names = _names_pattern(names)
    plain = _PLOTLY_FIELD.sub(" ", _TAG.sub(" ", html.unescape(str(text))))
    plain = _DOTTED.sub(" ", plain)  # before the names: helpers.multihead.RollingKVCache.update is code, whole
    if names is not None:
        plain = names.sub(" ", plain)
    plain = _UNIT.sub(" ", _CODE_WORD.sub(" ", plain))
    return [word for word in _WORD.findall(plain)
            if len(word) >= 3 or word.lower() in _SHORT_WORDS]


def load_figure_text(zh_root: Path) -> FigureTable:
    """The Chinese edition's table of figure strings (``zh/figure_text.yml``; empty when it is missing)."""
    path = zh_root / FIGURE_TEXT_FILE
    data = (yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None) or {}
    return FigureTable({str(name) for name in data.get("names") or []},
                       {str(k): str(v) for k, v in (data.get("text") or {}).items()})


def _last_part(key: str) -> str:
    """A relayout/restyle path's last part: ``"xaxis.title.text"`` and ``"annotations[0].text"`` -> ``"text"``."""
    return re.sub(r"\[\d+\]", "", key.rsplit(".", 1)[-1])


def _is_text(key: str, owner: dict[str, Any], parent: str) -> bool:
    part = _last_part(key)
    if part == "name" and (parent in _NAMED_IDS or _NOT_A_TRACE & owner.keys()):
        return False
    return part in TEXT_KEYS


def translate_spec(spec: Any, table: FigureTable) -> tuple[Any, list[str]]:
    """A figure (its ``{"data", "layout", "frames"}``) with its text in Chinese.

    Args:
        spec: The figure as a JSON value.
        table: The table of strings.

    Returns:
        ``(the translated figure, the English strings the table does not cover)``: the strings in the
        order they were met, each once.
    """
    missing: dict[str, None] = {}

    def text_value(value: Any, strict: bool, key: str) -> Any:
        if isinstance(value, str):
            translated = table.translate(value, strict=strict)
            if translated is None:
                missing.update(dict.fromkeys(table.missing(value)))
                return value
            return translated
        if isinstance(value, list):
            return [text_value(item, strict, key) if isinstance(item, (str, list)) else walk(item, key)
                    for item in value]
        return walk(value, key)

    def walk(node: Any, parent: str = "") -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if _is_text(key, node, parent):
                    out[key] = text_value(value, True, key)
                elif key in CATEGORY_KEYS and ("type" in node or "xaxis" in node or "yaxis" in node):
                    out[key] = text_value(value, False, key)
                else:
                    out[key] = walk(value, key)
            return out
        if isinstance(node, list):
            return [walk(item, parent) for item in node]
        return node

    return walk(spec), list(missing)


_SPEC_START = "var spec = "
_PLOT_DIV = '<div class="book-plotly"'


def figure_specs(markup: str) -> list[dict[str, Any]]:
    """The Plotly figures of an output's HTML (:func:`helpers.viz.renderer.figure_html`), as JSON values."""
    decoder = json.JSONDecoder()
    specs = []
    start = markup.find(_SPEC_START)
    while start >= 0:
        spec, end = decoder.raw_decode(markup, start + len(_SPEC_START))
        specs.append(spec)
        start = markup.find(_SPEC_START, end)
    return specs


def _plain(text: str) -> str:
    from helpers.viz.renderer import _plain as plain

    return plain(text)


def _title(spec: dict[str, Any]) -> str:
    title = (spec.get("layout") or {}).get("title")
    return _plain(str((title.get("text") if isinstance(title, dict) else title) or ""))


def _describe(spec: dict[str, Any]) -> str:
    """:func:`describe_figure`'s Chinese sentence for a translated figure (a slider's Chinese prefix
    ends with a full-width colon, which the sentence leaves out as it does ``:``)."""
    from helpers.viz.renderer import describe_figure

    layout = dict(spec.get("layout") or {})
    sliders = []
    for slider in layout.get("sliders") or []:
        current = dict(slider.get("currentvalue") or {})
        if isinstance(current.get("prefix"), str):
            current["prefix"] = current["prefix"].rstrip("：: ")
        sliders.append({**slider, "currentvalue": current})
    if sliders:
        layout["sliders"] = sliders
    return describe_figure({**spec, "layout": layout}, "zh")


def _one_figure(chunk: str, table: FigureTable) -> tuple[str, list[str]]:
    """One ``book-plotly`` block of an output: its data, accessible name and generated alternative."""
    start = chunk.find(_SPEC_START)
    if start < 0:
        return chunk, []
    spec, end = json.JSONDecoder().raw_decode(chunk, start + len(_SPEC_START))
    translated, missing = translate_spec(spec, table)
    if translated == spec:
        return chunk, missing
    dumped = json.dumps(translated, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    chunk = chunk[:start + len(_SPEC_START)] + dumped + chunk[end:]
    old_title, new_title = _title(spec), _title(translated)
    if old_title and new_title != old_title:  # the plot's accessible name is its title
        chunk = chunk.replace(f'aria-label="{html.escape(old_title)}"', f'aria-label="{html.escape(new_title)}"', 1)
    described = html.escape(_describe(translated))
    chunk = re.sub(r'data-(alt|label)-zh="[^"]*"', lambda m: f'data-{m[1]}-zh="{described}"', chunk)
    return chunk, missing


def translate_figure_html(markup: str, table: FigureTable) -> tuple[str, list[tuple[str, list[str]]]]:
    """An output's HTML with each of its Plotly figures in Chinese.

    Args:
        markup: A cell's HTML output.
        table: The table of strings.

    Returns:
        ``(the new HTML, [(figure's English title, its English strings the table lacks), ...])`` for the
        figures with strings missing.
    """
    if _SPEC_START not in markup:
        return markup, []
    pieces = markup.split(_PLOT_DIV)
    reports = []
    for index in range(1, len(pieces)):
        english_title = ""
        specs = figure_specs(pieces[index])
        if specs:
            english_title = _title(specs[0])
        pieces[index], missing = _one_figure(pieces[index], table)
        if missing:
            reports.append((english_title, missing))
    markup = _PLOT_DIV.join(pieces)
    return markup.replace(_NO_PLOTLY, _NO_PLOTLY_ZH), reports


_WIDGET_STATE = re.compile(r'(<script type="application/vnd\.jupyter\.widget-state\+json">)(.*?)(</script>)', re.S)
WIDGET_TEXT_KEYS = frozenset({"description", "_options_labels", "placeholder", "tooltip", "description_tooltip"})
"""The keys of an ipywidgets model's state that a reader reads (a slider's or a menu's label, its options)."""
_WIDGET_TEXT_MODELS = frozenset({"HTMLModel", "HTMLMathModel", "LabelModel"})
"""Widgets whose ``value`` is text the page shows (a readout), not the reader's input."""


def translate_widget_state(markup: str, table: FigureTable) -> tuple[str, list[str]]:
    """A page's saved ipywidgets state (the static page draws its widgets from it) with the widgets' labels,
    options and readouts in Chinese.

    Args:
        markup: A page's HTML.
        table: The table of strings.

    Returns:
        ``(the new HTML, the English strings the table lacks)``.
    """
    missing: dict[str, None] = {}

    def text(value: Any) -> Any:
        if isinstance(value, list):
            return [text(item) for item in value]
        if not isinstance(value, str):
            return value
        translated = table.translate(value)
        if translated is None:
            missing.update(dict.fromkeys(table.missing(value)))
            return value
        return translated

    def replace(match: re.Match[str]) -> str:
        state = json.loads(match.group(2).replace("<\\/", "</"))
        for model in (state.get("state") or {}).values():
            fields = model.get("state") or {}
            for key in WIDGET_TEXT_KEYS & fields.keys():
                fields[key] = text(fields[key])
            if model.get("model_name") in _WIDGET_TEXT_MODELS and "value" in fields:
                fields["value"] = text(fields["value"])
        body = json.dumps(state, ensure_ascii=False).replace("</", "<\\/")
        return match.group(1) + body + match.group(3)

    return _WIDGET_STATE.sub(replace, markup), list(missing)


def missing_yaml(strings: Iterable[str]) -> str:
    """Lines to paste under ``text:`` of ``zh/figure_text.yml``, one a string, its Chinese to fill in."""
    return "\n".join(f"  {json.dumps(text, ensure_ascii=False)}: \"\"" for text in strings)


def apply_figure_text(app: Any, doctree: Any, docname: str,
                      raw_outputs: Callable[[Any], Iterable[Any]], set_raw: Callable[[Any, str], None]) -> None:
    """``doctree-resolved`` (Chinese edition): every figure of the page in Chinese; the strings the table
    lacks are one warning a figure, which lists them all."""
    from sphinx.util import logging

    table = _table(app)
    for node in raw_outputs(doctree):
        markup = node.astext()
        if _SPEC_START not in markup:
            continue
        new, reports = translate_figure_html(markup, table)
        if new != markup:
            set_raw(node, new)
        for title, strings in reports:
            logging.getLogger(__name__).warning(
                "figure %r: %d English string%s to translate in zh/%s (under text:, or under names: what stays "
                "English by zh/STYLE.md):\n%s", title or "(untitled)", len(strings), "" if len(strings) == 1 else "s",
                FIGURE_TEXT_FILE, missing_yaml(strings), location=(docname, _line(node)), type="editions",
                subtype="figure_text")


def _line(node: Any) -> int | None:
    while node is not None:
        if getattr(node, "line", None):
            return node.line
        node = node.parent
    return None


def _table(app: Any) -> FigureTable:
    cached = getattr(app, "_editions_figure_table", None)
    if cached is None:
        cached = app._editions_figure_table = load_figure_text(Path(app.srcdir))
    return cached


# --- the command line: what a built site still lacks --------------------------------------------------


def site_missing(site: Path, table: FigureTable, docnames: Iterable[str]) -> dict[str, list[str]]:
    """``{page: [English strings the table lacks]}`` for the figures of a built edition's pages.

    Args:
        site: A built edition (the English ``_build/html``: the Chinese pages' figures are its figures).
        table: The table of strings.
        docnames: The pages to read.
    """
    found: dict[str, list[str]] = {}
    for docname in docnames:
        page = site / f"{docname}.html"
        if not page.is_file():
            continue
        strings: dict[str, None] = {}
        text = page.read_text(encoding="utf-8")
        for spec in figure_specs(text):
            strings.update(dict.fromkeys(translate_spec(spec, table)[1]))
        if strings:
            found[docname] = list(strings)
    return found


def cache_missing(cache: Path, table: FigureTable, root: Path) -> dict[str, list[str]]:
    """:func:`site_missing` from a notebook cache (``_build/.jupyter_cache``): the executed notebooks'
    figures, without a built site (a page whose notebook failed is not in it)."""
    from jupyter_cache import get_cache

    store = get_cache(str(cache))
    found: dict[str, list[str]] = {}
    for record in sorted(store.list_cache_records(), key=lambda r: r.uri):
        try:
            docname = Path(record.uri).resolve().relative_to(root.resolve()).with_suffix("").as_posix()
        except ValueError:
            docname = record.uri
        strings: dict[str, None] = {}
        for cell in store.get_cache_bundle(record.pk).nb.cells:
            for output in cell.get("outputs", []):
                markup = (output.get("data") or {}).get("text/html", "")
                for spec in figure_specs("".join(markup) if isinstance(markup, list) else markup):
                    strings.update(dict.fromkeys(translate_spec(spec, table)[1]))
        if strings:
            found[docname] = list(strings)
    return found


def main(argv: list[str] | None = None) -> int:
    """``--missing [SITE or CACHE]``: the English strings of the Chinese pages' figures that the table lacks."""
    from editions_records import ROOT, ZH, toc_docnames

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", nargs="?", const=str(ROOT / "_build" / "html"), metavar="SITE",
                        help="a built English site (default: _build/html), or a notebook cache "
                             "(_build/.jupyter_cache); prints YAML lines for zh/figure_text.yml")
    args = parser.parse_args(argv)
    if args.missing is None:
        parser.print_help()
        return 2
    table = load_figure_text(ROOT / ZH)
    where = Path(args.missing)
    if (where / "global.db").is_file():
        found = cache_missing(where, table, where.resolve().parents[1])
    else:
        found = site_missing(where, table, toc_docnames(ROOT / ZH))
    seen: set[str] = set()
    for docname, strings in found.items():
        new = [s for s in strings if s not in seen]
        seen.update(new)
        if new:
            print(f"  # {docname}\n{missing_yaml(new)}")
    print(f"# {len(seen)} strings missing", file=sys.stderr)
    return 1 if seen else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
