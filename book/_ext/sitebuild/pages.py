"""What a built page holds (figures and their trace types, math, icons), and the page with the
heavy scripts it does not use swapped or left out (:func:`slim_page`).

Plain functions of a page's HTML, with no Sphinx: :class:`sitebuild.templates.PageTemplates` calls
:func:`slim_page` on every rendered page, the extension's page hook (:mod:`sitebuild.extension`)
reads :func:`figure_trace_types`, and ``tests/book/test_page_weight.py`` measures what they save.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .paths import FONTAWESOME_ICONS_JS, FONTAWESOME_JS, MATHJAX_JS
from .typeset import page_has_math

__all__ = ["figure_specs", "figure_trace_types", "fontawesome_icons", "slim_page"]

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


_FONTAWESOME_TAG = re.compile(r'<script defer src="(?P<root>[^"]*)_static/scripts/fontawesome\.js(?:\?[^"]*)?">'
                              r"</script>")
_SEARCH_TAGS = re.compile(r'[ \t]*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|'
                          r'searchindex\.js)"></script>\n?')


def slim_page(html: str, pagename: str = "", search_as_you_type: bool = False, mathjax_path: str = MATHJAX_JS) -> str:
    """A rendered page with the heavy scripts it does not use swapped or left out.

    Args:
        html: The page as the theme rendered it (its math typeset by :func:`sitebuild.typeset.prerender_math`
            where that could be done).
        pagename: The page's name (``"search"`` for the search page).
        search_as_you_type: The theme's ``search_as_you_type`` option: when it is on, every page
            needs the search index.
        mathjax_path: Sphinx's ``mathjax_path`` (the MathJax script the page may load).

    Returns:
        The page with the theme's ``_static/scripts/fontawesome.js`` (every free icon, 1.5 MB)
        replaced by the site's icons (``icons.js``, :data:`sitebuild.icons.FONTAWESOME_ICONS`) and Font
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
