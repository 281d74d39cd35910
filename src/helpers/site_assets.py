"""The book's Sphinx extension: a self-contained, light site.

Every script a page needs is served by the site itself (:mod:`helpers.site_vendor` copies them
into ``_static/vendor`` before the build), and a first visit is kept light
(``tests/book/test_page_weight.py`` measures it):

- plotly.js is a bundle built for the site (:mod:`helpers.site_bundles`) with the trace types the
  book draws (:data:`helpers.site_bundles.PLOTLY_TRACE_TYPES`: scatter, bar, heatmap, box;
  1.21 MB instead of the full bundle's 4.8 MB or the smallest published one that has them,
  1.50 MB), loaded only by pages with a figure; the build warns about a figure whose trace type
  the bundle lacks; likewise d3 holds what BertViz calls (0.03 MB instead of 0.24 MB);
- math is typeset at build time (:mod:`helpers.site_math`), so a page with math needs no MathJax
  (1.2 MB) in the browser; Sphinx adds MathJax to every page whose toctree children have math,
  and this extension takes it out of the pages that have none left to typeset;
- pages load Font Awesome's core and the icons the site uses
  (:data:`helpers.site_vendor.FONTAWESOME_ICONS`) instead of the theme's ``fontawesome.js`` (all
  2,000 free icons, 1.5 MB), and the build warns about an icon that a page uses and the subset lacks;
  the theme's icon webfonts, which draw those icons until the script has run, are cut down to
  them when the build finishes (:func:`helpers.site_vendor.subset_theme_fonts`: the solid font,
  fetched by every page, 156 kB -> a few kB);
- the theme loads Sphinx's search index on every page for its search-as-you-type box; with that
  box off (the default) only the search page needs it; and Jupyter Book adds sphinx-design's
  stylesheet and script to every page, which only pages with its components (``sd-`` classes) use.

As a Sphinx extension (``sphinx.extra_extensions`` in ``_config.yml``) this module

- points Sphinx's ``mathjax_path`` and myst-nb's ``nb_ipywidgets_js`` at the vendored copies
  (their defaults are CDN URLs);
- adds plotly.js to the head of each page that holds a figure of :mod:`helpers.viz` (and to no
  other page);
- on pages with widgets, tells the widget manager where its fonts are and lets its MathJax 2
  call (``MathJax.Hub.Queue``) reach MathJax 3;
- drops sphinx-thebe's duplicated inline script (a "THEBE_JS_URL has already been declared"
  error on every page);
- gives the theme its default colour mode, ``"auto"`` (``html_context["default_mode"]``): without
  it, a first visit (nothing in local storage) logs "Got invalid theme mode: . Resetting to auto."
  as a console error;
- renders pages through :class:`PageTemplates` (Sphinx's ``template_bridge``), which typesets
  their math, swaps the theme's Font Awesome for the subset, and leaves out MathJax and the
  search scripts where they are not used;
- sets ``HELPERS_BOOK_BUILD=1``, inherited by the kernels that execute the chapters (see
  :mod:`helpers.viz.site`);
- warns (an error under ``-W``) when the vendored files are missing from the output folder.

How the figures use all this: ``book/figures.md``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from helpers.site_bundles import PLOTLY_BUNDLE, PLOTLY_JS_VERSION, PLOTLY_TRACE_TYPES, plotly_js_version
from helpers.site_math import MathRenderer, page_has_math, prerender_math
from helpers.site_vendor import (
    FONTAWESOME_ICONS_JS,
    FONTAWESOME_JS,
    MANIFEST,
    MATHJAX_JS,
    PLOTLY_JS,
    REQUIRE_JS,
    VENDOR,
    WIDGETS_JS,
    check_vendor,
    subset_theme_fonts,
    vendored_icons,
)

try:  # Sphinx is there when the book is built
    from sphinx.jinja2glue import BuiltinTemplateLoader
except ImportError:  # pragma: no cover (the package's run-time dependencies do not include Sphinx)
    BuiltinTemplateLoader = object  # type: ignore[assignment,misc]

__all__ = ["PageTemplates", "figure_specs", "figure_trace_types", "fontawesome_icons", "slim_page", "setup"]

# --- What a page holds: figures and their trace types, math, icons ------------------------------

_SPEC = "var spec = "


def figure_specs(html: str) -> list[dict[str, Any]]:
    """The Plotly figures of a built page, as :func:`helpers.viz.renderer.figure_html` wrote them.

    Args:
        html: A page's HTML (or its body).

    Returns:
        Each figure's ``{"data": ..., "layout": ..., "frames": ...}``, in page order.
    """
    decoder, specs = json.JSONDecoder(), []
    for match in re.finditer(re.escape(_SPEC), html):
        try:
            spec, _ = decoder.raw_decode(html, match.end())
        except json.JSONDecodeError:
            continue  # not a figure: e.g. the renderer's source, quoted on its code page
        if isinstance(spec, dict):
            specs.append(spec)
    return specs


def _restyled_types(args: Any) -> list[str]:
    """Trace types that a menu button or slider step sets (``restyle``/``update``: ``args[0]["type"]``)."""
    if not (isinstance(args, list) and args and isinstance(args[0], dict)):
        return []
    value = args[0].get("type")
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, str)]


def figure_trace_types(html: str) -> set[str]:
    """Every Plotly trace type that a built page draws.

    Args:
        html: A page's HTML (or its body).

    Returns:
        The ``type`` of every trace of every figure (``"scatter"`` where it is not given), of
        the traces of its animation frames, and any type that a menu button or slider step
        restyles a trace to.
    """
    types: set[str] = set()
    for spec in figure_specs(html):
        traces = list(spec.get("data") or [])
        for frame in spec.get("frames") or []:
            traces += [t for t in frame.get("data") or [] if "type" in t]
        types |= {t.get("type", "scatter") for t in traces}
        layout = spec.get("layout") or {}
        for menu in layout.get("updatemenus") or []:
            for button in menu.get("buttons") or []:
                if button.get("method") in ("restyle", "update"):
                    types.update(_restyled_types(button.get("args")))
        for slider in layout.get("sliders") or []:
            for step in slider.get("steps") or []:
                if step.get("method") in ("restyle", "update"):
                    types.update(_restyled_types(step.get("args")))
    return types


_FA_STYLES = {"fa": "solid", "fas": "solid", "fa-solid": "solid", "far": "regular", "fa-regular": "regular",
              "fab": "brands", "fa-brands": "brands"}
_FA_UTILITIES = re.compile(r"fa-(?:\d+x|2xs|xs|sm|lg|xl|2xl|fw|li|ul|border|inverse|spin|spin-pulse|spin-reverse|"
                           r"pulse|beat|beat-fade|bounce|fade|flip|shake|flip-horizontal|flip-vertical|flip-both|"
                           r"rotate-\d+|rotate-by|pull-left|pull-right|stack|stack-1x|stack-2x|width-auto|classic|"
                           r"sharp|solid|regular|brands|layers|layers-text|layers-counter)$")


def fontawesome_icons(html: str) -> set[tuple[str, str]]:
    """The Font Awesome icons that a page's markup asks for.

    Args:
        html: A page's HTML.

    Returns:
        ``(style, name)`` pairs, e.g. ``("solid", "bars")`` for ``<i class="fa-solid fa-bars">``:
        every ``fa-*`` class (other than Font Awesome's sizing and animation classes) of an
        element that also has a style class (``fa-solid``/``fas``, ``fa-regular``/``far``,
        ``fa-brands``/``fab``, or ``fa``).
    """
    icons = set()
    for classes in re.findall(r'class="([^"]*)"', html):
        tokens = classes.split()
        styles = [_FA_STYLES[t] for t in tokens if t in _FA_STYLES]
        if not styles:
            continue
        icons |= {(styles[-1], t[3:]) for t in tokens if t.startswith("fa-") and t not in _FA_STYLES
                  and not _FA_UTILITIES.match(t)}
    return icons


# --- Sphinx extension -----------------------------------------------------------------------------

def _config_inited(app: Any, config: Any) -> None:
    from helpers.viz.site import BOOK_BUILD_ENV

    os.environ[BOOK_BUILD_ENV] = "1"
    if "://" in str(config.mathjax_path):
        config.mathjax_path = MATHJAX_JS
    widgets_js = getattr(config, "nb_ipywidgets_js", None)
    if widgets_js is None or any("://" in key for key in widgets_js):
        # No crossorigin/integrity attributes: they would block the scripts under file://.
        # Unknown widget modules would load from data-jupyter-widgets-cdn: point it at the site
        # (nothing there: such a widget fails visibly instead of calling a CDN).
        config.nb_ipywidgets_js = {REQUIRE_JS: {},
                                   WIDGETS_JS: {"data-jupyter-widgets-cdn": "_static/vendor/jupyter-widgets/"}}
    # pydata-sphinx-theme writes `localStorage.mode || "{{ default_mode }}"` into <html data-mode>
    # before its script runs; with no default_mode, a first visit reads "" and logs "Got invalid
    # theme mode: . Resetting to auto." as a console error. "auto" is the theme's own fallback.
    context = dict(getattr(config, "html_context", None) or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context
    if not getattr(config, "template_bridge", None):
        config.template_bridge = f"{__name__}.PageTemplates"


def _builder_inited(app: Any) -> None:
    from sphinx.util import logging

    if app.builder.format != "html":
        return
    logger = logging.getLogger(__name__)
    vendor = Path(app.outdir) / "_static" / VENDOR
    problems = check_vendor(vendor)
    if problems:
        logger.warning(
            "the site's vendored scripts are missing (%s); run `python -m helpers.site_vendor %s` before "
            "`jupyter-book build`", "; ".join(problems[:3]), app.outdir, type="helpers", subtype="site_assets")
        return
    entries = {e["name"]: e for e in json.loads((vendor / MANIFEST).read_text())["packages"]}
    vendored = entries.get(PLOTLY_BUNDLE.name, {}).get("version")
    if vendored != plotly_js_version():
        logger.warning(
            "the site vendors plotly.js %s but the installed plotly package targets %s; run `python -m "
            "helpers.site_vendor %s`", vendored, plotly_js_version(), app.outdir, type="helpers", subtype="site_assets")
    if not isinstance(app.builder.templates, PageTemplates):
        logger.warning("pages are rendered by %s, not helpers.site_assets.PageTemplates: they load all of Font "
                       "Awesome and the search index", type(app.builder.templates).__name__,
                       type="helpers", subtype="site_assets")


_FONTAWESOME_TAG = re.compile(r'<script defer src="(?P<root>[^"]*)_static/scripts/fontawesome\.js(?:\?[^"]*)?">'
                              r"</script>")
_SEARCH_TAGS = re.compile(r'[ \t]*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|'
                          r'searchindex\.js)"></script>\n?')


def slim_page(html: str, pagename: str = "", search_as_you_type: bool = False, mathjax_path: str = MATHJAX_JS) -> str:
    """A rendered page with the heavy scripts it does not use swapped or left out.

    Args:
        html: The page as the theme rendered it (its math typeset by :func:`prerender_math`
            where that could be done).
        pagename: The page's name (``"search"`` for the search page).
        search_as_you_type: The theme's ``search_as_you_type`` option: when it is on, every page
            needs the search index.
        mathjax_path: Sphinx's ``mathjax_path`` (the MathJax script the page may load).

    Returns:
        The page with the theme's ``_static/scripts/fontawesome.js`` (every free icon, 1.5 MB)
        replaced by the site's icons (``icons.js``, :data:`FONTAWESOME_ICONS`) and Font
        Awesome's core; without MathJax and its configuration when nothing is left for it to
        typeset (:func:`page_has_math`: Sphinx adds it to a page whose toctree children have
        math, and to a page whose math was typeset at build time); on pages other than the
        search page and unless ``search_as_you_type``, without ``searchtools.js``,
        ``language_data.js`` and ``searchindex.js`` (which only search-as-you-type uses); and
        without sphinx-design's stylesheet and tab script (which Jupyter Book adds to every page)
        where no element has an ``sd-`` class.
    """
    html = _FONTAWESOME_TAG.sub(
        lambda m: f'<script defer src="{m["root"]}_static/{FONTAWESOME_ICONS_JS}"></script>\n'
                  f'<script defer src="{m["root"]}_static/{FONTAWESOME_JS}"></script>', html, count=1)
    if not page_has_math(html):
        html = re.sub(r'<script[^>]*\ssrc="[^"]*' + re.escape(mathjax_path) + r'(?:\?[^"]*)?"[^>]*></script>\n?',
                      "", html)
        html = _MATHJAX_CONFIG.sub("", html)
    if pagename != "search" and not search_as_you_type:
        html = _SEARCH_TAGS.sub("", html)
    if not _DESIGN_CLASS.search(html):
        html = _DESIGN_TAGS.sub("", html)
    return html


_DESIGN_CLASS = re.compile(r'class="(?:[^"]*\s)?sd-')
_DESIGN_TAGS = re.compile(r'[ \t]*<(?:link[^>]*href="[^"]*_static/sphinx-design\.min\.css[^"]*"[^>]*>|'
                          r'script[^>]*src="[^"]*_static/design-tabs\.js[^"]*"[^>]*></script>)\n?')
_MATHJAX_CONFIG = re.compile(r"<script>window\.MathJax = .*?</script>\n?", re.S)
_RENDERERS: dict[int, MathRenderer | None] = {}
"""The MathJax process of each build process (Sphinx writes pages in forked processes)."""


def _renderer(mathjax: Path, tex: dict[str, Any] | None) -> MathRenderer | None:
    from sphinx.util import logging

    if os.getpid() not in _RENDERERS:
        try:
            _RENDERERS[os.getpid()] = MathRenderer(mathjax, tex)
        except RuntimeError as error:
            logging.getLogger(__name__).info("math is left for MathJax to typeset in the browser: %s", error)
            _RENDERERS[os.getpid()] = None
    return _RENDERERS[os.getpid()]


class PageTemplates(BuiltinTemplateLoader):  # type: ignore[misc,valid-type]
    """Sphinx's template loader, with every rendered page's math typeset at build time
    (:func:`prerender_math`, when Node.js is there) and its scripts slimmed (:func:`slim_page`).

    Set as Sphinx's ``template_bridge`` by this extension (unless the book sets another). It
    warns about a TeX error in the math and about a Font Awesome icon that a page uses and
    :data:`FONTAWESOME_ICONS` lacks.
    """

    def init(self, builder: Any, theme: Any = None, dirs: list[str] | None = None) -> None:
        """Sphinx's ``TemplateBridge.init``; keeps the builder (for its output folder)."""
        super().init(builder, theme, dirs)
        self._outdir = Path(builder.outdir)
        config = builder.config
        self._mathjax_path = str(getattr(config, "mathjax_path", MATHJAX_JS))
        mathjax3 = getattr(config, "mathjax3_config", None)
        self._tex = mathjax3.get("tex") if isinstance(mathjax3, dict) else None

    def render(self, template: str, context: dict[str, Any]) -> str:
        """Renders ``template`` as Sphinx does, then :func:`slim_page`.

        Args:
            template: The template's name, e.g. ``"page.html"``.
            context: The page's template context.

        Returns:
            The page's HTML.
        """
        output = super().render(template, context)
        if not template.endswith(".html") or "pagename" not in context or "pathto" not in context:
            return output
        output = self._typeset(output, context)
        search_as_you_type = str(context.get("theme_search_as_you_type", False)).lower() == "true"
        output = slim_page(output, context["pagename"], search_as_you_type, self._mathjax_path)
        self._check_icons(output, context["pagename"])
        return output

    def _typeset(self, html: str, context: dict[str, Any]) -> str:
        """The page with its math typeset by :func:`prerender_math` (unchanged without Node.js)."""
        from sphinx.util import logging

        renderer = _renderer(self._outdir / "_static" / VENDOR / "mathjax", self._tex)
        if renderer is None:
            return html
        fonts = context["pathto"](f"_static/{VENDOR}/mathjax/output/chtml/fonts/woff-v2", 1)
        try:
            html, errors = prerender_math(html, renderer, fonts)
        except RuntimeError as error:  # the page keeps its TeX and MathJax typesets it in the browser
            logging.getLogger(__name__).warning("math left for the browser: %s", error,
                                                location=context["pagename"], type="helpers", subtype="math")
            _RENDERERS.pop(os.getpid(), None)  # a fresh MathJax process for the next page
            renderer.close()
            return html
        for error in errors:
            logging.getLogger(__name__).warning("MathJax: %s", error, location=context["pagename"],
                                                type="helpers", subtype="math")
        return html

    def _check_icons(self, html: str, pagename: str) -> None:
        from sphinx.util import logging

        vendor = self._outdir / "_static" / VENDOR
        if not (vendor / "fontawesome" / "icons.js").is_file():
            return  # reported by the builder-inited check
        missing = sorted(fontawesome_icons(html) - vendored_icons(vendor))
        if missing:
            logging.getLogger(__name__).warning(
                "the page uses Font Awesome icons that the site does not vendor: %s; add them to "
                "helpers.site_assets.FONTAWESOME_ICONS", ", ".join(f"{style} {name}" for style, name in missing),
                location=pagename, type="helpers", subtype="icons")


_WIDGETS_PRELUDE = """(function (assets) {
  // The widget manager's modules find their fonts next to their RequireJS module URL.
  var paths = {"@jupyter-widgets/html-manager/dist": assets};
  if (typeof window.require === "undefined") { window.require = {paths: paths}; }
  else if (window.require.config) { window.require.config({paths: paths}); }
  window.__jupyter_widgets_assets_path__ = assets + "/";
})(%s);
document.addEventListener("DOMContentLoaded", function () {
  var mathjax = window.MathJax;
  if (mathjax && !mathjax.Hub) {
    mathjax.Hub = {Queue: function (job) {
      var element = job[2];
      var ready = mathjax.startup && mathjax.startup.promise ? mathjax.startup.promise : Promise.resolve();
      ready.then(function () { return mathjax.typesetPromise ? mathjax.typesetPromise([element]) : null; });
    }};
  }
});"""


def _has_widgets(app: Any, pagename: str) -> bool:
    try:
        from myst_nb.sphinx_ import NbMetadataCollector

        return "ipywidgets_state" in NbMetadataCollector.get_js_files(app.env, pagename)
    except (ImportError, KeyError, AttributeError):
        return False


def _page_context(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    from helpers.viz.renderer import FIGURE_MARKER

    body = context.get("body", "")
    has_widgets = _has_widgets(app, pagename)
    # The figure's own markup (a page that shows this module's source quotes the marker, escaped).
    if f'class="plotly-graph-div {FIGURE_MARKER}"' in body:
        app.add_js_file(PLOTLY_JS, priority=200)  # before RequireJS (500), so plotly.js sets window.Plotly
        unknown = sorted(figure_trace_types(body) - PLOTLY_TRACE_TYPES)
        if unknown:
            from sphinx.util import logging

            logging.getLogger(__name__).warning(
                "a figure draws trace types that the site's plotly.js %s bundle lacks: %s; register them in "
                "tools/site-bundles/plotly.js and PLOTLY_TRACE_TYPES", PLOTLY_JS_VERSION, ", ".join(unknown),
                location=pagename, type="helpers", subtype="plotly_bundle")
    if has_widgets:
        # The widget manager looks for its fonts relative to its RequireJS module path, and
        # typesets with MathJax 2's MathJax.Hub.Queue: map both to what the site has.
        assets = context["pathto"](f"_static/{VENDOR}/jupyter-widgets", 1)
        app.add_js_file(None, body=_WIDGETS_PRELUDE % json.dumps(assets), priority=450)
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    # sphinx-thebe adds its inline configuration twice, and the second `const THEBE_JS_URL`
    # throws "Identifier has already been declared" on every page: keep one copy.
    seen: set[str] = set()
    unique = []
    for script in scripts:
        body_js = getattr(script, "attributes", {}).get("body") if not getattr(script, "filename", None) else None
        if body_js and body_js in seen:
            continue
        if body_js:
            seen.add(body_js)
        unique.append(script)
    scripts[:] = unique


def _subset_fonts(app: Any, exception: Exception | None) -> None:
    """The theme's icon fonts, copied into the site by now, cut down to the site's icons."""
    if exception is not None or app.builder.format != "html":
        return
    from sphinx.util import logging

    sizes = subset_theme_fonts(Path(app.outdir) / "_static")
    before, after = sum(b for b, _ in sizes.values()), sum(a for _, a in sizes.values())
    logging.getLogger(__name__).info("helpers.site_assets: %d icon fonts cut down, %.0f kB -> %.0f kB",
                                     len(sizes), before / 1e3, after / 1e3)


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point: see the module's docstring."""
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _subset_fonts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
