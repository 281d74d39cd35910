"""Sphinx's template loader for the book's pages: each rendered page's math typeset at build time
(:mod:`sitebuild.typeset`, when Node.js is there), its scripts slimmed (:func:`sitebuild.pages.slim_page`),
and a warning for a Font Awesome icon that the site does not vendor.

Needs Sphinx (the book's build): its ``BuiltinTemplateLoader`` is the base class.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sphinx.jinja2glue import BuiltinTemplateLoader
from sphinx.util import logging

from .icons import vendored_icons
from .pages import fontawesome_icons, slim_page
from .paths import MATHJAX_JS, STATIC, VENDOR
from .typeset import MathRenderer, prerender_math

__all__ = ["PageTemplates"]

_RENDERERS: dict[int, MathRenderer | None] = {}
"""The MathJax process of each build process (Sphinx writes pages in forked processes)."""


def _renderer(mathjax: Path, tex: dict[str, Any] | None) -> MathRenderer | None:
    if os.getpid() not in _RENDERERS:
        try:
            _RENDERERS[os.getpid()] = MathRenderer(mathjax, tex)
        except RuntimeError as error:
            logging.getLogger(__name__).info("math is left for MathJax to typeset in the browser: %s", error)
            _RENDERERS[os.getpid()] = None
    return _RENDERERS[os.getpid()]


class PageTemplates(BuiltinTemplateLoader):
    """Sphinx's template loader, with every rendered page's math typeset at build time
    (:func:`sitebuild.typeset.prerender_math`, when Node.js is there) and its scripts slimmed
    (:func:`sitebuild.pages.slim_page`).

    Set as Sphinx's ``template_bridge`` by this extension (unless the book sets another). It
    warns about a TeX error in the math and about a Font Awesome icon that a page uses and
    :data:`sitebuild.icons.FONTAWESOME_ICONS` lacks.
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
        renderer = _renderer(self._outdir / STATIC / VENDOR / "mathjax", self._tex)
        if renderer is None:
            return html
        fonts = context["pathto"](f"{STATIC}/{VENDOR}/mathjax/output/chtml/fonts/woff-v2", 1)
        try:
            html, errors = prerender_math(html, renderer, fonts)
        except RuntimeError as error:  # the page keeps its TeX and MathJax typesets it in the browser
            logging.getLogger(__name__).warning("math left for the browser: %s", error,
                                                location=context["pagename"], type="sitebuild", subtype="math")
            _RENDERERS.pop(os.getpid(), None)  # a fresh MathJax process for the next page
            renderer.close()
            return html
        for error in errors:
            logging.getLogger(__name__).warning("MathJax: %s", error, location=context["pagename"],
                                                type="sitebuild", subtype="math")
        return html

    def _check_icons(self, html: str, pagename: str) -> None:
        vendor = self._outdir / STATIC / VENDOR
        if not (vendor / "fontawesome" / "icons.js").is_file():
            return  # reported by the builder-inited check
        missing = sorted(fontawesome_icons(html) - vendored_icons(vendor))
        if missing:
            logging.getLogger(__name__).warning(
                "the page uses Font Awesome icons that the site does not vendor: %s; add them to "
                "sitebuild.icons.FONTAWESOME_ICONS", ", ".join(f"{style} {name}" for style, name in missing),
                location=pagename, type="sitebuild", subtype="icons")
