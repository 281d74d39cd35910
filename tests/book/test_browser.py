"""Every built page in headless Chromium, with every request to another host blocked and recorded:
no script error, nothing fetched from elsewhere, every figure drawn, sliders that redraw, BertViz
views with their sentence, embedded widgets, typeset math. Also the site opened from file://."""

from __future__ import annotations

import json
import re
import statistics
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from browser import (
    _CLASHES,
    _READY,
    _REPORT,
    PHONE,
    WAIT_MS,
    Visit,
    evaluate_settled,
    follow_redirect,
    in_parallel,
    open_ready,
    unexpected,
    watch,
)

pytestmark = [pytest.mark.book, pytest.mark.browser]


@pytest.fixture(scope="session")
def visits(desktop_visits: dict[str, Any], measurements: list[str]) -> dict[str, Visit]:
    """Every page loaded once, in a fresh browser context each, with its report (the shared
    desktop visit of ``conftest.desktop_visits``)."""
    results = {name: both.browser for name, both in desktop_visits.items()}
    for name, visit in results.items():
        measurements.append(f"transferred: {visit.report['bytes'] / 1e6:6.2f} MB in {visit.report['requests']:3d} "
                            f"requests  {name} ({len(visit.report['figures'])} figures)")
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


def test_no_figure_text_runs_into_another(visits: dict[str, Visit], measurements: list[str]) -> None:
    """On a desktop screen (1280 px), no figure's title, legend, menu, annotation (a panel's title) or axis
    title overlaps another. (Text that runs past a figure's edge is counted, not failed: the summary lists it.)"""
    clashes = {name: v.report["clashes"] for name, v in visits.items() if v.report["clashes"]}
    clipped = [f"{name} #{c['id']} {c['text']!r}" for name, v in visits.items() for c in v.report["clipped"]]
    measurements.append(f"figure text past a figure's edge at 1280 px: {len(clipped)}"
                        + "".join(f"\n  {c}" for c in clipped))
    assert not clashes, f"figure text over other figure text: {json.dumps(clashes, indent=1)}"


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
  // A slider step either animates to a frame or calls Plotly.update: time whichever redraw comes first.
  const done = () => requestAnimationFrame(() => {
    if (window.__step.end === null) { window.__step.end = performance.now(); }
  });
  gd.once('plotly_animated', done);
  gd.once('plotly_update', done);
}"""


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


SLIDER_BUDGET_MS = 100  # the design's budget of one slider step's redraw (reported in the terminal summary)


def test_moving_a_slider_step_redraws_the_figure(figure_pages: Any, visits: dict[str, Visit],
                                                       measurements: list[str]) -> None:
    latencies = []
    for name, visit in visits.items():
        ids = [f["id"] for f in visit.report["figures"] if f["sliders"]]
        if not ids:
            continue
        page = figure_pages(name)  # shared with the keyboard tests (conftest.FigurePages)
        for figure_id in ids:
            page.locator(f"#{figure_id}").scroll_into_view_if_needed()
            before = page.evaluate(_SIGNATURE, figure_id)
            points = slider_step_points(page, figure_id)
            steps = page.evaluate("id => document.getElementById(id).layout.sliders[0].steps.length", figure_id)
            assert len(points) == steps, (name, figure_id, len(points), steps)
            # the page is shared (the keyboard tests may have left the slider at an end, where one step can
            # redraw the same pixels, e.g. two near one-hot temperatures): step to the farther end
            target = 0 if before["active"] > (steps - 1) / 2 else steps - 1
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
    assert latencies, "no figure with a slider on any page"
    median = statistics.median(latencies)
    # The design's budget (< 100 ms a step) is reported, not enforced: a timed assert fails on a busy or
    # slower machine (504 ms median at load 11 on 2 cores), not on a slower page.
    over = "" if median < SLIDER_BUDGET_MS else f" (over the {SLIDER_BUDGET_MS} ms budget)"
    measurements.append(f"slider step: median {median:.1f} ms, max {max(latencies):.1f} ms over {len(latencies)}{over}")


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


def test_every_menu_choice_redraws_its_figure(figure_pages: Any, visits: dict[str, Visit]) -> None:
    """Each dropdown of every page: picking another entry changes the data shown and what is drawn."""
    centre = """([id, selector, n]) => { const r = document.getElementById(id).querySelectorAll(selector)[n]
        .getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }"""
    checked = 0
    for name, visit in visits.items():
        ids = [f["id"] for f in visit.report["figures"] if f["menus"]]
        if not ids:
            continue
        page = figure_pages(name)  # shared with the keyboard tests (conftest.FigurePages)
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
    assert checked, "no figure with a menu on any page"


def test_a_head_menu_choice_shows_another_head(figure_pages: Any) -> None:
    page = figure_pages("book/figures.html")
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


# --- phones and paper: reflow at 320 and 390 px, touch sliders, print ------------------------------

PHONE_WIDTHS = (320, 390)  # 320 CSS px: the WCAG 1.4.10 "reflow" width; 390: a common phone

_STICKING_OUT = """width => {
  // The innermost elements that reach past the right edge of the viewport: what widens the page.
  const out = [];
  for (const e of document.body.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.right <= width + 0.5) { continue; }
    if ([...e.children].some(c => c.getBoundingClientRect().right > width + 0.5)) { continue; }
    out.push(`${e.tagName.toLowerCase()}${e.className && e.className.baseVal === undefined
      ? '.' + String(e.className).trim().split(/\\s+/).join('.') : ''} to ${Math.round(r.right)} px: `
      + (e.textContent || '').trim().slice(0, 60));
    if (out.length === 5) { break; }
  }
  return out;
}"""


def test_no_page_scrolls_sideways_on_a_phone(site: Any, browser_pages: list[Path],
                                             measurements: list[str]) -> None:
    """Every page (the module-source pages: ``browser.MODULE_SAMPLE``) at 320 and 390 CSS px, touch
    and device scale 2: the page is exactly as wide as the viewport (long words wrap; wide tables,
    code and math scroll in their own box), and no figure's text runs into another's (title, legend, menus,
    annotations, axis titles; text past a figure's edge is counted in the summary). One browser
    context a width, every page loaded in it in turn (a warm cache changes no layout); the widths side by
    side, in browsers of their own (:func:`browser.in_parallel`)."""
    wide, clashes, clipped, start = {}, {}, [], time.perf_counter()

    def at(browser: Any, width: int) -> None:
        context = browser.new_context(viewport={"width": width, "height": 800}, **PHONE)
        page = context.new_page()
        for path in browser_pages:
            url = site.page_url(path)
            page.goto(url, wait_until="load")
            follow_redirect(page, url)
            assert evaluate_settled(page, _READY), f"{url}: the page's figures did not finish drawing"
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            if scroll_width != width:
                wide[f"{path.relative_to(site.root).as_posix()} at {width} px"] = {
                    "scrollWidth": scroll_width, "sticking out": page.evaluate(_STICKING_OUT, width)}
            found = evaluate_settled(page, _CLASHES)
            if found["clashes"]:
                clashes[f"{path.relative_to(site.root).as_posix()} at {width} px"] = found["clashes"]
            clipped.extend(f"{path.relative_to(site.root).as_posix()} at {width} px #{c['id']} {c['text']!r}"
                           for c in found["clipped"])
        context.close()

    in_parallel(PHONE_WIDTHS, at)  # one browser a width
    measurements.append(f"phone widths: {len(browser_pages) * len(PHONE_WIDTHS)} page-width pairs in "
                        f"{time.perf_counter() - start:.0f} s, {len(wide)} wider than the screen")
    measurements.append(f"figure text past a figure's edge on a phone: {len(clipped)}"
                        + "".join(f"\n  {c}" for c in clipped))
    assert not wide, f"pages that scroll sideways on a phone: {json.dumps(wide, indent=1)}"
    assert not clashes, f"figure text over other figure text on a phone: {json.dumps(clashes, indent=1)}"


def _touch(cdp: Any, kind: str, point: tuple[float, float] | None = None) -> None:
    """One touch event through the browser's input pipeline (hit testing, touch-action, scrolling)."""
    points = [{"x": point[0], "y": point[1], "id": 0, "radiusX": 4, "radiusY": 4, "force": 1}] if point else []
    cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


def test_a_touch_drag_moves_a_slider_on_a_phone(site: Any, chromium: Any) -> None:
    """A finger put on a slider's grip and dragged along its rail to the far end moves the slider
    there, step by step, and redraws the figure; the page itself does not move sideways."""
    context, page = open_ready(chromium, f"{site.url}/book/figures.html", 390, 800, **PHONE)
    figure_id = page.evaluate("""() => [...document.querySelectorAll('.book-plotly-figure')]
        .find(gd => gd.layout.sliders && gd.layout.sliders.length && gd.layout.sliders[0].steps.length > 2).id""")
    page.locator(f"#{figure_id}").scroll_into_view_if_needed()
    before = page.evaluate(_SIGNATURE, figure_id)
    points = slider_step_points(page, figure_id)
    target = len(points) - 1 if before["active"] < len(points) / 2 else 0
    (x0, y0), (x1, _) = points[before["active"]], points[target]
    assert 0 <= min(x0, x1) and max(x0, x1) <= 390, f"the slider's rail is off screen: {points}"
    cdp = context.new_cdp_session(page)
    _touch(cdp, "touchStart", (x0, y0))
    seen = set()
    for i in range(1, 21):
        _touch(cdp, "touchMove", (x0 + (x1 - x0) * i / 20, y0))
        seen.add(page.evaluate("id => document.getElementById(id).layout.sliders[0].active", figure_id))
    _touch(cdp, "touchEnd")
    page.wait_for_function("([id, n]) => document.getElementById(id).layout.sliders[0].active === n",
                           arg=[figure_id, target], timeout=5000)
    page.wait_for_timeout(200)  # the redraw follows the slider's step
    after = page.evaluate(_SIGNATURE, figure_id)
    scrolled = page.evaluate("[window.scrollX, document.documentElement.scrollWidth]")
    context.close()
    assert len(seen - {before["active"]}) >= 2, f"the slider jumped instead of following the finger: {seen}"
    assert after["data"] != before["data"] and after["drawn"] != before["drawn"], "the drag redrew nothing"
    assert scrolled == [0, 390], f"the drag scrolled the page sideways: {scrolled}"


_PDF_OBJECT = re.compile(rb"(\d+) 0 obj\s*(.*?)endobj", re.S)
_PDF_TEXT_OP = re.compile(rb"/(\w+)\s+[-\d.]+\s+Tf|<([0-9A-Fa-f]*)>\s*Tj|\[((?:[^\]\\]|\\.)*)\]\s*TJ|(BT)\b|(ET)\b"
                          rb"|([-\d.]+)\s+([-\d.]+)\s+Td|(T\*)")


def pdf_text(data: bytes) -> str:
    """The text of a PDF printed by Chromium, one line per text line or object: enough to ask
    whether some words were printed. Chromium (Skia) writes Flate streams and Type0 fonts with a
    ToUnicode CMap, which is all this reads (no PDF library is needed)."""
    import zlib

    objects, streams = {}, {}
    for match in _PDF_OBJECT.finditer(data):
        number, body = int(match.group(1)), match.group(2)
        objects[number] = body
        head, has_stream, rest = body.partition(b"stream")
        if has_stream and b"/FlateDecode" in head:
            try:
                streams[number] = zlib.decompressobj().decompress(rest.lstrip(b"\r\n"))
            except zlib.error:
                pass
    cmaps, cmap_streams = {}, set()
    for number, body in objects.items():
        to_unicode = re.search(rb"/ToUnicode (\d+) 0 R", body)
        if b"/Type /Font" not in body or not to_unicode or int(to_unicode.group(1)) not in streams:
            continue
        cmap_streams.add(int(to_unicode.group(1)))
        source, cmap = streams[int(to_unicode.group(1))], {}
        for block in re.findall(rb"beginbfchar(.*?)endbfchar", source, re.S):
            for code, text in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                cmap[int(code, 16)] = bytes.fromhex(text.decode()).decode("utf-16-be", "replace")
        for block in re.findall(rb"beginbfrange(.*?)endbfrange", source, re.S):
            for low, high, first in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                for offset, code in enumerate(range(int(low, 16), int(high, 16) + 1)):
                    cmap[code] = chr(int(first, 16) + offset)
        cmaps[number] = cmap
    fonts = {}  # resource name -> CMap (Skia names a font after its object: the same on every page)
    for body in objects.values():
        for name, number in re.findall(rb"/(\w+) (\d+) 0 R", body.partition(b"/Font <<")[2].partition(b">>")[0]):
            if int(number) in cmaps:
                fonts[name] = cmaps[int(number)]
    lines = []
    for number, stream in streams.items():
        if number in cmap_streams or b"BT" not in stream:
            continue
        cmap, line = {}, []
        for op in _PDF_TEXT_OP.finditer(stream):
            if op.group(1):
                cmap = fonts.get(op.group(1), {})
            elif op.group(2) is not None or op.group(3) is not None:
                runs = [op.group(2)] if op.group(2) is not None else re.findall(rb"<([0-9A-Fa-f]*)>", op.group(3))
                line += [cmap.get(int(run[i:i + 4], 16), "") for run in runs for i in range(0, len(run), 4)]
            elif op.group(5) or op.group(8) or (op.group(6) and float(op.group(7)) != 0):
                lines.append("".join(line))
                line = []
        lines.append("".join(line))
    return "\n".join(line for line in lines if line.strip())


def squeezed(text: str) -> str:
    """``text`` without whitespace (printed words wrap and hyphenate differently from the screen's) and with the
    font's ligatures spelled out (NFKC: the PDF's text holds "ﬀ" where the page has "ff")."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


# Text of controls that do nothing on paper (folded code toggles, the theme's buttons and links).
SCREEN_CONTROLS = ("Show code cell source", "Hide code cell source", "Show code cell output",
                   "Hide code cell output", "Skip to main content", "Back to top")
PRINTED_CHAPTER = "book/01-bottleneck/index.html"

_PRINT_PROBE = """() => {
  // Runs after the book's own "beforeprint" handler: what each figure shows on paper.
  window.__printed = null;
  window.addEventListener('beforeprint', () => {
    window.__printed = [...document.querySelectorAll('.book-plotly-figure')].map(gd => ({
      id: gd.id, width: gd._fullLayout.width, data: JSON.stringify(gd.data.map(t => [t.x, t.y, t.z, t.visible])),
      sliders: (gd.layout.sliders || []).map(s => s.active), menus: (gd.layout.updatemenus || []).map(m => m.active)}));
  });
}"""
_STATE = """() => [...document.querySelectorAll('.book-plotly-figure')].map(gd => ({
  id: gd.id, width: gd._fullLayout.width, data: JSON.stringify(gd.data.map(t => [t.x, t.y, t.z, t.visible])),
  sliders: (gd.layout.sliders || []).map(s => s.active), menus: (gd.layout.updatemenus || []).map(m => m.active)}))"""


def test_a_printed_chapter_shows_no_screen_controls(site: Any, chromium: Any, measurements: list[str]) -> None:
    """A chapter printed to PDF (A4, as Chromium's print does): no text of a screen-only control,
    every figure's caption and every external link's address printed."""
    context, page = open_ready(chromium, f"{site.url}/{PRINTED_CHAPTER}")
    screen = page.evaluate("() => document.body.innerText")
    captions = page.evaluate("() => [...document.querySelectorAll('figure.book-figure figcaption')]"
                             ".map(c => c.textContent)")
    links = page.evaluate("""() => [...document.querySelectorAll('.bd-article a.reference.external')]
        .map(a => a.getAttribute('href')).filter(href => /^https?:/.test(href))""")
    start = time.perf_counter()
    pdf = page.pdf(format="A4")
    seconds = time.perf_counter() - start
    page.emulate_media(media="print")
    visible_controls = page.evaluate("""() => {
        // (checkVisibility() does not see a hidden SVG group: ask every ancestor for its display.)
        const shown = e => { for (let a = e; a; a = a.parentElement) {
            const style = getComputedStyle(a);
            if (style.display === 'none' || style.visibility === 'hidden') { return false; } }
          return true; };
        return [...document.querySelectorAll('details.hide summary, button, .modebar-container, .slider-rail-rect, '
            + '.slider-tick-rect, .slider-grip-rect, .updatemenu-container')]
          .filter(shown).map(e => e.outerHTML.slice(0, 80));
    }""")
    context.close()
    text = squeezed(pdf_text(pdf))
    measurements.append(f"print: {PRINTED_CHAPTER} to PDF in {seconds:.1f} s, {pdf.count(b'/Type /Page') - 1} pages"
                        f" {len(pdf) / 1e6:.1f} MB")
    assert "Show code cell source" in screen, f"{PRINTED_CHAPTER} no longer folds code: print another chapter"
    assert squeezed("Why attention") in text, "the PDF's text could not be read"
    printed_controls = [control for control in SCREEN_CONTROLS if squeezed(control) in text]
    assert not printed_controls, f"screen-only controls printed: {printed_controls}"
    assert not visible_controls, f"controls shown on paper: {visible_controls}"
    missing = [caption for caption in captions if squeezed(caption) not in text]
    assert not missing, f"figure captions not printed: {missing}"
    unprinted = [href for href in links if squeezed(href) not in text]
    assert not unprinted, f"external links printed without their address: {unprinted}"


def test_figures_print_at_their_opening_state_within_the_page(site: Any, chromium: Any) -> None:
    """A figure whose slider the reader moved prints at its opening step, no wider than the printed
    column; after printing the reader's step comes back."""
    context, page = open_ready(chromium, f"{site.url}/book/figures.html")
    figure_id = page.evaluate("""() => [...document.querySelectorAll('.book-plotly-figure')]
        .find(gd => gd.layout.sliders && gd.layout.sliders.length).id""")
    opening = {f["id"]: f for f in page.evaluate(_STATE)}
    page.locator(f"#{figure_id}").scroll_into_view_if_needed()
    points = slider_step_points(page, figure_id)
    target = 1 if opening[figure_id]["sliders"][0] != 1 else 0
    page.mouse.click(*points[target])
    page.wait_for_function("([id, n]) => document.getElementById(id).layout.sliders[0].active === n",
                           arg=[figure_id, target], timeout=5000)
    page.wait_for_timeout(300)
    moved = {f["id"]: f for f in page.evaluate(_STATE)}
    page.evaluate(_PRINT_PROBE)
    page.pdf(format="A4")
    printed = {f["id"]: f for f in page.evaluate("window.__printed")}
    page.wait_for_timeout(300)  # "afterprint" redraws the reader's state
    after = {f["id"]: f for f in page.evaluate(_STATE)}
    context.close()
    assert moved[figure_id]["data"] != opening[figure_id]["data"]
    for key in ("sliders", "menus", "data"):
        assert {i: f[key] for i, f in printed.items()} == {i: f[key] for i, f in opening.items()}, key
        assert {i: f[key] for i, f in after.items()} == {i: f[key] for i, f in moved.items()}, key
    too_wide = {i: f["width"] for i, f in printed.items() if f["width"] > 680}
    assert not too_wide, f"figures wider than an A4 page's column: {too_wide}"
