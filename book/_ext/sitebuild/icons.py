"""The Font Awesome icons the site draws: the icon packs cut down to the icons that pages use.

The theme loads all of Font Awesome (``fontawesome.js``, 1.5 MB of icons, through
``@fortawesome/fontawesome-free/js/all.min.js``); the site vendors Font Awesome's core and the
icons of :data:`FONTAWESOME_ICONS` only (``icons.js``, written by :func:`write_icons`), which
the pages load instead (:func:`sitebuild.pages.slim_page` swaps them in, and the build warns
about an icon a page uses and the subset lacks: :func:`vendored_icons`).
"""

from __future__ import annotations

import json
import os
import re
import tarfile
from pathlib import Path
from typing import Any

from .npm import NpmPackage

__all__ = ["FONTAWESOME_ICONS", "ICON_LINE", "vendored_icons", "write_icons"]

FONTAWESOME_ICONS: dict[str, tuple[str, ...]] = {
    # The icons of sphinx-book-theme and pydata-sphinx-theme (header buttons, navigation,
    # launch and download menus, search, theme switch, the search dialog's close button).
    "solid": ("angle-left", "angle-right", "arrow-up", "bars", "bell", "chevron-down", "chevron-left",
              "chevron-right", "circle-half-stroke", "code", "compress", "download", "expand", "file",
              "file-lines", "file-pdf", "house", "lightbulb", "list", "magnifying-glass", "moon", "outdent",
              "pencil", "play", "rocket", "sun", "xmark"),
    "brands": ("bitbucket", "github", "gitlab", "python"),
}
"""The Font Awesome icons that pages can draw: the theme's ``fontawesome.js`` (all 2,000 free
icons, 1.5 MB) is replaced by Font Awesome's core and these. The build warns about an icon that
a page uses and this list lacks (add it here)."""

_ICON_PACKS = {"solid": "js/solid.js", "regular": "js/regular.js", "brands": "js/brands.js"}
ICON_LINE = re.compile(r'^ {4}"([a-z0-9-]+)": (\[.*\]),?$')


def _icon_pack(source: str, names: tuple[str, ...], spec: str, style: str) -> str:
    """One Font Awesome icon pack script (``js/solid.js`` and its kin) cut down to ``names``."""
    start = source.index("  var icons = {\n") + len("  var icons = {\n")
    end = source.index("\n  };\n", start)
    lines = {}
    for line in source[start:end].split("\n"):
        match = ICON_LINE.match(line)
        if match:
            lines[match.group(1)] = f'    "{match.group(1)}": {match.group(2)}'
    unknown = [name for name in names if name not in lines]
    if unknown:
        raise RuntimeError(f"{spec} has no {style} icon named {unknown} (see FONTAWESOME_ICONS)")
    return source[:start] + ",\n".join(lines[name] for name in names) + source[end:]


def write_icons(package: NpmPackage, tarball: Path, vendor: Path, entry: dict[str, Any]) -> None:
    """Writes ``icons.js``: the icon packs of Font Awesome cut down to :data:`FONTAWESOME_ICONS`.

    Each pack keeps its own registration code (it defines its icons for Font Awesome's core,
    which the page loads after it), with only the wanted icons in its table.

    Args:
        package: Font Awesome's npm package (:data:`sitebuild.npm.FONTAWESOME_PACKAGE`).
        tarball: Its tarball.
        vendor: The site's vendor folder (``icons.js`` goes into ``<vendor>/<package.folder>``).
        entry: The package's manifest entry, given the new file and the icons (in place).

    Raises:
        RuntimeError: If an icon of :data:`FONTAWESOME_ICONS` is not in the package.
    """
    parts = []
    with tarfile.open(tarball, "r:gz") as archive:
        for style, names in FONTAWESOME_ICONS.items():
            if names:
                source = archive.extractfile(f"package/{_ICON_PACKS[style]}").read().decode("utf-8")
                parts.append(_icon_pack(source, tuple(sorted(set(names))), package.spec, style))
    (vendor / package.folder / "icons.js").write_text("\n".join(parts), encoding="utf-8")
    entry["files"] = sorted(entry["files"] + ["icons.js"])
    entry["icons"] = {style: sorted(set(names)) for style, names in FONTAWESOME_ICONS.items()}


_VENDORED_ICONS: dict[Path, set[tuple[str, str]]] = {}


def vendored_icons(vendor: str | os.PathLike[str]) -> set[tuple[str, str]]:
    """The Font Awesome icons that a vendor folder's ``fontawesome/icons.js`` defines.

    Args:
        vendor: The site's ``_static/vendor`` folder.

    Returns:
        ``(style, name)`` pairs, each icon under its name and its aliases (``("solid", "home")``
        as well as ``("solid", "house")``).
    """
    path = Path(vendor) / "fontawesome" / "icons.js"
    if path not in _VENDORED_ICONS:
        icons = set()
        for pack in path.read_text(encoding="utf-8").split("var icons = {")[1:]:
            style = re.search(r"defineIcons\('fa-(\w+)'", pack)
            for line in pack.split("\n  };")[0].split("\n"):
                match = ICON_LINE.match(line)
                if match and style:
                    aliases = json.loads(match.group(2))[2]
                    icons |= {(style.group(1), name) for name in [match.group(1), *aliases] if isinstance(name, str)}
        _VENDORED_ICONS[path] = icons
    return _VENDORED_ICONS[path]
