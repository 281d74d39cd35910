"""The labs' stored "Open in Colab" badge and install cell, checked against ``_config.yml`` or rewritten.

The repository is named in one place, ``repository.url`` and ``repository.branch`` of
``_config.yml``; a lab (``notebooks/*.ipynb`` and its Chinese twin under ``zh/notebooks/``)
stores a badge that opens it on Colab from that repository, and an install cell
(:func:`install_cell.lab_install_cell`) that installs the package from it. Command line::

    python book/_ext/lab_sync.py          # checks every lab (exit status 1 on a problem)
    python book/_ext/lab_sync.py --sync   # rewrites them: what a fork runs after changing repository.url
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat

from install_cell import lab_install_cell, uses_smollm2
from page_notebooks import _COLAB_LINK, _GIT_REQUIREMENT, Repository

__all__ = ["LAB_FOLDERS", "lab_problems", "labs", "main", "read_repository", "stored_badge_url", "sync_lab"]

_ROOT = Path(__file__).resolve().parents[2]
LAB_FOLDERS = ("notebooks", "zh/notebooks")
"""The folders of the labs, English and Chinese (their code cells are the same, the install cell included)."""


def labs(root: Path = _ROOT) -> list[Path]:
    """Every lab of both editions (``notebooks/*.ipynb``, ``zh/notebooks/*.ipynb``), sorted."""
    return sorted(path for folder in LAB_FOLDERS for path in (root / folder).glob("*.ipynb"))


def read_repository(config: Path) -> Repository:
    """The repository that ``_config.yml`` names.

    Args:
        config: Path to the book's ``_config.yml``.

    Returns:
        Its ``repository.url`` and ``repository.branch`` (Jupyter Book's default branch: ``master``).

    Raises:
        ValueError: If the file names no ``repository.url``.
    """
    import yaml

    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    repository = data.get("repository") or {}
    if not repository.get("url"):
        raise ValueError(f"config {config} has no repository.url")
    return Repository(repository["url"], str(repository.get("branch") or "master"))


def stored_badge_url(repository: Repository, lab: str) -> str:
    """The Colab URL a lab's stored badge must have: the lab on the repository's branch.

    Args:
        repository: The repository of ``_config.yml``.
        lab: The lab's path in the repository (``notebooks/01-bottleneck-lab.ipynb``).
    """
    return repository.colab(lab)


def lab_problems(path: Path, repository: Repository, root: Path = _ROOT) -> list[str]:
    """What is wrong with a lab's stored badge and install cell, for this repository.

    Args:
        path: The lab notebook.
        repository: The repository of ``_config.yml``.
        root: The repository's root (the badge names the lab's path from it).

    Returns:
        One sentence per problem; empty when the badge opens this very lab from ``repository`` on
        its branch and the install cell installs the package from ``repository``.
    """
    notebook = nbformat.read(path, as_version=4)
    lab = path.resolve().relative_to(root.resolve()).as_posix()
    problems = []
    first = notebook.cells[0] if notebook.cells else None
    badges = _COLAB_LINK.findall(first.source) if first is not None and first.cell_type == "markdown" else []
    expected = stored_badge_url(repository, lab)
    if [url for _, url in badges] != [expected]:
        problems.append(f"{lab}: the first cell's Colab badge should be the one link {expected}, "
                        f"found {[url for _, url in badges]}")
    codes = [cell for cell in notebook.cells if cell.cell_type == "code"]
    urls = _GIT_REQUIREMENT.findall(codes[0].source) if codes else []
    if not urls or any(url.rstrip("/").removesuffix(".git") != repository.url for url, _ in urls):
        problems.append(f"{lab}: the install cell should install from git+{repository.url}, "
                        f"found {[url for url, _ in urls]}")
    elif codes[0].source != lab_install_cell(repository.git_requirement(), _smollm2(notebook)):
        problems.append(f"{lab}: the install cell (its first code cell) is not install_cell.lab_install_cell's")
    return problems


def _smollm2(notebook: nbformat.NotebookNode) -> bool:
    """Whether a lab loads SmolLM2-135M (chapter 7): its install cell then installs the model's file too."""
    return uses_smollm2("\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code"))


def sync_lab(path: Path, repository: Repository, root: Path = _ROOT) -> bool:
    """Rewrites a lab's stored badge and install cell to name ``repository`` (nothing else changes).

    Args:
        path: The lab notebook.
        repository: The repository of ``_config.yml``.
        root: The repository's root.

    Returns:
        Whether the file changed.
    """
    text = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(text, as_version=4)
    lab = path.resolve().relative_to(root.resolve()).as_posix()
    first = notebook.cells[0]
    first.source = _COLAB_LINK.sub(lambda match: f"[{match.group(1)}]({stored_badge_url(repository, lab)})",
                                   first.source, count=1)
    install = next(cell for cell in notebook.cells if cell.cell_type == "code")
    install.source = lab_install_cell(repository.git_requirement(), _smollm2(notebook))
    new = nbformat.writes(notebook) + "\n"
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: Sequence[str] | None = None) -> int:
    """Checks (or with ``--sync`` rewrites) every lab's badge and install cell against ``_config.yml``."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--sync", action="store_true", help="rewrite the labs to name _config.yml's repository")
    parser.add_argument("--root", type=Path, default=_ROOT, help="the repository's root")
    args = parser.parse_args(argv)
    repository = read_repository(args.root / "_config.yml")
    found = labs(args.root)
    if args.sync:
        changed = [lab.relative_to(args.root).as_posix() for lab in found if sync_lab(lab, repository, args.root)]
        print(f"{len(changed)} of {len(found)} labs rewritten for {repository.url}: {', '.join(changed) or '-'}")
    problems = [problem for lab in found for problem in lab_problems(lab, repository, args.root)]
    print("\n".join(problems) or f"every lab's badge and install cell name {repository.url}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
