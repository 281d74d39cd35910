"""The site's third-party scripts, served by the book itself: fetched from npm, checked against
their pinned integrity, and copied into the built site with their licences.

The book's pages must work offline, from a zip, or where public CDNs are blocked; so every
script a page needs is copied into the built site, from the registries' own packages, with its
licence next to it:

==============================  =======================================  ===============================
what                            from (npm)                               used by
==============================  =======================================  ===============================
plotly.js 4.1.1, the book's      ``plotly.js``, bundled here              pages with a figure
trace types                     (:mod:`helpers.site_bundles`)
RequireJS 2.3.6                 ``requirejs``                            BertViz views, embedded widgets
d3, what BertViz calls          ``d3-selection`` and four other d3       BertViz views
                                modules, bundled here
jQuery 2.2.4                    ``jquery``                               BertViz (asks for 2.0.0: not on npm)
html-manager 1.0.15             ``@jupyter-widgets/html-manager``        pages with embedded ipywidgets
MathJax 3.2.2                   ``mathjax``                              the build (math), widget pages
Font Awesome 6.5.2 (the icons   ``@fortawesome/fontawesome-free``        every page (the theme's icons)
the site uses)
==============================  =======================================  ===============================

They land in ``<html>/_static/vendor/<name>/`` with a ``MANIFEST.json``. They are *not* under
``html_static_path``: Jupyter Book adds every ``.js`` found there to every page, whereas each of
these is needed by some pages only.

Font Awesome: the theme loads all of it (``fontawesome.js``, 1.5 MB of icons, through
``@fortawesome/fontawesome-free/js/all.min.js``); the site vendors Font Awesome's core and the
icons of :data:`FONTAWESOME_ICONS` only (``icons.js``), which the pages load instead
(:mod:`helpers.site_assets` swaps them in, and the build warns about an icon a page uses and the
subset lacks).

Command line (run before ``jupyter-book build``; ``scripts/build.sh`` does)::

    python -m helpers.site_vendor _build/html

npm tarballs are fetched with ``npm pack`` into a cache (``_build/.vendor-cache`` by default),
checked against the sha512 pinned below, and reused on the next run (no network then); the two
bundles the site builds for itself (:mod:`helpers.site_bundles`) are kept there too.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.site_bundles import BUNDLES, check_plotly_version, vendor_bundle

__all__ = ["FONTAWESOME_ICONS", "MANIFEST", "NPM_PACKAGES", "NpmPackage", "THEME_FONTS", "VENDOR", "check_vendor",
           "icon_codepoints", "subset_theme_fonts", "vendor_site_assets", "vendored_icons"]

VENDOR = "vendor"
"""The folder of the vendored files, under the site's ``_static``."""

PLOTLY_JS = f"{VENDOR}/plotly/plotly.min.js"
REQUIRE_JS = f"{VENDOR}/requirejs/require.js"
WIDGETS_JS = f"{VENDOR}/jupyter-widgets/embed-amd.js"
MATHJAX_JS = f"{VENDOR}/mathjax/tex-mml-chtml.js"
FONTAWESOME_JS = f"{VENDOR}/fontawesome/fontawesome.min.js"
FONTAWESOME_ICONS_JS = f"{VENDOR}/fontawesome/icons.js"
MANIFEST = "MANIFEST.json"

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

_MIT = """MIT License

{copyright}

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT
OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
"""

_BSD3 = """BSD 3-Clause License

{copyright}
All rights reserved.

Redistribution and use in source and binary forms, with or without modification, are permitted
provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this list of
   conditions and the following disclaimer.
2. Redistributions in binary form must reproduce the above copyright notice, this list of
   conditions and the following disclaimer in the documentation and/or other materials provided
   with the distribution.
3. Neither the name of the copyright holder nor the names of its contributors may be used to
   endorse or promote products derived from this software without specific prior written
   permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER
IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT
OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""


@dataclass(frozen=True)
class NpmPackage:
    """One npm package to vendor.

    Attributes:
        name: The npm name, e.g. ``"@jupyter-widgets/html-manager"``.
        version: The exact version.
        integrity: The tarball's ``sha512-...`` (Subresource Integrity form), as the registry lists it.
        folder: The destination folder under ``_static/vendor``.
        files: Glob patterns of the files to copy, relative to the package root; a file keeps
            its path below ``strip`` (the prefix removed from it).
        strip: The prefix removed from the copied paths (e.g. ``"dist/"``).
        licence_files: Licence files in the package, copied as they are.
        licence: The SPDX id from ``package.json`` (checked against it).
        generated_licence: ``(template, copyright)`` for a package that ships no licence file:
            the standard text of its licence with the copyright line of its source header.
    """

    name: str
    version: str
    integrity: str
    folder: str
    files: tuple[str, ...]
    strip: str = ""
    licence_files: tuple[str, ...] = ()
    licence: str = ""
    generated_licence: tuple[str, str] | None = None

    @property
    def spec(self) -> str:
        """``name@version`` as npm takes it."""
        return f"{self.name}@{self.version}"

    @property
    def tarball(self) -> str:
        """The file name ``npm pack`` gives the tarball."""
        return f"{self.name.lstrip('@').replace('/', '-')}-{self.version}.tgz"


FONTAWESOME_PACKAGE = NpmPackage(
    # The version pydata-sphinx-theme 0.17 bundles (its fontawesome.js is this package's js/all.min.js).
    "@fortawesome/fontawesome-free", "6.5.2",
    "sha512-hRILoInAx8GNT5IMkrtIt9blOdrqHOnPBH+k70aWUAqPZPgopb9G5EQJFpaBx/S8zp2fC+mPW349Bziuk1o28Q==",
    "fontawesome", ("js/fontawesome.min.js",), strip="js/", licence_files=("LICENSE.txt",),
    licence="(CC-BY-4.0 AND OFL-1.1 AND MIT)")

NPM_PACKAGES: tuple[NpmPackage, ...] = (
    NpmPackage(
        "requirejs", "2.3.6",
        "sha512-ipEzlWQe6RK3jkzikgCupiTbTvm4S0/CAU5GlgptkN5SO6F3u0UD0K18wy6ErDqiCyP4J4YYe1HuAShvsxePLg==",
        "requirejs", ("require.js",), licence="MIT",
        generated_licence=(_MIT, "Copyright jQuery Foundation and other contributors.")),
    NpmPackage(
        "jquery", "2.2.4",
        "sha512-lBHj60ezci2u1v2FqnZIraShGgEXq35qCzMv4lITyHGppTnA13rwR0MgwyNJh9TnDs3aXUvd1xjAotfraMHX/Q==",
        "jquery", ("dist/jquery.min.js",), strip="dist/", licence_files=("LICENSE.txt",), licence="MIT"),
    NpmPackage(
        "@jupyter-widgets/html-manager", "1.0.15",
        "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
        "jupyter-widgets",
        # embed-amd.js finds its fonts (Font Awesome) next to itself.
        ("dist/embed-amd.js", "dist/*.woff2", "dist/*.woff", "dist/*.ttf", "dist/*.eot", "dist/*.svg"),
        strip="dist/", licence_files=("dist/embed.js.LICENSE.txt",), licence="BSD-3-Clause",
        generated_licence=(_BSD3, "Copyright (c) 2015 Project Jupyter Contributors")),
    NpmPackage(
        "mathjax", "3.2.2",
        "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
        "mathjax",
        # The combined TeX/CHTML component, plus what it loads on demand: TeX extensions
        # (autoload), CHTML fonts, the menu, the accessibility tools and their speech rules;
        # and the components that typeset the pages' math at build time, in Node.js
        # (node-main.js, core, CHTML output, the lite DOM adaptor; no page loads them).
        ("es5/tex-mml-chtml.js", "es5/input/*", "es5/output/chtml/*", "es5/ui/*", "es5/a11y/*", "es5/sre/*",
         "es5/node-main.js", "es5/core.js", "es5/startup.js", "es5/output/chtml.js", "es5/adaptors/liteDOM.js"),
        strip="es5/", licence_files=("LICENSE",), licence="Apache-2.0"),
    FONTAWESOME_PACKAGE,
)


def _sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def _fetch(package: NpmPackage, cache: Path) -> Path:
    """The package's tarball in ``cache``: reused when present and intact, else ``npm pack``."""
    tarball = cache / package.tarball
    if tarball.is_file() and _sri(tarball.read_bytes()) == package.integrity:
        return tarball
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(f"npm is needed to fetch {package.spec} (not cached in {cache}); install Node.js/npm")
    cache.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([npm, "pack", package.spec, "--pack-destination", str(cache), "--ignore-scripts",
                             "--silent"], capture_output=True, text=True, check=False)
    if result.returncode != 0 or not tarball.is_file():
        raise RuntimeError(f"npm pack {package.spec} failed ({result.returncode}): {result.stderr.strip()[-500:]}")
    found = _sri(tarball.read_bytes())
    if found != package.integrity:
        tarball.unlink()
        raise RuntimeError(f"{package.spec}: the tarball's integrity {found} differs from the pinned "
                           f"{package.integrity}")
    return tarball


def _copy_npm(package: NpmPackage, tarball: Path, vendor: Path) -> dict[str, Any]:
    """Copies the package's files and licence into ``vendor/<folder>``; returns its manifest entry."""
    dest = vendor / package.folder
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    copied: list[str] = []
    licences: list[str] = []
    with tarfile.open(tarball, "r:gz") as archive:
        members = {m.name.removeprefix("package/"): m for m in archive.getmembers() if m.isfile()}
        declared = json.loads(archive.extractfile(members["package.json"]).read()).get("license", "")
        if package.licence and declared != package.licence:
            raise RuntimeError(f"{package.spec}: package.json says licence {declared!r}, expected {package.licence!r}")
        for path, member in sorted(members.items()):
            wanted = any(fnmatch.fnmatch(path, pattern) for pattern in package.files)
            is_licence = path in package.licence_files
            if not (wanted or is_licence):
                continue
            relative = path.removeprefix(package.strip) if wanted else Path(path).name
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.extractfile(member).read())
            (licences if is_licence else copied).append(relative)
    missing = [p for p in package.licence_files if Path(p).name not in licences]
    if missing or not copied:
        raise RuntimeError(f"{package.spec}: missing {missing or package.files} in the tarball")
    if package.generated_licence:
        template, holder = package.generated_licence
        (dest / "LICENSE").write_text(template.format(copyright=holder))
        licences.append("LICENSE")
    return {"name": package.name, "version": package.version, "source": "npm", "integrity": package.integrity,
            "licence": declared, "folder": package.folder, "licence_files": sorted(licences),
            "files": sorted(copied), "pinned": _pinned(package)}


def _pinned(package: NpmPackage) -> str:
    """A digest of what is vendored of ``package`` (its pin, the files taken, the icons chosen)."""
    chosen = repr(package) + (repr(sorted(FONTAWESOME_ICONS.items())) if package.folder == "fontawesome" else "")
    return hashlib.sha256(chosen.encode()).hexdigest()[:16]


_ICON_PACKS = {"solid": "js/solid.js", "regular": "js/regular.js", "brands": "js/brands.js"}
_ICON_LINE = re.compile(r'^ {4}"([a-z0-9-]+)": (\[.*\]),?$')


def _icon_pack(source: str, names: tuple[str, ...], spec: str, style: str) -> str:
    """One Font Awesome icon pack script (``js/solid.js`` and its kin) cut down to ``names``."""
    start = source.index("  var icons = {\n") + len("  var icons = {\n")
    end = source.index("\n  };\n", start)
    lines = {}
    for line in source[start:end].split("\n"):
        match = _ICON_LINE.match(line)
        if match:
            lines[match.group(1)] = f'    "{match.group(1)}": {match.group(2)}'
    unknown = [name for name in names if name not in lines]
    if unknown:
        raise RuntimeError(f"{spec} has no {style} icon named {unknown} (see FONTAWESOME_ICONS)")
    return source[:start] + ",\n".join(lines[name] for name in names) + source[end:]


def _write_icons(package: NpmPackage, tarball: Path, vendor: Path, entry: dict[str, Any]) -> None:
    """Writes ``icons.js``: the icon packs of Font Awesome cut down to :data:`FONTAWESOME_ICONS`.

    Each pack keeps its own registration code (it defines its icons for Font Awesome's core,
    which the page loads after it), with only the wanted icons in its table.
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


def vendor_site_assets(html_dir: str | os.PathLike[str], cache: str | os.PathLike[str] | None = None) -> Path:
    """Copies every third-party script the site needs into ``<html_dir>/_static/vendor``.

    Args:
        html_dir: The folder the book is built into (``_build/html``); created if missing.
        cache: Where npm tarballs and the built bundles are kept between runs;
            ``<html_dir>/../.vendor-cache`` when ``None``.

    Returns:
        The vendor folder. It holds one folder per package or bundle (files and licences) and
        ``MANIFEST.json`` (name, version, source, integrity, licence, files of each).

    Raises:
        RuntimeError: If npm is missing and a package or bundle is not cached, a tarball does
            not match its pinned integrity, a bundle does not build, or the installed ``plotly``
            targets another plotly.js version than the bundle.
    """
    check_plotly_version()
    html = Path(html_dir)
    cache_dir = Path(cache) if cache is not None else html.parent / ".vendor-cache"
    vendor = html / "_static" / VENDOR
    if _up_to_date(vendor):
        return vendor
    vendor.mkdir(parents=True, exist_ok=True)
    entries = []
    for package in NPM_PACKAGES:
        tarball = _fetch(package, cache_dir)
        entry = _copy_npm(package, tarball, vendor)
        if package is FONTAWESOME_PACKAGE:
            _write_icons(package, tarball, vendor, entry)
        entries.append(entry)
    entries.extend(vendor_bundle(bundle, vendor, cache_dir) for bundle in BUNDLES)
    (vendor / MANIFEST).write_text(json.dumps({"packages": entries}, indent=1) + "\n")
    return vendor


def _up_to_date(vendor: Path) -> bool:
    """Whether ``vendor`` already holds exactly the pinned packages, files and icons."""
    manifest = vendor / MANIFEST
    if not manifest.is_file() or check_vendor(vendor):
        return False
    entries = {e["name"]: e for e in json.loads(manifest.read_text())["packages"]}
    return len(entries) == len(NPM_PACKAGES) + len(BUNDLES) and all(
        entries.get(p.name, {}).get("pinned") == _pinned(p) for p in NPM_PACKAGES) and all(
        entries.get(b.name, {}).get("pinned") == b.digest() for b in BUNDLES)


def check_vendor(vendor: Path) -> list[str]:
    """The problems of a vendor folder (missing manifest, files or licences); empty when complete."""
    manifest = vendor / MANIFEST
    if not manifest.is_file():
        return [f"{manifest} is missing"]
    problems = []
    for entry in json.loads(manifest.read_text())["packages"]:
        for name in entry["files"] + entry["licence_files"]:
            if not (vendor / entry["folder"] / name).is_file():
                problems.append(f"{entry['folder']}/{name} is missing")
    return problems


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
                match = _ICON_LINE.match(line)
                if match and style:
                    aliases = json.loads(match.group(2))[2]
                    icons |= {(style.group(1), name) for name in [match.group(1), *aliases] if isinstance(name, str)}
        _VENDORED_ICONS[path] = icons
    return _VENDORED_ICONS[path]


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
            match = _ICON_LINE.match(line)
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


def main(argv: list[str] | None = None) -> int:
    """``python -m helpers.site_vendor HTML_DIR [--cache DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m helpers.site_vendor", description=__doc__.split("\n")[0])
    parser.add_argument("html_dir", help="the folder the book is built into, e.g. _build/html")
    parser.add_argument("--cache", default=None, help="npm tarball cache (default: HTML_DIR/../.vendor-cache)")
    args = parser.parse_args(argv)
    vendor = vendor_site_assets(args.html_dir, args.cache)
    entries = json.loads((vendor / MANIFEST).read_text())["packages"]
    size = sum(f.stat().st_size for f in vendor.rglob("*") if f.is_file())
    for entry in entries:
        print(f"site_vendor: {entry['name']} {entry['version']} ({entry['licence']}, {len(entry['files'])} files)")
    print(f"site_vendor: {size / 1e6:.1f} MB in {vendor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
