"""The Chinese edition's launch buttons (JupyterHub, Binder, Colab), from the English ``_config.yml``.

Jupyter Book draws the launch buttons of a page that runs (a chapter or a lab) from its
``_config.yml``: ``repository`` (``url``, ``path_to_book``, ``branch``) and ``launch_buttons``
(``jupyterhub_url``, ``binderhub_url``, ``colab_url``, ``notebook_interface``), which it hands to
sphinx-book-theme as theme options. The repository and the hub are named in one place, the English
edition's ``_config.yml``; the Chinese edition (``zh/``, a second book) reads both sections from
there, at ``config-inited``, with ``path_to_docs`` pointing into ``zh/``. Its buttons then open the
Chinese pages' own files: a JupyterHub link (nbgitpuller) opens ``zh/book/...md`` or
``zh/notebooks/...ipynb`` of the reader's clone in JupyterLab, Binder's the same file in the
repository's environment (``binder/``).

Colab opens a notebook from GitHub, not a MyST markdown chapter: in both editions the Colab button
opens each page's generated notebook (:mod:`notebook_links`), the Chinese edition's in
``zh/_notebooks/`` of the published branch (its prose Chinese, its code the English page's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["launch_options", "setup"]

REPOSITORY_KEYS = ("url", "path_to_book", "branch")


def _root(srcdir: Path) -> Path:
    """The repository's root: the first folder up from the book's that holds pyproject.toml."""
    return next((folder for folder in (srcdir, *srcdir.parents) if (folder / "pyproject.toml").is_file()), srcdir)


def launch_options(root: Path, srcdir: Path) -> dict[str, Any]:
    """The theme options of the launch buttons for a book in ``srcdir``, from ``root/_config.yml``.

    Args:
        root: The repository's root (it holds the English edition's ``_config.yml``).
        srcdir: The edition's source folder (``root/zh`` for the Chinese edition).

    Returns:
        ``repository_url``, ``repository_branch``, ``path_to_docs`` (``srcdir`` in the repository)
        and ``launch_buttons``, as Jupyter Book derives them; empty when ``_config.yml`` names no
        repository.
    """
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) or {}
    repository = config.get("repository") or {}
    if not repository.get("url"):
        return {}
    folder = srcdir.resolve().relative_to(root.resolve()).as_posix()
    path = "/".join(part for part in (str(repository.get("path_to_book") or "").strip("/"), folder)
                    if part and part != ".")
    return {"repository_url": repository["url"], "repository_branch": repository.get("branch") or "main",
            "path_to_docs": path, "launch_buttons": dict(config.get("launch_buttons") or {})}


def _config_inited(app: Any, config: Any) -> None:
    """In the Chinese edition, the English edition's repository and launch buttons (``config-inited``)."""
    if config.language != "zh_CN":
        return  # the English edition: Jupyter Book maps its own _config.yml
    srcdir = Path(app.srcdir)
    options = launch_options(_root(srcdir), srcdir)
    if options:
        config.html_theme_options = {**(config.html_theme_options or {}), **options}


def setup(app: Any) -> None:
    """Registers the handlers (both editions load them; they act in the Chinese one)."""
    app.connect("config-inited", _config_inited)
