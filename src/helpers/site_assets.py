"""A self-contained, light site: third-party JavaScript served by the book itself, and the Sphinx glue.

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

A first visit is kept light (``tests/book/test_page_weight.py`` measures it):

- plotly.js is a bundle built here (:mod:`helpers.site_bundles`) with the trace types the
  book draws (:data:`PLOTLY_TRACE_TYPES`: scatter, bar, heatmap, box; 1.21 MB instead of the
  full bundle's 4.8 MB or the smallest published one that has them, 1.50 MB), at the plotly.js
  version that the installed ``plotly`` Python package targets (vendoring fails on a mismatch),
  and the build warns about a figure whose trace type the bundle lacks; likewise d3 holds what
  BertViz calls (0.03 MB instead of 0.24 MB);
- math is typeset at build time: MathJax (the site's copy) runs in Node.js and writes into
  each page the markup it would write in the browser (CHTML, with hidden MathML for screen
  readers) and the CSS of the characters used (about 10 kB), for Sphinx's math and for the
  formulas of the chapters' quizzes (jupyterquiz's question data), so a page with math needs
  no MathJax (1.2 MB) in the browser. MathJax is loaded only by a page that has math left to
  typeset (no Node.js at build time, or math written some other way) or embedded widgets
  (their labels); Sphinx adds it to every page whose toctree children have math, and this
  extension takes it out of the others;
- the theme loads all of Font Awesome (``fontawesome.js``, 1.5 MB of icons, through
  ``@fortawesome/fontawesome-free/js/all.min.js``); pages load Font Awesome's core and the icons
  of :data:`FONTAWESOME_ICONS` instead (the same icons, drawn the same way), and the build warns
  about an icon that a page uses and the subset lacks;
- the theme loads Sphinx's search index on every page for its search-as-you-type box; with that
  box off (the default) only the search page needs it; and Jupyter Book adds sphinx-design's
  stylesheet and script to every page, which only pages with its components (``sd-`` classes) use.

Command line (run before ``jupyter-book build``; ``scripts/build.sh`` does)::

    python -m helpers.site_assets _build/html

npm tarballs are fetched with ``npm pack`` into a cache (``_build/.vendor-cache`` by default),
checked against the sha512 pinned below, and reused on the next run (no network then).

As a Sphinx extension (``sphinx.extra_extensions`` in ``_config.yml``) this module

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
- renders pages through :class:`PageTemplates` (Sphinx's ``template_bridge``), which typesets
  their math, swaps the theme's Font Awesome for the subset, and leaves out MathJax and the
  search scripts where they are not used;
- sets ``HELPERS_BOOK_BUILD=1``, inherited by the kernels that execute the chapters (see
  :mod:`helpers.viz.site`);
- warns (an error under ``-W``) when the vendored files are missing from the output folder.

How the figures use all this: ``book/figures.md``.
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
from html import unescape as _unescape
from pathlib import Path
from typing import Any

from helpers.site_bundles import BUNDLES, PLOTLY_BUNDLE, TOOLS, vendor_bundle

try:  # Sphinx is there when the book is built; the vendoring command line does not need it.
    from sphinx.jinja2glue import BuiltinTemplateLoader
except ImportError:  # pragma: no cover (the package's run-time dependencies do not include Sphinx)
    BuiltinTemplateLoader = object  # type: ignore[assignment,misc]

__all__ = ["NpmPackage", "NPM_PACKAGES", "VENDOR", "PLOTLY_TRACE_TYPES", "FONTAWESOME_ICONS", "PageTemplates",
           "MathRenderer", "figure_specs", "figure_trace_types", "fontawesome_icons", "page_has_math",
           "plotly_js_version", "prerender_math", "slim_page", "vendor_site_assets", "vendored_icons", "setup"]

VENDOR = "vendor"
"""The folder of the vendored files, under the site's ``_static``."""

PLOTLY_JS = f"{VENDOR}/plotly/plotly.min.js"
REQUIRE_JS = f"{VENDOR}/requirejs/require.js"
WIDGETS_JS = f"{VENDOR}/jupyter-widgets/embed-amd.js"
MATHJAX_JS = f"{VENDOR}/mathjax/tex-mml-chtml.js"
FONTAWESOME_JS = f"{VENDOR}/fontawesome/fontawesome.min.js"
FONTAWESOME_ICONS_JS = f"{VENDOR}/fontawesome/icons.js"
MANIFEST = "MANIFEST.json"

PLOTLY_JS_VERSION = "4.1.1"
"""The plotly.js version of the vendored bundle: the one the installed ``plotly`` package targets."""

PLOTLY_TRACE_TYPES = frozenset({"bar", "box", "heatmap", "scatter"})
"""The trace types of the site's plotly.js bundle (``tools/site-bundles/plotly.js`` registers them;
``tests/book/test_page_weight.py`` checks this list against the bundle's registered modules in the
browser): every type the book draws. Layout features (sliders, menus, frames, shapes,
annotations, animation) are in plotly.js's core."""

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


def plotly_js_version() -> str:
    """The plotly.js version that the installed ``plotly`` Python package targets.

    Returns:
        A version such as ``"4.1.1"``: the one of the bundle the package ships in its
        ``package_data`` (what ``plotly.offline.get_plotlyjs_version()`` reports).
    """
    from plotly.offline import get_plotlyjs_version

    return str(get_plotlyjs_version())


def _check_plotly_version() -> None:
    installed = plotly_js_version()
    pinned = json.loads((TOOLS / "package.json").read_text())["dependencies"]["plotly.js"]
    if installed != PLOTLY_JS_VERSION or pinned != PLOTLY_JS_VERSION:
        raise RuntimeError(
            f"the installed plotly package targets plotly.js {installed}, helpers.site_assets.PLOTLY_JS_VERSION "
            f"is {PLOTLY_JS_VERSION} and tools/site-bundles pins {pinned}: make all three agree (pin "
            f"plotly.js@{installed} in tools/site-bundles/package.json and run `npm install` there)")


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
    _check_plotly_version()
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


# --- What a page holds: figures and their trace types, math, icons ------------------------------

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


# --- Math: typeset at build time -------------------------------------------------------------------

# Sphinx writes each math node as a <span> (inline, "\(...\)") or a <div> (display, "\[...\]",
# after an equation number) of class "math", its TeX HTML-escaped (no "<" in it); myst-parser
# tells MathJax to typeset inside these classes only.
_INLINE_MATH = re.compile(r'(<span class="math notranslate nohighlight[^"]*"[^>]*>)\\\(([^<]*?)\\\)(</span>)')
_DISPLAY_MATH = re.compile(r'(<div class="math notranslate nohighlight[^"]*"[^>]*>\s*(?:<span class="eqno">[^<]*'
                           r'(?:<a [^>]*>[^<]*</a>)?</span>)?\s*)\\\[([^<]*?)\\\](\s*</div>)')
_MATHJAX_CLASSES = re.compile(r'class="(?:[^"]*\s)?(?:tex2jax_process|mathjax_process|output_area)(?:\s[^"]*)?"')
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MATH_STYLE_ID = "book-mathjax-chtml"
"""The ``id`` of the ``<style>`` that a page with build-time math carries (MathJax's CHTML rules)."""


def page_has_math(html: str) -> bool:
    r"""Whether a page holds math that is left for MathJax to typeset in the browser.

    Args:
        html: A page's HTML (or its body).

    Returns:
        True when an element of class ``math`` still holds its TeX (``\(...\)`` or ``\[...\]``:
        not typeset at build time), when an element has one of the other classes MathJax is told
        to process (``tex2jax_process``, ``mathjax_process``, ``output_area``), when a quiz's
        texts hold TeX (``$...$``), or when the page embeds widgets (whose labels MathJax may
        typeset).
    """
    return bool(_INLINE_MATH.search(html) or _DISPLAY_MATH.search(html) or _MATHJAX_CLASSES.search(html)
                or _WIDGET_STATE in html or _quiz_has_tex(html))


_MATHJAX_WORKER = r"""
const settings = JSON.parse(process.env.BOOK_MATHJAX);
require(settings.dir + '/node-main.js').init({
  loader: {paths: {mathjax: settings.dir},
           load: ['input/tex', 'output/chtml', 'adaptors/liteDOM', 'a11y/assistive-mml']},
  tex: settings.tex, chtml: {fontURL: '@FONTS@'}, startup: {typeset: false},
}).then((MathJax) => {
  const adaptor = MathJax.startup.adaptor;
  let queue = Promise.resolve();
  require('readline').createInterface({input: process.stdin}).on('line', (line) => {
    queue = queue.then(async () => {
      const request = JSON.parse(line);
      MathJax.startup.output.clearCache();  // the stylesheet of this page's characters only
      const html = [];
      for (const [tex, display] of request.math) {
        html.push(adaptor.outerHTML(await MathJax.tex2chtmlPromise(tex, {display})));
      }
      return {html, css: adaptor.textContent(MathJax.chtmlStylesheet())};
    }).catch((error) => ({error: String(error && error.message || error)}))
      .then((reply) => { process.stdout.write(JSON.stringify(reply) + '\n'); });
  });
}).catch((error) => { console.error(error); process.exit(1); });
"""


# MathJax's markup carries what the browser does not need: the MathML namespace (implied inside
# HTML), MathJax's own bookkeeping attributes, an old Internet Explorer attribute, and the same
# inline style on every container (moved into the stylesheet). About a seventh of the bytes.
_REDUNDANT = re.compile(r' xmlns="http://www\.w3\.org/1998/Math/MathML"| data-mjx-[a-z-]+="[^"]*"| unselectable="on"')
_CONTAINER_STYLE = ' style="position: relative;"'
_CONTAINER_CSS = "\nmjx-container[jax=\"CHTML\"] {position: relative;}"


def _compact(markup: str) -> str:
    """MathJax's CHTML markup of a formula without the redundant parts (see :data:`_REDUNDANT`)."""
    if markup.startswith('<mjx-container class="MathJax" jax="CHTML"'):
        markup = markup.replace(_CONTAINER_STYLE, "", 1)
    return _REDUNDANT.sub("", markup)


class MathRenderer:
    """MathJax in Node.js (the site's own copy): TeX in, the CHTML markup MathJax would write in
    the browser out, with the stylesheet of the characters used. One process, reused.

    Args:
        mathjax: The vendored MathJax folder (``_static/vendor/mathjax``).
        tex: MathJax's ``tex`` options (e.g. ``mathjax3_config["tex"]``: macros, packages).

    Raises:
        RuntimeError: If Node.js is not installed or MathJax's Node.js files are missing.
    """

    def __init__(self, mathjax: str | os.PathLike[str], tex: dict[str, Any] | None = None) -> None:
        node = shutil.which("node")
        folder = Path(mathjax).resolve()
        if node is None:
            raise RuntimeError("Node.js (`node`) is needed to typeset math at build time")
        if not (folder / "node-main.js").is_file():
            raise RuntimeError(f"{folder} has no node-main.js: run `python -m helpers.site_assets`")
        tex = {"packages": {"[+]": ["ams"]}, **(tex or {})}
        env = {**os.environ, "BOOK_MATHJAX": json.dumps({"dir": str(folder), "tex": tex})}
        self._process = subprocess.Popen([node, "-e", _MATHJAX_WORKER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)

    def render(self, formulas: list[tuple[str, bool]]) -> tuple[list[str], str]:
        """Typesets ``formulas``.

        Args:
            formulas: ``(tex, display)`` pairs, TeX without its delimiters.

        Returns:
            The CHTML markup of each formula (an ``<mjx-container>`` with its hidden MathML for
            screen readers; what MathJax writes in the browser, less the attributes the browser
            does not need) and the CSS they need (font URLs as ``@FONTS@``).

        Raises:
            RuntimeError: If the Node.js process has stopped or MathJax failed (a TeX error is
                not a failure: MathJax typesets it as an error message, ``data-mjx-error``).
        """
        if self._process.stdin is None or self._process.stdout is None:
            raise RuntimeError("MathJax (Node.js) has no pipes")
        try:
            self._process.stdin.write(json.dumps({"math": formulas}) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        except (BrokenPipeError, OSError) as error:
            raise RuntimeError(f"MathJax (Node.js) stopped: {error}") from error
        if not line:
            raise RuntimeError(f"MathJax (Node.js) stopped (exit {self._process.poll()})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"MathJax (Node.js) failed: {reply['error']}")
        return [_compact(markup) for markup in reply["html"]], reply["css"] + _CONTAINER_CSS

    def close(self) -> None:
        """Ends the Node.js process."""
        if self._process.poll() is None:
            try:
                self._process.stdin.close()  # type: ignore[union-attr]
                self._process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()


# jupyterquiz (the chapters' self-check quizzes, helpers.viz.quiz) embeds its questions as
# `var questions<id>=[...]` in a script and turns "$...$" ("$$...$$") in their texts into "\(...\)"
# ("\[...\]") for MathJax when it shows them.
_QUIZ_DATA = re.compile(r"\bvar questions(\w+)=")
_QUIZ_TEX = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_QUIZ_TEXTS = ("question", "answer", "feedback")


def _quiz_blocks(html: str) -> list[tuple[int, int, Any]]:
    """The question lists of the page's quizzes: ``(start, end, questions)`` of each JSON array."""
    blocks, decoder = [], json.JSONDecoder()
    for match in _QUIZ_DATA.finditer(html):
        try:
            questions, end = decoder.raw_decode(html, match.end())
        except json.JSONDecodeError:
            continue
        if isinstance(questions, list):
            blocks.append((match.end(), end, questions))
    return blocks


def _quiz_texts(questions: Any) -> list[tuple[dict[str, Any], str]]:
    """``(holder, key)`` of every text of a quiz that jupyterquiz shows as HTML (and typesets)."""
    found = []
    for question in questions if isinstance(questions, list) else []:
        if not isinstance(question, dict):
            continue
        found += [(question, key) for key in _QUIZ_TEXTS if isinstance(question.get(key), str)]
        for answer in question.get("answers") or []:
            if isinstance(answer, dict):
                found += [(answer, key) for key in _QUIZ_TEXTS if isinstance(answer.get(key), str)]
    return found


def _quiz_has_tex(html: str) -> bool:
    return any(_QUIZ_TEX.search(holder[key]) for _, _, questions in _quiz_blocks(html)
               for holder, key in _quiz_texts(questions))


def prerender_math(html: str, renderer: MathRenderer, fonts: str) -> tuple[str, list[str]]:
    """Typesets a page's math at build time, so that the page needs no MathJax in the browser.

    Args:
        html: The page's HTML.
        renderer: The MathJax process.
        fonts: The URL of MathJax's CHTML fonts relative to the page
            (``.../_static/vendor/mathjax/output/chtml/fonts/woff-v2``).

    Returns:
        The page with each math element's TeX, and each formula in the texts of its quizzes
        (jupyterquiz's question data), replaced by MathJax's CHTML markup, and MathJax's
        stylesheet in its ``<head>`` (the page unchanged when it has no math); and the TeX
        errors MathJax reported (``"message: tex"``).
    """
    elements = [(m, True) for m in _DISPLAY_MATH.finditer(html)] + [(m, False) for m in _INLINE_MATH.finditer(html)]
    elements.sort(key=lambda item: item[0].start())
    formulas = [(_unescape(m.group(2)), display) for m, display in elements]
    quizzes = _quiz_blocks(html)
    quiz_formulas: list[list[re.Match[str]]] = []
    for _, _, questions in quizzes:
        for holder, key in _quiz_texts(questions):
            matches = list(_QUIZ_TEX.finditer(holder[key]))
            quiz_formulas.append(matches)
            formulas += [(next(g for g in m.groups() if g is not None), m.lastindex in (1, 4)) for m in matches]
    if not formulas:
        return html, []
    markup, css = renderer.render(formulas)
    errors = [f"{error}: {tex.strip()}" for (tex, _), chtml in zip(formulas, markup)
              for error in re.findall(r'data-mjx-error="([^"]*)"', chtml)]
    rendered = iter(markup)
    replacements = [(m.start(), m.end(), m.group(1) + next(rendered) + m.group(3)) for m, _ in elements]
    texts = iter(quiz_formulas)
    for start, end, questions in quizzes:
        for holder, key in _quiz_texts(questions):
            holder[key] = _QUIZ_TEX.sub(lambda _: next(rendered), holder[key]) if next(texts) else holder[key]
        replacements.append((start, end, json.dumps(questions).replace("</", "<\\/")))
    parts, last = [], 0
    for start, end, text in sorted(replacements):
        parts += [html[last:start], text]
        last = end
    parts.append(html[last:])
    html = "".join(parts)
    style = f'<style id="{MATH_STYLE_ID}">{css.replace("@FONTS@", fonts)}</style>\n'
    head_end = html.find("</head>")
    html = html[:head_end] + style + html[head_end:] if head_end >= 0 else style + html
    return html, errors


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


# --- Sphinx extension -----------------------------------------------------------------------------

def _config_inited(app: Any, config: Any) -> None:
    from helpers.viz.site import BOOK_BUILD_ENV

    os.environ[BOOK_BUILD_ENV] = "1"
    if "://" in str(config.mathjax_path):
        config.mathjax_path = MATHJAX_JS
    widgets_js = getattr(config, "nb_ipywidgets_js", None)
    if widgets_js is None or any("://" in key for key in widgets_js):
        # No crossorigin/integrity attributes: they would block the scripts under file://.
        # Unknown widget modules would load from data-jupyter-widgets-cdn: point it at the site
        # (nothing there: such a widget fails visibly instead of calling a CDN).
        config.nb_ipywidgets_js = {REQUIRE_JS: {},
                                   WIDGETS_JS: {"data-jupyter-widgets-cdn": "_static/vendor/jupyter-widgets/"}}
    # pydata-sphinx-theme writes `localStorage.mode || "{{ default_mode }}"` into <html data-mode>
    # before its script runs; with no default_mode, a first visit reads "" and logs "Got invalid
    # theme mode: . Resetting to auto." as a console error. "auto" is the theme's own fallback.
    context = dict(getattr(config, "html_context", None) or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context
    if not getattr(config, "template_bridge", None):
        config.template_bridge = f"{__name__}.PageTemplates"


def _builder_inited(app: Any) -> None:
    from sphinx.util import logging

    if app.builder.format != "html":
        return
    logger = logging.getLogger(__name__)
    vendor = Path(app.outdir) / "_static" / VENDOR
    problems = check_vendor(vendor)
    if problems:
        logger.warning(
            "the site's vendored scripts are missing (%s); run `python -m helpers.site_assets %s` before "
            "`jupyter-book build`", "; ".join(problems[:3]), app.outdir, type="helpers", subtype="site_assets")
        return
    entries = {e["name"]: e for e in json.loads((vendor / MANIFEST).read_text())["packages"]}
    vendored = entries.get(PLOTLY_BUNDLE.name, {}).get("version")
    if vendored != plotly_js_version():
        logger.warning(
            "the site vendors plotly.js %s but the installed plotly package targets %s; run `python -m "
            "helpers.site_assets %s`", vendored, plotly_js_version(), app.outdir, type="helpers", subtype="site_assets")
    if not isinstance(app.builder.templates, PageTemplates):
        logger.warning("pages are rendered by %s, not helpers.site_assets.PageTemplates: they load all of Font "
                       "Awesome and the search index", type(app.builder.templates).__name__,
                       type="helpers", subtype="site_assets")


_FONTAWESOME_TAG = re.compile(r'<script defer src="(?P<root>[^"]*)_static/scripts/fontawesome\.js(?:\?[^"]*)?">'
                              r"</script>")
_SEARCH_TAGS = re.compile(r'[ \t]*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|'
                          r'searchindex\.js)"></script>\n?')


def slim_page(html: str, pagename: str = "", search_as_you_type: bool = False, mathjax_path: str = MATHJAX_JS) -> str:
    """A rendered page with the heavy scripts it does not use swapped or left out.

    Args:
        html: The page as the theme rendered it (its math typeset by :func:`prerender_math`
            where that could be done).
        pagename: The page's name (``"search"`` for the search page).
        search_as_you_type: The theme's ``search_as_you_type`` option: when it is on, every page
            needs the search index.
        mathjax_path: Sphinx's ``mathjax_path`` (the MathJax script the page may load).

    Returns:
        The page with the theme's ``_static/scripts/fontawesome.js`` (every free icon, 1.5 MB)
        replaced by the site's icons (``icons.js``, :data:`FONTAWESOME_ICONS`) and Font
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
_RENDERERS: dict[int, MathRenderer | None] = {}
"""The MathJax process of each build process (Sphinx writes pages in forked processes)."""


def _renderer(mathjax: Path, tex: dict[str, Any] | None) -> MathRenderer | None:
    from sphinx.util import logging

    if os.getpid() not in _RENDERERS:
        try:
            _RENDERERS[os.getpid()] = MathRenderer(mathjax, tex)
        except RuntimeError as error:
            logging.getLogger(__name__).info("math is left for MathJax to typeset in the browser: %s", error)
            _RENDERERS[os.getpid()] = None
    return _RENDERERS[os.getpid()]


class PageTemplates(BuiltinTemplateLoader):  # type: ignore[misc,valid-type]
    """Sphinx's template loader, with every rendered page's math typeset at build time
    (:func:`prerender_math`, when Node.js is there) and its scripts slimmed (:func:`slim_page`).

    Set as Sphinx's ``template_bridge`` by this extension (unless the book sets another). It
    warns about a TeX error in the math and about a Font Awesome icon that a page uses and
    :data:`FONTAWESOME_ICONS` lacks.
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
        from sphinx.util import logging

        renderer = _renderer(self._outdir / "_static" / VENDOR / "mathjax", self._tex)
        if renderer is None:
            return html
        fonts = context["pathto"](f"_static/{VENDOR}/mathjax/output/chtml/fonts/woff-v2", 1)
        try:
            html, errors = prerender_math(html, renderer, fonts)
        except RuntimeError as error:  # the page keeps its TeX and MathJax typesets it in the browser
            logging.getLogger(__name__).warning("math left for the browser: %s", error,
                                                location=context["pagename"], type="helpers", subtype="math")
            _RENDERERS.pop(os.getpid(), None)  # a fresh MathJax process for the next page
            renderer.close()
            return html
        for error in errors:
            logging.getLogger(__name__).warning("MathJax: %s", error, location=context["pagename"],
                                                type="helpers", subtype="math")
        return html

    def _check_icons(self, html: str, pagename: str) -> None:
        from sphinx.util import logging

        vendor = self._outdir / "_static" / VENDOR
        if not (vendor / "fontawesome" / "icons.js").is_file():
            return  # reported by the builder-inited check
        missing = sorted(fontawesome_icons(html) - vendored_icons(vendor))
        if missing:
            logging.getLogger(__name__).warning(
                "the page uses Font Awesome icons that the site does not vendor: %s; add them to "
                "helpers.site_assets.FONTAWESOME_ICONS", ", ".join(f"{style} {name}" for style, name in missing),
                location=pagename, type="helpers", subtype="icons")


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
    from helpers.viz.renderer import FIGURE_MARKER

    body = context.get("body", "")
    has_widgets = _has_widgets(app, pagename)
    # The figure's own markup (a page that shows this module's source quotes the marker, escaped).
    if f'class="plotly-graph-div {FIGURE_MARKER}"' in body:
        app.add_js_file(PLOTLY_JS, priority=200)  # before RequireJS (500), so plotly.js sets window.Plotly
        unknown = sorted(figure_trace_types(body) - PLOTLY_TRACE_TYPES)
        if unknown:
            from sphinx.util import logging

            logging.getLogger(__name__).warning(
                "a figure draws trace types that the site's plotly.js %s bundle lacks: %s; register them in "
                "tools/site-bundles/plotly.js and PLOTLY_TRACE_TYPES", PLOTLY_JS_VERSION, ", ".join(unknown),
                location=pagename, type="helpers", subtype="plotly_bundle")
    if has_widgets:
        # The widget manager looks for its fonts relative to its RequireJS module path, and
        # typesets with MathJax 2's MathJax.Hub.Queue: map both to what the site has.
        assets = context["pathto"](f"_static/{VENDOR}/jupyter-widgets", 1)
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


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point: see the module's docstring."""
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _page_context)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    """``python -m helpers.site_assets HTML_DIR [--cache DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m helpers.site_assets", description=__doc__.split("\n")[0])
    parser.add_argument("html_dir", help="the folder the book is built into, e.g. _build/html")
    parser.add_argument("--cache", default=None, help="npm tarball cache (default: HTML_DIR/../.vendor-cache)")
    args = parser.parse_args(argv)
    vendor = vendor_site_assets(args.html_dir, args.cache)
    entries = json.loads((vendor / MANIFEST).read_text())["packages"]
    size = sum(f.stat().st_size for f in vendor.rglob("*") if f.is_file())
    for entry in entries:
        print(f"site_assets: {entry['name']} {entry['version']} ({entry['licence']}, {len(entry['files'])} files)")
    print(f"site_assets: {size / 1e6:.1f} MB in {vendor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
