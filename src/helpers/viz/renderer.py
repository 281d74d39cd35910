"""How the book's Plotly figures reach the reader: one mime bundle for the site and for JupyterLab.

Plotly's own renderers do not fit a self-contained static site: ``plotly_mimetype`` (the
default under a kernel since plotly 6.1) is dropped by myst-nb, ``notebook`` inlines 4.8 MB of
plotly.js into every page, and ``notebook_connected`` loads it from a public CDN. The ``"book"``
renderer registered here emits, for every figure,

- ``application/vnd.plotly.v1+json``: the figure as JSON, which JupyterLab's and VS Code's
  Plotly extensions draw live (they rank it above ``text/html``);
- ``text/html``: a ``<div>`` and a short script that calls ``Plotly.newPlot``. It relies on
  ``window.Plotly`` being loaded *once per page* from the site itself
  (:data:`helpers.viz.site.PLOTLY_JS_PATH`, added to the head of every page that holds a figure
  by the book's Sphinx extension, ``book/_ext/sitebuild``). No plotly.js, no MathJax, no CDN URL in
  the figure. The script also themes the figure for the site's light or dark mode and follows
  the reader's switch between them;
- ``text/plain``: a one-line description for consoles.

What a screen reader gets:
the plot's ``<div>`` is a labelled group (``role="group"`` inside a captioned ``<figure>``,
``role="figure"`` for a bare figure) named by the figure's title and described by the text
alternative, a sentence held in a visually hidden ``<p>`` next to the plot; the caption is the
``<figure>``'s own name. A figure shown without :func:`captioned` (no sentence from its author)
is described by :func:`describe_figure`, a sentence made from the figure itself: the kind of
chart, its axes, its series and its controls. Not ``role="img"``: an image's content is presentational, and these
figures hold controls (Plotly's tool bar, sliders, menus) that must stay reachable. The site's
script (``book/_static/book.js``) hides the plot area's SVG from screen readers once the sentence
stands in for it, and makes the sliders and menus focusable and operable from the keyboard.

While the book is built (``HELPERS_BOOK_BUILD=1``, set by the Sphinx extension) the Plotly JSON
is left out: myst-nb renders *every* mime type of a bundle while it parses a page and warns
(``mystnb.unknown_mime_type``, an error under ``-W``) on one it has no renderer for, even when
``text/html`` is there too; and the static page does not need it.

Colab renders neither the Plotly mime type nor a page-level plotly.js (each output is an
isolated iframe with no site ``_static``), so under Colab the default renderer is plotly's own
``"colab"`` renderer instead, which loads plotly.js from Plotly's CDN: Colab is online anyway.

Importing :mod:`helpers.viz` registers the renderer and the ``"book"`` template and makes both
the defaults (:func:`setup_book`). Chapter: ``book/figures.md`` ("How to read these figures").
"""

from __future__ import annotations

import html
import json
import re
import sys
import uuid
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer

from .site import FIGURE_MARKER, PLOTLY_JS_PATH, building_book
from .style import TEMPLATE_NAME, theme_patch

__all__ = ["PLOTLY_JS_PATH", "FIGURE_MARKER", "BookRenderer", "figure_html", "describe_figure", "mime_bundle",
           "CaptionedFigure", "captioned", "in_colab", "in_notebook", "setup_book"]

PLOTLY_MIME = "application/vnd.plotly.v1+json"
PANEL_STYLE = ("<style>html[data-theme=dark] .bd-content div.cell_output .text_html:has(.book-plotly, .book-bertviz)"
               "{background-color:transparent!important;color:inherit!important;padding:0!important}</style>")
"""Undoes, for the book's figures, the light panel the theme puts behind HTML outputs in dark mode."""

VISUALLY_HIDDEN = ("position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;"
                   "clip:rect(0,0,0,0);white-space:nowrap;border:0")
"""Inline style of the text alternative — read by screen readers, not drawn (as Bootstrap's ``visually-hidden``)."""

_CONFIG = {"responsive": True, "displaylogo": False, "scrollZoom": False,
           "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines"]}

_SCRIPT = """(function () {
  var gd = document.getElementById("%(id)s");
  var spec = %(spec)s;
  var themes = %(themes)s;
  if (typeof window.Plotly === "undefined") {
    gd.textContent = "This interactive figure needs plotly.js, which this page did not load. "
      + "Open the notebook in JupyterLab, or the page on the book's site.";
    return;
  }
  function isDark() {
    var data = document.documentElement.dataset;
    if (data.mode === "auto" && window.matchMedia) { return window.matchMedia("(prefers-color-scheme: dark)").matches; }
    return data.theme === "dark";
  }
  function assign(target, path, value) {
    var keys = path.replace(/\\[(\\d+)\\]/g, ".$1").split(".");
    for (var i = 0; i < keys.length - 1; i++) {
      if (target[keys[i]] === undefined) { target[keys[i]] = /^\\d+$/.test(keys[i + 1]) ? [] : {}; }
      target = target[keys[i]];
    }
    target[keys[keys.length - 1]] = value;
  }
  function wrap(text, width) {
    var lines = [], line = "";
    String(text).split(" ").forEach(function (word) {
      if (line && (line + " " + word).replace(/<[^>]+>/g, "").length > width) { lines.push(line); line = word; }
      else { line = line ? line + " " + word : word; }
    });
    lines.push(line);
    return lines;
  }
  if (window.bookFigures && window.bookFigures.fit) {
    window.bookFigures.fit(gd, spec);  // on the book's site: book.js wraps long text, lays phones out
  } else {
    // Narrow screens (phones): wrap titles beside the menu, thinner colour bars, smaller margins.
    var width = gd.getBoundingClientRect().width || document.documentElement.clientWidth;
    if (width < 600) {
      var layout = spec.layout, menu = (layout.updatemenus || []).length > 0;
      var chars = Math.max(16, Math.floor((width - (menu ? 150 : 24)) / 7.5)), extra = 0;
      var titled = [layout].concat((spec.frames || []).map(function (f) { return f.layout; }));
      titled.forEach(function (l) {
        if (l && l.title && l.title.text) {
          var lines = wrap(l.title.text, chars);
          extra = Math.max(extra, lines.length - 1);
          l.title.text = lines.join("<br>");
        }
      });
      assign(layout, "title.font.size", 13);
      ["yref", "y", "yanchor", "pad.t"].forEach(function (key, i) {
        assign(layout, "title." + key, ["container", 1, "top", 16][i]);
      });
      var margin = layout.margin || {};
      layout.margin = {l: 44, r: 6, b: margin.b === undefined ? 48 : margin.b, t: (margin.t || 64) + 20 * extra};
      layout.height = (layout.height || 450) + 20 * extra;
      gd.style.height = layout.height + "px";
      var bars = [layout.coloraxis && layout.coloraxis.colorbar]
        .concat(spec.data.map(function (t) { return t.colorbar; }));
      bars.forEach(function (bar) {
        if (bar) { bar.thickness = 8; assign(bar, "title.side", "top"); assign(bar, "title.font.size", 11); }
      });
      // Token axes: upright labels, all of them, in a smaller font; the axis title gives way.
      var x = layout.xaxis || {}, y = layout.yaxis || {};
      if (x.type === "category" && y.type === "category" && spec.data.length && spec.data[0].x) {
        var longest = Math.max.apply(null, spec.data[0].x.map(function (t) { return String(t).length; }));
        x.tickangle = -90; assign(x, "tickfont.size", 10); assign(y, "tickfont.size", 10);
        y.title = {text: ""};
        (layout.sliders || []).forEach(function (s) { assign(s, "pad.t", Math.round(longest * 6) + 44); });
      }
    }
  }
  var patch = themes[isDark() ? "dark" : "light"];
  for (var key in patch) { assign(spec.layout, key, patch[key]); }
  window.Plotly.newPlot(gd, spec).then(function () {
    if (window.bookFigures) { window.bookFigures.enhance(gd); }  // keyboard and screen-reader glue (book.js)
    var dark = isDark();
    new MutationObserver(function () {
      if (isDark() !== dark) { dark = isDark(); window.Plotly.relayout(gd, themes[dark ? "dark" : "light"]); }
    }).observe(document.documentElement, {attributes: true, attributeFilter: ["data-theme", "data-mode"]});
  });
})();"""


def _figure_dict(fig: go.Figure | dict[str, Any]) -> dict[str, Any]:
    if isinstance(fig, go.Figure):
        return fig.to_dict()
    if isinstance(fig, dict) and "data" in fig:
        return fig
    raise TypeError(f"fig must be a plotly.graph_objects.Figure or a figure dict, got {type(fig).__name__}")


def figure_html(
    fig: go.Figure | dict[str, Any], *, div_id: str | None = None, caption: str | None = None,
    alt: str | None = None
) -> str:
    """The ``text/html`` of a figure for the static site: a div and a ``Plotly.newPlot`` call.

    Args:
        fig: The figure (or its ``to_dict()``).
        div_id: The id of the figure's ``<div>``; a random one when ``None``.
        caption: The takeaway, shown under the figure in a ``<figcaption>`` (plain text).
        alt: The text alternative read by screen readers: what the figure shows, in a sentence
            (a visually hidden ``<p>`` that describes the plot, ``aria-describedby``); when
            ``None``, the sentence of :func:`describe_figure` (marked ``data-alt="generated"``).

    Returns:
        An HTML fragment with no ``<script src>``: plotly.js comes from the page. The plot's
        ``<div class="book-plotly">`` is named by the figure's title (``aria-label``; the text
        alternative when the figure has no title). With a caption, a
        ``<figure class="book-figure">`` holding the plot and its ``<figcaption>``.
    """
    fig_dict = _figure_dict(fig)
    div_id = div_id or f"fig-{uuid.uuid4().hex[:12]}"
    layout = fig_dict.get("layout", {})
    height = int(layout.get("height") or 450)
    spec = {"data": fig_dict.get("data", []), "layout": layout, "config": _CONFIG}
    if fig_dict.get("frames"):
        spec["frames"] = fig_dict["frames"]
    # "</" inside a <script> would end it early: JSON allows "<\/".
    spec_json = pio.to_json(spec, validate=False, remove_uids=True).replace("</", "<\\/")
    themes = json.dumps({"light": theme_patch(layout, dark=False), "dark": theme_patch(layout, dark=True)})
    title = _plain(((layout.get("title") or {}).get("text")) or "")
    generated = alt is None or not alt.strip()
    description = describe_figure(fig_dict) if generated else _plain(alt or "")
    label = html.escape(title or description)
    script = _SCRIPT % {"id": div_id, "spec": spec_json, "themes": themes}
    role = "group" if caption else "figure"  # inside a captioned <figure>, the plot is one group of it
    if description and title:
        described = f' aria-describedby="{div_id}-alt"'
        # the Chinese edition shows the same sentence in Chinese (book/_ext/editions_zh.py swaps it in)
        marker = (f' data-alt="generated" data-alt-zh="{html.escape(describe_figure(fig_dict, "zh"))}"'
                  if generated else "")
        alt_html = (f'<p id="{div_id}-alt" class="book-figure-alt"{marker} style="{VISUALLY_HIDDEN}">'
                    f'{html.escape(description)}</p>')
    else:
        described = alt_html = ""
    if generated and description and not title:  # named by the generated sentence: the Chinese one beside it
        described += f' data-label-zh="{html.escape(describe_figure(fig_dict, "zh"))}"'
    plot = (f'<div class="book-plotly" role="{role}" aria-label="{label}"{described}>{alt_html}'
            f'<div id="{div_id}" class="plotly-graph-div {FIGURE_MARKER}" '
            f'style="width:100%;height:{height}px;"></div>\n'
            f'<script type="text/javascript">\n{script}\n</script></div>')
    if caption is None:
        return PANEL_STYLE + plot
    return (f'{PANEL_STYLE}<figure class="book-figure">{plot}'
            f'<figcaption>{html.escape(_plain(caption))}</figcaption></figure>')


_KINDS = {"scatter": "line chart", "bar": "bar chart", "heatmap": "heatmap", "box": "box plot",
          "violin": "violin plot", "histogram": "histogram", "contour": "contour plot", "pie": "pie chart",
          "image": "image"}


def _text(value: Any) -> str:
    """Plain text of a Plotly title (a string, or a dict with ``text``), HTML tags removed."""
    if isinstance(value, dict):
        value = value.get("text")
    return " ".join(re.sub(r"<[^>]+>", " ", str(value or "")).split())


def _listing(names: list[str], most: int = 5, language: str = "en") -> str:
    more = (f"另 {len(names) - most} 个" if language == "zh" else f"{len(names) - most} more")
    names = names[:most] + ([more] if len(names) > most else [])
    if len(names) == 1:
        return names[0]
    if language == "zh":
        return "、".join(names[:-1]) + "和" + names[-1]
    return ", ".join(names[:-1]) + " and " + names[-1]


_KINDS_ZH = {"line chart": "折线图", "bar chart": "柱状图", "heatmap": "热图", "box plot": "箱线图",
             "violin plot": "小提琴图", "histogram": "直方图", "contour plot": "等高线图", "pie chart": "饼图",
             "image": "图像", "scatter plot": "散点图", "chart": "图"}
"""The chart kinds of :func:`describe_figure` in Chinese."""


def describe_figure(fig: go.Figure | dict[str, Any], language: str = "en") -> str:
    """A sentence that says what a figure shows, made from the figure: for a figure whose author
    gave no text alternative (:func:`captioned` asks for one).

    It names the kind of chart (line chart, bar chart, heatmap...), its axes, its named series and
    the controls that change it (each slider's name and range, each menu's choices), e.g. "Line
    chart of accuracy against sequence length, with 2 series: GRU and GRU + attention; a slider
    over seed (3 steps, 0 to 2)."

    Args:
        fig: The figure (or its ``to_dict()``).
        language: ``"en"`` or ``"zh"``: the sentence's language (the axes, series and controls keep
            the figure's own words, as its title does).

    Returns:
        One sentence, ending with a full stop.
    """
    if language not in ("en", "zh"):
        raise ValueError(f"language must be 'en' or 'zh', got {language!r}")
    zh = language == "zh"
    fig_dict = _figure_dict(fig)
    layout, traces = fig_dict.get("layout", {}), fig_dict.get("data", [])
    types = []
    for trace in traces:
        kind = trace.get("type", "scatter")
        if kind == "scatter" and "lines" not in str(trace.get("mode", "lines")):
            kind = "scatter plot"
        types.append(_KINDS.get(kind, kind if kind == "scatter plot" else "chart"))
    kinds = list(dict.fromkeys(types)) or ["chart"]
    if zh:
        kinds_zh = [_KINDS_ZH[k] for k in kinds]
        what = kinds_zh[0] if len(kinds_zh) == 1 else f"{'、'.join(kinds_zh[:-1])}和{kinds_zh[-1]}"
    else:
        what = kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} and {kinds[-1]}"
    panels = len({(t.get("xaxis", "x"), t.get("yaxis", "y")) for t in traces})
    if zh:
        sentence = what + (f"，分 {panels} 个面板" if panels > 1 else "")
    else:
        sentence = what[0].upper() + what[1:] + (f" in {panels} panels" if panels > 1 else "")
    x, y = _text((layout.get("xaxis") or {}).get("title")), _text((layout.get("yaxis") or {}).get("title"))
    if "heatmap" in kinds and x and y:
        bars = [(layout.get("coloraxis") or {}).get("colorbar")] + [t.get("colorbar") for t in traces]
        value = next((_text(bar.get("title")) for bar in bars if bar and _text(bar.get("title"))), "values")
        sentence += f"，显示 {value}：行是 {y}，列是 {x}" if zh else f" of {value}, {y} in rows and {x} in columns"
    elif x and y:
        sentence += f"，纵轴是 {y}，横轴是 {x}" if zh else f" of {y} against {x}"
    elif y or x:
        sentence += f"，显示 {y or x}" if zh else f" of {y or x}"
    names = list(dict.fromkeys(_text(t.get("name")) for t in traces if _text(t.get("name"))))
    if len(names) > 1:
        sentence += (f"，含 {len(names)} 个系列：{_listing(names, language=language)}" if zh
                     else f", with {len(names)} series: {_listing(names)}")
    controls = []
    for slider in layout.get("sliders") or []:
        steps = [_text(step.get("label", step.get("value", ""))) for step in slider.get("steps") or []]
        prefix = _text((slider.get("currentvalue") or {}).get("prefix")).rstrip(":= ")
        if steps and zh:
            controls.append(f"一个调节 {prefix or '步骤'} 的滑块（{len(steps)} 步，从 {steps[0]} 到 {steps[-1]}）")
        elif steps:
            controls.append(f"a slider over {prefix or 'steps'} ({len(steps)} steps, {steps[0]} to {steps[-1]})")
    for menu in layout.get("updatemenus") or []:
        labels = [_text(button.get("label")) for button in menu.get("buttons") or []]
        if labels and zh:
            controls.append(f"一个有 {len(labels)} 个选项的菜单（{_listing(labels, 3, language)}）")
        elif labels:
            controls.append(f"a menu of {len(labels)} choices ({_listing(labels, 3)})")
    if controls:
        sentence += ("；" + "，以及".join(controls)) if zh else ("; " + " and ".join(controls))
    return sentence + ("。" if zh else ".")


def _plain(text: str) -> str:
    for tag in ("<br>", "<b>", "</b>", "<i>", "</i>", "<sub>", "</sub>", "<sup>", "</sup>"):
        text = text.replace(tag, " " if tag == "<br>" else "")
    return " ".join(text.split())


def mime_bundle(fig: go.Figure | dict[str, Any]) -> dict[str, Any]:
    """Everything a front end may need to show a figure, best first.

    Args:
        fig: The figure (or its ``to_dict()``).

    Returns:
        ``{"text/html": ..., "text/plain": ..., "application/vnd.plotly.v1+json": ...}``; the
        Plotly JSON is left out while the book is built (:func:`helpers.viz.building_book`).
    """
    fig_dict = _figure_dict(fig)
    title = ((fig_dict.get("layout", {}).get("title") or {}).get("text")) or "untitled"
    bundle: dict[str, Any] = {"text/html": figure_html(fig_dict), "text/plain": f"<Plotly figure: {_plain(title)}>"}
    if not building_book():
        bundle[PLOTLY_MIME] = json.loads(pio.to_json({**fig_dict, "config": _CONFIG}, validate=False))
    return bundle


class CaptionedFigure:
    """A figure with the sentence that states its takeaway and a text alternative.

    Shown last in a cell (or with ``display``), it is one ``<figure>`` with a ``<figcaption>``
    on the book's site, and the figure followed by its caption in JupyterLab and Colab. The
    text alternative is what a screen reader announces for the plot (its description, under the
    figure's title).
    Build it with :func:`captioned`.
    """

    def __init__(self, fig: Any, caption: str, alt: str) -> None:
        self.fig, self.caption, self.alt = fig, caption, alt

    def _site_html(self) -> str:
        if isinstance(self.fig, go.Figure):
            return figure_html(self.fig, caption=self.caption, alt=self.alt)
        # An HTML view (BertViz): the same <figure>, the view a group labelled by the text
        # alternative (not role="img": the view holds a menu that must stay reachable).
        return (f'<figure class="book-figure"><div role="group" aria-label="{html.escape(_plain(self.alt))}">'
                f'{self.fig._repr_html_()}</div><figcaption>{html.escape(_plain(self.caption))}</figcaption></figure>')

    def _ipython_display_(self) -> None:
        from IPython.display import Markdown, display

        if building_book():  # one output: the semantic <figure> of the static site
            text = f"<figure: {_plain(self.alt)}>"
            display({"text/html": self._site_html(), "text/plain": text}, raw=True)
        else:  # a live front end draws the figure its own way; the caption follows as text
            display(self.fig)
            display(Markdown(f"**Figure.** {self.caption}"))

    def __repr__(self) -> str:
        return f"<captioned figure: {self.caption}>"


def captioned(fig: Any, caption: str, *, alt: str) -> CaptionedFigure:
    """A figure with its takeaway as a caption and a text alternative, for the chapters.

    Every figure of a chapter states its takeaway in one sentence under it and carries a text
    alternative that says what it shows (DESIGN, "Anatomy of a chapter"); the browser tests
    check both on the built site.

    Args:
        fig: The Plotly figure, or an HTML view such as :func:`helpers.viz.head_view`'s.
        caption: One sentence: what the reader should take from the figure.
        alt: What the figure shows, for a reader who cannot see it (axes, curves, the trend).

    Returns:
        A :class:`CaptionedFigure`; leave it last in a cell.

    Raises:
        TypeError: ``fig`` is neither a Plotly figure nor an object with ``_repr_html_``.
        ValueError: ``caption`` or ``alt`` is empty.
    """
    if not isinstance(fig, go.Figure) and not callable(getattr(fig, "_repr_html_", None)):
        raise TypeError(f"fig must be a plotly.graph_objects.Figure or an HTML view, got {type(fig).__name__}")
    for name, text in (("caption", caption), ("alt", alt)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{name} must be a non-empty sentence, got {text!r}")
    return CaptionedFigure(fig, caption.strip(), alt.strip())


class BookRenderer(MimetypeRenderer):
    """The ``"book"`` Plotly renderer: :func:`mime_bundle` for every figure shown."""

    def to_mimebundle(self, fig_dict: dict[str, Any]) -> dict[str, Any]:
        """Called by ``plotly.io.show`` (and so by a figure left last in a cell)."""
        return mime_bundle(fig_dict)


def in_colab() -> bool:
    """Whether the code runs in a Google Colab kernel."""
    return "google.colab" in sys.modules


def in_notebook() -> bool:
    """Whether the code runs under IPython (a notebook kernel), where mime bundles are shown."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def setup_book() -> str:
    """Registers the ``"book"`` renderer and makes it (or ``"colab"`` on Colab) the default.

    Outside IPython (a plain script) the default renderer is left as it is: a mime bundle has
    nowhere to go there, and Plotly's own default (a browser tab) is the useful one. Also
    makes the ``"book"`` template the default, so figures made with ``plotly.express`` in a
    chapter share the look of :mod:`helpers.viz`'s own figures.

    Returns:
        The name of the default renderer now in use.
    """
    pio.renderers["book"] = BookRenderer()
    pio.templates.default = TEMPLATE_NAME
    if in_colab():
        pio.renderers.default = "colab"
    elif in_notebook():
        pio.renderers.default = "book"
    return pio.renderers.default
