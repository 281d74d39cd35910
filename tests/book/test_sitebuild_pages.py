"""sitebuild.pages, sitebuild.typeset, sitebuild.fonts and sitebuild.icons (book/_ext/sitebuild) on small
pages, without a build: the rules that test_page_weight.py checks on the built site (what a page loads, the
math typeset at build time, the icon fonts and packs cut down to what the pages draw)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers.viz.site import FIGURE_MARKER
from sitebuild.bundles import PLOTLY_TRACE_TYPES
from sitebuild.fonts import subset_theme_fonts
from sitebuild.pages import figure_trace_types, fontawesome_icons, slim_page
from sitebuild.typeset import page_has_math, prerender_math

THEME_HEAD = """<head>
<script>window.MathJax = {"options": {"processHtmlClass": "tex2jax_process|mathjax_process|math|output_area"}}</script>
<script defer="defer" src="../_static/vendor/mathjax/tex-mml-chtml.js?v=cadf963e"></script>
  <script defer src="../_static/scripts/fontawesome.js?digest=55c26ed414f5f8a31ebb"></script>
    <script src="../_static/searchtools.js"></script>
    <script src="../_static/language_data.js"></script>
    <script src="../searchindex.js"></script>
<link rel="stylesheet" type="text/css" href="../_static/sphinx-design.min.css?v=6a604523" />
<script data-sd-tabs-storage-prefix="sphinx-design-tab-id-" src="../_static/design-tabs.js?v=fcb327ea"></script>
</head>"""


def scripts_of(html: str) -> list[str]:
    """The scripts and stylesheets a page loads (and a marker for MathJax's inline configuration)."""
    return (re.findall(r'<(?:script[^>]*src|link[^>]*href)="([^"?]*)', html)
            + (["(MathJax config)"] if "window.MathJax" in html else []))


def test_a_page_without_math_loads_no_mathjax_no_search_index_and_the_icon_subset() -> None:
    page = THEME_HEAD + '<body><p>No math here; <code>\\(x\\)</code> in code is not math.</p></body>'
    assert scripts_of(slim_page(page, "book/a")) == ["../_static/vendor/fontawesome/icons.js",
                                                      "../_static/vendor/fontawesome/fontawesome.min.js"]


def test_mathjax_stays_where_math_is_left_to_typeset_and_goes_where_it_was_typeset() -> None:
    tex = THEME_HEAD + '<body><span class="math notranslate nohighlight">\\(d_k\\)</span></body>'
    display = THEME_HEAD + '<body><div class="math notranslate nohighlight amsmath" id="e">\n\\[x\\]</div></body>'
    typeset = THEME_HEAD + ('<body><span class="math notranslate nohighlight"><mjx-container class="MathJax" '
                            'jax="CHTML"></mjx-container></span></body>')
    widgets = THEME_HEAD + '<body><script type="application/vnd.jupyter.widget-state+json">{}</script></body>'
    for page in (tex, display, widgets):
        assert "../_static/vendor/mathjax/tex-mml-chtml.js" in scripts_of(slim_page(page, "book/a"))
        assert "(MathJax config)" in scripts_of(slim_page(page, "book/a"))
    assert not [s for s in scripts_of(slim_page(typeset, "book/a")) if "mathjax" in s.lower()]


def test_the_search_index_stays_on_the_search_page_and_with_search_as_you_type() -> None:
    assert "../searchindex.js" in scripts_of(slim_page(THEME_HEAD, "search"))
    assert "../searchindex.js" in scripts_of(slim_page(THEME_HEAD, "book/a", search_as_you_type=True))
    assert "../searchindex.js" not in scripts_of(slim_page(THEME_HEAD, "book/a"))


def figure_page(*specs: dict[str, Any]) -> str:
    return "".join(f'<div class="plotly-graph-div {FIGURE_MARKER}"></div><script>(function () {{\n'
                   f'  var spec = {json.dumps(spec)};\n  var themes = {{}};\n}})();</script>' for spec in specs)


def test_trace_types_are_read_from_data_frames_and_restyling_controls() -> None:
    page = figure_page(
        {"data": [{"x": [1]}, {"type": "bar"}], "layout": {}},
        {"data": [{"type": "heatmap", "z": [[1]]}], "layout": {}, "frames": [{"data": [{"type": "contour"}]}]},
        {"data": [{"type": "scatter"}], "layout": {"updatemenus": [{"buttons": [
            {"method": "restyle", "args": [{"type": ["violin", "box"]}]},
            {"method": "relayout", "args": [{"xaxis.type": "log"}]}]}],
            "sliders": [{"steps": [{"method": "update", "args": [{"type": "histogram"}, {}]}]}]}})
    assert figure_trace_types(page) == {"scatter", "bar", "heatmap", "contour", "violin", "box", "histogram"}
    assert figure_trace_types(figure_page({"data": [{"type": "scatter3d"}], "layout": {}})) - PLOTLY_TRACE_TYPES \
        == {"scatter3d"}  # a 3-D trace: not in the cartesian bundle


def test_font_awesome_icons_are_read_with_their_style() -> None:
    page = ('<i class="fa-solid fa-bars fa-lg"></i><span class="theme-switch fas fa-sun fa-fw"></span>'
            '<i class="fab fa-github"></i><i class="fa-regular fa-file"></i><i class="not-an-icon fa-bars"></i>')
    assert fontawesome_icons(page) == {("solid", "bars"), ("solid", "sun"), ("brands", "github"), ("regular", "file")}


def test_sphinx_design_is_loaded_only_by_pages_with_its_components() -> None:
    with_tabs = THEME_HEAD + '<body><div class="sd-tab-set docutils"></div></body>'
    assert "../_static/sphinx-design.min.css" in scripts_of(slim_page(with_tabs, "book/a"))
    assert "../_static/design-tabs.js" in scripts_of(slim_page(with_tabs, "book/a"))
    plain = scripts_of(slim_page(THEME_HEAD + "<body><p>sd-card is only a word here</p></body>", "book/a"))
    assert not [url for url in plain if "design" in url]


class FakeMathJax:
    """Stands for :class:`sitebuild.typeset.MathRenderer` (no Node.js): "typesets" TeX as <m>."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, bool]]] = []

    def render(self, formulas: list[tuple[str, bool]]) -> tuple[list[str], str]:
        self.calls.append(formulas)
        return [f'<m display="{display}">{tex}</m>' for tex, display in formulas], "m {font: url(@FONTS@/x.woff)}"


def test_prerendering_replaces_the_tex_of_math_elements_and_quizzes_and_adds_the_stylesheet() -> None:
    questions = [{"question": "Is $q \\cdot k$ big? It costs \\$5.", "type": "multiple_choice",
                  "answers": [{"answer": "$$d_k$$", "correct": True, "feedback": "No math </b>here"}]}]
    page = ('<html><head><title>t</title></head><body>'
            '<span class="math notranslate nohighlight">\\(a &lt; b\\)</span> and '
            '<div class="math notranslate nohighlight" id="equation-x">\n<span class="eqno">(1)<a class="headerlink" '
            'href="#equation-x">#</a></span>\\[\n\\sqrt{d_k}\n\\]</div><code>\\(not math\\)</code>'
            '<script>var questionsAbC=' + json.dumps(questions).replace("</", "<\\/") + ';\nshow();</script>'
            '</body></html>')
    assert page_has_math(page)
    mathjax = FakeMathJax()
    typeset, errors = prerender_math(page, mathjax, "../fonts")
    assert mathjax.calls == [[("a < b", False), ("\n\\sqrt{d_k}\n", True), ("q \\cdot k", False), ("d_k", True)]]
    assert '<span class="math notranslate nohighlight"><m display="False">a < b</m></span>' in typeset
    assert '<span class="eqno">(1)<a class="headerlink" href="#equation-x">#</a></span><m display="True">' in typeset
    assert "<code>\\(not math\\)</code>" in typeset and errors == []
    assert '<style id="book-mathjax-chtml">m {font: url(../fonts/x.woff)}</style>\n</head>' in typeset
    data = typeset[typeset.index("var questionsAbC=") + len("var questionsAbC="):typeset.index(";\nshow()")]
    assert "</" not in data  # still safe inside its <script>
    shown = json.loads(data)
    assert shown[0]["question"] == 'Is <m display="False">q \\cdot k</m> big? It costs \\$5.'
    assert shown[0]["answers"][0]["answer"] == '<m display="True">d_k</m>'
    assert shown[0]["answers"][0]["feedback"] == "No math </b>here"
    assert not page_has_math(typeset)
    assert prerender_math("<html><head></head><body>no math</body></html>", mathjax, "f")[0].count("<style") == 0


def test_a_theme_icon_font_is_cut_to_the_icons_and_the_characters_the_stylesheets_draw(tmp_path: Path) -> None:
    import pydata_sphinx_theme
    from fontTools.ttLib import TTFont

    theme_fonts = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / "vendor"
                   / "fontawesome" / "webfonts")
    static = tmp_path / "_static"
    fonts = static / "vendor" / "fontawesome" / "webfonts"
    fonts.mkdir(parents=True)
    for suffix in (".woff2", ".ttf"):
        shutil.copy(theme_fonts / f"fa-solid-900{suffix}", fonts)
    (fonts.parent / "icons.js").write_text(  # icons.js's layout: one icon per line
        'bunker.defineIcons("fas", (function () {\n  var icons = {\n'
        '    "bars": [448, 512, ["navicon"], "f0c9", "M0 96"],\n    "sun": [512, 512, [], "f185", "M361"]\n  };\n')
    (static / "styles").mkdir()
    (static / "styles" / "theme.css").write_text(
        '/* a comment */.fa-bell:before,.fa-bell-o:before{content:"\\f0f3"}'  # Font Awesome's own table: not drawn
        '.toc:after{content:"\\f107";font-family:Font Awesome\\ 6 Free}'  # a theme rule, escaped
        ':root{--pst-icon-external-link:"\uf35d"}')  # a theme variable, the character itself
    whole = {suffix: TTFont(theme_fonts / f"fa-solid-900{suffix}").getBestCmap() for suffix in (".woff2", ".ttf")}
    assert {0xF0C9, 0xF185, 0xF107, 0xF35D, 0xF0F3} <= set(whole[".woff2"])
    sizes = subset_theme_fonts(static)
    assert set(sizes) == {"fa-solid-900.woff2", "fa-solid-900.ttf"}
    for suffix in (".woff2", ".ttf"):
        assert set(TTFont(fonts / f"fa-solid-900{suffix}").getBestCmap()) == {0xF0C9, 0xF185, 0xF107, 0xF35D}
        before, after = sizes[f"fa-solid-900{suffix}"]
        assert after < before / 10
    assert subset_theme_fonts(static)["fa-solid-900.woff2"][1] == sizes["fa-solid-900.woff2"][1]  # again: the same


def test_an_icon_pack_is_cut_down_to_the_icons_asked_for() -> None:
    from sitebuild.icons import _icon_pack

    pack = ('/*! licence */\n(function () {\n  var icons = {\n'
            '    "bars": [448, 512, ["navicon"], "f0c9", "M0 96z"],\n'
            '    "house": [576, 512, [63498, "home"], "f015", "M575 255z"],\n'
            '    "xmark": [384, 512, [215, "close"], "f00d", "M342 150z"]\n'
            "  };\n\n  bunker(function () {\n    defineIcons('fas', icons);\n  });\n}());\n")
    cut = _icon_pack(pack, ("house", "xmark"), "demo@1", "solid")
    assert cut.startswith("/*! licence */") and cut.endswith("defineIcons('fas', icons);\n  });\n}());\n")
    assert '"house": [576, 512, [63498, "home"]' in cut and '"xmark"' in cut and '"bars"' not in cut
    assert '"f015", "M575 255z"],\n    "xmark"' in cut and '"M342 150z"]\n  };' in cut  # still valid JavaScript
    with pytest.raises(RuntimeError, match=r"demo@1 has no solid icon named \['gear'\]"):
        _icon_pack(pack, ("gear",), "demo@1", "solid")


def test_mathjax_markup_loses_only_what_the_browser_does_not_need() -> None:
    from sitebuild.typeset import _compact

    markup = ('<mjx-container class="MathJax" jax="CHTML" style="position: relative;"><mjx-math class=" MJX-TEX" '
              'aria-hidden="true"><mjx-mi class="mjx-i"><mjx-c class="mjx-c1D451 TEX-I"></mjx-c></mjx-mi></mjx-math>'
              '<mjx-assistive-mml unselectable="on" display="block"><math xmlns="http://www.w3.org/1998/Math/MathML" '
              'display="block"><mrow data-mjx-texclass="ORD"><mi data-mjx-auto-op="false">d</mi></mrow></math>'
              '</mjx-assistive-mml></mjx-container>')
    assert _compact(markup) == (
        '<mjx-container class="MathJax" jax="CHTML"><mjx-math class=" MJX-TEX" aria-hidden="true"><mjx-mi '
        'class="mjx-i"><mjx-c class="mjx-c1D451 TEX-I"></mjx-c></mjx-mi></mjx-math><mjx-assistive-mml '
        'display="block"><math display="block"><mrow><mi>d</mi></mrow></math></mjx-assistive-mml></mjx-container>')
