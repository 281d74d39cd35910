"""The book's site build: a self-contained, light static site from the Jupyter Book build.

Not part of the helper package that students install (``why-attention-helpers``): it needs
Sphinx, Node.js (npm, esbuild, MathJax) and a checkout of the repository (``tools/site-bundles``).
It reads the package's side of the contract, :mod:`helpers.viz.site` (the figure marker, the
vendor folder and its paths, the environment variable the build sets). One concern a module:

===========================  =====================================================================
module                       holds
===========================  =====================================================================
:mod:`sitebuild.extension`   the Sphinx extension (its hooks; ``setup``): what a page loads
:mod:`sitebuild.templates`   the pages' template loader: math typeset, scripts slimmed, icons checked
:mod:`sitebuild.pages`       what a built page holds (figures, trace types, icons), :func:`slim_page`
:mod:`sitebuild.typeset`     math typeset at build time, by MathJax in Node.js
:mod:`sitebuild.vendor`      the command that copies the third-party scripts into the site
:mod:`sitebuild.npm`         the pinned npm packages: fetched, checked, copied with their licences
:mod:`sitebuild.bundles`     the two esbuild bundles (plotly.js, d3) from ``tools/site-bundles``
:mod:`sitebuild.icons`       Font Awesome's icon packs cut down to the site's icons
:mod:`sitebuild.fonts`       the theme's icon webfonts cut down to the site's characters (fontTools)
:mod:`sitebuild.paths`       the vendored files' paths under ``_static`` (from :mod:`helpers.viz.site`)
===========================  =====================================================================

``_config.yml`` loads it from ``book/_ext`` (``sphinx.local_extensions``); ``scripts/build.sh``
runs ``PYTHONPATH=book/_ext python -m sitebuild.vendor _build/html`` before the build.
"""

from __future__ import annotations

from typing import Any

__all__ = ["setup"]


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point (:func:`sitebuild.extension.setup`), imported only when Sphinx loads it."""
    from .extension import setup as extension_setup

    return extension_setup(app)
