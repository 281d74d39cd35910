"""The helper package as a student installs it: the wheel and the sdist of ``why-attention-helpers``.

``python -m build`` makes both (the wheel from the unpacked sdist, so a file missing from the sdist
is missing from the wheel too); ``twine check --strict`` reads their metadata; the archives are
compared with ``src/helpers``; and the wheel is installed into a fresh virtual environment, made in
a temporary folder and used from a temporary working directory with no ``PYTHONPATH`` (nothing of
the repository is on ``sys.path`` there), where chapter 3's core cells run: scaled dot-product
attention against PyTorch's, ``Var(q·k) = d_k``, a ``MultiHeadAttention`` forward pass against
``torch.nn.MultiheadAttention``, a figure of :mod:`helpers.figures` with its Plotly bundle, an
import of every module of the package, and a reading of every installed module's source: none
imports Sphinx, starts a process (Node.js) or reads the repository's ``tools/`` (the site's build
is in ``book/_ext/sitebuild``, not in the wheel). The long description is then rendered there as the package
index renders it (``readme_renderer[md]``).

PyTorch goes into that environment the way ``scripts/setup.sh`` installs it: from PyTorch's CPU
index (``TORCH_INDEX_URL``) when it answers, else from pip's configured index, at the version of
the running environment's torch, through pip's cache (no ``--no-cache-dir``). Timings of each step
are printed. About 1–2 minutes, most of it unpacking torch.
"""

from __future__ import annotations

import ast
import email
import email.policy
import inspect
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomllib
import torch

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "helpers"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DIST_NAME = "why-attention-helpers"
TORCH_INDEX_URL = os.environ.get("TORCH_INDEX_URL", "https://download.pytorch.org/whl/cpu")

# Never in a distribution: build outputs, environments, caches, editor and notebook droppings.
FORBIDDEN_PARTS = {"_build", ".venv", ".venv-oldest", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis",
                   ".ruff_cache", ".ipynb_checkpoints", ".git", "book", "notebooks", "benchmarks", "scripts"}



# What a module of the student's package must not do: the site's build (Sphinx, Node.js, the
# repository's tools/) lives with the book, in book/_ext/sitebuild, and is not in the wheel.
def build_tooling(source: str) -> list[str]:
    """What a module's source does that needs the site's build: the modules it imports (Sphinx, docutils,
    fontTools, subprocess...), the processes it starts (``os.system``, ``os.popen``, ``os.exec*``...), the
    Node.js commands it names, the repository's ``tools/site-bundles`` it reads. Self-contained (it needs
    ``ast`` only): the fresh environment runs its source (:data:`SCAN`)."""
    build_modules = {"sphinx", "docutils", "myst_nb", "myst_parser", "jupyter_book", "jupyter_cache", "fontTools",
                     "subprocess", "pty", "sitebuild"}
    node_commands = {"node", "nodejs", "npm", "npx", "esbuild"}
    os_processes = ("system", "popen", "exec", "spawn", "posix_spawn", "fork")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            names = []
        found += [f"imports {name}" for name in names if name.split(".")[0] in build_modules]
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
                and node.attr.startswith(os_processes)):
            found.append(f"calls os.{node.attr}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in node_commands:
                found.append(f"names the command {node.value!r}")
            if "site-bundles" in node.value:
                found.append("reads tools/site-bundles")
    return found


SCAN = "import ast\n\n" + inspect.getsource(build_tooling)
""":func:`build_tooling`, as the fresh environment runs it."""


@dataclass
class Dist:
    """The built archives, and how long each step took."""

    wheel: Path
    sdist: Path
    timings: dict[str, float] = field(default_factory=dict)


def _package_files() -> set[str]:
    """Every file of ``src/helpers`` (relative to ``src``), caches excluded."""
    return {path.relative_to(PACKAGE.parent).as_posix() for path in PACKAGE.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment minus anything that would point Python at the repository or its .venv."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "CONDA_PREFIX"}}
    env["PATH"] = os.pathsep.join(part for part in env.get("PATH", "").split(os.pathsep)
                                  if part and not Path(part).resolve().is_relative_to(ROOT))
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    result = subprocess.run(command, cwd=cwd, env=env or _clean_env(), capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} exited with {result.returncode}:\n{result.stdout[-4000:]}\n"
                    f"{result.stderr[-4000:]}")
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dist]:
    """``python -m build`` of the repository into a temporary folder: an sdist, then a wheel built from it."""
    out = tmp_path_factory.mktemp("dist")
    start = time.perf_counter()
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], cwd=out, env=dict(os.environ))
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    yield Dist(wheels[0], sdists[0], {"python -m build (sdist, then wheel)": time.perf_counter() - start})


def _wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name), policy=email.policy.compat32)


def test_twine_check_accepts_the_wheel_and_the_sdist(dist: Dist) -> None:
    out = _run([sys.executable, "-m", "twine", "check", "--strict", str(dist.wheel), str(dist.sdist)], cwd=ROOT,
               env=dict(os.environ))
    assert out.count("PASSED") == 2, out


def test_metadata_names_the_distribution_the_version_and_the_dependencies(dist: Dist) -> None:
    meta = _wheel_metadata(dist.wheel)
    assert meta["Name"] == DIST_NAME
    init = (PACKAGE / "__init__.py").read_text()
    version = re.search(r'^__version__ = "([^"]+)"$', init, re.M)
    assert version is not None, "helpers/__init__.py has no __version__"
    assert meta["Version"] == PYPROJECT["version"] == version.group(1)  # one version, wherever it is read
    assert dist.wheel.name == f"why_attention_helpers-{PYPROJECT['version']}-py3-none-any.whl"
    assert meta["Requires-Python"] == PYPROJECT["requires-python"]
    assert meta["License-Expression"] == "MIT"
    plain = sorted(r for r in meta.get_all("Requires-Dist") if "extra ==" not in r)
    assert plain == sorted(d.replace(" ", "") for d in PYPROJECT["dependencies"])
    assert meta["Description-Content-Type"] == "text/markdown"
    description = meta.get_payload()
    assert description.strip() == (ROOT / PYPROJECT["readme"]).read_text().strip()
    assert "import helpers" in description or "from helpers import" in description  # says the import name
    assert "$" not in description  # no TeX: the index's renderer shows it raw


def test_wheel_holds_every_file_of_the_package_and_nothing_else(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as archive:
        names = archive.namelist()
    payload = {n for n in names if ".dist-info/" not in n}
    expected = _package_files() - {"helpers/README.md"}  # the long description, in METADATA instead
    assert payload == expected, (f"missing from the wheel: {sorted(expected - payload)}; "
                                 f"not in src/helpers: {sorted(payload - expected)}")
    assert "helpers/py.typed" in payload  # PEP 561: the type hints are for users too
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_sdist_holds_the_package_and_its_tests_and_nothing_it_should_not(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as archive:
        members = [m.name for m in archive.getmembers() if m.isfile()]
    prefix = f"why_attention_helpers-{PYPROJECT['version']}/"
    assert all(m.startswith(prefix) for m in members)
    files = {m.removeprefix(prefix) for m in members}
    bad = sorted(f for f in files if FORBIDDEN_PARTS & set(Path(f).parts[:-1]) or f.endswith((".pyc", ".whl")))
    assert not bad, f"the sdist holds {bad}"
    package = {f.removeprefix("src/") for f in files if f.startswith("src/helpers/")}
    assert package == _package_files(), (f"missing: {sorted(_package_files() - package)}; "
                                         f"extra: {sorted(package - _package_files())}")
    assert {"pyproject.toml", "LICENSE", "PKG-INFO", "tests/conftest.py", "tests/test_attention.py"} <= files
    assert not any(f.startswith("tests/book/") for f in files)  # the book's tests need the whole repository
    top = {Path(f).parts[0] for f in files}
    allowed = {"pyproject.toml", "setup.cfg", "PKG-INFO", "README.md", "LICENSE", "MANIFEST.in", "src", "tests"}
    assert top <= allowed, top - allowed


# What the fresh environment runs: chapter 3's core cells, then an import of every module, and a
# reading of every installed module's source (build_tooling, from SCAN).
CHECK = SCAN + r'''
import importlib
import importlib.metadata as metadata
import json
import pkgutil
import sys
import time
from pathlib import Path

start = time.perf_counter()
import torch
import torch.nn.functional as F
from torch import nn

import helpers
import helpers.viz as viz
from helpers import MultiHeadAttention, causal_mask, scaled_dot_product_attention
from helpers.experiments import dot_variance
from helpers.figures import dot_variance as variance_figures

repo = Path(sys.argv[1])
torch.manual_seed(0)
report = {"import_s": time.perf_counter() - start, "helpers_file": helpers.__file__, "prefix": sys.prefix,
          "sys_path_in_repo": [p for p in sys.path if p and Path(p).resolve().is_relative_to(repo)],
          "version": helpers.__version__, "dist_version": metadata.version("why-attention-helpers"),
          "torch": torch.__version__}

# Chapter 3: scaled dot-product attention, causal and with a padding mask, against PyTorch's.
q, k, v = torch.randn(2, 4, 6, 16), torch.randn(2, 4, 6, 16), torch.randn(2, 4, 6, 8)
out = scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(6))
report["sdpa_causal_err"] = (out - F.scaled_dot_product_attention(q, k, v, is_causal=True)).abs().max().item()
pad = torch.ones(2, 1, 1, 6, dtype=torch.bool)
pad[1, ..., 4:] = False
out = scaled_dot_product_attention(q, k, v, attn_mask=pad)
report["sdpa_padding_err"] = (out - F.scaled_dot_product_attention(q, k, v, attn_mask=pad)).abs().max().item()

# Chapter 3: Var(q . k) grows like d_k; dividing by sqrt(d_k) brings it back to 1.
sweep = dot_variance.dot_product_variance((16, 64, 256), distribution="gaussian", num_samples=4096)
report["var_ratio"] = [m / d for m, d in zip(sweep.measured, sweep.d_k)]
report["scaled_var"] = list(sweep.scaled)

# Chapter 4's module: a forward pass, against torch.nn.MultiheadAttention with the same weights.
mha = MultiHeadAttention(32, 4).eval()
twin = nn.MultiheadAttention(32, 4, batch_first=True).eval()
with torch.no_grad():
    twin.in_proj_weight.copy_(torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight]))
    twin.in_proj_bias.copy_(torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]))
    twin.out_proj.weight.copy_(mha.o_proj.weight)
    twin.out_proj.bias.copy_(mha.o_proj.bias)
    x = torch.randn(2, 5, 32)
    y, weights = mha(x, need_weights=True)
    y_ref, weights_ref = twin(x, x, x, need_weights=True)
report["mha_shape"] = list(y.shape)
report["mha_err"] = (y - y_ref).abs().max().item()
report["mha_weights_err"] = (weights.mean(1) - weights_ref).abs().max().item()

# Chapter 3's first figure, and what JupyterLab and the site receive for it.
fig = variance_figures.variance_figure({name: dot_variance.dot_product_variance((4, 16, 64), distribution=name,
                                                                                num_samples=512)
                                        for name in ("gaussian", "uniform")})
bundle = viz.mime_bundle(fig)
report["figure_traces"] = len(fig.data)
report["figure_sliders"] = len(fig.layout.sliders)
report["bundle_types"] = sorted(bundle)
report["bundle_plotly_traces"] = len(bundle["application/vnd.plotly.v1+json"]["data"])

# Every module of the package imports.
failed = {}
modules = []
for info in pkgutil.walk_packages(helpers.__path__, "helpers."):
    modules.append(info.name)
    try:
        importlib.import_module(info.name)
    except Exception as error:  # reported, and the test names the module
        failed[info.name] = f"{type(error).__name__}: {error}"
report["modules"] = modules
prefix = Path(sys.prefix).resolve()
report["module_files_outside_prefix"] = [name for name in modules if name in sys.modules
                                         and not Path(sys.modules[name].__file__).resolve().is_relative_to(prefix)]
report["import_failures"] = failed
installed = [Path(folder) for folder in helpers.__path__]
sources = sorted(path for folder in installed for path in folder.rglob("*.py"))
report["sources_read"] = len(sources)
report["build_tooling"] = {path.relative_to(folder.parent).as_posix(): found for folder in installed
                           for path in sources if path.is_relative_to(folder)
                           for found in [build_tooling(path.read_text(encoding="utf-8"))] if found}
report["total_s"] = time.perf_counter() - start
print(json.dumps(report))
'''


RENDER = r'''
import email, sys, zipfile
from readme_renderer.markdown import render
with zipfile.ZipFile(sys.argv[1]) as archive:
    name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    description = email.message_from_bytes(archive.read(name)).get_payload()
html = render(description, variant="GFM")
if html is None:
    sys.exit("readme_renderer could not render the long description")
print(html)
'''


def _torch_index_answers() -> bool:
    """Whether PyTorch's CPU index answers within 5 seconds (as ``scripts/setup.sh`` probes it)."""
    try:
        urllib.request.urlopen(urllib.request.Request(f"{TORCH_INDEX_URL.rstrip('/')}/torch/", method="HEAD"),
                               timeout=5).close()
    except Exception:  # DNS failure, refused, timeout, HTTP error: all mean "not from here"
        return False
    return True


@pytest.fixture
def fresh_venv_dir() -> Iterator[Path]:
    """Where the fresh environment goes: a temporary folder, removed afterwards in the background.

    The environment is ~0.9 GB in ~30,000 files (torch alone 14,000). Removing them takes a second
    or two on most disks but 50-100 s on one mounted with ``discard`` (this project's machine), so
    ``rm -rf`` runs on its own, in a session of its own, while the suite goes on.
    """
    folder = Path(tempfile.mkdtemp(prefix="why-attention-fresh-venv-"))
    try:
        yield folder / "venv"
    finally:
        subprocess.Popen(["rm", "-rf", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)


def test_wheel_runs_chapter_3_in_a_fresh_environment_without_the_repository(
        dist: Dist, fresh_venv_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    venv, work = fresh_venv_dir, tmp_path / "work"
    work.mkdir()
    timings = dict(dist.timings)
    # A venv without pip (ensurepip alone takes ~10 s); this environment's pip installs into it (--python).
    start = time.perf_counter()
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=work)
    python = venv / "bin" / "python"
    timings["python -m venv"] = time.perf_counter() - start
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile"]

    start = time.perf_counter()
    torch_spec = f"torch=={torch.__version__.split('+')[0]}"
    index = ["--index-url", TORCH_INDEX_URL] if _torch_index_answers() else []
    _run([*pip, torch_spec, *index], cwd=work)
    timings[f"pip install {torch_spec} {' '.join(index) or '(configured index)'}"] = time.perf_counter() - start

    start = time.perf_counter()
    _run([*pip, str(dist.wheel)], cwd=work)
    timings["pip install the wheel (and numpy, plotly, ipywidgets, anywidget)"] = time.perf_counter() - start

    start = time.perf_counter()
    script = work / "chapter3_core.py"
    script.write_text(CHECK)
    # -I: isolated mode (no PYTHON* variables, no user site, no script folder on sys.path)
    out = _run([str(python), "-I", str(script), str(ROOT)], cwd=work, env=_clean_env(OMP_NUM_THREADS="1"))
    timings["run chapter 3's core cells and import every module"] = time.perf_counter() - start
    report = json.loads(out.strip().splitlines()[-1])
    timings["  of which: import torch and helpers"] = report["import_s"]

    # The long description as the package index renders it (readme_renderer[md], cmarkgfm, as PyPI does;
    # twine check does not render Markdown without it).
    start = time.perf_counter()
    _run([*pip, "readme-renderer[md]"], cwd=work)
    html = _run([str(python), "-I", "-c", RENDER, str(dist.wheel)], cwd=work, env=_clean_env())
    timings["render the long description as PyPI does"] = time.perf_counter() - start

    with capsys.disabled():
        total = sum(seconds for step, seconds in timings.items() if not step.startswith(" "))
        print(f"\n[distribution] {dist.wheel.name}: {dist.wheel.stat().st_size / 1e3:.0f} kB, "
              f"{dist.sdist.name}: {dist.sdist.stat().st_size / 1e3:.0f} kB; {total:.0f} s in all")
        for step, seconds in timings.items():
            print(f"[distribution]   {seconds:6.1f} s  {step}")

    # Installed from the wheel into the fresh environment, not found in the repository.
    helpers_file = Path(report["helpers_file"]).resolve()
    assert helpers_file.is_relative_to(venv.resolve()), helpers_file
    assert not helpers_file.is_relative_to(ROOT), helpers_file
    assert report["sys_path_in_repo"] == []
    assert report["module_files_outside_prefix"] == []
    assert report["version"] == report["dist_version"] == PYPROJECT["version"]
    assert report["torch"].split("+")[0] == torch.__version__.split("+")[0]

    # Chapter 3's results, with the numbers the chapter states.
    assert report["sdpa_causal_err"] < 1e-5 and report["sdpa_padding_err"] < 1e-5, report
    assert all(abs(ratio - 1) < 0.1 for ratio in report["var_ratio"]), report["var_ratio"]  # Var(q.k) = d_k
    assert all(abs(var - 1) < 0.1 for var in report["scaled_var"]), report["scaled_var"]  # scaled: 1
    assert report["mha_shape"] == [2, 5, 32]
    assert report["mha_err"] < 1e-5 and report["mha_weights_err"] < 1e-5, report
    assert report["figure_traces"] >= 2 and report["figure_sliders"] == 1, report
    assert "application/vnd.plotly.v1+json" in report["bundle_types"] and "text/html" in report["bundle_types"]
    assert report["bundle_plotly_traces"] == report["figure_traces"]

    # The package's page on the index: a title, the two code blocks (install, example), no raw Markdown.
    assert html.count("<h1") == 1 and html.count("<pre") >= 2, html[:2000]
    assert "```" not in html and "](" not in html, html[:2000]

    # Every module of the package imports with the package's own dependencies only, and none of the
    # installed modules needs the site's build: none imports Sphinx, starts a process or names Node.js.
    expected = {p.relative_to(PACKAGE.parent).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
                for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts} - {"helpers"}
    assert set(report["modules"]) == expected
    assert report["import_failures"] == {}
    assert report["sources_read"] == len(expected) + 1  # every module's file, helpers/__init__.py included
    assert report["build_tooling"] == {}, report["build_tooling"]
    assert not any(name.split(".")[1].startswith("site_") for name in report["modules"])  # the old site modules


def test_the_package_holds_no_module_of_the_sites_build() -> None:
    """Every module of src/helpers read as the fresh environment reads the installed ones (fast, no wheel), and
    the reader itself: it finds what the site's build does (book/_ext/sitebuild)."""
    found = {path.relative_to(PACKAGE.parent).as_posix(): build_tooling(path.read_text(encoding="utf-8"))
             for path in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in path.parts}
    assert len(found) > 50 and not any(found.values()), {name: f for name, f in found.items() if f}
    site = ROOT / "book" / "_ext" / "sitebuild"
    assert "imports sphinx.util" in build_tooling((site / "extension.py").read_text())
    assert "imports subprocess" in build_tooling((site / "typeset.py").read_text())  # MathJax in Node.js
    assert "names the command 'npm'" in build_tooling((site / "npm.py").read_text())
    assert "reads tools/site-bundles" in build_tooling((site / "bundles.py").read_text())
    assert "imports fontTools" in build_tooling((site / "fonts.py").read_text())
    assert build_tooling("import os\nos.system('node x.js')\n") == ["calls os.system"]
