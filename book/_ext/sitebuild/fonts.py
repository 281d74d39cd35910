"""The theme's Font Awesome webfonts cut down to the characters the site draws with them (fontTools).

The pages draw their icons as SVG (:mod:`sitebuild.icons`), but until that script has run each
icon is drawn by the stylesheet with the theme's webfont; the solid font alone is 156 kB, fetched
by every page. :func:`subset_theme_fonts` cuts it (and its kin) down to :func:`icon_codepoints`
when the build finishes (the extension's ``build-finished`` hook).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .icons import ICON_LINE
from .paths import VENDOR

__all__ = ["THEME_FONTS", "icon_codepoints", "subset_theme_fonts"]

THEME_FONTS = {"solid": "fa-solid-900", "regular": "fa-regular-400", "brands": "fa-brands-400"}
"""The theme's Font Awesome webfonts (``_static/vendor/fontawesome/webfonts/<name>.woff2`` and ``.ttf``)."""

_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_CSS_RULE = re.compile(r"([^{}]*)\{([^{}]*)\}")
_CSS_ICON = re.compile(r"\\(f[0-9a-f]{3}|e[0-9a-f]{3})\b", re.I)


def icon_codepoints(static: str | os.PathLike[str]) -> set[int]:
    """The Font Awesome characters a site can draw with the theme's webfonts.

    The pages draw their icons as SVG (Font Awesome's core and ``icons.js``), but until that
    script has run, each ``<i class="fa-...">`` is drawn by the stylesheet, with the webfont; and
    a few of the themes' own rules draw an icon with the font (``content: "\\f107"``, or a
    ``--pst-icon-*`` variable). So: every icon of :data:`FONTAWESOME_ICONS` (its character, from
    ``icons.js``), and every character that a stylesheet of the site names outside Font Awesome's
    own ``.fa-*`` rules.

    Args:
        static: The built site's ``_static`` folder.

    Returns:
        Unicode code points (Font Awesome's private-use characters, e.g. ``0xf0c9`` for "bars").
    """
    static = Path(static)
    points = set()
    for pack in (static / VENDOR / "fontawesome" / "icons.js").read_text(encoding="utf-8").split("var icons = {")[1:]:
        for line in pack.split("\n  };")[0].split("\n"):
            match = ICON_LINE.match(line)
            if match:
                points.add(int(json.loads(match.group(2))[3], 16))
    for css in static.rglob("*.css"):
        text = _CSS_COMMENT.sub("", css.read_text(encoding="utf-8", errors="replace"))
        for selectors, body in _CSS_RULE.findall(text):
            names = [name.strip() for name in selectors.split(",") if name.strip()]
            if names and all(name.startswith(".fa") for name in names):
                continue  # Font Awesome's own table of every icon
            points |= {int(code, 16) for code in _CSS_ICON.findall(body)}  # written "\\f107"
            points |= {ord(char) for char in body if 0xE000 <= ord(char) <= 0xF8FF}  # or as the character itself
    return points


def subset_theme_fonts(static: str | os.PathLike[str]) -> dict[str, tuple[int, int]]:
    """Cuts the theme's Font Awesome webfonts down to :func:`icon_codepoints` (in place).

    The solid font alone is 156 kB, fetched by every page (its icons are drawn before the SVG
    script runs); cut down, it is a few kB. Run after Sphinx has copied the theme's files
    (``build-finished``); a font already cut is cut again to the same characters.

    Args:
        static: The built site's ``_static`` folder.

    Returns:
        ``{file name: (bytes before, bytes after)}`` for each font file cut.
    """
    from fontTools import subset

    static = Path(static)
    folder = static / VENDOR / "fontawesome" / "webfonts"
    points = icon_codepoints(static)
    sizes = {}
    for stem in THEME_FONTS.values():
        for suffix in (".woff2", ".ttf"):
            path = folder / f"{stem}{suffix}"
            if not path.is_file():
                continue
            before = path.stat().st_size
            options = subset.Options()
            options.flavor = "woff2" if suffix == ".woff2" else None
            options.layout_features = ["*"]
            options.notdef_outline = True
            font = subset.load_font(str(path), options)
            subsetter = subset.Subsetter(options)
            subsetter.populate(unicodes=sorted(points))
            subsetter.subset(font)
            subset.save_font(font, str(path), options)
            sizes[path.name] = (before, path.stat().st_size)
    return sizes
