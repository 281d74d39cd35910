"""The book's Sphinx extension: a self-contained, light site.

Every script a page needs is served by the site itself (:mod:`sitebuild.vendor` copies them
into ``_static/vendor`` before the build), and a first visit is kept light
(``tests/book/test_page_weight.py`` measures it):

- plotly.js is a bundle built for the site (:mod:`sitebuild.bundles`) with the trace types the
  book draws (:data:`sitebuild.bundles.PLOTLY_TRACE_TYPES`: scatter, bar, heatmap, box;
  1.21 MB instead of the full bundle's 4.8 MB or the smallest published one that has them,
  1.50 MB), loaded only by pages with a figure; the build warns about a figure whose trace type
  the bundle lacks; likewise d3 holds what BertViz calls (0.03 MB instead of 0.24 MB);
- math is typeset at build time (:mod:`sitebuild.typeset`), so a page with math needs no MathJax
  (1.2 MB) in the browser; Sphinx adds MathJax to every page whose toctree children have math,
  and this extension takes it out of the pages that have none left to typeset;
- pages load Font Awesome's core and the icons the site uses
  (:data:`sitebuild.icons.FONTAWESOME_ICONS`) instead of the theme's ``fontawesome.js`` (all
  2,000 free icons, 1.5 MB), and the build warns about an icon that a page uses and the subset lacks;
  the theme's icon webfonts, which draw those icons until the script has run, are cut down to
  them when the build finishes (:func:`sitebuild.fonts.subset_theme_fonts`: the solid font,
  fetched by every page, 156 kB -> a few kB);
- the theme loads Sphinx's search index on every page for its search-as-you-type box; with that
  box off (the default) only the search page needs it; and Jupyter Book adds sphinx-design's
  stylesheet and script to every page, which only pages with its components (``sd-`` classes) use.

As a Sphinx extension (``sitebuild``, in ``sphinx.local_extensions`` of ``_config.yml``: the
package :mod:`sitebuild` whose ``setup`` is this module's) it

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
- renders pages through :class:`sitebuild.templates.PageTemplates` (Sphinx's ``template_bridge``),
  which typesets their math, swaps the theme's Font Awesome for the subset, and leaves out MathJax and the
  search scripts where they are not used;
- sets ``HELPERS_BOOK_BUILD=1``, inherited by the kernels that execute the chapters (see
  :mod:`helpers.viz.site`);
- warns (an error under ``-W``) when the vendored files are missing from the output folder.

How the figures use all this: ``book/figures.md``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sphinx.util import logging

from helpers.viz.site import BOOK_BUILD_ENV, FIGURE_MARKER

from .bundles import PLOTLY_BUNDLE, PLOTLY_JS_VERSION, PLOTLY_TRACE_TYPES, plotly_js_version
from .fonts import subset_theme_fonts
from .pages import figure_trace_types
from .paths import MANIFEST, MATHJAX_JS, PLOTLY_JS, REQUIRE_JS, STATIC, VENDOR, WIDGETS_JS
from .templates import PageTemplates
from .vendor import check_vendor

__all__ = ["setup"]


def _config_inited(app: Any, config: Any) -> None:
    os.environ[BOOK_BUILD_ENV] = "1"
    if "://" in str(config.mathjax_path):
        config.mathjax_path = MATHJAX_JS
    widgets_js = getattr(config, "nb_ipywidgets_js", None)
    if widgets_js is None or any("://" in key for key in widgets_js):
        # No crossorigin/integrity attributes: they would block the scripts under file://.
        # Unknown widget modules would load from data-jupyter-widgets-cdn: point it at the site
        # (nothing there: such a widget fails visibly instead of calling a CDN).
        config.nb_ipywidgets_js = {REQUIRE_JS: {},
                                   WIDGETS_JS: {"data-jupyter-widgets-cdn": f"{STATIC}/{VENDOR}/jupyter-widgets/"}}
    # pydata-sphinx-theme writes `localStorage.mode || "{{ default_mode }}"` into <html data-mode>
    # before its script runs; with no default_mode, a first visit reads "" and logs "Got invalid
    # theme mode: . Resetting to auto." as a console error. "auto" is the theme's own fallback.
    context = dict(getattr(config, "html_context", None) or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context
    if not getattr(config, "template_bridge", None):
        config.template_bridge = "sitebuild.templates.PageTemplates"


def _builder_inited(app: Any) -> None:
    if app.builder.format != "html":
        return
    logger = logging.getLogger(__name__)
    vendor = Path(app.outdir) / STATIC / VENDOR
    problems = check_vendor(vendor)
    if problems:
        logger.warning(
            "the site's vendored scripts are missing (%s); run `PYTHONPATH=book/_ext python -m sitebuild.vendor %s` "
            "before `jupyter-book build`", "; ".join(problems[:3]), app.outdir, type="sitebuild", subtype="vendor")
        return
    entries = {e["name"]: e for e in json.loads((vendor / MANIFEST).read_text())["packages"]}
    vendored = entries.get(PLOTLY_BUNDLE.name, {}).get("version")
    if vendored != plotly_js_version():
        logger.warning(
            "the site vendors plotly.js %s but the installed plotly package targets %s; run `PYTHONPATH=book/_ext "
            "python -m sitebuild.vendor %s`", vendored, plotly_js_version(), app.outdir,
            type="sitebuild", subtype="vendor")
    if not isinstance(app.builder.templates, PageTemplates):
        logger.warning("pages are rendered by %s, not sitebuild.templates.PageTemplates: they load all of Font "
                       "Awesome and the search index", type(app.builder.templates).__name__,
                       type="sitebuild", subtype="vendor")


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
    body = context.get("body", "")
    has_widgets = _has_widgets(app, pagename)
    # The figure's own markup (a page that shows this module's source quotes the marker, escaped).
    if f'class="plotly-graph-div {FIGURE_MARKER}"' in body:
        app.add_js_file(PLOTLY_JS, priority=200)  # before RequireJS (500), so plotly.js sets window.Plotly
        unknown = sorted(figure_trace_types(body) - PLOTLY_TRACE_TYPES)
        if unknown:
            logging.getLogger(__name__).warning(
                "a figure draws trace types that the site's plotly.js %s bundle lacks: %s; register them in "
                "tools/site-bundles/plotly.js and PLOTLY_TRACE_TYPES", PLOTLY_JS_VERSION, ", ".join(unknown),
                location=pagename, type="sitebuild", subtype="plotly_bundle")
    if has_widgets:
        # The widget manager looks for its fonts relative to its RequireJS module path, and
        # typesets with MathJax 2's MathJax.Hub.Queue: map both to what the site has.
        assets = context["pathto"](f"{STATIC}/{VENDOR}/jupyter-widgets", 1)
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
    sizes = subset_theme_fonts(Path(app.outdir) / STATIC)
    before, after = sum(b for b, _ in sizes.values()), sum(a for _, a in sizes.values())
    logging.getLogger(__name__).info("sitebuild: %d icon fonts cut down, %.0f kB -> %.0f kB",
                                     len(sizes), before / 1e3, after / 1e3)


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point: see the module's docstring."""
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _subset_fonts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
