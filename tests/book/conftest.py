"""The built book served locally, its pages, and the browsers' visits: shared by the site's tests.

The build itself (``book_build``, ``built_html``) is in ``tests/conftest.py``, for the tests outside this
folder that read the built site too. Measurements (page sizes, transferred bytes, slider latency) are
printed in the terminal summary.
"""

from __future__ import annotations

import functools
import http.server
import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))  # the site's build (sitebuild) and the book's other extensions


def site_pages(html: Path) -> list[Path]:
    """Every HTML page of the current site: its documents (from the search index, so that a page
    left behind by an older build of a since-removed document is not counted), the generated
    index, search and module-source pages, and the root redirect."""
    index = (html / "searchindex.js").read_text(encoding="utf-8")
    docnames = json.loads(index[index.index("(") + 1: index.rindex(")")])["docnames"]
    pages = {html / f"{name}.html" for name in docnames}
    pages |= {html / name for name in ("index.html", "genindex.html", "search.html", "py-modindex.html")}
    pages |= set((html / "_modules").rglob("*.html"))
    return sorted(page for page in pages if page.is_file())


@pytest.fixture(scope="session")
def pages(built_html: Path) -> list[Path]:
    """Every HTML page of the built site."""
    return site_pages(built_html)


@pytest.fixture(scope="session")
def browser_pages(built_html: Path, pages: list[Path]) -> list[Path]:
    """The pages the browser loads (:func:`browser.browser_sample`): every page template, every chapter."""
    from browser import browser_sample

    return browser_sample(built_html, pages)


@dataclass
class DesktopVisit:
    """One page loaded once on a desktop screen: what three test modules read from the same load."""

    browser: Any  # browser.Visit: errors, requests, the figures' report
    first: Any  # browser.FirstVisit: bytes fetched, console warnings, theme state
    a11y: Any  # browser.A11yVisit: axe-core, the figures' names and descriptions


@pytest.fixture(scope="session")
def desktop_visits(site: Site, browser_pages: list[Path], measurements: list[str]) -> dict[str, DesktopVisit]:
    """Every page (of the module-source pages, ``browser.MODULE_SAMPLE``) loaded once at 1280 x 900
    in a fresh context (empty cache and local storage),
    requests off the site aborted and recorded; once its figures, views, widgets and math are done
    and the network is idle, the browser tests' report, the page weight's resource timing and
    state, then axe-core and the accessibility checks are read from it. One load a page instead of
    three (each took 2-4 s: about 10 minutes of the test run)."""
    from browser import (
        _READY,
        BROWSER_WORKERS,
        LOAD_TIMEOUT_MS,
        A11yVisit,
        FirstVisit,
        Visit,
        audit,
        evaluate_settled,
        first_visit_of,
        in_parallel,
        report,
        watch,
    )

    def visit(browser: Any, path: Path) -> DesktopVisit:
        name = path.relative_to(site.root).as_posix()
        seen, first, a11y = Visit(name), FirstVisit(name), A11yVisit(name)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(LOAD_TIMEOUT_MS)  # a page of figures on a busy 2-core machine
        context.add_init_script("performance.setResourceTimingBufferSize(100000)")
        page = context.new_page()
        watch(page, seen, site.url + "/")
        page.on("console", lambda m: first.console.append(f"{m.type}: {m.text} ({m.location.get('url')})")
                if m.type in ("error", "warning") else None)
        page.goto(site.page_url(path), wait_until="load")
        seen.ready = a11y.ready = evaluate_settled(page, _READY)
        page.wait_for_load_state("networkidle")
        seen.report = report(page)
        first_visit_of(page, first)
        audit(page, a11y)
        first.page_errors = a11y.page_errors = seen.page_errors
        a11y.external = seen.external
        context.close()
        return DesktopVisit(seen, first, a11y)

    start = time.perf_counter()
    visits = dict(zip((path.relative_to(site.root).as_posix() for path in browser_pages),
                      in_parallel(browser_pages, visit)))
    measurements.append(f"desktop visits: {len(visits)} pages in {time.perf_counter() - start:.0f} s "
                        f"({BROWSER_WORKERS} browsers side by side)")
    return visits


class FigurePages:
    """The figure pages of the interaction tests (sliders and menus, by mouse and by keyboard), each
    opened at 1280 x 900 in a browser context of its own the first time a test asks for it, its
    figures drawn, and kept open for the next test: one load a page instead of one a test. The tests
    start from whatever state the one before left (each picks its step or entry from the current one)."""

    def __init__(self, chromium: Any, site: Site, measurements: list[str]) -> None:
        self._chromium, self._site, self._measurements = chromium, site, measurements
        self._open: dict[str, tuple[Any, Any]] = {}
        self.uses = 0

    def __call__(self, name: str) -> Any:
        """The loaded page ``name`` (a path of the site, e.g. ``book/figures.html``)."""
        from browser import open_ready

        self.uses += 1
        if name not in self._open:
            self._open[name] = open_ready(self._chromium, f"{self._site.url}/{name}")
        return self._open[name][1]

    def close(self) -> None:
        self._measurements.append(f"figure pages: {len(self._open)} loaded once for {self.uses} uses by the slider, "
                            "menu and keyboard tests")
        for context, _ in self._open.values():
            context.close()
        self._open.clear()


@pytest.fixture(scope="session")
def figure_pages(chromium: Any, site: Site, measurements: list[str]) -> Iterator[FigurePages]:
    """One open page a figure page, shared by the interaction tests (:class:`FigurePages`)."""
    pages = FigurePages(chromium, site, measurements)
    try:
        yield pages
    finally:
        pages.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    errors: list[str]

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.errors.append(f"{code} {self.path}")
        super().send_error(code, message, explain)


@dataclass
class Site:
    """The built site served on 127.0.0.1."""

    root: Path
    url: str
    errors: list[str]

    def page_url(self, page: Path) -> str:
        return f"{self.url}/{page.relative_to(self.root).as_posix()}"


@pytest.fixture(scope="session")
def site(built_html: Path) -> Iterator[Site]:
    """Serves the built site on 127.0.0.1 (a random free port) for the session."""
    errors: list[str] = []
    handler = type("Handler", (_QuietHandler,), {"errors": errors})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(built_html)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(built_html, f"http://127.0.0.1:{server.server_address[1]}", errors)
    finally:
        server.shutdown()
