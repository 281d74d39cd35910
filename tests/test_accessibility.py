"""Accessibility of the figures, without a browser: the palette (Okabe-Ito, readable on both themes,
distinct in simulated colour-blind vision), the theme's colours for text and controls, and the
markup that gives every figure a name and a sentence of what it shows. The browser checks of the
built site (axe-core on every page, the keyboard) are in ``tests/book/test_accessibility_browser.py``.
"""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from helpers import viz
from helpers.viz.renderer import describe_figure, figure_html
from helpers.viz.style import NEUTRAL, PALETTE, book_template, contrast_ratio, theme_patch, to_rgb

OKABE_ITO = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"}
"""Okabe and Ito (2008), "Color Universal Design": the eight colours, black and yellow included."""
LIGHT_PAGE, DARK_PAGE = "#ffffff", "#14181e"
"""The theme's page backgrounds (pydata-sphinx-theme's --pst-color-background); figures are transparent on them."""

# Colour-vision deficiencies at full severity (Machado, Oliveira and Fernandes, 2009), on linear RGB.
CVD = {
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}
PLOTLY_DEFAULT = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3")


def _lab(linear: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a linear-RGB colour."""
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = to_xyz @ np.clip(linear, 0, 1)
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def closest_pair_seen_with(colours: tuple[str, ...], deficiency: str) -> float:
    """The smallest CIELAB distance (Delta E 1976) between two of ``colours`` as seen with ``deficiency``."""
    srgb = np.array([to_rgb(c) for c in colours]) / 255
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    seen = [_lab(np.array(CVD[deficiency]) @ c) for c in linear]
    return min(float(np.linalg.norm(seen[i] - seen[j])) for i in range(len(seen)) for j in range(i + 1, len(seen)))


def test_the_palette_is_okabe_ito_and_the_template_draws_with_it() -> None:
    assert set(PALETTE) - {NEUTRAL} <= OKABE_ITO and len(set(PALETTE)) == len(PALETTE) == 7
    assert list(book_template().layout.colorway) == list(PALETTE)
    assert to_rgb(NEUTRAL)[0] == to_rgb(NEUTRAL)[1] == to_rgb(NEUTRAL)[2]  # a grey: no hue to confuse


def test_the_first_four_colours_and_the_grey_read_at_3_to_1_on_both_themes() -> None:
    """WCAG 1.4.11 (graphical objects) against the white page and the dark theme's page."""
    ratios = {c: (contrast_ratio(c, LIGHT_PAGE), contrast_ratio(c, DARK_PAGE)) for c in PALETTE[:4] + (NEUTRAL,)}
    assert all(min(pair) >= 3.0 for pair in ratios.values()), ratios
    assert contrast_ratio("#F0E442", LIGHT_PAGE) < 1.5  # Okabe-Ito's yellow, left out: unreadable on white


@pytest.mark.parametrize("deficiency", list(CVD))
def test_the_palette_stays_distinct_in_simulated_colour_blind_vision(deficiency: str) -> None:
    """The palette's six hues, seen with protanopia, deuteranopia or tritanopia, stay at least 15
    CIELAB units apart pair by pair; Plotly's default sequence does not (its blue and purple fall
    to 1.6 apart with protanopia)."""
    hues = tuple(c for c in PALETTE if c != NEUTRAL)
    assert closest_pair_seen_with(hues, deficiency) >= 15
    if deficiency == "protanopia":
        assert closest_pair_seen_with(PLOTLY_DEFAULT, deficiency) < 5


@pytest.mark.parametrize("dark,page", [(False, LIGHT_PAGE), (True, DARK_PAGE)])
def test_figure_text_and_controls_read_on_the_page_in_both_themes(dark: bool, page: str) -> None:
    """The theme patch's text colour at 4.5:1 or more on the page and on a control's fill; the
    controls' borders, the slider's grip and the tool bar's icons at 3:1 or more (WCAG 1.4.3, 1.4.11)."""
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    fig.update_layout(sliders=[dict(steps=[dict(method="skip", label="a"), dict(method="skip", label="b")])],
                      updatemenus=[dict(buttons=[dict(method="skip", label="a")])])
    patch = theme_patch(fig, dark=dark)
    assert contrast_ratio(patch["font.color"], page) >= 4.5
    assert contrast_ratio(patch["updatemenus[0].font.color"], patch["updatemenus[0].bgcolor"]) >= 4.5
    for key in ("sliders[0].bordercolor", "updatemenus[0].bordercolor", "modebar.color", "modebar.activecolor"):
        assert contrast_ratio(patch[key], page) >= 3.0, (key, patch[key])


def test_a_captioned_figure_is_a_group_named_by_its_title_and_described_by_its_sentence() -> None:
    fig = viz.line_plot([1, 2, 3], {"loss": [3.0, 2.0, 1.0]}, title="Loss <b>falls</b>")
    page = figure_html(fig, div_id="fig-a", caption="It falls.", alt="A line falling from 3 to 1 & ending there.")
    assert 'role="img"' not in page  # an image's content is presentational: no controls would be reachable
    assert ('<div class="book-plotly" role="group" aria-label="Loss falls" aria-describedby="fig-a-alt">'
            '<p id="fig-a-alt" class="book-figure-alt" style="position:absolute;') in page
    assert ">A line falling from 3 to 1 &amp; ending there.</p>" in page
    assert "<figcaption>It falls.</figcaption></figure>" in page
    assert "window.bookFigures.enhance(gd)" in page  # the site's keyboard glue runs once the plot is drawn


def test_a_figure_without_a_text_alternative_gets_a_generated_sentence() -> None:
    fig = viz.line_plot([1, 2, 3], {"GRU": [0.9, 0.5, 0.2], "GRU + attention": [1.0, 0.9, 0.9]},
                        x_title="length", y_title="accuracy", title="Accuracy")
    page = figure_html(fig, div_id="fig-b")
    sentence = "Line chart of accuracy against length, with 2 series: GRU and GRU + attention."
    assert ('role="figure" aria-label="Accuracy" aria-describedby="fig-b-alt">'
            '<p id="fig-b-alt" class="book-figure-alt" data-alt="generated"') in page
    assert f">{sentence}</p>" in page


def test_describe_figure_names_the_chart_its_axes_its_series_and_its_controls() -> None:
    weights = torch.softmax(torch.randn(2, 5, 5), dim=-1)
    heat = viz.attention_heatmap(weights[0], title="w")
    assert describe_figure(heat) == "Heatmap of weight, query (attending) in rows and key (attended to) in columns."
    steps = [dict(method="restyle", label=f"{v}", args=[{"y": [[v, v]]}]) for v in (1, 2, 4)]
    fig = go.Figure([go.Bar(x=["a", "b"], y=[1, 2], name="one"), go.Bar(x=["a", "b"], y=[2, 1], name="two")])
    fig.update_layout(xaxis_title="key", yaxis_title="score",
                      sliders=[dict(steps=steps, currentvalue=dict(prefix="d_k = "))],
                      updatemenus=[dict(buttons=[dict(method="skip", label=f"head {h}") for h in range(4)])])
    assert describe_figure(fig) == ("Bar chart of score against key, with 2 series: one and two; a slider over d_k "
                                    "(3 steps, 1 to 4) and a menu of 4 choices (head 0, head 1, head 2 and 1 more).")
    assert describe_figure(go.Figure()) == "Chart."
    # the Chinese edition's sentence: the same facts, the figure's own words (axes, series, controls) kept
    assert describe_figure(heat, "zh") == "热图，显示 weight：行是 query (attending)，列是 key (attended to)。"
    assert describe_figure(fig, "zh") == ("柱状图，纵轴是 score，横轴是 key，含 2 个系列：one和two；"
                                          "一个调节 d_k 的滑块（3 步，从 1 到 4），"
                                          "以及一个有 4 个选项的菜单（head 0、head 1、head 2和另 1 个）。")
    assert describe_figure(go.Figure(), "zh") == "图。"
    with pytest.raises(ValueError, match="language"):
        describe_figure(fig, "fr")
    html = figure_html(fig)  # untitled, no text alternative: named by the generated sentence, its Chinese beside it
    assert 'aria-label="Bar chart of score against key' in html and 'data-label-zh="柱状图，纵轴是 score' in html
    html = figure_html(fig.update_layout(title="t"))  # titled: the sentence describes it, in both languages
    assert 'data-alt="generated"' in html and 'data-alt-zh="柱状图，纵轴是 score' in html


def test_an_html_view_in_a_figure_is_a_group_named_by_its_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    """BertViz's views hold a menu: a group (not an image), named by the text alternative."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import HTML
    from IPython.utils.capture import capture_output

    from helpers.viz.site import BOOK_BUILD_ENV

    InteractiveShell.instance()
    monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    with capture_output() as site:
        viz.captioned(HTML("<select><option>0</option></select>"), "Heads differ.",
                      alt="Lines from each token to the tokens it attends to.")._ipython_display_()
    page = site.outputs[0].data["text/html"]
    assert re.match(r'<figure class="book-figure"><div role="group" aria-label="Lines from each token', page)


def test_to_rgb_rejects_what_it_cannot_read() -> None:
    assert to_rgb("#0072b2") == to_rgb("rgb(0, 114, 178)") == to_rgb("rgba(0,114,178,0.5)") == (0, 114, 178)
    with pytest.raises(ValueError, match="colour must be"):
        to_rgb("blue")
