"""The built book: it builds with warnings as errors, its pages are small, it needs no other host,
and every third-party script it serves carries its licence."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from page_html import MAX_PAGE_BYTES, is_external, resources

from helpers.viz.site import FIGURE_MARKER
from sitebuild.npm import NPM_PACKAGES
from sitebuild.paths import MANIFEST
from sitebuild.vendor import check_vendor

pytestmark = pytest.mark.book

CELL_ERROR = "An error occurred while executing the following cell"  # nbclient's CellExecutionError


def failed_cells(log: str, limit: int = 4000) -> str:
    """The cells that failed in a build's log, each with its source and error (nbclient's message), so
    that a failed notebook names its cell and assertion, not only Sphinx's ExecutionError at the log's end."""
    starts = [match.start() for match in re.finditer(re.escape(CELL_ERROR), log)]
    return "\n".join(log[start:start + limit] for start in starts[:3])


def test_failed_cells_are_found_in_a_build_log() -> None:
    log = ("reading sources...\nTraceback (most recent call last):\n" + CELL_ERROR + ":\n------------------\n"
           "assert speedup > 3\n------------------\n\nAssertionError: \n" + "x" * 5000)
    found = failed_cells(log, limit=200)
    assert found.startswith(CELL_ERROR) and "assert speedup > 3" in found and "AssertionError" in found
    assert failed_cells("no failure here") == ""


def test_book_builds_with_warnings_as_errors(book_build) -> None:
    assert book_build.returncode == 0 and not book_build.warnings, (
        f"jupyter-book build -W failed (exit {book_build.returncode}); warnings:\n"
        + "\n".join(book_build.warnings[:30]) + f"\n--- failed cells ---\n{failed_cells(book_build.log)}"
        + f"\n--- log tail ---\n{book_build.log[-2000:]}")


def test_every_page_is_at_most_1_mb_of_its_own(built_html: Path, pages: list[Path], measurements: list[str]) -> None:
    sizes = {page.relative_to(built_html).as_posix(): page.stat().st_size for page in pages}
    for name, size in sorted(sizes.items(), key=lambda item: -item[1]):
        measurements.append(f"page size: {size / 1e3:8.1f} kB  {name}")
    too_big = {name: size for name, size in sizes.items() if size > MAX_PAGE_BYTES}
    assert sizes and not too_big, f"pages over 1 MB: {too_big}"


def test_no_page_loads_anything_from_another_host(built_html: Path, pages: list[Path]) -> None:
    offenders = []
    for page in pages:
        found = resources(page)
        offenders += [f"{page.relative_to(built_html)}: <{tag}> {url}" for tag, url in found.urls if is_external(url)]
        offenders += [f"{page.relative_to(built_html)}: <style> {url}" for style in found.styles
                      for url in re.findall(r"url\(\s*['\"]?([^)'\"]+)", style) if is_external(url)]
    assert not offenders, "\n".join(offenders[:40])


def test_the_sites_stylesheets_load_nothing_from_another_host(built_html: Path) -> None:
    offenders = []
    for sheet in (built_html / "_static").rglob("*.css"):
        text = sheet.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)  # licence headers cite URLs
        offenders += [f"{sheet.relative_to(built_html)}: {url}" for url in re.findall(r"url\(\s*['\"]?([^)'\"]+)", text)
                      if is_external(url)]
        offenders += [f"{sheet.relative_to(built_html)}: @import {url}" for url in
                      re.findall(r"@import\s+['\"]([^'\"]+)", text) if is_external(url)]
    assert not offenders, "\n".join(offenders[:40])


def test_plotly_is_loaded_once_from_the_site_and_only_where_there_are_figures(pages: list[Path]) -> None:
    with_figures = 0
    for page in pages:
        html = page.read_text(encoding="utf-8")
        scripts = [url for tag, url in resources(page).urls if tag == "script" and "plotly" in url]
        assert "plotly.js v" not in html, f"{page}: plotly.js is inlined into the page"
        if f'class="plotly-graph-div {FIGURE_MARKER}"' in html:
            with_figures += 1
            assert len(scripts) == 1 and "_static/vendor/plotly/plotly.min.js" in scripts[0], (page, scripts)
        else:
            assert not scripts, f"{page} loads plotly.js without a figure: {scripts}"
    assert with_figures >= 1  # the figures page at least


def test_math_and_widget_scripts_come_from_the_site(built_html: Path) -> None:
    figures = built_html / "book" / "figures.html"
    urls = [url for tag, url in resources(figures).urls if tag == "script"]
    assert any("_static/vendor/mathjax/tex-mml-chtml.js" in url for url in urls)
    assert any("_static/vendor/requirejs/require.js" in url for url in urls)
    assert any("_static/vendor/jupyter-widgets/embed-amd.js" in url for url in urls)
    assert "application/vnd.jupyter.widget-state+json" in figures.read_text(encoding="utf-8")


def test_every_vendored_script_has_its_licence_next_to_it(built_html: Path) -> None:
    vendor = built_html / "_static" / "vendor"
    assert check_vendor(vendor) == []
    entries = {entry["name"]: entry for entry in json.loads((vendor / MANIFEST).read_text())["packages"]}
    expected = {package.name: package.licence for package in NPM_PACKAGES} | {"plotly.js": "MIT", "d3": "BSD-3-Clause"}
    assert {name: entry["licence"] for name, entry in entries.items()} == expected
    words = {"MIT": "Permission is hereby granted", "BSD-3-Clause": "Redistribution and use",
             "Apache-2.0": "Apache License", "(CC-BY-4.0 AND OFL-1.1 AND MIT)": "Font Awesome Free License"}
    for name, entry in entries.items():
        texts = [(vendor / entry["folder"] / f).read_text(encoding="utf-8", errors="replace")
                 for f in entry["licence_files"]]
        assert any(words[entry["licence"]] in text for text in texts), f"{name}: no {entry['licence']} text"
        for file in entry["files"]:
            assert (vendor / entry["folder"] / file).stat().st_size > 0
    assert entries["jquery"]["version"].startswith("2.")  # BertViz asks for jQuery 2.0.0
    # The two bundles built here: what they hold, each package's licence text in the file next to them.
    assert entries["plotly.js"]["version"] == "4.1.1" and "plotly.js@4.1.1" in entries["plotly.js"]["bundled"]
    assert {"d3-selection@1.4.2", "d3-scale@2.2.2"} <= set(entries["d3"]["bundled"])  # d3 5.7.0's modules
    for name in ("plotly.js", "d3"):
        text = (vendor / entries[name]["folder"] / "THIRD-PARTY-LICENSES.txt").read_text(encoding="utf-8")
        for package in entries[name]["bundled"]:
            package_name, _, version = package.rpartition("@")
            assert f"\n{package_name} {version} (" in "\n" + text, f"{name}: no licence section for {package}"
