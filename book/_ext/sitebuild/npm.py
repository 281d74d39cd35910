"""The site's third-party scripts from npm: the pinned packages, fetched and checked against their
integrity, and their files copied with their licences.

Every script a page needs is served by the site itself (:mod:`sitebuild.vendor` puts them in
``_static/vendor``); those that npm publishes as they are used come from here:

==============================  =======================================  ===============================
what                            from (npm)                               used by
==============================  =======================================  ===============================
RequireJS 2.3.6                 ``requirejs``                            BertViz views, embedded widgets
jQuery 2.2.4                    ``jquery``                               BertViz (asks for 2.0.0: not on npm)
html-manager 1.0.15             ``@jupyter-widgets/html-manager``        pages with embedded ipywidgets
MathJax 3.2.2                   ``mathjax``                              the build (math), widget pages
Font Awesome 6.5.2 (its core;   ``@fortawesome/fontawesome-free``        every page (the theme's icons)
the icons: :mod:`sitebuild.icons`)
==============================  =======================================  ===============================

(plotly.js and d3 are bundled for the site: :mod:`sitebuild.bundles`.) npm tarballs are fetched
with ``npm pack`` into a cache, checked against the sha512 pinned below, and reused on the next
run (no network then).
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FONTAWESOME_PACKAGE", "NPM_PACKAGES", "NpmPackage", "copy_npm", "fetch"]

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


def fetch(package: NpmPackage, cache: Path) -> Path:
    """The package's tarball in ``cache``: reused when present and intact, else ``npm pack``.

    Args:
        package: The package to fetch.
        cache: The folder of fetched tarballs (created if missing).

    Returns:
        The tarball's path, its sha512 checked against ``package.integrity``.

    Raises:
        RuntimeError: If npm is needed and missing, ``npm pack`` fails, or the tarball's integrity
            differs from the pinned one (the tarball is then deleted).
    """
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


def copy_npm(package: NpmPackage, tarball: Path, vendor: Path) -> dict[str, Any]:
    """Copies the package's files and licence into ``vendor/<folder>``.

    Args:
        package: The package.
        tarball: Its tarball (:func:`fetch`).
        vendor: The site's vendor folder (``_static/vendor``).

    Returns:
        Its manifest entry: name, version, source, integrity, licence, folder, licence files, files.

    Raises:
        RuntimeError: If ``package.json`` declares another licence than the pinned one, or a
            wanted file or licence file is not in the tarball.
    """
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
