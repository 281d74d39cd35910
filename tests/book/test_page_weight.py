"""A light first visit and a clean console: every built page opened in a fresh browser context
(empty cache, empty local storage), the bytes it fetched summed from the browser's resource timing,
its console read, and the scripts it loads checked against what it holds (plotly.js only with a
figure, and a bundle that has every trace type the book draws; MathJax only with math; the widget
manager only with widgets; the theme's icons without all of Font Awesome; the search index only on
the search page)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from browser import FirstVisit
from page_html import resources

from helpers.viz.site import FIGURE_MARKER
from sitebuild.bundles import PLOTLY_TRACE_TYPES
from sitebuild.fonts import THEME_FONTS
from sitebuild.icons import vendored_icons
from sitebuild.pages import figure_trace_types, fontawesome_icons
from sitebuild.typeset import MATH_STYLE_ID, page_has_math

FIRST_VISIT_BUDGET = 3_000_000
"""Bytes (uncompressed) that a chapter page may fetch on a first visit, itself included."""
CHAPTER_PAGE = re.compile(r"^(book/\d\d-[^/]+/.+|notebooks/[^/]+)\.html$")
"""The chapters' pages and their labs (the budget's pages)."""

KNOWN_WARNINGS = ("warning: strict mode: use allowUnionTypes to allow union type keyword",)
"""Console warnings allowed (a message's start): the JSON-schema compiler (ajv) inside
@jupyter-widgets/html-manager 1.0.15 warns about the widget-state schema it ships, on the pages
with embedded widgets; nothing of the page depends on it, and the site cannot change it."""

def is_chapter_page(name: str) -> bool:
    """Whether a page (its path in the site) is a chapter's page or lab: the budget's pages."""
    return bool(CHAPTER_PAGE.match(name))


@pytest.fixture(scope="module")
def first_visits(desktop_visits: dict[str, Any], measurements: list[str]) -> dict[str, FirstVisit]:
    """Every page loaded once in a fresh context (empty cache and local storage), requests to other
    hosts aborted; its resource timing read once its figures, views, widgets and math are done
    (the shared desktop visit of ``conftest.desktop_visits``)."""
    visits = {name: both.first for name, both in desktop_visits.items()}
    measurements.append(f"first visit (empty cache; uncompressed bytes from resource timing; budget "
                        f"{FIRST_VISIT_BUDGET / 1e6:.1f} MB for chapter pages):")
    measurements.append(f"  {'MB':>5} {'req':>4} {'page':>5} {'plotly':>6} {'mathjx':>6} {'widget':>6} "
                        f"{'bertvz':>6}  page")
    for name, visit in sorted(visits.items(), key=lambda item: -item[1].bytes):
        bertviz = sum(visit.bytes_of(f"vendor/{lib}/") for lib in ("d3", "jquery", "requirejs"))
        measurements.append(
            f"  {visit.bytes / 1e6:5.2f} {len(visit.entries):4d} {visit.entries[0][1] / 1e6:5.2f} "
            f"{visit.bytes_of('vendor/plotly/') / 1e6:6.2f} {visit.bytes_of('vendor/mathjax/') / 1e6:6.2f} "
            f"{visit.bytes_of('vendor/jupyter-widgets/') / 1e6:6.2f} {bertviz / 1e6:6.2f}  {name}"
            f"{'' if is_chapter_page(name) else '  (not a chapter page)'}")
    return visits


def test_chapter_pages_are_recognised() -> None:
    assert is_chapter_page("book/01-bottleneck/index.html")
    assert is_chapter_page("book/05-variants/03-efficient.html")
    assert is_chapter_page("notebooks/06-memory-position-lab.html")
    assert not is_chapter_page("book/figures.html") and not is_chapter_page("book/api/core.html")
    assert not is_chapter_page("index.html") and not is_chapter_page("_modules/helpers/attention.html")


@pytest.mark.book
@pytest.mark.browser
def test_a_chapter_pages_first_visit_transfers_at_most_3_mb(first_visits: dict[str, FirstVisit]) -> None:
    """Issue 16's budget. Measured 2026-11-30: the heaviest chapter pages are 6.5 (2.82 MB: the page
    0.78 MB, plotly.js 1.21 MB, built for the site by sitebuild.bundles) and chapter 4 (2.78 MB,
    with BertViz's RequireJS, jQuery and d3, 0.20 MB); the theme's scripts, styles and cut-down
    icon fonts are about 0.8 MB of every page."""
    chapters = {name: visit.bytes for name, visit in first_visits.items() if is_chapter_page(name)}
    assert len(chapters) >= 7, f"too few chapter pages found: {sorted(chapters)}"
    assert all(visit.entries and visit.entries[0][1] > 0 for visit in first_visits.values())  # the page itself
    heavy = {name: f"{size / 1e6:.2f} MB" for name, size in chapters.items() if size > FIRST_VISIT_BUDGET}
    assert not heavy, f"chapter pages over {FIRST_VISIT_BUDGET / 1e6:.0f} MB on a first visit: {heavy}"


@pytest.mark.book
@pytest.mark.browser
def test_no_page_logs_an_error_or_a_warning_on_a_first_visit(first_visits: dict[str, FirstVisit]) -> None:
    """No console error (the theme's "Got invalid theme mode" included), no uncaught exception,
    and no console warning but the widget manager's own (:data:`KNOWN_WARNINGS`), on any page,
    with empty local storage."""
    logged = {name: visit.page_errors + [m for m in visit.console if not m.startswith(KNOWN_WARNINGS)]
              for name, visit in first_visits.items()}
    logged = {name: messages for name, messages in logged.items() if messages}
    assert not logged, json.dumps(logged, indent=1)


@pytest.mark.book
@pytest.mark.browser
def test_a_first_visit_starts_in_the_themes_auto_mode(first_visits: dict[str, FirstVisit]) -> None:
    states = {name: (v.state["mode"], v.state["theme"], v.state["storedMode"]) for name, v in first_visits.items()}
    wrong = {name: state for name, state in states.items()
             if state[0] != "auto" or state[1] not in ("light", "dark") or state[2] != "auto"}
    assert not wrong, f"pages whose theme mode is not 'auto' on a first visit: {wrong}"


@pytest.mark.book
@pytest.mark.browser
def test_every_trace_type_the_book_draws_is_in_the_served_plotly_bundle(
        first_visits: dict[str, FirstVisit], pages: list[Path], site: Any) -> None:
    drawn = {}
    for page in pages:
        for trace_type in figure_trace_types(page.read_text(encoding="utf-8")):
            drawn.setdefault(trace_type, page.relative_to(site.root).as_posix())
    assert {"scatter", "heatmap"} <= set(drawn), f"the book's figures draw {sorted(drawn)}: the page parser broke?"
    registered = {tuple(v.state["registered"]) for v in first_visits.values() if v.state["registered"] is not None}
    assert len(registered) == 1, "pages disagree on the bundle's trace types"
    bundle = set(next(iter(registered)))
    assert bundle == set(PLOTLY_TRACE_TYPES), "PLOTLY_TRACE_TYPES differs from the served bundle's trace modules"
    lacking = {trace_type: page for trace_type, page in drawn.items() if trace_type not in bundle}
    assert not lacking, f"trace types drawn that the served plotly.js bundle lacks: {lacking}"


@pytest.mark.book
@pytest.mark.browser
def test_every_figure_draws_its_traces_with_the_served_bundle(first_visits: dict[str, FirstVisit]) -> None:
    figures = [(name, figure) for name, v in first_visits.items() for figure in v.state["figures"]]
    assert figures, "no figure on any page"
    broken = [(name, figure) for name, figure in figures
              if not figure["types"] or figure["unknown"] or figure["drawn"] == 0]
    assert not broken, broken


@pytest.mark.book
def test_heavy_scripts_load_only_on_the_pages_that_use_them(pages: list[Path], site: Any) -> None:
    """plotly.js where there is a figure; MathJax where math is left to typeset in the browser or
    widgets may typeset their labels; the widget manager where there are widgets; RequireJS where
    widgets or BertViz views need it; Font Awesome's core and the site's icons on every page of
    the theme, the theme's full Font Awesome nowhere; the search index on the search page only; sphinx-design's
    script where its components are."""
    wrong, counts = [], {"plotly": 0, "no plotly": 0, "mathjax": 0, "no mathjax": 0, "widgets": 0}
    for page in pages:
        name = page.relative_to(site.root).as_posix()
        html = page.read_text(encoding="utf-8")
        scripts = [url.split("?")[0] for tag, url in resources(page).urls if tag == "script"]
        parts = ("vendor/plotly/plotly.min.js", "vendor/mathjax/tex-mml-chtml.js",
                 "vendor/jupyter-widgets/embed-amd.js", "_static/scripts/fontawesome.js",
                 "vendor/fontawesome/fontawesome.min.js", "vendor/fontawesome/icons.js", "searchindex.js",
                 "_static/design-tabs.js")
        loads = {part: any(url.endswith(part) for url in scripts) for part in parts}
        widgets = "application/vnd.jupyter.widget-state+json" in html
        themed = any(url.endswith("_static/scripts/pydata-sphinx-theme.js") for url in scripts)  # not the redirect
        needs = {
            "vendor/plotly/plotly.min.js": f'class="plotly-graph-div {FIGURE_MARKER}"' in html,
            "vendor/mathjax/tex-mml-chtml.js": page_has_math(html),
            "vendor/jupyter-widgets/embed-amd.js": widgets,
            "_static/scripts/fontawesome.js": False,
            "vendor/fontawesome/fontawesome.min.js": themed,
            "vendor/fontawesome/icons.js": themed,
            "searchindex.js": name == "search.html",
            "_static/design-tabs.js": bool(re.search(r'class="(?:[^"]*\s)?sd-', html)),
        }
        wrong += [f"{name}: {'loads' if loads[part] else 'does not load'} {part}"
                  for part, needed in needs.items() if loads[part] != needed]
        requirejs = any(url.endswith("vendor/requirejs/require.js") for url in scripts)
        if requirejs and not (widgets or "book-bertviz" in html):
            wrong.append(f"{name}: loads RequireJS with no widget or BertViz view")
        if "window.MathJax = " in html and not loads["vendor/mathjax/tex-mml-chtml.js"]:
            wrong.append(f"{name}: configures MathJax without loading it")
        counts["plotly" if loads["vendor/plotly/plotly.min.js"] else "no plotly"] += 1
        counts["mathjax" if loads["vendor/mathjax/tex-mml-chtml.js"] else "no mathjax"] += 1
        counts["widgets"] += widgets
    assert not wrong, "\n".join(wrong)
    assert all(counts.values()), f"the check saw no page of some kind: {counts}"


@pytest.mark.book
def test_math_is_typeset_when_the_book_is_built(pages: list[Path], site: Any) -> None:
    """Every math element of every page holds MathJax's CHTML markup, written at build time (with
    the hidden MathML that screen readers read), the page carries MathJax's stylesheet, and no
    formula is a TeX error: a page with math needs no MathJax in the browser."""
    math_pages, wrong = 0, []
    for page in pages:
        name = page.relative_to(site.root).as_posix()
        html = page.read_text(encoding="utf-8")
        elements = len(re.findall(r'class="math notranslate nohighlight', html))
        if not elements:
            continue
        math_pages += 1
        typeset = html.count('<mjx-container class="MathJax" jax="CHTML"')
        readable = len(re.findall(r'<mjx-assistive-mml display="(?:inline|block)"><math', html))  # (not a quiz's)
        if typeset != elements or readable != elements or f'<style id="{MATH_STYLE_ID}">' not in html:
            wrong.append(f"{name}: {elements} math elements, {typeset} typeset, {readable} with MathML, "
                         f"stylesheet {'present' if MATH_STYLE_ID in html else 'missing'}")
        wrong += [f"{name}: TeX error {error}" for error in re.findall(r'data-mjx-error="([^"]*)"', html)]
    assert not wrong, "\n".join(wrong)
    assert math_pages >= 5, f"math on {math_pages} pages only"


@pytest.mark.book
def test_quiz_math_is_typeset_when_the_book_is_built(pages: list[Path], site: Any) -> None:
    """The quizzes' formulas ($...$ in jupyterquiz's question data) hold MathJax's markup, so a
    chapter's quiz needs no MathJax in the browser either."""
    quizzes, left = 0, []
    for page in pages:
        html = page.read_text(encoding="utf-8")
        if "var questions" not in html or "data-book-quiz" not in html:
            continue
        quizzes += 1
        if page_has_math(html) and "application/vnd.jupyter.widget-state+json" not in html:
            left.append(page.relative_to(site.root).as_posix())
    assert not left, f"pages whose quizzes hold TeX left for MathJax: {left}"
    assert quizzes >= 5, f"quizzes on {quizzes} pages only"


@pytest.mark.book
@pytest.mark.browser
def test_every_icon_of_every_page_is_drawn(first_visits: dict[str, FirstVisit], pages: list[Path],
                                           site: Any) -> None:
    """The theme's icons come from the site's Font Awesome subset: every <i class="fa-..."> of
    every page was replaced by its <svg>, and none is Font Awesome's "missing icon" placeholder."""
    left = {name: v.state["iconsLeft"] for name, v in first_visits.items() if v.state["iconsLeft"]}
    missing = {name: v.state["iconsMissing"] for name, v in first_visits.items() if v.state["iconsMissing"]}
    assert not left and not missing, f"icons not drawn: {left}; missing from the subset: {missing}"
    drawn = sum(v.state["icons"] for v in first_visits.values())
    asked = set().union(*(fontawesome_icons(page.read_text(encoding="utf-8")) for page in pages))
    assert drawn > len(first_visits) and ("solid", "bars") in asked
    lacking = asked - vendored_icons(site.root / "_static" / "vendor")
    assert not lacking, f"icons the pages ask for that the site's subset lacks: {sorted(lacking)}"


@pytest.mark.book
@pytest.mark.browser
def test_the_icon_fonts_are_cut_down_and_hold_every_character_the_pages_draw_with_them(
        first_visits: dict[str, FirstVisit], site: Any) -> None:
    """The theme's Font Awesome webfonts are served cut down to the site's icons
    (``sitebuild.fonts.subset_theme_fonts``); every character a page draws with one of them
    (its pseudo-elements, read in the browser) is in the font it is drawn with."""
    from fontTools.ttLib import TTFont

    folder = site.root / "_static" / "vendor" / "fontawesome" / "webfonts"
    served = {stem: set(TTFont(folder / f"{stem}.woff2").getBestCmap()) for stem in THEME_FONTS.values()}
    assert (folder / f"{THEME_FONTS['solid']}.woff2").stat().st_size < 20_000  # 156 kB whole
    assert 0xF0C9 in served[THEME_FONTS["solid"]] and len(served[THEME_FONTS["solid"]]) < 100  # "bars", not 1,400
    drawn: dict[tuple[str, int], str] = {}
    for name, visit in first_visits.items():
        for family, weight, point in visit.state["fontChars"]:
            style = "brands" if "Brands" in family else "solid" if int(weight) >= 600 else "regular"
            drawn.setdefault((style, point), name)
    lacking = {f"{style} U+{point:04X}": page for (style, point), page in drawn.items()
               if point not in served[THEME_FONTS[style]]}
    assert not lacking, f"characters drawn with an icon font that the served font lacks: {lacking}"
