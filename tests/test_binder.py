"""binder/: the environment that Binder and a JupyterHub's single-user image build, read the way repo2docker reads it.

repo2docker (``jupyter-repo2docker``) picks the first of its build packs whose ``detect()`` accepts the
repository, run in the repository's root, then renders a Dockerfile from it; both steps need no Docker,
only the files. Here they are run on the repository itself: the build pack must be the pip one (a
``binder/`` folder makes repo2docker ignore the root's ``environment.yml``, a conda environment of the
build's and the tests' packages), on Python 3.11, installing ``binder/requirements.txt`` once the
repository is copied in (it installs the helper package from it) and running ``binder/postBuild``.
``binder/requirements.txt`` is then read as pip reads it: PyTorch's CPU build from PyTorch's CPU
index, the helper package, and everything a chapter or a lab imports (the same list the generated
notebooks' install cells come from), with the bounds of ``pyproject.toml``; and what a hub's image
needs on top: ``jupytext`` and ``nbgitpuller``. Every pinned version is the one installed here, the
one the tests ran (tests/book/test_jupyterhub.py runs a lab through nbgitpuller and JupyterLab).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import jupytext
import nbformat
import pytest
import tomllib
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
sys.path.insert(0, str(ROOT / "book" / "_ext"))  # page_notebooks: what a page imports, as its install cell sees it
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _requirements() -> tuple[list[str], dict[str, Requirement], list[str]]:
    """``binder/requirements.txt``: its options, its requirements by canonical name, its local paths."""
    options, requirements, local = [], {}, []
    for raw in (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-e ") or line in (".", "-e."):
            local.append(line.removeprefix("-e").strip())
        elif line.startswith("-"):
            options.append(line)
        else:
            requirement = Requirement(line)
            requirements[canonicalize_name(requirement.name)] = requirement
    return options, requirements, local


@pytest.fixture(scope="module")
def buildpack(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The build pack repo2docker picks for this repository (its own list, in its own order)."""
    from repo2docker.app import Repo2Docker

    app = Repo2Docker()
    before = Path.cwd()
    os.chdir(ROOT)  # repo2docker detects and renders in the repository's root
    try:
        picked = next((bp for bp in (cls(base_image=app.base_image) for cls in app.buildpacks) if bp.detect()),
                      None) or app.default_buildpack(base_image=app.base_image)
        picked.platform = "linux/amd64"
        picked.rendered = picked.render()  # the Dockerfile, read while still in the root
        picked.python = picked.python_version
        picked.assemble = picked.get_assemble_scripts()
        picked.preassemble = picked.get_preassemble_scripts()
        picked.post_build = picked.get_post_build_scripts()
    finally:
        os.chdir(before)
    return picked


def test_repo2docker_builds_binder_with_pip_on_python_3_11(buildpack: object) -> None:
    from repo2docker.buildpacks import PythonBuildPack

    assert type(buildpack) is PythonBuildPack, f"repo2docker would build with {type(buildpack).__name__}"
    assert buildpack.binder_dir == "binder"
    assert buildpack.python == "3.11"  # binder/runtime.txt; the tests run on 3.11 (pyproject.toml's classifier)
    # installed after the repository is copied in (it holds the package), not from the file alone
    commands = [script for _, script in buildpack.assemble]
    assert any(f'-r "{Path("binder", "requirements.txt")}"' in script for script in commands), commands
    assert not any("requirements.txt" in script for _, script in buildpack.preassemble)
    assert buildpack.post_build == [str(Path("binder", "postBuild"))]
    assert "binder/postBuild" in buildpack.rendered and 'requirements.txt"' in buildpack.rendered
    assert "environment.yml" not in buildpack.rendered  # the root's conda environment (build and tests) is left out


def test_binder_requirements_install_cpu_torch_and_the_package() -> None:
    options, requirements, local = _requirements()
    assert f"--extra-index-url {CPU_INDEX}" in options
    torch = requirements["torch"]
    installed = metadata.version("torch")
    assert str(torch.specifier) == f"=={installed}", f"binder pins {torch}, the tests ran torch {installed}"
    assert installed.endswith("+cpu"), "the pin must name the CPU build, which only PyTorch's CPU index has"
    assert local == ["."], "the helper package must be installed from the repository (-e .)"


def test_binder_requirements_cover_every_import_of_the_chapters_and_labs() -> None:
    """Each page's imports, resolved to distributions as its generated notebook's install cell resolves them."""
    from install_cell import NO_DEPS, PACKAGE
    from page_notebooks import Book, Repository, book_extras, installed_with, page_requirements

    _, requirements, _ = _requirements()
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    book = Book(Repository(config["repository"]["url"], config["repository"]["branch"]), "main",
                extras=book_extras(ROOT / "pyproject.toml"), covered=installed_with(PACKAGE, "ipykernel"))
    pages = [path for path in sorted((ROOT / "book").rglob("*.md")) if "```{code-cell}" in path.read_text()]
    pages += sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert len(pages) >= 20
    missing: dict[str, set[str]] = {}
    for path in pages:
        notebook = (nbformat.read(path, as_version=4) if path.suffix == ".ipynb"
                    else jupytext.reads(path.read_text(encoding="utf-8"), fmt="md:myst"))
        code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
        for module, requirement in page_requirements(code, book)[1:]:  # [0]: the helper package (-e .)
            if module in NO_DEPS:  # installed without its dependencies, by postBuild
                assert f'"{requirement}"' in (ROOT / "binder" / "postBuild").read_text(encoding="utf-8"), requirement
                continue
            wanted = Requirement(requirement)
            listed = requirements.get(canonicalize_name(wanted.name))
            if listed is None or (wanted.specifier and listed.specifier != wanted.specifier):
                missing.setdefault(str(wanted), set()).add(path.relative_to(ROOT).as_posix())
    assert not missing, f"imported but not in binder/requirements.txt with the book extra's bounds: {missing}"


def test_binder_requirements_have_what_a_hubs_image_needs() -> None:
    """Jupytext (chapters open as notebooks), nbgitpuller (the JupyterHub links), JupyterLab; each at
    the bounds the book names, and nbgitpuller at the version the hub test ran."""
    _, requirements, _ = _requirements()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {canonicalize_name(Requirement(line).name): Requirement(line)
                for group in pyproject["optional-dependencies"].values() for line in group}
    for name in ("jupytext", "jupyterlab", "nbgitpuller"):
        assert name in requirements, f"binder/requirements.txt does not install {name}"
        assert requirements[name].specifier == declared[name].specifier, (requirements[name], declared[name])
    assert str(requirements["nbgitpuller"].specifier) == f"=={metadata.version('nbgitpuller')}"
    for name, requirement in requirements.items():  # the tests ran every one of them
        if name in declared or name == "torch":
            installed = metadata.version(name)
            assert requirement.specifier.contains(installed, prereleases=True), (requirement, installed)


def test_postbuild_makes_jupytext_open_markdown_chapters_as_notebooks(tmp_path: Path) -> None:
    """binder/postBuild, run as repo2docker runs it (an executable, with NB_PYTHON_PREFIX), puts
    binder/overrides.json where JupyterLab reads an administrator's settings."""
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK), "repo2docker runs postBuild only when it is executable"
    mode = subprocess.run(["git", "ls-files", "-s", "binder/postBuild"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.split()
    assert mode and mode[0] == "100755", f"binder/postBuild is not executable in git: {mode}"
    overrides = json.loads((BINDER / "overrides.json").read_text(encoding="utf-8"))
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers == {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}
    prefix = tmp_path / "srv" / "conda"
    subprocess.run([shlex.quote(str(post_build))], cwd=ROOT, env={**os.environ, "NB_PYTHON_PREFIX": str(prefix)},
                   check=True)
    written = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert json.loads(written.read_text(encoding="utf-8")) == overrides
