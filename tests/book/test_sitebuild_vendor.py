"""The site's build (book/_ext/sitebuild) without the network or a build: npm tarballs checked against their pinned
integrity, files and licences copied, the cache reused, and the Sphinx glue page by page."""

from __future__ import annotations

import io
import json
import tarfile
import types
from pathlib import Path

import pytest

from helpers.viz.site import D3_PATH, FIGURE_MARKER, JQUERY_PATH, PLOTLY_JS_PATH, REQUIRE_JS_PATH
from sitebuild import bundles, extension, npm
from sitebuild.npm import NpmPackage
from sitebuild.paths import MANIFEST, PLOTLY_JS, REQUIRE_JS
from sitebuild.vendor import check_vendor


def make_tarball(path: Path, files: dict[str, bytes]) -> Path:
    """An npm-style tarball: every file under ``package/``."""
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def fake_package(tmp_path: Path, licence: str = "MIT") -> tuple[NpmPackage, Path]:
    files = {"package.json": json.dumps({"name": "demo", "license": licence}).encode(),
             "dist/demo.min.js": b"window.demo = 1;", "dist/demo.js": b"// unminified", "LICENSE": b"MIT License\n"}
    tmp_path.mkdir(parents=True, exist_ok=True)
    tarball = make_tarball(tmp_path / "demo-1.0.0.tgz", files)
    package = NpmPackage("demo", "1.0.0", npm._sri(tarball.read_bytes()), "demo", ("dist/demo.min.js",),
                         strip="dist/", licence_files=("LICENSE",), licence="MIT")
    return package, tarball


def test_npm_tarball_names_match_what_npm_pack_writes() -> None:
    names = {p.name: p.tarball for p in npm.NPM_PACKAGES}
    assert names["@jupyter-widgets/html-manager"] == "jupyter-widgets-html-manager-1.0.15.tgz"
    assert names["requirejs"] == "requirejs-2.3.6.tgz"


def test_copy_takes_only_the_wanted_files_and_the_licence(tmp_path: Path) -> None:
    package, tarball = fake_package(tmp_path)
    entry = npm.copy_npm(package, tarball, tmp_path / "vendor")
    copied = sorted(p.relative_to(tmp_path / "vendor").as_posix() for p in (tmp_path / "vendor").rglob("*"))
    assert copied == ["demo", "demo/LICENSE", "demo/demo.min.js"]
    assert entry["files"] == ["demo.min.js"] and entry["licence_files"] == ["LICENSE"] and entry["licence"] == "MIT"


def test_a_package_without_a_licence_file_gets_its_licence_text(tmp_path: Path) -> None:
    package, tarball = fake_package(tmp_path)
    package = NpmPackage(**{**package.__dict__, "licence_files": (),
                            "generated_licence": (npm._MIT, "Copyright Demo authors.")})
    npm.copy_npm(package, tarball, tmp_path / "vendor")
    text = (tmp_path / "vendor" / "demo" / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright Demo authors.") and "Permission is hereby granted" in text


def test_a_licence_other_than_the_pinned_one_is_refused(tmp_path: Path) -> None:
    package, _ = fake_package(tmp_path)
    _, tarball = fake_package(tmp_path / "relicensed", licence="GPL-3.0")
    with pytest.raises(RuntimeError, match="package.json says licence 'GPL-3.0', expected 'MIT'"):
        npm.copy_npm(package, tarball, tmp_path / "vendor")


def test_a_cached_tarball_is_reused_without_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package, tarball = fake_package(tmp_path)
    monkeypatch.setattr(npm.shutil, "which", lambda name: None)  # no npm on this machine
    assert npm.fetch(package, tmp_path) == tarball


def test_a_tampered_tarball_is_fetched_again_and_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package, tarball = fake_package(tmp_path)
    tarball.write_bytes(tarball.read_bytes() + b"tampered")

    def fake_npm_pack(command, **kwargs):  # the registry serves the tampered file again
        return types.SimpleNamespace(returncode=0, stderr="")

    monkeypatch.setattr(npm.shutil, "which", lambda name: "/usr/bin/npm")
    monkeypatch.setattr(npm.subprocess, "run", fake_npm_pack)
    with pytest.raises(RuntimeError, match="the tarball's integrity sha512-.* differs from the pinned"):
        npm.fetch(package, tmp_path)
    assert not tarball.exists()  # not kept for the next run


def test_check_vendor_names_a_missing_file(tmp_path: Path) -> None:
    package, tarball = fake_package(tmp_path)
    vendor = tmp_path / "vendor"
    entry = npm.copy_npm(package, tarball, vendor)
    (vendor / MANIFEST).write_text(json.dumps({"packages": [entry]}))
    assert check_vendor(vendor) == []
    (vendor / "demo" / "demo.min.js").unlink()
    assert check_vendor(vendor) == ["demo/demo.min.js is missing"]
    assert check_vendor(tmp_path / "nowhere") == [f"{tmp_path / 'nowhere' / MANIFEST} is missing"]


class FakeApp:
    """The part of Sphinx's application the page hook uses."""

    def __init__(self) -> None:
        self.js: list[tuple[str | None, dict]] = []
        self.env = None

    def add_js_file(self, filename: str | None, **kwargs: object) -> None:
        self.js.append((filename, kwargs))


def test_plotly_is_added_only_to_pages_with_a_figure() -> None:
    app = FakeApp()
    extension._page_context(app, "a", "page.html", {"body": '<div class="plotly-graph-div book-plotly-figure">'},
                              None)
    extension._page_context(app, "b", "page.html", {"body": "<p>no figure</p>"}, None)
    quoted = '<span class="s2">&quot;plotly-graph-div book-plotly-figure&quot;</span>'  # a source listing
    extension._page_context(app, "c", "page.html", {"body": quoted}, None)
    assert app.js == [("vendor/plotly/plotly.min.js", {"priority": 200})]


def test_a_duplicated_inline_script_is_kept_once() -> None:
    from sphinx.builders.html._assets import _JavaScript

    scripts = [_JavaScript("a.js"), _JavaScript(None, body="const X = 1;"), _JavaScript(None, body="const X = 1;"),
               _JavaScript(None, body="const Y = 2;")]
    extension._page_context(FakeApp(), "a", "page.html", {"body": "", "script_files": scripts}, None)
    assert [(s.filename, s.attributes.get("body")) for s in scripts] == [
        ("a.js", None), (None, "const X = 1;"), (None, "const Y = 2;")]


def test_cdn_defaults_are_pointed_at_the_sites_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPERS_BOOK_BUILD", "0")  # restored after the test
    config = types.SimpleNamespace(mathjax_path="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js",
                                   nb_ipywidgets_js={"https://cdnjs.cloudflare.com/require.min.js": {}})
    extension._config_inited(None, config)
    assert config.mathjax_path == "vendor/mathjax/tex-mml-chtml.js"
    assert list(config.nb_ipywidgets_js) == ["vendor/requirejs/require.js", "vendor/jupyter-widgets/embed-amd.js"]
    assert all("://" not in json.dumps(attrs) for attrs in config.nb_ipywidgets_js.values())
    import os

    assert os.environ["HELPERS_BOOK_BUILD"] == "1"  # the kernels of the build inherit it


def test_the_sites_paths_are_the_contracts() -> None:
    """The site build's paths (under _static) and the package's (under the site's root) name the same files, and
    the bundles and packages land where the pages look for them."""
    assert f"_static/{PLOTLY_JS}" == PLOTLY_JS_PATH and f"_static/{REQUIRE_JS}" == REQUIRE_JS_PATH
    assert f"vendor/{bundles.PLOTLY_BUNDLE.folder}/{bundles.PLOTLY_BUNDLE.file}" == PLOTLY_JS
    assert f"_static/vendor/{bundles.D3_BUNDLE.folder}/{bundles.D3_BUNDLE.file}".removesuffix(".js") == D3_PATH
    folders = {p.name: p for p in npm.NPM_PACKAGES}
    assert f"vendor/{folders['requirejs'].folder}/{folders['requirejs'].files[0]}" == REQUIRE_JS
    jquery = folders["jquery"]
    assert f"_static/vendor/{jquery.folder}/{jquery.files[0].removeprefix(jquery.strip)}".removesuffix(".js") == \
        JQUERY_PATH


@pytest.mark.slow
def test_a_tiny_book_built_with_the_sites_build_is_light_and_typesets_its_math(tmp_path: Path) -> None:
    """sitebuild loaded as _config.yml loads it (``sphinx.local_extensions`` from book/_ext), in a real Jupyter Book
    build with warnings as errors: the vendored scripts, math typeset at build time, plotly.js only where a figure
    is, the theme's icon fonts cut down."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    book = tmp_path / "tiny"
    (book / "book").mkdir(parents=True)
    (book / "_config.yml").write_text(
        "title: Tiny\nonly_build_toc_files: true\nexecute:\n  execute_notebooks: 'off'\n"
        f"sphinx:\n  local_extensions:\n    sitebuild: {root / 'book' / '_ext'}\n", encoding="utf-8")
    (book / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/math\n",
                                   encoding="utf-8")
    (book / "book" / "intro.md").write_text("# Intro\n\nNo math, no figure.\n", encoding="utf-8")
    (book / "book" / "math.md").write_text(
        "# Math\n\nInline $q \\cdot k$, and\n\n$$\\mathrm{Var}(q\\cdot k) = d_k$$\n\n"
        f'<div class="plotly-graph-div {FIGURE_MARKER}"></div>\n', encoding="utf-8")
    cache = root / "_build" / ".vendor-cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "book" / "_ext"), str(root / "src")])}
    vendor = subprocess.run([sys.executable, "-m", "sitebuild.vendor", str(book / "_build" / "html"),
                             "--cache", str(cache if cache.is_dir() else tmp_path / "vendor-cache")],
                            env=env, capture_output=True, text=True, timeout=900, check=False)
    assert vendor.returncode == 0, vendor.stderr[-3000:]
    build = subprocess.run([sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(book),
                            "-W", "-n", "--keep-going"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=900, check=False)
    log = build.stdout + build.stderr
    assert build.returncode == 0 and "build succeeded" in log, log[-3000:]
    assert "sitebuild: 6 icon fonts cut down" in log
    html = book / "_build" / "html"
    math, intro = (html / "book" / "math.html").read_text(), (html / "book" / "intro.html").read_text()
    assert "mjx-container" in math and "tex-mml-chtml.js" not in math  # typeset: no MathJax in the browser
    assert f"_static/{PLOTLY_JS}" in math and "plotly.min.js" not in intro
    assert "searchindex.js" not in intro and "fontawesome/icons.js" in intro
    solid = html / "_static" / "vendor" / "fontawesome" / "webfonts" / "fa-solid-900.woff2"
    assert solid.stat().st_size < 20_000
