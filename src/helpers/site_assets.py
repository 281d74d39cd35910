"""A self-contained site: third-party JavaScript served by the book itself, and the Sphinx glue.

The book's pages must work offline, from a zip, or where public CDNs are blocked; so every
script a page needs is copied into the built site, from the registries' own packages, with its
licence next to it:

==============================  ====================  =========================================
what                            from                  used by
==============================  ====================  =========================================
plotly.js (``plotly.min.js``)   PyPI ``plotly``       every page with a figure (loaded once)
RequireJS 2.3.6                 npm ``requirejs``     BertViz views, embedded widgets
d3 5.7.0                        npm ``d3``            BertViz views
jQuery 2.2.4                    npm ``jquery``        BertViz (asks for 2.0.0: not on npm)
html-manager 1.0.15             npm ``@jupyter-widgets/html-manager``  embedded ipywidgets 8
MathJax 3.2.2                   npm ``mathjax``       every page with math
==============================  ====================  =========================================

They land in ``<html>/_static/vendor/<name>/`` with a ``MANIFEST.json``. They are *not* under
``html_static_path``: Jupyter Book adds every ``.js`` found there to every page, whereas each of
these is needed by some pages only.

Command line (run before ``jupyter-book build``; ``scripts/build-book.sh`` does)::

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
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["NpmPackage", "NPM_PACKAGES", "VENDOR", "vendor_site_assets", "setup"]

VENDOR = "vendor"
"""The folder of the vendored files, under the site's ``_static``."""

PLOTLY_JS = f"{VENDOR}/plotly/plotly.min.js"
REQUIRE_JS = f"{VENDOR}/requirejs/require.js"
WIDGETS_JS = f"{VENDOR}/jupyter-widgets/embed-amd.js"
MATHJAX_JS = f"{VENDOR}/mathjax/tex-mml-chtml.js"
MANIFEST = "MANIFEST.json"

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


NPM_PACKAGES: tuple[NpmPackage, ...] = (
    NpmPackage(
        "requirejs", "2.3.6",
        "sha512-ipEzlWQe6RK3jkzikgCupiTbTvm4S0/CAU5GlgptkN5SO6F3u0UD0K18wy6ErDqiCyP4J4YYe1HuAShvsxePLg==",
        "requirejs", ("require.js",), licence="MIT",
        generated_licence=(_MIT, "Copyright jQuery Foundation and other contributors.")),
    NpmPackage(
        "d3", "5.7.0",
        "sha512-8KEIfx+dFm8PlbJN9PI0suazrZ41QcaAufsKE9PRcqYPWLngHIyWJZX96n6IQKePGgeSu0l7rtlueSSNq8Zc3g==",
        "d3", ("dist/d3.min.js",), strip="dist/", licence_files=("LICENSE",), licence="BSD-3-Clause"),
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
        # (autoload), CHTML fonts, the menu, the accessibility tools and their speech rules.
        ("es5/tex-mml-chtml.js", "es5/input/*", "es5/output/chtml/*", "es5/ui/*", "es5/a11y/*", "es5/sre/*"),
        strip="es5/", licence_files=("LICENSE",), licence="Apache-2.0"),
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
            "files": sorted(copied)}


def _copy_plotly(vendor: Path) -> dict[str, Any]:
    """plotly.min.js from the installed ``plotly`` wheel (the version its Python figures target)."""
    import plotly

    source = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    dest = vendor / "plotly"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copyfile(source, dest / "plotly.min.js")
    header = source.read_text(encoding="utf-8", errors="replace")[:400]
    js_version = header.split("plotly.js v", 1)[1].split()[0] if "plotly.js v" in header else "unknown"
    distribution = metadata.distribution("plotly")
    licence_file = next((f for f in distribution.files or [] if Path(f).name.upper().startswith("LICENSE")), None)
    if licence_file is None:
        raise RuntimeError("the plotly wheel has no licence file to copy")
    shutil.copyfile(distribution.locate_file(licence_file), dest / "LICENSE.txt")
    return {"name": "plotly.js", "version": js_version, "source": f"pypi:plotly=={distribution.version}",
            "integrity": _sri((dest / "plotly.min.js").read_bytes()), "licence": "MIT", "folder": "plotly",
            "licence_files": ["LICENSE.txt"], "files": ["plotly.min.js"]}


def vendor_site_assets(html_dir: str | os.PathLike[str], cache: str | os.PathLike[str] | None = None) -> Path:
    """Copies every third-party script the site needs into ``<html_dir>/_static/vendor``.

    Args:
        html_dir: The folder the book is built into (``_build/html``); created if missing.
        cache: Where npm tarballs are kept between runs; ``<html_dir>/../.vendor-cache`` when ``None``.

    Returns:
        The vendor folder. It holds one folder per package (files and licence) and
        ``MANIFEST.json`` (name, version, source, integrity, licence, files of each).

    Raises:
        RuntimeError: If npm is missing and a package is not cached, or a tarball does not
            match its pinned integrity.
    """
    html = Path(html_dir)
    cache_dir = Path(cache) if cache is not None else html.parent / ".vendor-cache"
    vendor = html / "_static" / VENDOR
    if _up_to_date(vendor):
        return vendor
    vendor.mkdir(parents=True, exist_ok=True)
    entries = [_copy_plotly(vendor)]
    for package in NPM_PACKAGES:
        entries.append(_copy_npm(package, _fetch(package, cache_dir), vendor))
    (vendor / MANIFEST).write_text(json.dumps({"packages": entries}, indent=1) + "\n")
    return vendor


def _up_to_date(vendor: Path) -> bool:
    """Whether ``vendor`` already holds exactly the pinned packages and the installed plotly.js."""
    manifest = vendor / MANIFEST
    if not manifest.is_file() or check_vendor(vendor):
        return False
    import plotly

    entries = {e["name"]: e for e in json.loads(manifest.read_text())["packages"]}
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if entries.get("plotly.js", {}).get("integrity") != _sri(plotly_js.read_bytes()):
        return False
    return all(entries.get(p.name, {}).get("integrity") == p.integrity for p in NPM_PACKAGES) and \
        len(entries) == len(NPM_PACKAGES) + 1


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


def _builder_inited(app: Any) -> None:
    from sphinx.util import logging

    if app.builder.format != "html":
        return
    problems = check_vendor(Path(app.outdir) / "_static" / VENDOR)
    if problems:
        logging.getLogger(__name__).warning(
            "the site's vendored scripts are missing (%s); run `python -m helpers.site_assets %s` before "
            "`jupyter-book build`", "; ".join(problems[:3]), app.outdir, type="helpers", subtype="site_assets")


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

    # The figure's own markup (a page that shows this module's source quotes the marker, escaped).
    if f'class="plotly-graph-div {FIGURE_MARKER}"' in context.get("body", ""):
        app.add_js_file(PLOTLY_JS, priority=200)  # before RequireJS (500), so plotly.js sets window.Plotly
    if _has_widgets(app, pagename):
        # The widget manager looks for its fonts relative to its RequireJS module path, and
        # typesets with MathJax 2's MathJax.Hub.Queue: map both to what the site has.
        assets = context["pathto"](f"_static/{VENDOR}/jupyter-widgets", 1)
        app.add_js_file(None, body=_WIDGETS_PRELUDE % json.dumps(assets), priority=450)
    # sphinx-thebe adds its inline configuration twice, and the second `const THEBE_JS_URL`
    # throws "Identifier has already been declared" on every page: keep one copy.
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        seen: set[str] = set()
        unique = []
        for script in scripts:
            body = getattr(script, "attributes", {}).get("body") if not getattr(script, "filename", None) else None
            if body and body in seen:
                continue
            if body:
                seen.add(body)
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
