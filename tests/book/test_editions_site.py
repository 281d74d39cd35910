"""The built site's two editions: the Chinese one in ``_build/html/zh`` (its own pages, navigation and
search, in Chinese), a language switch on every page of both that leads to the same page in the
other (over http and from file://), the Chinese build reusing the English notebook cache, and the
Chinese pages in headless Chromium: no script error, no request off the site, figures drawn, a
real CJK font (no boxes). The drift check and its parts: tests/test_editions.py.

The site is the session's build (``scripts/build.sh``, which builds both editions); to test another
build, set ``BOOK_SITE`` to its ``_build/html`` folder (and ``BOOK_ZH_LOG`` to its Chinese build's log).
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import posixpath
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from browser import _READY, _REPORT, Visit, browser_sample, evaluate_settled, in_parallel, unexpected, watch
from page_html import MAX_PAGE_BYTES, is_external, resources

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import editions  # noqa: E402 (the book's local extension)

pytestmark = pytest.mark.book

SWITCH = re.compile(r'<a class="btn btn-sm edition-switch" href="([^"]+)"[^>]*?data-edition="(\w+)"'
                    r'(?P<missing> data-edition-missing="true")?')


@pytest.fixture(scope="session")
def site_html(built_html: Path) -> Path:
    """The built site (both editions): ``BOOK_SITE`` when set, else the session's build."""
    return built_html


def docnames(html: Path) -> list[str]:
    """The documents of a built edition, from its search index."""
    index = (html / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(index[index.index("(") + 1: index.rindex(")")])["docnames"]


def edition_pages(html: Path) -> list[Path]:
    """Every page of one edition: its documents, its generated pages, its module-source pages."""
    pages = {html / f"{name}.html" for name in docnames(html)}
    pages |= {html / name for name in ("genindex.html", "search.html")}
    pages |= set((html / "_modules").rglob("*.html"))
    return sorted(page for page in pages if page.is_file())


def switch_of(page: Path) -> tuple[Path, str, bool]:
    """Where a page's language switch leads (a file of the site), the edition it names, and whether
    it says the page is missing there."""
    match = SWITCH.search(page.read_text(encoding="utf-8"))
    assert match, f"{page}: no language switch"
    href = match.group(1)
    assert not urlparse(href).scheme and not href.startswith("/"), f"{page}: {href} is not a relative link"
    return Path(posixpath.normpath(posixpath.join(page.parent.as_posix(), href))), match.group(2), bool(
        match.group("missing"))


def test_the_chinese_edition_holds_the_translated_pages_in_chinese(site_html: Path) -> None:
    zh = site_html / editions.ZH
    translated = editions.toc_docnames(ROOT / editions.ZH)
    assert len(translated) >= 4 and set(translated) <= set(docnames(zh))
    for docname in translated:
        text = (zh / f"{docname}.html").read_text(encoding="utf-8")
        assert '<html lang="zh-CN"' in text, docname
        title = re.search(r"<title>(.*?)</title>", text, re.DOTALL).group(1)
        assert re.search(r"[\u4e00-\u9fff]", title), f"{docname}: title {title!r} is not Chinese"
    assert (zh / "index.html").is_file() and "book/intro.html" in (zh / "index.html").read_text(encoding="utf-8")


def test_the_chinese_pages_name_their_controls_and_figures_in_chinese(site_html: Path) -> None:
    """The themes' tooltips, labels and placeholder, the toggle hints and the generated text alternatives
    of figures are Chinese on every Chinese page (figure titles, axes and legends stay the figures' own)."""
    import editions_zh

    zh = site_html / editions.ZH
    generated = re.compile(r'<p [^>]*data-alt="generated"[^>]*>([^<]*)</p>')
    for page in edition_pages(zh):
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(zh)
        left = [english for english in editions_zh.SITE_WORDS if english in text]
        assert not left, f"{where}: the theme's English words {left}"
        assert "'Click to show'" not in text and "Click to hide" not in text, f"{where}: the toggle hints"
        assert not re.search(r"<[a-z]+ [^<>]*data-(alt|label)-zh=", text), f"{where}: an alternative not swapped"
        for alt in generated.findall(text):
            assert re.search(r"[\u4e00-\u9fff]", alt), f"{where}: an English text alternative {alt!r}"
    english = (site_html / "book" / "02-dot-product" / "index.html").read_text(encoding="utf-8")
    assert 'placeholder="Search this book..."' in english and "data-alt-zh" not in english  # English stays English


def test_the_tables_that_code_prints_are_chinese_on_the_chinese_pages(site_html: Path) -> None:
    """A table or note that a code cell prints (a Markdown output) reads in Chinese on a Chinese page; what stays
    English is a name the edition lists (zh/output_text.yml ``names``), code and math."""
    import editions_figures
    import editions_zh

    zh = site_html / editions.ZH
    names, _ = editions_zh.load_output_text(ROOT / editions.ZH)
    output = re.compile(r'<div class="cell_output docutils container">(.*?)</div>\s*</div>', re.S)
    piece = re.compile(r"<(td|th|p)\b[^>]*>(.*?)</\1>", re.S)
    checked = 0
    for page in edition_pages(zh):
        for block in output.findall(page.read_text(encoding="utf-8")):
            if "<table" not in block:
                continue
            for element in (r"<code\b.*?</code>", r"<mjx-container\b.*?</mjx-container>"):  # code and math stay
                block = re.sub(element, " ", block, flags=re.S)
            for _, cell in piece.findall(block):
                text = html.unescape(re.sub(r"<[^>]+>", " ", cell)).strip()
                checked += 1
                for part in re.split(r"\s{2,}", text):
                    english = (editions_figures.english_words(editions_zh._UNITS.sub("", part))  # "no" too
                               and not re.search(r"[\u3400-\u9fff]", part))
                    assert not english or part.strip() in names, f"{page.relative_to(zh)}: printed {part!r}"
    assert checked > 800  # the tables of every chapter were read


def test_a_section_has_the_same_meaningful_id_in_both_editions(site_html: Path) -> None:
    """A Chinese section's anchor is its English section's (``#why-not-cosine-...``, not ``#id5``): a teacher
    can share a deep link, and the language switch lands on the same section."""
    import editions_zh

    zh = site_html / editions.ZH
    paired = 0
    for docname in editions.toc_docnames(ROOT / editions.ZH):
        english = editions_zh.english_section_ids(site_html / f"{docname}.html")
        chinese = editions_zh.english_section_ids(zh / f"{docname}.html")
        assert len(chinese) >= len(english), f"{docname}: fewer Chinese sections than English ones"
        for english_id, chinese_id in zip(english, chinese):  # the Chinese page's own sections come last
            if not re.fullmatch(r"id\d+", english_id):  # an English heading with a meaningful id
                assert chinese_id == english_id, f"{docname}: the Chinese section {chinese_id!r} is not {english_id!r}"
                paired += 1
    assert paired > 100
    # the page's own table of contents links to the same anchors
    page = (zh / "book" / "02-dot-product" / "index.html").read_text(encoding="utf-8")
    assert 'href="#is-it-the-bound"' in page and '<section id="is-it-the-bound">' in page


def test_the_chinese_search_finds_chinese_words(site_html: Path) -> None:
    index = (site_html / editions.ZH / "searchindex.js").read_text(encoding="utf-8")
    terms = json.loads(index[index.index("(") + 1: index.rindex(")")])["terms"]
    for word in ("注意力", "掩码", "术语表"):
        assert word in terms, f"{word!r} is not in the Chinese search index (is jieba installed?)"


def test_every_page_of_both_editions_switches_to_the_same_page_in_the_other(site_html: Path) -> None:
    zh = site_html / editions.ZH
    translated = set(docnames(zh)) | {"genindex", "search"}
    english = edition_pages(site_html)
    assert len(english) >= 40
    for page in english:
        target, edition, missing = switch_of(page)
        name = page.relative_to(site_html).with_suffix("").as_posix()
        assert edition == "zh" and target.is_file(), (page, target)
        if name in translated or name.startswith("_modules/"):  # (the Chinese edition has every API page)
            assert target == zh / f"{name}.html" and not missing, (page, target)
        else:
            assert target == zh / "book" / "intro.html" and missing, (page, target)
    chinese = edition_pages(zh)
    assert len(chinese) >= 6
    for page in chinese:
        target, edition, missing = switch_of(page)
        assert edition == "en" and not missing and target == site_html / page.relative_to(zh), (page, target)


def test_chinese_pages_are_small_and_load_nothing_from_another_host(site_html: Path) -> None:
    zh = site_html / editions.ZH
    for page in edition_pages(zh):
        assert page.stat().st_size <= MAX_PAGE_BYTES, f"{page}: {page.stat().st_size} bytes"
        outside = [url for _, url in resources(page).urls if is_external(url)]
        assert not outside, f"{page}: {outside}"


def test_the_chinese_build_runs_no_notebook_the_english_build_ran(site_html: Path, request: pytest.FixtureRequest,
                                                                   measurements: list[str]) -> None:
    """Every Chinese page with code is in the English build's notebook cache (matched by its code), and
    the Chinese build executed nothing."""
    import jupytext
    from jupyter_cache import get_cache

    cache = get_cache(str(site_html.parent / ".jupyter_cache"))
    zh = ROOT / editions.ZH
    executable = [path for path in (editions.source_path(zh, d) for d in editions.toc_docnames(zh))
                  if path is not None and editions.code_cells(path)]
    assert len(executable) >= 2
    for path in executable:
        try:
            cache.match_cache_notebook(jupytext.read(path))
        except KeyError:
            pytest.fail(f"{path.relative_to(ROOT)}: not in the English build's notebook cache (its code differs?)")
    log_file = os.environ.get("BOOK_ZH_LOG")
    log = Path(log_file).read_text(encoding="utf-8") if log_file else request.getfixturevalue("book_build").log
    marker = f"Source Folder: {zh}"
    assert marker in log, "the build log holds no Chinese build (scripts/build.sh runs scripts/build-zh.sh)"
    chinese = log[log.index(marker):]
    assert "Executing notebook" not in chinese, chinese[-3000:]
    seconds = re.search(r"book \(中文\): .* \((\d+) s\)", chinese)
    measurements.append(f"Chinese edition build (after the English one): {seconds.group(1) if seconds else '?'} s, "
                        f"{chinese.count('Using cached notebook')} notebooks read from the English cache, none "
                        "executed")


# --- in the browser ------------------------------------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="session")
def served(site_html: Path) -> Iterator[str]:
    """The site on 127.0.0.1 (a free port), for the session."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site_html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@pytest.mark.browser
def test_chinese_pages_work_in_the_browser_with_the_network_off(site_html: Path, served: str,
                                                                measurements: list[str]) -> None:
    """Every Chinese page (of the module-source pages, ``browser.MODULE_SAMPLE``, as in English: the
    others are checked without a browser by ``test_module_pages.py``): no script error, no console
    error, no request off the site, every figure drawn."""
    zh = site_html / editions.ZH
    loaded = browser_sample(zh, edition_pages(zh))

    def check(browser: Any, path: Path) -> int:
        name = path.relative_to(site_html).as_posix()
        visit = Visit(name)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        watch(page, visit, served + "/")
        page.goto(f"{served}/{name}", wait_until="load")
        visit.ready = evaluate_settled(page, _READY)
        page.wait_for_load_state("networkidle")
        report = evaluate_settled(page, _REPORT)
        context.close()
        assert visit.ready, f"{name}: figures not drawn"
        assert not visit.page_errors and not unexpected(visit.console_errors), (name, visit)
        assert not visit.external and not visit.failed, (name, visit.external, visit.failed)
        blank = [f for f in report["figures"] if f["traces"] == 0 or f["drawn"] == 0]
        assert not blank, (name, blank)
        return len(report["figures"])

    figures = sum(in_parallel(loaded, check))  # the pages shared out among browsers side by side
    measurements.append(f"Chinese edition in the browser: {len(loaded)} of its {len(edition_pages(zh))} pages, "
                        f"{figures} figures drawn")
    assert figures >= 8  # the figures page's


def _round_trip(chromium: Any, start: str) -> list[str]:
    """The URLs seen clicking the language switch twice from ``start``."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    seen = []
    page.goto(start, wait_until="load")
    for _ in range(2):
        with page.expect_navigation(wait_until="load"):
            page.click("a.edition-switch")
        seen.append(page.url)
    context.close()
    return seen


@pytest.mark.browser
def test_the_language_switch_round_trips_over_http_and_from_a_file(site_html: Path, served: str,
                                                                    chromium: Any) -> None:
    chapter = "book/00-start/index.html"
    assert _round_trip(chromium, f"{served}/{chapter}") == [f"{served}/zh/{chapter}", f"{served}/{chapter}"]
    as_file = (site_html / chapter).as_uri()
    assert _round_trip(chromium, as_file) == [(site_html / "zh" / chapter).as_uri(), as_file]
    # from a section, the switch lands on the same section of the other edition (book.js carries the anchor)
    section = "book/02-dot-product/index.html#is-it-the-bound"
    assert _round_trip(chromium, f"{served}/{section}") == [f"{served}/zh/{section}", f"{served}/{section}"]
    untranslated = "book/03-scaling/index.html"  # until it is translated: the Chinese edition's first page
    if untranslated.replace(".html", ".md") in editions.untranslated():
        assert _round_trip(chromium, f"{served}/{untranslated}") == [
            f"{served}/zh/book/intro.html", f"{served}/book/intro.html"]


_GLYPHS = """() => {
  // The article's own font; "注" and a code point no font has (drawn as the missing-glyph box).
  const style = getComputedStyle(document.querySelector('.bd-article p'));
  const size = parseFloat(style.fontSize);
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = Math.ceil(size * 4);
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const ink = text => {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.fillText(text, 0, size * 2);
    return Array.from(ctx.getImageData(0, 0, canvas.width, canvas.height).data.filter((_, i) => i % 4 === 3));
  };
  const glyph = ink('注'), box = ink(String.fromCodePoint(0x10FFFD));
  return {size, font: ctx.font, width: ctx.measureText('注意力').width, boxWidth: ctx.measureText(
      String.fromCodePoint(0x10FFFD)).width, inked: glyph.filter(a => a > 0).length,
    differs: glyph.some((a, i) => a !== box[i])};
}"""


@pytest.mark.browser
def test_chinese_text_is_drawn_with_a_cjk_font_not_boxes(served: str, chromium: Any, measurements: list[str]) -> None:
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{served}/zh/book/intro.html", wait_until="load")
    glyphs = page.evaluate(_GLYPHS)
    context.close()
    measurements.append(f"CJK glyphs: '注意力' {glyphs['width']:.1f} px wide at {glyphs['size']:.0f} px "
                        f"(a missing-glyph box: {glyphs['boxWidth']:.1f} px), font {glyphs['font']}")
    assert glyphs["inked"] > 20 and glyphs["differs"], f"'注' is drawn as the missing-glyph box: {glyphs}"
    assert 2.7 <= glyphs["width"] / glyphs["size"] <= 3.3, f"'注意力' is not three full-width glyphs: {glyphs}"


@pytest.mark.browser
def test_the_chinese_quiz_asks_in_chinese(served: str, chromium: Any) -> None:
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{served}/zh/book/00-start/index.html", wait_until="load")
    page.wait_for_selector("[data-book-quiz-ready=true]", state="attached", timeout=30_000)
    text = page.evaluate("() => document.querySelector('.book-quiz').innerText")
    buttons = page.evaluate("() => [...document.querySelectorAll('.book-quiz-check')].map(b => b.textContent)")
    context.close()
    assert "查询的形状是" in text and "Queries have shape" not in text
    assert buttons and set(buttons) == {"核对"}


# --- a Chinese class: no English in the figures, the names, the chrome; search; the reader's place ------


def _article(page: Path) -> str:
    """The page's article (its own text: no sidebar, no header), as HTML."""
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<article class="bd-article"[^>]*>(.*?)</article>', text, re.S)
    return found.group(1) if found else ""


def _plain(markup: str) -> str:
    markup = re.sub(r"<(script|style)\b.*?</\1>", " ", markup, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def chinese_pages(site_html: Path) -> list[Path]:
    """The Chinese edition's own pages (its table of contents), not the module-source or generated ones."""
    zh = site_html / editions.ZH
    return [zh / f"{docname}.html" for docname in editions.toc_docnames(ROOT / editions.ZH)
            if (zh / f"{docname}.html").is_file()]


def test_no_english_string_is_left_in_a_chinese_figure(site_html: Path, measurements: list[str]) -> None:
    """Every title, axis title, legend, slider and menu label, hover text and annotation of every figure of
    every Chinese page is Chinese, or a name that stays English by zh/STYLE.md (zh/figure_text.yml ``names``)."""
    import editions_figures

    table = editions_figures.load_figure_text(ROOT / editions.ZH)
    left, figures = {}, 0
    for page in chinese_pages(site_html):
        for spec in editions_figures.figure_specs(page.read_text(encoding="utf-8")):
            figures += 1
            strings = editions_figures.translate_spec(spec, table)[1]
            if strings:
                left.setdefault(page.relative_to(site_html).as_posix(), []).extend(strings)
    count = sum(len(set(strings)) for strings in left.values())
    measurements.append(f"Chinese figures: {figures} figures, {count} English strings left")
    assert figures > 100
    assert not left, "English strings in Chinese figures (zh/figure_text.yml):\n" + "\n".join(
        f"{page}: {strings}" for page, strings in left.items())


_NAMED = re.compile(r'(?<![\w-])(aria-label|title|placeholder|alt|data-bs-title|aria-valuetext)="([^"]*)"')
_CITATION = re.compile(r'<a [^>]*href="[^"]*bibliography\.html#[^"]*"[^>]*>')
"""A citation's link, whose tooltip is the paper's entry: a paper is cited in its own language, as in the
bibliography (zh/STYLE.md), not translated."""
_FIGURE_ALT = re.compile(r'<p [^>]*class="book-figure-alt"[^>]*>(.*?)</p>|<figcaption>(.*?)</figcaption>', re.S)


def english_names(page: Path, names: Any) -> list[str]:
    """What a screen reader or a tooltip says on a page, outside code, that reads as English: the attributes that
    name or describe (``aria-label``, ``title``, ``placeholder``, ``alt``), the figures' text alternatives and
    captions."""
    import editions_figures

    text = page.read_text(encoding="utf-8")
    text = re.sub(r"<(pre|code)\b.*?</\1>", " ", text, flags=re.S)  # code stays code
    text = re.sub(r"<script\b.*?</script>", " ", text, flags=re.S)
    text = _CITATION.sub(" ", text)
    found = [html.unescape(value) for _, value in _NAMED.findall(text)]
    found += [_plain(alt or caption) for alt, caption in _FIGURE_ALT.findall(text)]
    return [value for value in dict.fromkeys(found) if editions_figures.english_words(value, names)]


def test_every_name_text_alternative_and_tooltip_of_a_chinese_page_is_chinese(site_html: Path,
                                                                            measurements: list[str]) -> None:
    """The figures' accessible names (their titles) and text alternatives, their captions, the theme's and the
    launch buttons' tooltips (打印为 PDF, 在 Colab 上启动…), on every page of the Chinese edition's own."""
    import editions_figures

    table = editions_figures.load_figure_text(ROOT / editions.ZH)
    left = {page.relative_to(site_html).as_posix(): english_names(page, table._names)
            for page in chinese_pages(site_html)}
    left = {page: values for page, values in left.items() if values}
    measurements.append(f"Chinese names and text alternatives: {sum(map(len, left.values()))} English left")
    assert not left, "\n".join(f"{page}: {values}" for page, values in left.items())


def glossary_pages(site_html: Path) -> tuple[list[str], dict[str, str]]:
    """The glossary's terms, and each Chinese page's text as Sphinx's search indexes it (its article)."""
    import editions_search

    zh = site_html / editions.ZH
    texts = {name: _plain(_article(zh / f"{name}.html")) for name in docnames(zh) if (zh / f"{name}.html").is_file()}
    return editions_search.glossary_terms(ROOT / editions.ZH), texts


def uses(text: str, term: str) -> bool:
    if re.search(r"[\u3400-\u9fff]", term):
        return term in text
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(term)}(?![A-Za-z0-9_])", text, re.I) is not None


_SEARCH = """async (terms) => {
  const deadline = Date.now() + 30000;
  while (!(window.Search && Search.hasIndex && Search.hasIndex()) && Date.now() < deadline) {
    await new Promise(r => setTimeout(r, 100));
  }
  const found = {};
  for (const term of terms) {  // what the search box does with a query: Search.query's two steps
    const [query, searchTerms, excluded, highlight, objects] = Search._parseQuery(term);
    const results = Search._performSearch(query, searchTerms, excluded, highlight, objects);
    found[term] = {words: [...searchTerms], pages: [...new Set(results.map(r => r[0]))]};
  }
  return found;
}"""


@pytest.mark.browser
def test_every_glossary_term_typed_as_a_reader_types_it_finds_the_pages_that_use_it(
        site_html: Path, served: str, chromium: Any, measurements: list[str]) -> None:
    """Each term of the glossary, typed whole (no spaces: 自注意力, 键值缓存, 因果掩码), into the Chinese
    edition's search: the results hold every page whose text holds the term. Then two searches through the
    search page itself, as a reader runs them."""
    terms, texts = glossary_pages(site_html)
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{served}/zh/search.html", wait_until="load")
    found = page.evaluate(_SEARCH, terms)
    missed = {}
    for term in terms:
        expected = {name for name, text in texts.items() if uses(text, term)}
        lost = expected - set(found[term]["pages"])
        if not expected or lost:
            missed[term] = {"split into": found[term]["words"], "pages that use it": len(expected),
                            "not found": sorted(lost)}
    pages = [len(found[term]["pages"]) for term in terms]
    measurements.append(f"Chinese search: {len(terms)} glossary terms, {len(terms) - len(missed)} find every page "
                        f"that uses them ({min(pages)}-{max(pages)} pages each)")
    for term, wanted in (("自注意力", "book/00-start/index"), ("键值缓存", "book/06-pitfalls/04-decoding")):
        page.goto(f"{served}/zh/search.html?q={term}", wait_until="load")
        page.wait_for_function("() => /\\d/.test((document.querySelector('.search-summary') || {}).textContent"
                               " || '')", timeout=30_000)
        links = page.evaluate("() => [...document.querySelectorAll('#search-results li a')].map(a => a.href)")
        assert any(f"/zh/{wanted}.html" in link for link in links), (term, links)
    context.close()
    assert not missed, json.dumps(missed, ensure_ascii=False, indent=1)


@pytest.mark.browser
def test_the_language_switch_keeps_the_section_being_read_without_an_anchor(served: str, chromium: Any) -> None:
    """Scrolled to a section with no anchor in the address, the switch leads to the same section of the other
    edition, both ways; from the top of a page, to the top of the other."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()

    def click_switch() -> None:
        """A reader's click where the switch is drawn: Playwright's ``click`` first scrolls the sticky header's
        switch "into view", which moves a page scrolled far down by some 450 px, to another section."""
        box = page.locator("a.edition-switch").bounding_box()
        with page.expect_navigation(wait_until="load"):
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

    for start, other in (("zh/book/02-dot-product/index.html", "book/02-dot-product/index.html"),
                         ("book/02-dot-product/index.html", "zh/book/02-dot-product/index.html")):
        page.goto(f"{served}/{start}", wait_until="load")
        click_switch()
        assert page.url == f"{served}/{other}", page.url  # the top: no anchor
        page.goto(f"{served}/{start}", wait_until="load")
        page.evaluate("() => document.getElementById('is-it-the-bound').scrollIntoView()")
        page.wait_for_timeout(200)
        click_switch()
        assert page.url == f"{served}/{other}#is-it-the-bound", page.url
    context.close()
