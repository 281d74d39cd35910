"""How the book's Plotly figures reach the reader: one mime bundle for the site and for JupyterLab.

Plotly's own renderers do not fit a self-contained static site: ``plotly_mimetype`` (the
default under a kernel since plotly 6.1) is dropped by myst-nb, ``notebook`` inlines 4.8 MB of
plotly.js into every page, and ``notebook_connected`` loads it from a public CDN. The ``"book"``
renderer registered here emits, for every figure,

- ``application/vnd.plotly.v1+json``: the figure as JSON, which JupyterLab's and VS Code's
  Plotly extensions draw live (they rank it above ``text/html``);
- ``text/html``: a ``<div>`` and a short script that calls ``Plotly.newPlot``. It relies on
  ``window.Plotly`` being loaded *once per page* from the site itself
  (``_static/vendor/plotly/plotly.min.js``, added to the head of every page that holds a figure
  by the Sphinx extension :mod:`helpers.site_assets`). No plotly.js, no MathJax, no CDN URL in
  the figure. The script also themes the figure for the site's light or dark mode and follows
  the reader's switch between them;
- ``text/plain``: a one-line description for consoles.

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
import sys
import uuid
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer

from .site import building_book
from .style import TEMPLATE_NAME, theme_patch

__all__ = ["PLOTLY_JS_PATH", "FIGURE_MARKER", "BookRenderer", "figure_html", "mime_bundle",
           "CaptionedFigure", "captioned", "in_colab", "in_notebook", "setup_book"]

PLOTLY_MIME = "application/vnd.plotly.v1+json"
PLOTLY_JS_PATH = "_static/vendor/plotly/plotly.min.js"
"""Where the site serves plotly.js, relative to the site's root."""

FIGURE_MARKER = "book-plotly-figure"
"""CSS class of every figure's ``<div>``; the Sphinx extension looks for it to load plotly.js."""

PANEL_STYLE = ("<style>html[data-theme=dark] .bd-content div.cell_output .text_html:has(.book-plotly, .book-bertviz)"
               "{background-color:transparent!important;color:inherit!important;padding:0!important}</style>")
"""Undoes, for the book's figures, the light panel the theme puts behind HTML outputs in dark mode."""

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
  var patch = themes[isDark() ? "dark" : "light"];
  for (var key in patch) { assign(spec.layout, key, patch[key]); }
  window.Plotly.newPlot(gd, spec).then(function () {
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
        alt: The text alternative read by screen readers (the figure's ``aria-label``); the
            figure's title when ``None``.

    Returns:
        An HTML fragment with no ``<script src>``: plotly.js comes from the page. With a
        caption, a ``<figure class="book-figure">`` holding the plot and its ``<figcaption>``.
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
    title = ((layout.get("title") or {}).get("text")) or "Interactive figure"
    label = html.escape(_plain(alt if alt is not None else title))
    script = _SCRIPT % {"id": div_id, "spec": spec_json, "themes": themes}
    plot = (f'<div class="book-plotly" role="{"img" if caption else "figure"}" aria-label="{label}">'
            f'<div id="{div_id}" class="plotly-graph-div {FIGURE_MARKER}" '
            f'style="width:100%;height:{height}px;"></div>\n'
            f'<script type="text/javascript">\n{script}\n</script></div>')
    if caption is None:
        return PANEL_STYLE + plot
    return (f'{PANEL_STYLE}<figure class="book-figure">{plot}'
            f'<figcaption>{html.escape(_plain(caption))}</figcaption></figure>')


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
    text alternative is what a screen reader announces for the plot (its ``aria-label``).
    Build it with :func:`captioned`.
    """

    def __init__(self, fig: Any, caption: str, alt: str) -> None:
        self.fig, self.caption, self.alt = fig, caption, alt

    def _site_html(self) -> str:
        if isinstance(self.fig, go.Figure):
            return figure_html(self.fig, caption=self.caption, alt=self.alt)
        # An HTML view (BertViz): the same <figure>, the view labelled by the text alternative.
        return (f'<figure class="book-figure"><div role="img" aria-label="{html.escape(_plain(self.alt))}">'
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
