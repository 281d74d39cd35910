"""Accessibility of the built site, in headless Chromium with every request off the site blocked
(the palette and the figures' markup without a browser: ``tests/test_accessibility.py``).

- axe-core on every page in the light theme and on a sample of pages in the dark theme: no
  violation of impact "serious" or "critical". axe-core is the copy bundled in the
  ``axe-playwright-python`` package, evaluated into the page as a script (no request: the test
  checks that nothing left the site); no rule and no element is excluded.
- Every figure has a text alternative: a Plotly figure is a group that the browser names by the
  figure's title and describes by a sentence of what it shows, inside a ``<figure>`` with a
  caption; a BertViz view is a group named by its sentence.
- Every slider and every menu of every figure works from the keyboard: the arrow keys, Home and
  End move a slider through Plotly's own steps; Enter opens a dropdown, the arrow keys move
  between its entries, Enter picks one and Escape folds it; the figure's data changes with them,
  and the focused control shows a focus ring.
- The figures draw with the book's colour-blind-safe palette (Okabe-Ito, greys, and perceptually
  ordered colour scales), and their text reads on the light and on the dark theme.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import plotly.colors
import pytest
from browser import A11yVisit, in_parallel, visit

from helpers.viz.style import MASK_COLORSCALE, PALETTE, to_rgb

pytestmark = [pytest.mark.book, pytest.mark.browser]

BLOCKING = ("serious", "critical")
"""axe-core impacts that fail the test ("moderate" and "minor" ones are reported, not failed)."""

DARK_SAMPLE = (
    r"book/intro\.html",
    r"book/figures\.html",  # Plotly sliders and menus, BertViz, widgets, math
    r"book/03-scaling/index\.html",  # a chapter with many figures
    r"book/05-variants/0\d-[^/]+\.html",  # a section page
    r"notebooks/[^/]+-lab\.html",  # a lab: exercise checkers' verdicts, the Colab badge
    r"book/api/core\.html",  # API reference
    r"_modules/helpers/attention\.html",  # highlighted source with "[docs]" links
    r"book/bibliography\.html",
)
"""Pages checked again in the dark theme (the first page matching each pattern)."""

# A figure's text, read against what is behind it: the page (the figures' backgrounds are
# transparent) or a menu button's own fill.
@pytest.fixture(scope="module")
def a11y_visits(desktop_visits: dict[str, Any], measurements: list[str]) -> dict[str, A11yVisit]:
    """Every page of the site, light theme (the shared desktop visit of ``conftest.desktop_visits``)."""
    visits = {name: both.a11y for name, both in desktop_visits.items()}
    counts = violation_counts(visits.values())
    measurements.append(f"axe-core {next(iter(visits.values())).axe_version}: {len(visits)} pages (light), "
                        f"violations by rule: {json.dumps(counts) if counts else 'none'}")
    return visits


@pytest.fixture(scope="module")
def dark_visits(site: Any, pages: list[Path], measurements: list[str]) -> dict[str, A11yVisit]:
    """The sampled pages (:data:`DARK_SAMPLE`), dark theme, in browsers side by side (:func:`browser.in_parallel`)."""
    names = [path.relative_to(site.root).as_posix() for path in pages]
    chosen = {}
    for pattern in DARK_SAMPLE:
        match = next((n for n in names if re.fullmatch(pattern, n)), None)
        assert match, f"no page matches {pattern!r}: update DARK_SAMPLE"
        chosen[match] = site.root / match
    visits = dict(zip(chosen, in_parallel(list(chosen.values()), lambda browser, path: visit(browser, site, path,
                                                                                              dark=True))))
    counts = violation_counts(visits.values())
    measurements.append(f"axe-core: {len(visits)} pages (dark), violations by rule: "
                        f"{json.dumps(counts) if counts else 'none'}")
    return visits


def violation_counts(visits: Any) -> dict[str, int]:
    """``{"rule (impact)": number of elements}`` over ``visits``."""
    counts: dict[str, int] = {}
    for result in visits:
        for violation in result.violations:
            key = f"{violation['id']} ({violation['impact']})"
            counts[key] = counts.get(key, 0) + len(violation["nodes"])
    return counts


def blocking(visits: dict[str, A11yVisit]) -> list[str]:
    """Every serious or critical violation, one line per element: page, rule, impact, target, why."""
    lines = []
    for name, result in visits.items():
        for violation in result.violations:
            if violation["impact"] not in BLOCKING:
                continue
            for node in violation["nodes"]:
                why = " ".join(node.get("failureSummary", "").split())
                lines.append(f"{name}: {violation['id']} ({violation['impact']}) {node['target']} "
                             f"{node['html'][:160]!r}: {why[:300]}")
    return lines


def test_axe_core_runs_from_the_installed_package_without_a_request(a11y_visits: dict[str, A11yVisit]) -> None:
    versions = {result.axe_version for result in a11y_visits.values()}
    external = {name: result.external for name, result in a11y_visits.items() if result.external}
    assert len(versions) == 1 and re.fullmatch(r"4\.\d+\.\d+", versions.pop()), versions
    assert not external, f"requests off the site: {json.dumps(external, indent=1)}"
    assert all(result.ready for result in a11y_visits.values())


def test_no_page_has_a_serious_or_critical_axe_violation(a11y_visits: dict[str, A11yVisit]) -> None:
    found = blocking(a11y_visits)
    assert not found, f"{len(found)} serious or critical axe-core violations:\n" + "\n".join(found)


def test_no_sampled_page_has_a_serious_or_critical_axe_violation_in_the_dark_theme(
        dark_visits: dict[str, A11yVisit]) -> None:
    assert len(dark_visits) == len(DARK_SAMPLE)
    found = blocking(dark_visits)
    assert not found, f"{len(found)} serious or critical axe-core violations (dark):\n" + "\n".join(found)


def test_every_figure_is_named_by_its_title_and_described_by_a_sentence(a11y_visits: dict[str, A11yVisit],
                                                                       measurements: list[str]) -> None:
    """The browser's accessibility tree, not the markup: each Plotly figure is a group (or a figure)
    with a name (its title) and a description of at least a sentence of what it shows (its
    author's text alternative, or the sentence :func:`helpers.viz.renderer.describe_figure` makes
    from the figure); the plot area's SVG is hidden behind that description. How many figures
    have their author's sentence and a caption is measured (the summary lists the others)."""
    checked, problems, generated, uncaptioned = 0, [], [], []
    for name, result in a11y_visits.items():
        groups = {group["inner"]: group for group in result.groups}
        for figure in result.figures:
            checked += 1
            group = groups.get(figure["id"])
            where = f"{name} #{figure['id']}"
            if not figure["wrapped"] or group is None:
                problems.append(f"{where}: not in a labelled .book-plotly group with a description")
                continue
            if group["role"] not in ("group", "figure") or not group["name"].strip():
                problems.append(f"{where}: role {group['role']!r}, name {group['name']!r}")
            if len(group["description"].split()) < 6 or not group["description"].rstrip().endswith((".", "!", "?")):
                problems.append(f"{where}: description {group['description']!r} is not a sentence of what it shows")
            if figure["generated"]:
                generated.append(where)
            if not figure["caption"]:
                uncaptioned.append(where)
            if "true" not in figure["hidden"]:
                problems.append(f"{where}: the plot area's SVG is not hidden behind the description")
        for view in result.views:
            checked += 1
            if view["role"] != "group" or len(view["name"].split()) < 6:
                problems.append(f"{name}: a view in a figure is {view['role']!r} named {view['name']!r}")
    figures = sum(len(result.figures) for result in a11y_visits.values())
    measurements.append(f"figures: {figures} Plotly figures, {figures - len(generated)} described by their author, "
                        f"{len(generated)} by a generated sentence, {len(uncaptioned)} without a caption")
    pages = sorted({where.split(" #")[0] for where in generated + uncaptioned})
    if pages:
        measurements.append("figures shown without viz.captioned(...) on: " + ", ".join(pages))
    assert checked > 50, f"only {checked} figures found on the site"
    assert not problems, f"{len(problems)} of {checked} figures:\n" + "\n".join(problems)


# --- the palette ---------------------------------------------------------------------------------

def _rgb(colour: str) -> tuple[int, int, int] | None:
    try:
        return to_rgb(colour)
    except ValueError:
        return None


def _is_grey(rgb: tuple[int, int, int]) -> bool:
    return max(rgb) - min(rgb) <= 3


def _scale_colours(name: str) -> set[tuple[int, int, int] | None]:
    scale = plotly.colors.get_colorscale(name)
    return {_rgb(plotly.colors.convert_colors_to_same_type(c, "rgb")[0][0]) for _, c in scale}


ALLOWED_SCALES = {name: _scale_colours(name) for name in ("Viridis", "Cividis", "RdBu", "Greys", "Blues", "Twilight")}
"""Colour scales a heatmap may use: perceptually ordered (Viridis, Cividis), single-hue (Greys,
Blues), ColorBrewer's colour-blind-safe diverging red-blue, or, for a quantity that wraps around
(6.6's rotation angles in turns), matplotlib's cyclic, perceptually uniform twilight, whose
lightness gives the distance from a whole turn and blue against red the side; reversed versions too."""
ALLOWED_SCALES["mask"] = {_rgb(c) for _, c in MASK_COLORSCALE}


def test_every_figure_draws_with_the_palette(a11y_visits: dict[str, A11yVisit]) -> None:
    """Every stroke and fill of every trace and shape is an Okabe-Ito colour of the palette, white
    or a grey; every colour scale is one of the colour-blind-safe scales."""
    palette = {_rgb(c) for c in PALETTE} | {(255, 255, 255)}
    off_palette, off_scale, checked = [], [], 0
    for name, result in a11y_visits.items():
        for figure in result.figures:
            checked += 1
            for colour in figure["drawn"]:
                rgb = _rgb(colour)
                if rgb is None or not (rgb in palette or _is_grey(rgb)):
                    off_palette.append(f"{name} #{figure['id']}: {colour}")
            for scale in figure["scales"]:
                colours = {_rgb(c) for c in scale}
                if not any(colours <= allowed for allowed in ALLOWED_SCALES.values()):
                    off_scale.append(f"{name} #{figure['id']}: {scale}")
    assert checked > 50
    assert not off_palette, "colours off the palette:\n" + "\n".join(sorted(set(off_palette)))
    assert not off_scale, "colour scales that are not colour-blind safe:\n" + "\n".join(sorted(set(off_scale)))


def test_figure_text_reads_on_both_themes(a11y_visits: dict[str, A11yVisit], dark_visits: dict[str, A11yVisit]) -> None:
    """Titles, tick labels, legends, slider and menu labels of every figure: at least 4.5:1 against
    what is behind them, on every page in the light theme and on the sampled pages in the dark one."""
    low, checked = [], 0
    for theme, visits in (("light", a11y_visits), ("dark", dark_visits)):
        for name, result in visits.items():
            for text in result.contrast["texts"]:
                checked += 1
                if text["ratio"] < 4.5:
                    low.append(f"{theme} {name} #{text['id']}: {text['text']!r} at {text['ratio']:.2f}:1")
    assert checked > 500
    assert not low, f"{len(low)} figure texts below 4.5:1:\n" + "\n".join(low[:60])


# --- keyboard -------------------------------------------------------------------------------------

_SLIDER = """([id, i]) => {
  const gd = document.getElementById(id);
  const group = [...gd.querySelectorAll('.slider-group')].find(g => g.__data__ && g.__data__._index === i);
  const options = gd.layout.sliders[i], current = options.currentvalue || {};
  const active = options.active || 0, step = options.steps[active];
  const style = getComputedStyle(group);
  return {
    active, steps: options.steps.length,
    focused: document.activeElement === group,
    tabindex: group.getAttribute('tabindex'), role: group.getAttribute('role'),
    name: group.getAttribute('aria-label'), min: group.getAttribute('aria-valuemin'),
    max: group.getAttribute('aria-valuemax'), now: group.getAttribute('aria-valuenow'),
    valuetext: group.getAttribute('aria-valuetext'),
    expected: ((current.prefix || '') + (step.label !== undefined ? step.label : step.value))
      .replace(/\\s+/g, ' ').trim(),
    ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
  };
}"""

_ACTIVE_IS = "([id, i, n]) => (document.getElementById(id).layout.sliders[i].active || 0) === n"

_FOCUS_SLIDER = """([id, i]) => { const gd = document.getElementById(id);
  [...gd.querySelectorAll('.slider-group')].find(g => g.__data__ && g.__data__._index === i).focus(); }"""


def _figures_with(visits: dict[str, A11yVisit], key: str) -> list[tuple[str, list[str]]]:
    """``(page, [figure ids])`` of the pages with figures that have sliders (``key="sliders"``) or menus."""
    found = [(name, [f["id"] for f in result.figures if f[key]]) for name, result in visits.items()]
    return [(name, ids) for name, ids in found if ids]


@pytest.fixture(scope="module")
def slider_figures(a11y_visits: dict[str, A11yVisit]) -> list[tuple[str, list[str]]]:
    return _figures_with(a11y_visits, "sliders")


@pytest.fixture(scope="module")
def menu_figures(a11y_visits: dict[str, A11yVisit]) -> list[tuple[str, list[str]]]:
    return _figures_with(a11y_visits, "menus")


_DATA = """id => { const gd = document.getElementById(id);
  const plain = a => a == null ? null : (typeof a === 'object' && a.length !== undefined) ? Array.from(a, plain) : a;
  return JSON.stringify(gd.data.map(t => [plain(t.x), plain(t.y), plain(t.z), t.visible])); }"""
"""What a figure shows: the data of its traces and which of them are visible."""


def _wait_for_new_data(page: Any, figure_id: str, before: str) -> None:
    page.wait_for_function(f"([id, before]) => ({_DATA})(id) !== before", arg=[figure_id, before], timeout=5000)


def test_every_slider_moves_with_the_arrow_keys_home_and_end(figure_pages: Any,
                                                             slider_figures: list[tuple[str, list[str]]]) -> None:
    """Each slider of each figure, focused: ArrowRight (ArrowLeft at the last step) moves it one step
    through Plotly's own step and redraws other data; End and Home reach the last and the first
    step; its ARIA value follows, and the focus ring shows."""
    checked = 0
    for name, ids in slider_figures:
        page = figure_pages(name)  # shared with test_browser's slider and menu tests (conftest.FigurePages)
        for figure_id in ids:
            count = page.evaluate("id => document.getElementById(id).layout.sliders.length", figure_id)
            for i in range(count):
                where = f"{name} #{figure_id} slider {i}"
                page.locator(f"#{figure_id}").scroll_into_view_if_needed()
                page.keyboard.press("Shift")  # a keyboard user (so that :focus-visible applies)
                page.evaluate(_FOCUS_SLIDER, [figure_id, i])
                before = page.evaluate(_SLIDER, [figure_id, i])
                data = page.evaluate(_DATA, figure_id)
                assert before["focused"] and before["tabindex"] == "0" and before["role"] == "slider", (where, before)
                assert before["name"] and before["min"] == "0" and before["max"] == str(before["steps"] - 1), before
                assert before["now"] == str(before["active"]) and before["valuetext"] == before["expected"], before
                assert before["ring"], f"{where}: no focus ring on the focused slider"
                key, target = ("ArrowRight", before["active"] + 1) if before["active"] < before["steps"] - 1 \
                    else ("ArrowLeft", before["active"] - 1)
                page.keyboard.press(key)
                page.wait_for_function(_ACTIVE_IS, arg=[figure_id, i, target], timeout=5000)
                _wait_for_new_data(page, figure_id, data)  # fails the test after 5 s: the step redrew nothing
                page.wait_for_timeout(100)
                after = page.evaluate(_SLIDER, [figure_id, i])
                assert after["focused"], f"{where}: the slider lost the focus"
                assert after["now"] == str(target) and after["valuetext"] == after["expected"], (where, after)
                for key, target in (("End", before["steps"] - 1), ("Home", 0)):
                    page.keyboard.press(key)
                    page.wait_for_function(_ACTIVE_IS, arg=[figure_id, i, target], timeout=5000)
                checked += 1
    assert checked >= 5, f"only {checked} sliders on the site"


_MENU = """([id, i]) => {
  const gd = document.getElementById(id);
  const group = [...gd.querySelectorAll('.updatemenu-header-group')].find(g => g.__data__ && g.__data__._index === i);
  const header = group.querySelector('.updatemenu-header');
  const entries = [...gd.querySelectorAll('.updatemenu-dropdown-button, .updatemenu-button')];
  const focused = document.activeElement;
  return {
    active: gd.layout.updatemenus[i].active || 0, buttons: gd.layout.updatemenus[i].buttons.length,
    type: gd.layout.updatemenus[i].type || 'dropdown',
    header: header && {tabindex: header.getAttribute('tabindex'), role: header.getAttribute('role'),
                       expanded: header.getAttribute('aria-expanded'), name: header.getAttribute('aria-label')},
    entries: entries.length, pressed: entries.map(e => e.getAttribute('aria-pressed')),
    focusedHeader: focused === header, focusedEntry: entries.indexOf(focused),
    ring: focused && focused !== document.body && getComputedStyle(focused).outlineStyle !== 'none',
  };
}"""

_FOCUS_HEADER = """([id, i]) => { const gd = document.getElementById(id);
  [...gd.querySelectorAll('.updatemenu-header-group')].find(g => g.__data__ && g.__data__._index === i)
    .querySelector('.updatemenu-header, .updatemenu-button').focus(); }"""


def test_every_menu_opens_and_picks_with_the_keyboard(figure_pages: Any,
                                                      menu_figures: list[tuple[str, list[str]]]) -> None:
    """Each dropdown of each figure, its header focused: Enter opens it with the focus on its
    current entry, ArrowDown moves to the next entry, Enter picks it (Plotly's own click: the data
    changes) and gives the focus back to the folded header; Escape folds an open dropdown."""
    checked = 0
    for name, ids in menu_figures:
        page = figure_pages(name)  # shared with test_browser's slider and menu tests (conftest.FigurePages)
        for figure_id in ids:
            count = page.evaluate("id => document.getElementById(id).layout.updatemenus.length", figure_id)
            for i in range(count):
                where = f"{name} #{figure_id} menu {i}"
                page.locator(f"#{figure_id}").scroll_into_view_if_needed()
                page.keyboard.press("Shift")
                page.evaluate(_FOCUS_HEADER, [figure_id, i])
                before = page.evaluate(_MENU, [figure_id, i])
                data = page.evaluate(_DATA, figure_id)
                if before["type"] != "dropdown":  # a row of buttons: each one a focusable button
                    target = 1 if before["active"] != 1 else 0
                    page.keyboard.press("ArrowRight" if target > before["active"] else "ArrowLeft")
                    page.keyboard.press("Enter")
                else:
                    header = before["header"]
                    assert header and header["tabindex"] == "0" and header["role"] == "button", (where, header)
                    assert before["focusedHeader"] and before["ring"] and header["expanded"] == "false", (where, before)
                    page.keyboard.press("Enter")
                    opened = page.evaluate(_MENU, [figure_id, i])
                    assert opened["header"]["expanded"] == "true" and opened["entries"] == before["buttons"], opened
                    assert opened["focusedEntry"] == before["active"], f"{where}: focus not on the current entry"
                    assert opened["pressed"][before["active"]] == "true" and opened["pressed"].count("true") == 1
                    target = before["active"] + 1 if before["active"] + 1 < before["buttons"] else before["active"] - 1
                    page.keyboard.press("ArrowDown" if target > before["active"] else "ArrowUp")
                    assert page.evaluate(_MENU, [figure_id, i])["focusedEntry"] == target, where
                    page.keyboard.press("Enter")
                page.wait_for_function("([id, i, n]) => (document.getElementById(id).layout.updatemenus[i].active || 0)"
                                       " === n", arg=[figure_id, i, target], timeout=5000)
                _wait_for_new_data(page, figure_id, data)  # fails the test after 5 s: the choice changed nothing
                after = page.evaluate(_MENU, [figure_id, i])
                if before["type"] == "dropdown":
                    assert after["focusedHeader"] and after["header"]["expanded"] == "false", (where, after)
                    page.keyboard.press("Enter")
                    page.keyboard.press("Escape")
                    folded = page.evaluate(_MENU, [figure_id, i])
                    assert folded["focusedHeader"] and folded["header"]["expanded"] == "false", (where, folded)
                    assert folded["entries"] == 0 and folded["active"] == target, (where, folded)
                checked += 1
    assert checked >= 3, f"only {checked} menus on the site"


def test_a_slider_is_reached_with_tab_and_the_tool_bar_shows_when_focused(figure_pages: Any,
                                                                          slider_figures: list[tuple[str, list[str]]]
                                                                          ) -> None:
    """Tab order: from a figure's slider, Shift+Tab goes to the element before it and Tab comes back
    to the slider; Plotly's tool bar, invisible until hovered, shows while one of its buttons has focus."""
    name, ids = slider_figures[0]
    page = figure_pages(name)
    page.evaluate("id => document.getElementById(id).querySelector('.slider-group').focus()", ids[0])
    page.keyboard.press("Shift+Tab")
    left = page.evaluate(
        "id => document.activeElement !== document.getElementById(id).querySelector('.slider-group')", ids[0])
    page.keyboard.press("Tab")
    landed = page.evaluate(
        "id => document.activeElement === document.getElementById(id).querySelector('.slider-group')", ids[0])
    page.evaluate("id => document.getElementById(id).querySelector('.modebar-btn').focus()", ids[0])
    page.wait_for_timeout(400)  # the tool bar fades in
    opacity = page.evaluate(
        "id => Number(getComputedStyle(document.getElementById(id).querySelector('.modebar')).opacity)", ids[0])
    assert left and landed, f"{name} #{ids[0]}: the slider is not in the page's Tab order"
    assert opacity == 1, f"{name} #{ids[0]}: the tool bar stays invisible (opacity {opacity}) while it has the focus"
