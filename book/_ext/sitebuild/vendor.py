"""The site's third-party scripts, served by the book itself, copied into the built site with
their licences: the command that ``scripts/build.sh`` runs before ``jupyter-book build``.

The book's pages must work offline, from a zip, or where public CDNs are blocked; so every
script a page needs is copied into the built site, from the registries' own packages, with its
licence next to it: npm's packages as they are published (:mod:`sitebuild.npm`; Font Awesome's
icons cut down to the site's, :mod:`sitebuild.icons`) and two bundles built for the site with
esbuild (plotly.js with the book's trace types and the part of d3 BertViz calls:
:mod:`sitebuild.bundles`).

They land in ``<html>/_static/vendor/<name>/`` with a ``MANIFEST.json``. They are *not* under
``html_static_path``: Jupyter Book adds every ``.js`` found there to every page, whereas each of
these is needed by some pages only.

Command line (run before ``jupyter-book build``; ``scripts/build.sh`` does)::

    PYTHONPATH=book/_ext python -m sitebuild.vendor _build/html

npm tarballs and the built bundles are kept in a cache (``_build/.vendor-cache`` by default) and
reused on the next run (no network then).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from filelock import FileLock

from .bundles import BUNDLES, check_plotly_version, vendor_bundle
from .icons import FONTAWESOME_ICONS, write_icons
from .npm import FONTAWESOME_PACKAGE, NPM_PACKAGES, NpmPackage, copy_npm, fetch
from .paths import MANIFEST, VENDOR

__all__ = ["check_vendor", "main", "vendor_site_assets"]


def _pinned(package: NpmPackage) -> str:
    """A digest of what is vendored of ``package`` (its pin, the files taken, the icons chosen)."""
    chosen = repr(package) + (repr(sorted(FONTAWESOME_ICONS.items())) if package.folder == "fontawesome" else "")
    return hashlib.sha256(chosen.encode()).hexdigest()[:16]


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
    cache_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    # One build at a time fills a cache (two `npm pack`s of one tarball would read each other's half-written file).
    with FileLock(str(cache_dir / ".lock")):
        for package in NPM_PACKAGES:
            tarball = fetch(package, cache_dir)
            entry = {**copy_npm(package, tarball, vendor), "pinned": _pinned(package)}
            if package is FONTAWESOME_PACKAGE:
                write_icons(package, tarball, vendor, entry)
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


def main(argv: list[str] | None = None) -> int:
    """``python -m sitebuild.vendor HTML_DIR [--cache DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m sitebuild.vendor", description=__doc__.split("\n")[0])
    parser.add_argument("html_dir", help="the folder the book is built into, e.g. _build/html")
    parser.add_argument("--cache", default=None, help="npm tarball cache (default: HTML_DIR/../.vendor-cache)")
    args = parser.parse_args(argv)
    vendor = vendor_site_assets(args.html_dir, args.cache)
    entries = json.loads((vendor / MANIFEST).read_text())["packages"]
    size = sum(f.stat().st_size for f in vendor.rglob("*") if f.is_file())
    for entry in entries:
        print(f"sitebuild.vendor: {entry['name']} {entry['version']} ({entry['licence']}, {len(entry['files'])} files)")
    print(f"sitebuild.vendor: {size / 1e6:.1f} MB in {vendor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
