"""What the browser tests share: the pages they load, and loading one and reading what it did.

The browser tests (``test_*browser*.py``, ``test_page_weight.py``, ``test_editions_site.py`` and
``conftest.desktop_visits``) import from here, not from one another: Chromium, the pages, loading one and
waiting for its figures, browsers side by side (:func:`in_parallel`), and what one desktop visit reads for
the browser tests (:class:`Visit`), the page weight (:class:`FirstVisit`) and accessibility (:class:`A11yVisit`).
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
    "_modules/helpers/experiments/efficient_accuracy.html",  # decorators, escapes in strings
    "_modules/helpers/experiments/heads_real_ablation.html",  # decorators, a long title
    "_modules/helpers/exercises/memory_position/online_softmax.html",  # the longest title (a checker's module)
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

_CLASHES = """async () => {
  // What Plotly draws where the figure says, whether or not it overlaps: the title, the legend, the
  // menus, the annotations (the panels' titles among them), the axes' titles (book.js's makeRoom moves
  // them apart once drawn: wait for it). Also the text that runs past the figure's edges.
  const figures = [...document.querySelectorAll('.book-plotly-figure')];
  const deadline = Date.now() + 5000;
  while (figures.some(gd => gd._fullLayout && !gd.__bookRoomSettled) && Date.now() < deadline) {
    await new Promise(r => setTimeout(r, 50));
  }
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left))
    * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  const clashes = [], clipped = [];
  for (const gd of figures) {
    const named = [];
    const add = (name, e) => {
      const r = e.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) named.push([name, r]);
    };
    const title = gd.querySelector('.gtitle');
    if (title && title.textContent.trim()) add('title', title);
    const legend = gd.querySelector('.legend');
    if (legend) add('legend', legend.querySelector('.bg') || legend);
    gd.querySelectorAll('.annotation').forEach(a => add('text "' + a.textContent.slice(0, 30) + '"', a));
    gd.querySelectorAll('[class^="g-x"][class$="title"], [class^="g-y"][class$="title"]').forEach(a => {
      if (a.textContent.trim()) add('axis title "' + a.textContent.slice(0, 30) + '"', a); });
    gd.querySelectorAll('.updatemenu-header').forEach(m => add('menu', m));
    for (let i = 0; i < named.length; i++) {
      for (let j = i + 1; j < named.length; j++) {
        const area = overlap(named[i][1], named[j][1]);
        if (area > 20) clashes.push({id: gd.id, title: title ? title.textContent.slice(0, 60) : '',
                                     clash: named[i][0] + ' over ' + named[j][0], area: Math.round(area)});
      }
    }
    const svg = gd.querySelector('svg.main-svg').getBoundingClientRect();
    gd.querySelectorAll('svg text').forEach(t => {
      const r = t.getBoundingClientRect();
      if (r.width > 0 && t.textContent.trim() && (r.right > svg.right + 2 || r.left < svg.left - 2)) {
        clipped.push({id: gd.id, text: t.textContent.slice(0, 40)});
      }
    });
  }
  return {clashes, clipped};
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
    """What this module reads from a loaded page (:data:`_REPORT`, with the figures' text that overlaps, or runs past
    their edges: :data:`_CLASHES`)."""
    result = evaluate_settled(page, _REPORT)
    result.update(evaluate_settled(page, _CLASHES))
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


# --- what the desktop visit reads for the page weight (test_page_weight.py) -------------------------------

LOAD_TIMEOUT_MS = 300_000
"""A page's wait for its load and its figures, in ms: a page of figures on a busy 2-core machine."""

_ENTRIES = """() => [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
  .map(e => [e.name, e.decodedBodySize || 0])"""

_STATE = """() => ({
  mode: document.documentElement.dataset.mode,
  theme: document.documentElement.dataset.theme,
  storedMode: localStorage.getItem('mode'),
  mathjax: typeof window.MathJax === 'object' && !!window.MathJax.startup,
  typeset: document.querySelectorAll('mjx-container').length,
  // Font Awesome's core turns each <i class="fa-..."> into an <svg>; a missing icon is drawn as
  // a placeholder with class "missing".
  iconsLeft: [...document.querySelectorAll('i')].filter(i => /(^|\\s)fa-/.test(i.className)).map(i => i.className),
  iconsMissing: [...document.querySelectorAll('svg.svg-inline--fa')].filter(s => s.querySelector('.missing'))
    .map(s => s.getAttribute('data-icon')),
  icons: document.querySelectorAll('svg.svg-inline--fa').length,
  // Characters drawn with a Font Awesome webfont (before and after pseudo-elements of the theme's
  // rules): [family, weight, code point] of each.
  fontChars: [...document.querySelectorAll('*')]
    .flatMap(el => ['::before', '::after'].map(p => getComputedStyle(el, p)))
    .filter(cs => /Font Awesome/.test(cs.fontFamily) && /^".+"$/u.test(cs.content))
    .flatMap(cs => [...JSON.parse(cs.content)].map(c => [cs.fontFamily, cs.fontWeight, c.codePointAt(0)])),
  registered: window.Plotly && window.Plotly.PlotSchema ? Object.keys(window.Plotly.PlotSchema.get().traces) : null,
  figures: [...document.querySelectorAll('.book-plotly-figure')].map(gd => ({
    id: gd.id,
    types: (gd._fullData || []).map(t => t.type),
    unknown: (gd._fullData || []).filter(t => !t._module).map(t => t.type),
    drawn: gd.querySelectorAll('.cartesianlayer .trace, .cartesianlayer .hm, .pielayer .trace').length,
  })),
})"""


@dataclass
class FirstVisit:
    """One page's first visit: what it fetched and what it logged."""

    name: str
    entries: list[tuple[str, int]] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.entries)

    def bytes_of(self, part: str) -> int:
        return sum(size for url, size in self.entries if part in url)


def first_visit_of(page: Any, visit: FirstVisit) -> None:
    """Fills ``visit`` from a page loaded in a fresh context (empty cache and local storage, the
    resource timing buffer large enough), once its figures, views, widgets and math are done."""
    visit.entries = [(url, size) for url, size in evaluate_settled(page, _ENTRIES)]
    visit.state = evaluate_settled(page, _STATE)


# --- what the desktop visit reads for accessibility (test_accessibility_browser.py) ------------------------

_TEXT_CONTRAST = """() => {
  const rgb = s => { const m = String(s).match(/rgba?\\(([^)]+)\\)/); if (!m) { return null; }
    const v = m[1].split(',').map(Number); return v.length > 3 && v[3] === 0 ? null : v.slice(0, 3); };
  const lum = c => { const f = v => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  let page = null;
  for (let e = document.querySelector('.bd-article') || document.body; e && !page; e = e.parentElement) {
    page = rgb(getComputedStyle(e).backgroundColor); }
  page = page || [255, 255, 255];
  const out = [];
  for (const gd of document.querySelectorAll('.book-plotly-figure')) {
    const texts = gd.querySelectorAll('.xtick text, .ytick text, .g-gtitle text, .g-xtitle text, .g-ytitle text, '
      + '.legendtext, .annotation-text, .slider-group text, .cbaxis text, .colorbar text, .updatemenu-item-text');
    for (const t of texts) {
      const style = getComputedStyle(t);
      const shown = style.display !== 'none' && style.visibility !== 'hidden' && Number(style.opacity) > 0;
      if (!t.textContent.trim() || !shown) { continue; }
      const fill = rgb(style.fill);
      if (!fill) { continue; }
      let behind = page;
      const button = t.closest('.updatemenu-header, .updatemenu-button, .updatemenu-dropdown-button');
      if (button) { behind = rgb(getComputedStyle(button.querySelector('.updatemenu-item-rect')).fill) || page; }
      out.push({id: gd.id, text: t.textContent.trim().slice(0, 40), ratio: ratio(fill, behind)});
    }
  }
  return {page, texts: out};
}"""

_FIGURES = """() => {
  const out = [];
  for (const gd of document.querySelectorAll('.book-plotly-figure')) {
    const wrapper = gd.closest('.book-plotly');
    const figure = gd.closest('figure');
    const caption = figure && figure.querySelector(':scope > figcaption');
    // Colours drawn: trace strokes and fills, shapes (reference lines, boxes).
    const drawn = [];
    for (const e of gd.querySelectorAll('.cartesianlayer .trace path, .cartesianlayer .trace .point, '
                                       + '.shapelayer path, .barlayer .point path')) {
      const style = getComputedStyle(e);
      if (Number(style.opacity) === 0 || style.display === 'none') { continue; }
      if (style.stroke && style.stroke !== 'none' && parseFloat(style.strokeWidth) > 0
          && Number(style.strokeOpacity) > 0) { drawn.push(style.stroke); }
      if (style.fill && style.fill !== 'none' && Number(style.fillOpacity) > 0) { drawn.push(style.fill); }
    }
    const scales = (gd._fullData || []).filter(t => t.visible !== false && t.colorscale && !t.coloraxis)
      .map(t => t.colorscale.map(s => s[1]));
    for (const key in gd._fullLayout) {
      if (/^coloraxis\\d*$/.test(key) && gd._fullLayout[key].colorscale) {
        scales.push(gd._fullLayout[key].colorscale.map(s => s[1])); }
    }
    out.push({id: gd.id, wrapped: !!wrapper, role: wrapper && wrapper.getAttribute('role'),
              generated: !!(wrapper && wrapper.querySelector(':scope > .book-figure-alt[data-alt="generated"]')),
              sliders: (gd.layout.sliders || []).length, menus: (gd.layout.updatemenus || []).length,
              caption: caption ? caption.textContent.trim() : null,
              hidden: [...gd.querySelectorAll('svg.main-svg')].map(s => s.getAttribute('aria-hidden')),
              drawn: [...new Set(drawn)], scales});
  }
  return out;
}"""


@dataclass
class A11yVisit:
    """One page of the site as axe-core and the accessibility tree saw it."""

    name: str
    ready: bool = False
    violations: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    views: list[dict[str, Any]] = field(default_factory=list)
    contrast: dict[str, Any] = field(default_factory=dict)
    axe_version: str = ""
    external: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)


def run_axe(page: Any) -> tuple[str, list[dict[str, Any]]]:
    """axe-core's version and its violations on ``page``, every rule of its default set. Without axe's
    CSSOM preload: it fetches each stylesheet's ``@import`` relative to the page instead of the
    stylesheet (the theme's ``@import "../basic.css"`` became 404s for ``<page folder>/basic.css``); it
    serves only the ``css-orientation-lock`` rule, and the theme locks no orientation."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"resultTypes": ["violations"], "preload": False})
    return page.evaluate("() => window.axe.version"), results.response["violations"]


def accessible_nodes(page: Any, selector: str) -> list[dict[str, Any]]:
    """Role, name and description that Chromium computes for each element matching ``selector``."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Accessibility.enable")
    root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    nodes = []
    for node_id in cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"]:
        node = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node_id, "fetchRelatives": False})["nodes"][0]
        described = cdp.send("DOM.getAttributes", {"nodeId": node_id})["attributes"]
        attributes = dict(zip(described[::2], described[1::2]))
        nodes.append({"role": node.get("role", {}).get("value"), "name": node.get("name", {}).get("value", ""),
                      "description": node.get("description", {}).get("value", ""), "id": attributes.get("id", ""),
                      "inner": attributes.get("aria-describedby", "").removesuffix("-alt")})
    cdp.detach()
    return nodes


def audit(page: Any, result: A11yVisit, *, dark: bool = False) -> None:
    """axe-core and the figure checks on a page whose figures are drawn; ``dark``: first what the
    theme's switch does (the figures follow it: a MutationObserver relayouts them)."""
    if dark:
        page.evaluate("() => { document.documentElement.dataset.mode = 'dark'; "
                      "document.documentElement.dataset.theme = 'dark'; }")
        page.wait_for_function("""() => [...document.querySelectorAll('.book-plotly-figure')]
            .every(gd => gd._fullLayout && gd._fullLayout.font.color !== '#212529')""", timeout=10_000)
        page.wait_for_timeout(300)
    page.wait_for_timeout(600)  # book.js's last pass (it checks scrolling regions half a second after a change)
    result.axe_version, result.violations = run_axe(page)
    result.figures = page.evaluate(_FIGURES)
    result.groups = accessible_nodes(page, ".book-plotly")
    result.views = accessible_nodes(page, "figure.book-figure > div[role]:not(.book-plotly)")
    result.contrast = page.evaluate(_TEXT_CONTRAST)


def visit(browser: Any, site: Any, path: Path, *, dark: bool = False) -> A11yVisit:
    """``path`` loaded in a fresh context, its figures drawn, then :func:`audit`."""
    name = path.relative_to(site.root).as_posix()
    result = A11yVisit(name)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watched = Visit(name)
    watch(page, watched, site.url + "/")
    page.goto(site.page_url(path), wait_until="load")
    result.ready = evaluate_settled(page, _READY)
    audit(page, result, dark=dark)
    result.page_errors, result.external = watched.page_errors, watched.external
    context.close()
    return result
