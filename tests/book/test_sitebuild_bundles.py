"""sitebuild.bundles (book/_ext/sitebuild): the site's d3 bundle holds every d3 function BertViz's scripts call and
works as RequireJS loads it (run in Node.js); licences are read from the packages esbuild bundled,
and a package under a licence outside the allowed set stops the build."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sitebuild import bundles as site_bundles
from sitebuild.bundles import D3_BUNDLE, PLOTLY_BUNDLE, TOOLS, vendor_bundle

NODE = shutil.which("node")


@pytest.fixture(scope="module")
def d3_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundles")
    entry = vendor_bundle(D3_BUNDLE, root / "vendor", root / "cache")
    assert entry["files"] == ["d3.min.js"] and entry["licence"] == "BSD-3-Clause"
    return root / "vendor" / "d3" / "d3.min.js"


def _bertviz_calls() -> set[str]:
    """The ``d3.<name>`` that BertViz's head and model views call (not the d3 v3 fallback in a catch)."""
    import bertviz

    folder = Path(bertviz.__file__).parent
    text = "".join((folder / name).read_text(encoding="utf-8") for name in ("head_view.js", "model_view.js"))
    return set(re.findall(r"\bd3\.([A-Za-z0-9_]+)", text)) - {"scale"}  # d3.scale.category10: d3 3's, caught


@pytest.mark.skipif(NODE is None, reason="Node.js runs the bundle")
def test_the_d3_bundle_has_what_bertviz_calls_and_defines_an_amd_module(d3_bundle: Path) -> None:
    calls = sorted(_bertviz_calls())
    assert {"select", "scaleOrdinal", "schemeCategory10", "hsl", "min", "version"} <= set(calls)
    script = """
const vm = require("vm"), fs = require("fs");
const context = {}; vm.createContext(context);
let amd = null;
context.define = (deps, factory) => { amd = factory(); }; context.define.amd = {};
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), context);
const d3 = amd;
const colours = d3.scaleOrdinal(d3.schemeCategory10);
console.log(JSON.stringify({
  types: Object.fromEntries(JSON.parse(process.argv[2]).map(name => [name, typeof d3[name]])),
  same: amd === context.d3,
  first: colours("a"), second: colours("b"), again: colours("a"),
  hsl: [d3.hsl("#ff0000").h, d3.hsl("#ff0000").s, d3.hsl("#ff0000").l],
  min: d3.min([3, 1, 2]),
}));
"""
    result = subprocess.run([NODE, "-e", script, str(d3_bundle), json.dumps(calls)], capture_output=True,
                            text=True, check=True)
    found = json.loads(result.stdout)
    missing = {name: kind for name, kind in found["types"].items() if kind == "undefined"}
    assert not missing, f"BertViz calls d3 functions the bundle lacks: {missing}"
    assert found["same"]  # the AMD module is the global d3
    assert (found["first"], found["second"], found["again"]) == ("#1f77b4", "#ff7f0e", "#1f77b4")  # category10
    assert found["hsl"] == [0, 1, 0.5] and found["min"] == 1


def test_a_bundled_files_package_is_its_innermost_node_modules_entry() -> None:
    assert site_bundles._package_root("node_modules/d3-scale/src/ordinal.js") == (
        "d3-scale", "node_modules/d3-scale")
    assert site_bundles._package_root("node_modules/@plotly/d3/d3.js") == ("@plotly/d3", "node_modules/@plotly/d3")
    assert site_bundles._package_root("node_modules/a/node_modules/@s/b/x.js") == (
        "@s/b", "node_modules/a/node_modules/@s/b")
    assert site_bundles._package_root("plotly.js") is None  # the entry itself


def _fake_project(tmp_path: Path, licence: str) -> tuple[Path, Path]:
    tools = tmp_path / "tools"
    package = tools / "node_modules" / "demo"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "demo", "version": "1.2.3", "license": licence}))
    (package / "LICENSE").write_text("Demo licence text\n")
    metafile = tmp_path / "meta.json"
    metafile.write_text(json.dumps({"outputs": {"out.js": {"inputs": {
        "node_modules/demo/index.js": {"bytesInOutput": 10}, "entry.js": {"bytesInOutput": 5},
        "node_modules/unused/style.css": {"bytesInOutput": 0}}}}}))
    return tools, metafile


def test_the_licences_file_names_each_bundled_package_with_its_licence_text(tmp_path: Path) -> None:
    tools, metafile = _fake_project(tmp_path, "ISC")
    text, packages = site_bundles._licences(tools, metafile)
    assert packages == ["demo@1.2.3"]  # not the stylesheet that contributed no bytes
    assert text.startswith("demo 1.2.3 (ISC)\n") and "Demo licence text" in text


def test_a_bundled_package_under_another_licence_stops_the_build(tmp_path: Path) -> None:
    tools, metafile = _fake_project(tmp_path, "GPL-3.0")
    with pytest.raises(RuntimeError, match=r"demo@1\.2\.3 is bundled but its licence is 'GPL-3.0'"):
        site_bundles._licences(tools, metafile)


def test_the_digest_follows_the_lock_file_and_the_entry(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    shutil.copytree(TOOLS, tools, ignore=shutil.ignore_patterns("node_modules"))
    before = PLOTLY_BUNDLE.digest(tools)
    assert PLOTLY_BUNDLE.digest(TOOLS) == before != D3_BUNDLE.digest(tools)
    (tools / "plotly.js").write_text((tools / "plotly.js").read_text() + "\n// changed\n")
    assert PLOTLY_BUNDLE.digest(tools) != before


def test_a_missing_project_is_named(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="site-bundles"):
        vendor_bundle(D3_BUNDLE, tmp_path / "vendor", tmp_path / "cache", tools=tmp_path / "nowhere")
