"""The notebook cache's key: a digest of what the book's notebooks run, and of nothing else.

jupyter-cache keys each executed notebook by its own text, not by the package it imports; so
``scripts/build.sh`` starts the cache afresh when this key changes, and the workflow
(``.github/workflows/book.yml``) restores only a cache made under the same key. Both take it from
here.

What the notebooks run is the helper package, ``src/helpers`` (every ``.py`` file of it). The
site's build (``book/_ext``: the Sphinx extensions, vendoring, bundles, build-time math) changes
how pages are written, never what a notebook computes, so a change there re-executes nothing.

    python scripts/cache_key.py   # prints the key (16 hex digits)
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

__all__ = ["NOTEBOOK_INPUTS", "NOTEBOOK_ENVIRONMENT", "cache_key", "notebook_inputs"]

ROOT = Path(__file__).resolve().parents[1]

NOTEBOOK_INPUTS = ("src/helpers",)
"""The folders, relative to the repository, whose Python files the notebooks run."""

NOTEBOOK_ENVIRONMENT = ("HELPERS_SEED_OFFSET",)
"""The environment variables that change what the notebooks compute (``helpers.seeding``): a build with
another seed offset executes every notebook again instead of reusing the cache of another offset."""


def notebook_inputs(root: Path = ROOT) -> list[Path]:
    """Every file the key covers: the ``.py`` files under :data:`NOTEBOOK_INPUTS`, sorted.

    Args:
        root: The repository (a copy of it in a test).

    Returns:
        Their paths relative to ``root`` (caches excluded).

    Raises:
        ValueError: If a folder of :data:`NOTEBOOK_INPUTS` is missing under ``root``.
    """
    files = []
    for folder in NOTEBOOK_INPUTS:
        if not (root / folder).is_dir():
            raise ValueError(f"root: {root} has no {folder}/ (not the repository?)")
        files += [path.relative_to(root) for path in (root / folder).rglob("*.py") if "__pycache__" not in path.parts]
    return sorted(files, key=lambda path: path.as_posix())


def cache_key(root: Path = ROOT) -> str:
    """The key: a SHA-256 of the path and content of every file of :func:`notebook_inputs`, and of the
    values of :data:`NOTEBOOK_ENVIRONMENT` (when set and not empty, so an unset offset keeps the key).

    Args:
        root: The repository (a copy of it in a test).

    Returns:
        Its first 16 hex digits.
    """
    digest = hashlib.sha256()
    for path in notebook_inputs(root):
        digest.update(path.as_posix().encode() + b"\0" + (root / path).read_bytes() + b"\0")
    for name in NOTEBOOK_ENVIRONMENT:
        if os.environ.get(name, "").strip():
            digest.update(f"{name}={os.environ[name].strip()}".encode() + b"\0")
    return digest.hexdigest()[:16]


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit("usage: python scripts/cache_key.py (prints the notebook cache's key)")
    print(cache_key())
