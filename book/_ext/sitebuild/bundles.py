"""Two scripts the site builds for itself, smaller than any published bundle: plotly.js with the
trace types the book draws, and the part of d3 that BertViz calls.

A chapter page's first visit is budgeted at 3 MB (``tests/book/test_page_weight.py``). The
smallest published plotly.js bundle with every trace type the book draws (scatter, bar, heatmap,
box) is ``plotly.js-cartesian-dist-min``, 1.50 MB, which also carries eight trace types the book
never draws and the world calendars; BertViz loads all of d3 5.7.0 (0.24 MB) to call six of its
functions. So both are built here, with esbuild, from the same npm packages:

==================  ==========================================  ====================  =========
bundle              entry (``tools/site-bundles/``)             instead of            size
==================  ==========================================  ====================  =========
plotly.js 4.1.1     ``plotly.js``: the core (scatter), bar,     the cartesian bundle  1.21 MB
                    box, heatmap                                (1.50 MB)
d3 (what BertViz    ``d3.js``: d3-selection, and the functions  d3 5.7.0 (0.24 MB)    0.03 MB
calls)              of d3-color, d3-array, d3-scale and
                    d3-scale-chromatic that BertViz calls
==================  ==========================================  ====================  =========

The packages are pinned, with their integrity hashes, by ``tools/site-bundles/package-lock.json``
(``npm ci`` installs exactly that). The built files are kept in the vendor cache under a digest
of the lock file, the entry and the esbuild options, so a rebuild with nothing changed runs
neither npm nor esbuild. Every npm package that ends up in a bundle is listed, with its licence
text, in ``THIRD-PARTY-LICENSES.txt`` next to it; a package under a licence outside
:data:`ALLOWED_LICENCES` stops the build.

:func:`sitebuild.vendor.vendor_site_assets` calls :func:`vendor_bundle` for each of
:data:`BUNDLES`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

__all__ = ["ALLOWED_LICENCES", "BUNDLES", "D3_BUNDLE", "EsbuildBundle", "PLOTLY_BUNDLE", "PLOTLY_JS_VERSION",
           "PLOTLY_TRACE_TYPES", "TOOLS", "check_plotly_version", "plotly_js_version", "vendor_bundle"]

TOOLS = Path(__file__).resolve().parents[3] / "tools" / "site-bundles"
"""The npm project of the bundles (``package.json``, ``package-lock.json`` and the entries), in the
repository (the book is built from a checkout)."""

ALLOWED_LICENCES = frozenset({"MIT", "ISC", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "0BSD", "Zlib"})
"""Licences a bundled package may have: permissive ones, whose notice the licences file carries."""

LICENCES_FILE = "THIRD-PARTY-LICENSES.txt"

PLOTLY_JS_VERSION = "4.1.1"
"""The plotly.js version of the vendored bundle: the one the installed ``plotly`` package targets."""

PLOTLY_TRACE_TYPES = frozenset({"bar", "box", "heatmap", "scatter"})
"""The trace types of the site's plotly.js bundle (``tools/site-bundles/plotly.js`` registers them;
``tests/book/test_page_weight.py`` checks this list against the bundle's registered modules in the
browser): every type the book draws. Layout features (sliders, menus, frames, shapes,
annotations, animation) are in plotly.js's core."""

_ESBUILD = ("--bundle", "--minify", "--format=iife", "--target=es2016", "--legal-comments=eof", "--log-level=warning")


@dataclass(frozen=True)
class EsbuildBundle:
    """One script that esbuild builds from an entry in :data:`TOOLS`.

    Attributes:
        name: Its name in the vendor manifest.
        entry: The entry file, in :data:`TOOLS`.
        package: The npm package whose version and licence the manifest gives.
        folder: The destination folder under ``_static/vendor``.
        file: The file name the pages load.
        options: esbuild options besides :data:`_ESBUILD` (the global name, defines, loaders).
    """

    name: str
    entry: str
    package: str
    folder: str
    file: str
    options: tuple[str, ...]

    def digest(self, tools: Path = TOOLS) -> str:
        """A digest of what the bundle is built from: the lock file, the entry and the options."""
        parts = [(tools / "package-lock.json").read_bytes(), (tools / self.entry).read_bytes(),
                 repr((_ESBUILD, self.options, self.file)).encode()]
        return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


PLOTLY_BUNDLE = EsbuildBundle(
    "plotly.js", "plotly.js", "plotly.js", "plotly", "plotly.min.js",
    # plotly.js's own esbuild settings (its esbuild-config.js); the maplibre stylesheet that its
    # registry imports serves the map traces only, which this bundle leaves out.
    ("--global-name=Plotly", "--define:global=window", "--define:define.amd=false", "--loader:.css=empty"))

D3_BUNDLE = EsbuildBundle(
    "d3", "d3.js", "d3-selection", "d3", "d3.min.js",
    # RequireJS loads it as the module "d3" (BertViz's `requirejs(['jquery', 'd3'], ...)`).
    ("--global-name=d3",
     '--footer:js=if (typeof define === "function" && define.amd) define([], function () { return d3; });'))

BUNDLES: tuple[EsbuildBundle, ...] = (PLOTLY_BUNDLE, D3_BUNDLE)


def _npm_ci(tools: Path) -> None:
    """``npm ci`` in ``tools``, unless its node_modules already holds exactly the lock file's packages.
    Under a file lock (``tools/node_modules.lock``): ``npm ci`` deletes node_modules first, so two builds
    at once (the test suite's two processes, say) would otherwise pull it from under each other."""
    with FileLock(str(tools / "node_modules.lock")):
        _npm_ci_unlocked(tools)


def _npm_ci_unlocked(tools: Path) -> None:
    lock_hash = hashlib.sha256((tools / "package-lock.json").read_bytes()).hexdigest()
    stamp = tools / "node_modules" / ".book-lock-sha256"
    if stamp.is_file() and stamp.read_text().strip() == lock_hash:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(f"npm is needed to build the site's bundles ({tools}); install Node.js/npm")
    result = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                            cwd=tools, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"npm ci in {tools} failed ({result.returncode}): {result.stderr.strip()[-800:]}")
    stamp.write_text(lock_hash + "\n")


def _package_root(path: str) -> tuple[str, str] | None:
    """The npm package a bundled file comes from, and its folder: ``node_modules/@scope/name/...``
    gives ``("@scope/name", "node_modules/@scope/name")`` (the innermost ``node_modules`` counts)."""
    parts = path.split("/")
    if "node_modules" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("node_modules")
    end = i + 3 if parts[i + 1].startswith("@") else i + 2
    return "/".join(parts[i + 1:end]), "/".join(parts[:end])


def _licences(tools: Path, metafile: Path) -> tuple[str, list[str]]:
    """The licences file's text for the packages esbuild put in a bundle, and ``name@version`` of each."""
    roots = {}
    [output] = json.loads(metafile.read_text())["outputs"].values()
    for path, used in output["inputs"].items():
        found = _package_root(path) if used["bytesInOutput"] > 0 else None  # not e.g. an emptied stylesheet
        if found is not None:
            roots[found[1]] = found[0]
    sections, packages = [], []
    for folder, name in sorted(roots.items(), key=lambda item: (item[1], item[0])):
        root = tools / folder
        meta = json.loads((root / "package.json").read_text(encoding="utf-8"))
        licence = meta.get("license", "")
        if licence not in ALLOWED_LICENCES:
            raise RuntimeError(f"{name}@{meta['version']} is bundled but its licence is {licence!r}, not one of "
                               f"{sorted(ALLOWED_LICENCES)} (sitebuild.bundles.ALLOWED_LICENCES)")
        texts = sorted(p for p in root.iterdir() if p.is_file() and p.name.upper().startswith(("LICENSE", "LICENCE")))
        if texts:
            body = "\n".join(p.read_text(encoding="utf-8", errors="replace").strip() for p in texts)
        else:  # a few small packages state their licence in package.json only
            author = meta.get("author", "")
            author = author.get("name", "") if isinstance(author, dict) else author
            repository = meta.get("repository", "")
            repository = repository.get("url", "") if isinstance(repository, dict) else repository
            body = (f"The package ships no licence file; its package.json gives the licence {licence}, "
                    f"author {author or 'not named'}, repository {repository or 'not named'}.")
        sections.append(f"{name} {meta['version']} ({licence})\n{'-' * 72}\n{body}\n")
        packages.append(f"{name}@{meta['version']}")
    return "\n\n".join(sections), packages


def _build(bundle: EsbuildBundle, tools: Path, out: Path) -> None:
    """Runs esbuild: ``out/<file>``, ``out/<LICENCES_FILE>`` and ``out/bundle.json``."""
    _npm_ci(tools)
    out = out.resolve()  # esbuild runs in tools
    out.mkdir(parents=True, exist_ok=True)
    metafile = out / "metafile.json"
    result = subprocess.run([str(tools / "node_modules" / ".bin" / "esbuild"), bundle.entry, *_ESBUILD,
                             *bundle.options, f"--outfile={out / bundle.file}", f"--metafile={metafile}"],
                            cwd=tools, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"esbuild {bundle.entry} failed ({result.returncode}): {result.stderr.strip()[-800:]}")
    text, packages = _licences(tools, metafile)
    (out / LICENCES_FILE).write_text(text, encoding="utf-8")
    main = json.loads((tools / "node_modules" / bundle.package / "package.json").read_text(encoding="utf-8"))
    (out / "bundle.json").write_text(json.dumps(
        {"version": main["version"], "licence": main["license"], "packages": packages}, indent=1) + "\n")
    metafile.unlink()


def vendor_bundle(bundle: EsbuildBundle, vendor: Path, cache: Path, tools: Path = TOOLS) -> dict[str, Any]:
    """Builds ``bundle`` (or takes it from ``cache``) into ``vendor/<folder>``; returns its manifest entry.

    Args:
        bundle: One of :data:`BUNDLES`.
        vendor: The site's vendor folder (``_static/vendor``).
        cache: The vendor cache; the build lands in ``<cache>/<folder>-<digest>/``.
        tools: The npm project (:data:`TOOLS`).

    Raises:
        RuntimeError: If ``tools`` is missing (not a checkout of the repository), npm or
            esbuild fails, or a bundled package's licence is not in :data:`ALLOWED_LICENCES`.
    """
    if not (tools / "package-lock.json").is_file():
        raise RuntimeError(f"{tools} is missing: the site's bundles are built from the repository's tools/site-bundles")
    digest = bundle.digest(tools)
    built = cache / f"{bundle.folder}-{digest}"
    if not (built / "bundle.json").is_file():
        if built.exists():
            shutil.rmtree(built)
        _build(bundle, tools, built)
    dest = vendor / bundle.folder
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in (bundle.file, LICENCES_FILE):
        shutil.copyfile(built / name, dest / name)
    info = json.loads((built / "bundle.json").read_text())
    version = info["version"] if bundle.package == bundle.name else f"{bundle.package} {info['version']}"
    return {"name": bundle.name, "version": version, "source": f"npm, bundled with esbuild ({bundle.entry})",
            "integrity": f"tools/site-bundles/package-lock.json; digest {digest}", "licence": info["licence"],
            "folder": bundle.folder, "licence_files": [LICENCES_FILE], "files": [bundle.file],
            "bundled": info["packages"], "pinned": digest}


def plotly_js_version() -> str:
    """The plotly.js version that the installed ``plotly`` Python package targets.

    Returns:
        A version such as ``"4.1.1"``: the one of the bundle the package ships in its
        ``package_data`` (what ``plotly.offline.get_plotlyjs_version()`` reports).
    """
    from plotly.offline import get_plotlyjs_version

    return str(get_plotlyjs_version())


def check_plotly_version() -> None:
    """Raises ``RuntimeError`` unless the installed ``plotly`` package, :data:`PLOTLY_JS_VERSION` and
    ``tools/site-bundles`` agree on the plotly.js version."""
    installed = plotly_js_version()
    pinned = json.loads((TOOLS / "package.json").read_text())["dependencies"]["plotly.js"]
    if installed != PLOTLY_JS_VERSION or pinned != PLOTLY_JS_VERSION:
        raise RuntimeError(
            f"the installed plotly package targets plotly.js {installed}, sitebuild.bundles.PLOTLY_JS_VERSION "
            f"is {PLOTLY_JS_VERSION} and tools/site-bundles pins {pinned}: make all three agree (pin "
            f"plotly.js@{installed} in tools/site-bundles/package.json and run `npm install` there)")
