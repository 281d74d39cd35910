"""Every built page in headless Chromium, with every request to another host blocked and recorded:
no script error, nothing fetched from elsewhere, every figure drawn, sliders that redraw, BertViz
views with their sentence, embedded widgets, typeset math. Also the site opened from file://."""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.book, pytest.mark.browser]

# Harmless messages of the theme, allowed explicitly and only these:
# pydata-sphinx-theme logs this console.error on a first visit, when no theme is saved in
# localStorage yet (it then falls back to "auto"). Nothing of the page depends on it.
ALLOWED_CONSOLE_ERRORS = ("Got invalid theme mode",)
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

    for _ in range(5):
        try:
            return page.evaluate(script)
        except Error as error:
            if "Execution context was destroyed" not in str(error):
                raise
            page.wait_for_load_state("load")
    return page.evaluate(script)


def unexpected(messages: list[str]) -> list[str]:
    return [m for m in messages if not any(m.startswith(allowed) for allowed in ALLOWED_CONSOLE_ERRORS)]


@pytest.fixture(scope="session")
def visits(site: Any, chromium: Any, pages: list[Path], measurements: list[str]) -> dict[str, Visit]:
    """Every page loaded once, in a fresh browser context each, with its report."""
    results = {}
    for path in pages:
        name = path.relative_to(site.root).as_posix()
        visit = Visit(name)
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        watch(page, visit, site.url + "/")
        page.goto(site.page_url(path), wait_until="load")
        visit.ready = evaluate_settled(page, _READY)
        page.wait_for_load_state("networkidle")
        visit.report = evaluate_settled(page, _REPORT)
        context.close()
        results[name] = visit
        report = visit.report
        measurements.append(f"transferred: {report['bytes'] / 1e6:6.2f} MB in {report['requests']:3d} requests  "
                            f"{name} ({len(report['figures'])} figures)")
    return results


def test_no_page_throws_a_javascript_error(visits: dict[str, Visit]) -> None:
    errors = {name: v.page_errors for name, v in visits.items() if v.page_errors}
    assert not errors, json.dumps(errors, indent=1)


def test_no_page_logs_a_console_error(visits: dict[str, Visit]) -> None:
    errors = {name: unexpected(v.console_errors) for name, v in visits.items() if unexpected(v.console_errors)}
    assert not errors, json.dumps(errors, indent=1)


def test_no_request_leaves_the_site_and_none_fails(visits: dict[str, Visit], site: Any) -> None:
    external = {name: v.external for name, v in visits.items() if v.external}
    failed = {name: v.failed for name, v in visits.items() if v.failed}
    assert not external, f"requests to other hosts: {json.dumps(external, indent=1)}"
    assert not failed and not site.errors, f"failed requests: {json.dumps(failed, indent=1)} {site.errors}"


def test_every_page_settles(visits: dict[str, Visit]) -> None:
    stuck = [name for name, v in visits.items() if not v.ready]
    assert not stuck, f"figures, views or widgets not drawn within {WAIT_MS} ms on {stuck}"


def test_every_plotly_figure_draws_its_traces(visits: dict[str, Visit]) -> None:
    figures = [(name, f) for name, v in visits.items() for f in v.report["figures"]]
    assert figures, "no Plotly figure on any page"
    blank = [(name, f) for name, f in figures if f["traces"] == 0 or f["drawn"] == 0 or f["width"] < 200]
    assert not blank, blank


def bertviz_params(html: str) -> list[dict[str, Any]]:
    """The parameters of each BertViz view of a page, as written into it."""
    decoder, views = json.JSONDecoder(), []
    for match in re.finditer(r"const params = ", html):
        params, _ = decoder.raw_decode(html[match.end():].replace("__bookMode", '"light"', 1))
        views.append(params)
    return views


def test_bertviz_views_draw_the_tokens_of_their_sentence(visits: dict[str, Visit], site: Any) -> None:
    checked = 0
    for name, visit in visits.items():
        if not visit.report["views"]:
            continue
        written = bertviz_params((site.root / name).read_text(encoding="utf-8"))
        assert len(written) == len(visit.report["views"]), name
        for params, view in zip(written, visit.report["views"]):
            tokens = params["attention"][0]["left_text"]
            if "display_mode" not in params:  # head view: the tokens, on the left and on the right
                assert [t for t in view["texts"] if t in tokens] == tokens + tokens, (name, view["texts"])
            else:  # model view: a thumbnail per head of each layer, labelled by head and layer
                heads = [str(h) for h in params["include_heads"]]
                layers = [str(layer) for layer in params["include_layers"]]
                assert view["texts"] == ["Heads", *heads, "Layers", *layers], (name, view["texts"])
                assert view["rects"] >= len(heads) * len(layers), (name, view)
            checked += 1
    assert checked >= 2, "the figures page holds a head view and a model view"


def test_embedded_widgets_render_from_their_saved_state(visits: dict[str, Visit]) -> None:
    with_widgets = {name: v.report["widgets"] for name, v in visits.items() if v.report["widgets"]["views"]}
    assert with_widgets, "no page with widgets: the figures page has one"
    for name, widgets in with_widgets.items():
        assert widgets["rendered"] >= widgets["views"] and widgets["errors"] == 0, (name, widgets)


def test_math_is_typeset_by_mathjax(visits: dict[str, Visit]) -> None:
    with_math = {name: v.report["math"] for name, v in visits.items() if v.report["math"]["source"]}
    assert with_math, "no page with math: the figures page has some"
    for name, math in with_math.items():
        assert math["typeset"] >= math["source"], (name, math)


# --- interaction: sliders, widgets, theme ------------------------------------------------------

_SIGNATURE = """id => {
  const gd = document.getElementById(id);
  const plain = a => a == null ? null : (typeof a === 'object' && a.length !== undefined)
    ? Array.from(a, plain) : a;
  const data = JSON.stringify(gd.data.filter(t => t.visible !== false).map(t => [plain(t.x), plain(t.y), plain(t.z)]));
  const drawn = [...gd.querySelectorAll('.cartesianlayer .trace path, .cartesianlayer .hm image')]
    .map(e => e.getAttribute('d') || e.getAttribute('href') || '').join('|');
  return {data, drawn, active: gd.layout.sliders[0].active};
}"""

_ARM = """id => {
  const gd = document.getElementById(id);
  window.__step = {start: null, end: null};
  document.addEventListener('mousedown', () => { window.__step.start = performance.now(); },
                            {capture: true, once: true});
  gd.once('plotly_animated', () => requestAnimationFrame(() => { window.__step.end = performance.now(); }));
}"""


def open_ready(chromium: Any, url: str) -> tuple[Any, Any]:
    """A fresh desktop-sized browser context with ``url`` loaded and its figures drawn."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="load")
    assert page.evaluate(_READY), f"{url}: the page's figures did not finish drawing"
    return context, page


def slider_step_points(page: Any, figure_id: str) -> list[tuple[float, float]]:
    """Where to click for each step: above the step's tick, on the rail. (Plotly leaves out step
    labels that would overlap, so the labels cannot be counted on; a click on the slider's touch
    area selects the nearest step.)"""
    points = page.evaluate("""id => {
        const gd = document.getElementById(id);
        const slider = [...gd.querySelectorAll('.slider-group')].find(g => g.__data__ && g.__data__._index === 0)
            || gd.querySelector('.slider-group');  // the first slider (layout.sliders[0])
        const rail = slider.querySelector('.slider-rail-rect').getBoundingClientRect();
        return [...slider.querySelectorAll('.slider-tick-rect')].map(t => {
            const r = t.getBoundingClientRect(); return [r.x + r.width / 2, rail.y + rail.height / 2]; });
    }""", figure_id)
    return [tuple(point) for point in points]


def test_moving_a_slider_step_redraws_the_figure_fast(site: Any, chromium: Any, visits: dict[str, Visit],
                                                       measurements: list[str]) -> None:
    latencies = []
    for name, visit in visits.items():
        ids = [f["id"] for f in visit.report["figures"] if f["sliders"]]
        if not ids:
            continue
        context, page = open_ready(chromium, f"{site.url}/{name}")
        for figure_id in ids:
            page.locator(f"#{figure_id}").scroll_into_view_if_needed()
            before = page.evaluate(_SIGNATURE, figure_id)
            points = slider_step_points(page, figure_id)
            steps = page.evaluate("id => document.getElementById(id).layout.sliders[0].steps.length", figure_id)
            assert len(points) == steps, (name, figure_id, len(points), steps)
            target = 1 if before["active"] != 1 else 0
            page.evaluate(_ARM, figure_id)
            page.mouse.click(*points[target])
            page.wait_for_function("window.__step.end !== null", timeout=10_000)
            latency = page.evaluate("window.__step.end - window.__step.start")
            after = page.evaluate(_SIGNATURE, figure_id)
            assert after["active"] == target, (name, figure_id, before["active"], after["active"])
            assert after["data"] != before["data"], f"{name} #{figure_id}: the slider step left the data unchanged"
            assert after["drawn"] != before["drawn"], f"{name} #{figure_id}: the slider step redrew nothing"
            latencies.append(latency)
            measurements.append(f"slider step: {latency:6.1f} ms  {name} #{figure_id}")
        context.close()
    assert latencies, "no figure with a slider on any page"
    median = statistics.median(latencies)
    measurements.append(f"slider step: median {median:.1f} ms, max {max(latencies):.1f} ms over {len(latencies)}")
    assert median < 100, f"slider steps take {median:.0f} ms (median) to redraw; the budget is 100 ms"


_DRAWN = """id => {
  const gd = document.getElementById(id);
  const plain = a => a == null ? null : (typeof a === 'object' && a.length !== undefined)
    ? Array.from(a, plain) : a;
  const data = JSON.stringify(gd.data.filter(t => t.visible !== false).map(t => [plain(t.x), plain(t.y), plain(t.z)]));
  const drawn = [...gd.querySelectorAll('.cartesianlayer .trace path, .cartesianlayer .hm image')]
    .filter(e => e.getBoundingClientRect().width > 0)
    .map(e => e.getAttribute('d') || e.getAttribute('href') || '').join('|');
  return {data, drawn, active: gd.layout.updatemenus[0].active};
}"""


def test_every_menu_choice_redraws_its_figure(site: Any, chromium: Any, visits: dict[str, Visit]) -> None:
    """Each dropdown of every page: picking another entry changes the data shown and what is drawn."""
    centre = """([id, selector, n]) => { const r = document.getElementById(id).querySelectorAll(selector)[n]
        .getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }"""
    checked = 0
    for name, visit in visits.items():
        ids = [f["id"] for f in visit.report["figures"] if f["menus"]]
        if not ids:
            continue
        context, page = open_ready(chromium, f"{site.url}/{name}")
        for figure_id in ids:
            page.locator(f"#{figure_id}").scroll_into_view_if_needed()
            before = page.evaluate(_DRAWN, figure_id)
            count = page.evaluate("id => document.getElementById(id).layout.updatemenus[0].buttons.length", figure_id)
            target = 1 if before["active"] != 1 else 0
            page.mouse.click(*page.evaluate(centre, [figure_id, ".updatemenu-header", 0]))  # opens the menu
            page.wait_for_function(
                "([id, n]) => document.getElementById(id).querySelectorAll('.updatemenu-dropdown-button').length === n",
                arg=[figure_id, count], timeout=5000)
            page.mouse.click(*page.evaluate(centre, [figure_id, ".updatemenu-dropdown-button", target]))
            page.wait_for_function("([id, n]) => document.getElementById(id).layout.updatemenus[0].active === n",
                                   arg=[figure_id, target], timeout=5000)
            page.wait_for_timeout(200)  # the redraw follows the menu's relayout
            after = page.evaluate(_DRAWN, figure_id)
            assert after["data"] != before["data"], f"{name} #{figure_id}: the menu choice left the data unchanged"
            assert after["drawn"] != before["drawn"], f"{name} #{figure_id}: the menu choice redrew nothing"
            checked += 1
        context.close()
    assert checked, "no figure with a menu on any page"


def test_a_head_menu_choice_shows_another_head(site: Any, chromium: Any) -> None:
    context, page = open_ready(chromium, f"{site.url}/book/figures.html")
    figure_id = page.evaluate("""() => [...document.querySelectorAll('.book-plotly-figure')]
        .find(gd => gd.layout.updatemenus && gd.layout.updatemenus.length && gd.data.length === 12).id""")
    page.locator(f"#{figure_id}").scroll_into_view_if_needed()
    centre = """([id, selector, n]) => { const r = document.getElementById(id).querySelectorAll(selector)[n]
        .getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }"""
    page.mouse.click(*page.evaluate(centre, [figure_id, ".updatemenu-header", 0]))  # opens the menu
    page.wait_for_function(
        "id => document.getElementById(id).querySelectorAll('.updatemenu-dropdown-button').length === 12",
        arg=figure_id, timeout=5000)
    page.mouse.click(*page.evaluate(centre, [figure_id, ".updatemenu-dropdown-button", 4]))
    page.wait_for_function("id => document.getElementById(id).data[4].visible === true", arg=figure_id, timeout=5000)
    visible = page.evaluate("id => document.getElementById(id).data.map(t => t.visible)", figure_id)
    context.close()
    assert visible == [i == 4 for i in range(12)]


def test_linked_widgets_follow_each_other_without_a_kernel(site: Any, chromium: Any) -> None:
    context, page = open_ready(chromium, f"{site.url}/book/figures.html")
    handle = page.locator(".widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    text = page.locator(".widget-text input").first
    page.wait_for_function("() => document.querySelector('.widget-text input').value === '6'", timeout=5000)
    value = text.input_value()
    context.close()
    assert value == "6"  # the slider started at 4; jslink copied 6 into the number box in the browser


def test_figures_follow_the_dark_theme(site: Any, chromium: Any) -> None:
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    page = context.new_page()
    page.goto(f"{site.url}/book/figures.html", wait_until="load")
    assert page.evaluate(_READY)
    colour = "() => document.querySelector('.book-plotly-figure')._fullLayout.font.color"
    light = page.evaluate(colour)
    page.evaluate("() => { document.documentElement.dataset.mode = 'dark'; "
                  "document.documentElement.dataset.theme = 'dark'; }")  # what the theme switch does
    page.wait_for_function(f"() => ({colour})() !== {json.dumps(light)}", timeout=5000)
    dark = page.evaluate(colour)
    panel = page.evaluate("""() => getComputedStyle(document.querySelector('.book-plotly').closest('.text_html'))
        .backgroundColor""")
    context.close()
    assert (light, dark) == ("#212529", "#e3e6ea")
    assert panel in ("rgba(0, 0, 0, 0)", "transparent")  # not the light panel the theme gives HTML outputs


def test_the_site_opened_from_a_file_draws_its_figures(built_html: Path, chromium: Any) -> None:
    visit = Visit("file://book/figures.html")
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page, visit, "file://")
    start = time.perf_counter()
    page.goto((built_html / "book" / "figures.html").as_uri(), wait_until="load")
    ready = page.evaluate(_READY)
    report = page.evaluate(_REPORT)
    context.close()
    assert ready, f"not drawn within {WAIT_MS} ms from file:// ({time.perf_counter() - start:.1f} s)"
    assert not visit.external and not visit.page_errors and not unexpected(visit.console_errors), visit
    assert report["figures"] and all(f["drawn"] > 0 for f in report["figures"])
    assert report["views"] and report["views"][0]["texts"]  # BertViz loads RequireJS, d3, jQuery from files
