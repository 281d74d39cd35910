"""Where an output will be read: the book's static site or a live kernel.

The book's Sphinx extension (:mod:`helpers.site_assets`) sets ``HELPERS_BOOK_BUILD=1`` in the
build process; the kernels that execute the chapters inherit it. Outputs that load scripts
(BertViz) then point at the site's own copies, and live explorers, which need a kernel, show
their static figure instead. Everywhere else (JupyterLab, Colab, a script) outputs are live.
"""

from __future__ import annotations

import os

__all__ = ["BOOK_BUILD_ENV", "building_book", "VENDOR_DIR"]

BOOK_BUILD_ENV = "HELPERS_BOOK_BUILD"
VENDOR_DIR = "_static/vendor"
"""Where the site serves third-party scripts, relative to its root."""


def building_book() -> bool:
    """Whether this code runs while the book is being built (its output goes to a static page)."""
    return os.environ.get(BOOK_BUILD_ENV) == "1"
