"""The contract between the package's outputs and the book's site build: where an output will be
read (the static site or a live kernel), and the names both sides use.

The site's build (``book/_ext/sitebuild``: the Sphinx extension, the vendored scripts, the
bundles, build-time math) is not part of this package; it reads the names below, and the
package's outputs write them, so each is defined here once:

- :data:`BOOK_BUILD_ENV`: the book's Sphinx extension sets ``HELPERS_BOOK_BUILD=1`` in the build
  process; the kernels that execute the chapters inherit it. Outputs that load scripts (BertViz)
  then point at the site's own copies, and live explorers, which need a kernel, show their static
  figure instead. Everywhere else (JupyterLab, Colab, a script) outputs are live.
- :data:`FIGURE_MARKER`: the class of every figure's ``<div>`` (:func:`helpers.viz.figure_html`),
  by which the site build adds plotly.js to the pages that hold one.
- :data:`VENDOR_DIR` and the ``*_PATH`` names: where the site serves its third-party scripts,
  relative to its root (the site build copies them there, the pages load them from there).
"""

from __future__ import annotations

import os

__all__ = ["BOOK_BUILD_ENV", "D3_PATH", "FIGURE_MARKER", "JQUERY_PATH", "PLOTLY_JS_PATH", "REQUIRE_JS_PATH",
           "VENDOR_DIR", "building_book"]

BOOK_BUILD_ENV = "HELPERS_BOOK_BUILD"
"""The environment variable that the book's build sets to ``"1"`` (inherited by its kernels)."""

FIGURE_MARKER = "book-plotly-figure"
"""The class of a figure's ``<div>`` (next to Plotly's ``plotly-graph-div``) — a page with one loads plotly.js."""

VENDOR_DIR = "_static/vendor"
"""Where the site serves third-party scripts, relative to its root."""

PLOTLY_JS_PATH = f"{VENDOR_DIR}/plotly/plotly.min.js"
"""The site's plotly.js (a bundle with the book's trace types), loaded by every page with a figure."""

REQUIRE_JS_PATH = f"{VENDOR_DIR}/requirejs/require.js"
"""RequireJS, which loads BertViz's views and the embedded widgets' manager."""

D3_PATH = f"{VENDOR_DIR}/d3/d3.min"
"""The site's d3 bundle as a RequireJS module path (``.js`` left out, as RequireJS takes it)."""

JQUERY_PATH = f"{VENDOR_DIR}/jquery/jquery.min"
"""jQuery as a RequireJS module path."""


def building_book() -> bool:
    """Whether this code runs while the book is being built (its output goes to a static page)."""
    return os.environ.get(BOOK_BUILD_ENV) == "1"
