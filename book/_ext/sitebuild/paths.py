"""Where the site's vendored files are, as Sphinx names them (relative to ``_static``).

Derived from the contract that the package and the site build share,
:mod:`helpers.viz.site` (which names them relative to the site's root, as the pages load them):
each is defined there once.
"""

from __future__ import annotations

from helpers.viz.site import PLOTLY_JS_PATH, REQUIRE_JS_PATH, VENDOR_DIR

__all__ = ["FONTAWESOME_ICONS_JS", "FONTAWESOME_JS", "MANIFEST", "MATHJAX_JS", "PLOTLY_JS", "REQUIRE_JS", "STATIC",
           "VENDOR", "WIDGETS_JS"]

STATIC = "_static"
"""The site's folder of static files (Sphinx's ``add_js_file`` and ``mathjax_path`` are relative to it)."""

VENDOR = VENDOR_DIR.removeprefix(f"{STATIC}/")
"""The folder of the vendored files, under the site's ``_static``."""

PLOTLY_JS = PLOTLY_JS_PATH.removeprefix(f"{STATIC}/")
REQUIRE_JS = REQUIRE_JS_PATH.removeprefix(f"{STATIC}/")
WIDGETS_JS = f"{VENDOR}/jupyter-widgets/embed-amd.js"
MATHJAX_JS = f"{VENDOR}/mathjax/tex-mml-chtml.js"
FONTAWESOME_JS = f"{VENDOR}/fontawesome/fontawesome.min.js"
FONTAWESOME_ICONS_JS = f"{VENDOR}/fontawesome/icons.js"
MANIFEST = "MANIFEST.json"
"""The vendor folder's list of what it holds (name, version, source, integrity, licence, files)."""
