"""What the browser tests share: the pages they load, and loading one and reading what it did.

The browser tests (``test_*browser*.py``, ``test_page_weight.py``, ``test_editions_site.py`` and
``conftest.desktop_visits``) import from here, not from one another.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium: never a browser downloaded by Playwright."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

Item = TypeVar("Item")
Result = TypeVar("Result")

BROWSER_WORKERS = max(1, min(4, len(os.sched_getaffinity(0))))
"""Browsers that :func:`in_parallel` runs side by side: one a core (at most 4). Two on a 2-core machine
took the 46 desktop visits from 235 s to 148 s (a page's wait for its figures, its network to fall idle
and book.js's last pass overlap the other's axe-core run); three gave 142 s."""


def in_parallel(items: Sequence[Item], work: Callable[[Any, Item], Result],
                workers: int = BROWSER_WORKERS) -> list[Result]:
    """``work(browser, item)`` for each item, in ``workers`` threads with a headless Chromium each
    (Playwright's synchronous API allows one instance a thread), each thread taking the next item when
    it is done with one. Each item is still loaded in the browser contexts ``work`` opens, as it would
    be one after the other; only the order in which they run changes.

    Args:
        items: what to visit (pages, widths...).
        work: the visit of one item in a browser (``playwright``'s ``Browser``).
        workers: the number of threads (and browsers).

    Returns:
        ``work``'s results, in the order of ``items``.

    Raises:
        BaseException: the first exception a visit raised, once every thread has stopped.
    """
    from playwright.sync_api import sync_playwright

    pending = list(enumerate(items))
    results: list[Any] = [None] * len(items)
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run() -> None:
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    while not errors:
                        with lock:
                            if not pending:
                                return
                            index, item = pending.pop(0)
                        results[index] = work(browser, item)
                finally:
                    browser.close()
        except BaseException as error:  # noqa: BLE001 (raised again in the calling thread)
            errors.append(error)

    threads = [threading.Thread(target=run, name=f"browser-{i}", daemon=True)
               for i in range(max(1, min(workers, len(items))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results

MODULE_SAMPLE = (
    "_modules/index.html",  # the list of modules
    "_modules/helpers/attention.html",  # a module's highlighted source with its "[docs]" links
    "_modules/helpers/viz/renderer.html",  # a module of a subpackage (one folder deeper)
    "_modules/helpers/experiments/efficient_accuracy.html",  # the longest title; decorators, escapes in strings
)
"""The module-source pages (Sphinx's viewcode: one template, 91 of 179 English pages) that the
browser loads: always these. Every other one is checked without a browser against them
(``test_module_pages.py``: the same scripts and stylesheets, no token class or heading they lack)."""


def browser_sample(html: Path, pages: list[Path]) -> list[Path]:
    """The pages the browser tests load: every page of the site but the module-source pages
    (``_modules/``), of which :data:`MODULE_SAMPLE`.

    Args:
        html: the built site's folder.
        pages: every page of the site (``conftest.site_pages``).

    Returns:
        The pages, sorted.
    """
    sample = [html / name for name in MODULE_SAMPLE]
    missing = [str(path.relative_to(html)) for path in sample if not path.is_file()]
    if missing:
        raise ValueError(f"MODULE_SAMPLE: no such page in the site: {missing}")
    return sorted([page for page in pages if not page.relative_to(html).as_posix().startswith("_modules/")] + sample)


# Console errors allowed explicitly (a message's start): none. (The theme's "Got invalid theme
# mode" on a first visit is gone: sitebuild.extension gives the theme its default mode, "auto".)
ALLOWED_CONSOLE_ERRORS: tuple[str, ...] = ()
WAIT_MS = 20_000

_READY = """async () => {
  const deadline = Date.now() + %d;
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const done = () => {
    const figures = [...document.querySelectorAll('.book-plotly-figure')];
    const plotted = figures.every(gd => gd.classList.contains('js-plotly-plot') && gd._fullLayout);
    const views = [...document.querySelectorAll('.book-bertviz')];
    const drawn = views.every(v => v.querySelector('svg'));
    const wanted = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
    const widgets = document.querySelectorAll('.jupyter-widgets').length >= wanted;
    return plotted && drawn && widgets;
  };
  while (!done() && Date.now() < deadline) { await sleep(100); }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  await sleep(300);
  return done();
}""" % WAIT_MS

_CLASHES = """() => {
  // A figure's title and its menus (Plotly draws both in the top margin; neither avoids the other).
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left))
    * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  return [...document.querySelectorAll('.book-plotly-figure')].flatMap(gd => {
    const title = gd.querySelector('.gtitle');
    if (!title || !title.textContent.trim()) return [];
    const t = title.getBoundingClientRect();
    return [...gd.querySelectorAll('.updatemenu-header')].map(m => m.getBoundingClientRect())
      .filter(m => overlap(t, m) > 4)
      .map(m => ({id: gd.id, title: title.textContent.slice(0, 80), titleRight: Math.round(t.right),
                  menuLeft: Math.round(m.left), width: Math.round(gd.getBoundingClientRect().width)}));
  });
}"""

_REPORT = """() => {
  const figures = [...document.querySelectorAll('.book-plotly-figure')].map(gd => ({
    id: gd.id,
    traces: gd.data ? gd.data.length : 0,
    drawn: gd.querySelectorAll('.cartesianlayer .trace path, .cartesianlayer .hm image').length,
    sliders: gd.layout && gd.layout.sliders ? gd.layout.sliders.length : 0,
    menus: gd.layout && gd.layout.updatemenus ? gd.layout.updatemenus.length : 0,
    width: gd.getBoundingClientRect().width,
  }));
  const views = [...document.querySelectorAll('.book-bertviz')].map(v => ({
    texts: [...v.querySelectorAll('svg text')].map(t => t.textContent),
    rects: v.querySelectorAll('svg rect').length,
  }));
  const widgets = {
    views: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
    rendered: document.querySelectorAll('.jupyter-widgets').length,
    errors: [...document.querySelectorAll('.jupyter-widgets')].filter(w => /error/i.test(w.className)).length,
  };
  const math = {
    source: document.querySelectorAll('.math').length,
    typeset: document.querySelectorAll('mjx-container').length,
  };
  // Bytes the page fetched: the document and every resource, as the browser measured them.
  const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
  const bytes = entries.reduce((sum, e) => sum + (e.encodedBodySize || 0), 0);
  return {figures, views, widgets, math, bytes, requests: entries.length};
}"""


@dataclass
class Visit:
    """What one page did in the browser."""

    name: str
    ready: bool = False
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)


def watch(page: Any, visit: Visit, allowed_prefix: str) -> None:
    """Records errors and requests of ``page`` into ``visit``; aborts requests off the site."""
    page.on("pageerror", lambda error: visit.page_errors.append(str(error)))
    page.on("console", lambda message: visit.console_errors.append(f"{message.text} ({message.location.get('url')})")
            if message.type == "error" else None)
    page.on("requestfailed", lambda request: visit.failed.append(f"{request.url}: {request.failure}")
            if request.url.startswith(allowed_prefix) else None)
    page.on("response", lambda response: visit.failed.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)

    def route(route: Any) -> None:
        if route.request.url.startswith(allowed_prefix) or route.request.url.startswith("data:"):
            route.continue_()
        else:
            visit.external.append(route.request.url)
            route.abort()

    page.route("**/*", route)


def evaluate_settled(page: Any, script: str) -> Any:
    """Evaluates ``script`` once the page has stopped navigating (the site's root page redirects)."""
    from playwright.sync_api import Error

    for _ in range(20):
        try:
            return page.evaluate(script)
        except Error as error:
            if "Execution context was destroyed" not in str(error):
                raise
            page.wait_for_timeout(100)  # the old document may still report "load" for a moment
            page.wait_for_load_state("load")
    return page.evaluate(script)


def unexpected(messages: list[str]) -> list[str]:
    return [m for m in messages if not any(m.startswith(allowed) for allowed in ALLOWED_CONSOLE_ERRORS)]


def report(page: Any) -> dict[str, Any]:
    """What this module reads from a loaded page (:data:`_REPORT`, with the figures' title clashes)."""
    result = evaluate_settled(page, _REPORT)
    result["clashes"] = evaluate_settled(page, _CLASHES)
    return result


PHONE = {"is_mobile": True, "has_touch": True, "device_scale_factor": 2}
"""``new_context`` options of a phone (with the width and height given to :func:`open_ready`)."""


def open_ready(chromium: Any, url: str, width: int = 1280, height: int = 900, **options: Any) -> tuple[Any, Any]:
    """A fresh browser context (desktop-sized unless told otherwise; ``options`` go to
    ``new_context``, e.g. :data:`PHONE`) with ``url`` loaded and its figures drawn."""
    context = chromium.new_context(viewport={"width": width, "height": height}, **options)
    page = context.new_page()
    page.goto(url, wait_until="load")
    follow_redirect(page, url)
    assert evaluate_settled(page, _READY), f"{url}: the page's figures did not finish drawing"
    return context, page


def follow_redirect(page: Any, url: str) -> None:
    """Waits for a page that redirects (``<meta http-equiv="Refresh">``, the site's root) to load
    its target, so that nothing evaluated afterwards runs into the navigation."""
    if evaluate_settled(page, "!!document.querySelector('meta[http-equiv=\"refresh\" i]')"):
        page.wait_for_url(lambda current: current != url, wait_until="load", timeout=10_000)


