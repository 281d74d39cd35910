"""The notebook cache is keyed on what the notebooks run (``scripts/cache_key.py``: the helper package),
so a change to the site's build alone (``book/_ext``) re-executes no notebook.

The unit tests read the key of a copy of the repository's package and extensions, edited; the book
test copies the repository with the session's build (``_build``: its notebook cache, doctrees and
pages), edits a module of the site's build in the copy, rebuilds there with ``scripts/build.sh --all``
(every page read again), and reads jupyter-cache's records: not one notebook executed. In a copy, so
that the tests running side by side in the other process (``scripts/test.sh``) read the session's site
and sources unchanged.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
       "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
SITE_BUILD_FILE = ROOT / "book" / "_ext" / "sitebuild" / "pages.py"
"""The site-build module the book test edits (a comment: the pages it writes stay the same)."""


def _cache_key_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cache_key", ROOT / "scripts" / "cache_key.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cache_key = _cache_key_module()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of what the key could read: the package and the book's extensions (the site's build among them)."""
    for folder in ("src/helpers", "book/_ext"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_the_key_is_the_packages_own(tree: Path) -> None:
    key = cache_key.cache_key(tree)
    assert key == cache_key.cache_key(ROOT)  # the contents and their paths in the repository, not where it is
    assert len(key) == 16 and int(key, 16) >= 0
    inputs = cache_key.notebook_inputs(ROOT)
    package = sorted(path.relative_to(ROOT) for path in (ROOT / "src" / "helpers").rglob("*.py")
                     if "__pycache__" not in path.parts)
    assert inputs == package and len(inputs) > 50
    with pytest.raises(ValueError, match="root: .* has no src/helpers/"):
        cache_key.cache_key(tree / "book")


def test_a_change_to_the_sites_build_leaves_the_key_and_a_change_to_the_package_changes_it(tree: Path) -> None:
    key = cache_key.cache_key(tree)
    site = tree / "book" / "_ext"
    _append(site / "sitebuild" / "pages.py", "\n# the site's build edited\n")
    _append(site / "sitebuild" / "extension.py", "\nEDITED = True\n")
    (site / "sitebuild" / "new_module.py").write_text("X = 1\n", encoding="utf-8")
    _append(site / "notebook_links.py", "\n# edited\n")
    (tree / "src" / "helpers" / "__pycache__").mkdir(exist_ok=True)
    (tree / "src" / "helpers" / "__pycache__" / "stale.py").write_text("", encoding="utf-8")
    assert cache_key.cache_key(tree) == key, "a change outside the package changed the notebook cache's key"

    renderer = tree / "src" / "helpers" / "viz" / "renderer.py"
    original = renderer.read_text(encoding="utf-8")
    _append(renderer, "\n# the package edited\n")
    assert cache_key.cache_key(tree) != key, "a change to the package left the notebook cache's key"
    renderer.write_text(original, encoding="utf-8")
    assert cache_key.cache_key(tree) == key
    (tree / "src" / "helpers" / "new_module.py").write_text("X = 1\n", encoding="utf-8")
    assert cache_key.cache_key(tree) != key  # a new module of the package
    (tree / "src" / "helpers" / "new_module.py").rename(tree / "src" / "helpers" / "renamed.py")
    assert cache_key.cache_key(tree) != key


def _records(cache_dir: Path) -> set[tuple[int, str, str]]:
    """jupyter-cache's records: one per executed notebook, with when it was executed."""
    from jupyter_cache import get_cache

    return {(record.pk, record.hashkey, record.created.isoformat())
            for record in get_cache(str(cache_dir)).list_cache_records()}


def _copy_with_build(destination: Path) -> Path:
    """The repository as git sees it (its files, committed or not, and .git, for the build's revision and
    the Chinese edition's drift), with the session's ``_build``; the environment and the npm folders that
    git ignores linked, not copied."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    for name in sorted(set(listed.split("\0")) - {""}):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    shutil.copytree(ROOT / ".git", destination / ".git", symlinks=True)
    shutil.copytree(ROOT / "_build", destination / "_build", symlinks=True,
                    ignore=shutil.ignore_patterns(".build.lock", ".build-of-this-run.json"))
    for ignored in (".venv", "tools/site-bundles/node_modules", "tools/jupyterhub/node_modules"):
        if (ROOT / ignored).exists():
            (destination / ignored).parent.mkdir(parents=True, exist_ok=True)
            (destination / ignored).symlink_to(ROOT / ignored, target_is_directory=True)
    return destination


@pytest.mark.book
@pytest.mark.slow
def test_a_change_to_the_sites_build_alone_re_executes_no_notebook(book_build, measurements: list[str],
                                                                    tmp_path: Path) -> None:
    assert book_build.returncode == 0, book_build.log[-3000:]
    copy = _copy_with_build(tmp_path / "repository")
    build_dir = copy / "_build"
    assert (build_dir / ".notebook-key").read_text().strip() == cache_key.cache_key(ROOT) == cache_key.cache_key(copy)
    before = _records(build_dir / ".jupyter_cache")
    assert len(before) >= 20, f"the session's build cached {len(before)} notebooks"
    site_build_file = copy / SITE_BUILD_FILE.relative_to(ROOT)
    site_build_file.write_bytes(site_build_file.read_bytes() + b"\n# edited by tests/book/test_notebook_cache.py\n")
    assert cache_key.cache_key(copy) == (build_dir / ".notebook-key").read_text().strip()
    start = time.perf_counter()
    # --all: every page is read again, each of its notebooks taken from the cache or executed
    run = subprocess.run(["bash", "scripts/build.sh", "--all"], cwd=copy, env={**os.environ, **ENV},
                         capture_output=True, text=True, timeout=3600, check=False)
    seconds = time.perf_counter() - start
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-3000:]
    assert site_build_file.read_text(encoding="utf-8").endswith("# edited by tests/book/test_notebook_cache.py\n")
    english = log[:log.index("Source Folder: " + str(copy / "zh"))] if str(copy / "zh") in log else log
    assert f"Source Folder: {copy}" in english  # the copy was built, not the repository
    cached = english.count("Using cached notebook")
    assert "Executing notebook" not in log, log[-3000:]
    assert cached >= 20, f"only {cached} pages were read from the notebook cache"
    assert _records(build_dir / ".jupyter_cache") == before  # no record added or replaced: nothing executed
    measurements.append(f"rebuild after a change to the site's build (build.sh --all, in a copy): {seconds:.0f} s, "
                        f"{cached} pages read from the notebook cache, none executed")
