"""The Sphinx extension that puts every executable page of the book into the site as a notebook,
opened on Colab or downloaded from the page.

A local Sphinx extension (build tooling, never imported by a reader), loaded by Jupyter Book
through ``_config.yml``::

    sphinx:
      local_extensions:
        notebook_links: book/_ext

The repository is named in one place, ``repository.url`` and ``repository.branch`` of
``_config.yml``, which Jupyter Book hands to Sphinx as the theme options ``repository_url`` and
``repository_branch``. From them, at build time, this extension

- writes ``_notebooks/<docname>.ipynb`` into the site for every executable page
  (:func:`page_notebooks.page_notebook`): the MyST chapters converted with jupytext, and the labs.
  Each is stored without outputs and opens with a markdown cell naming the book page it comes
  from and a code cell that installs the helper package where it is missing
  (:func:`install_cell.install_cell_source`), at the version the site was built from (the package
  index's release when ``notebook_links_from_index`` is true, else the repository at the tag or
  commit of the build), with the other packages the page uses and the repository's files it reads
  (a quiz's questions);
- points the page's Colab launch button (sphinx-book-theme's own) at that notebook on the branch
  the site is published to (``gh-pages``), and its ``.ipynb`` download button at the site's copy;
- points the "Open in Colab" badge shown on a lab's page at the same generated notebook.

The labs' own stored badge and install cell are checked against ``_config.yml`` by
``python book/_ext/lab_sync.py`` (``--sync`` rewrites them): :mod:`lab_sync`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat

from install_cell import PACKAGE
from page_notebooks import (
    COLAB,
    NOTEBOOKS_DIR,
    PAGES_BRANCH,
    Book,
    Repository,
    book_extras,
    build_ref,
    installed_with,
    package_version,
    page_notebook,
)

__all__ = ["setup"]


def _book(app: Any) -> Book | None:
    """The build's :class:`Book`, from the theme options Jupyter Book derives from ``_config.yml``."""
    if hasattr(app, "_notebook_links_book"):
        return app._notebook_links_book
    from sphinx.util import logging

    options = app.config.html_theme_options or {}
    book = None
    if options.get("repository_url"):
        try:
            repository = Repository(options["repository_url"], options.get("repository_branch") or "main")
        except ValueError as error:
            logging.getLogger(__name__).warning(f"notebook_links: repository.url of _config.yml: {error}")
        else:
            root = _root(app)
            pyproject = root / "pyproject.toml"
            book = Book(repository, build_ref(os.environ, root, repository.branch),
                        title=app.config.html_title or app.config.project, site_url=app.config.html_baseurl or None,
                        pages_branch=app.config.notebook_links_pages_branch,
                        package_version=package_version(pyproject) if app.config.notebook_links_from_index else None,
                        extras=book_extras(pyproject), covered=installed_with(PACKAGE, "ipykernel"),
                        edition="zh" if app.config.language == "zh_CN" else "")
    else:
        logging.getLogger(__name__).warning("notebook_links: _config.yml names no repository.url")
    app._notebook_links_book = book
    return book


def _root(app: Any) -> Path:
    """The repository's root: the first folder up from the book's that holds pyproject.toml."""
    return next((folder for folder in (Path(app.srcdir), *Path(app.srcdir).parents)
                 if (folder / "pyproject.toml").is_file()), Path(app.srcdir))


def _is_executable(app: Any, docname: str) -> bool:
    """A page that runs: a notebook, or a MyST markdown notebook (the theme's own test)."""
    return "kernelspec" in app.env.metadata.get(docname, {})


def _retarget_badges(app: Any, doctree: Any, docname: str) -> None:
    """On a lab's page, its "Open in Colab" badge opens the generated notebook (``doctree-resolved``)."""
    from docutils import nodes

    book = _book(app)
    if book is None or not _is_executable(app, docname):
        return
    suffix = Path(app.env.doc2path(docname)).suffix
    for reference in doctree.findall(nodes.reference):
        uri = reference.get("refuri", "")
        if uri.startswith(f"{COLAB}/github/") and uri.endswith(f"/{docname}{suffix}"):
            reference["refuri"] = book.colab(docname)


def _header_buttons(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """The Colab launch button and the ``.ipynb`` download of an executable page.

    An ``html-page-context`` handler that runs after sphinx-book-theme's (priority 501): it edits
    the theme's own button groups, or adds them as the theme would.
    """
    book = _book(app)
    buttons = context.get("header_buttons")
    if book is None or buttons is None or not _is_executable(app, pagename):
        return
    from sphinx.locale import get_translation

    translation = get_translation("booktheme")
    groups = {button.get("label"): button for button in buttons if button.get("type") == "group"}

    if (app.config.html_theme_options.get("launch_buttons") or {}).get("colab_url"):
        colab = {"type": "link", "text": "Colab", "tooltip": translation("Launch on") + " Colab",
                 "icon": "_static/images/logo_colab.png", "url": book.colab(pagename)}
        launch = groups.get("launch-buttons")
        if launch is None:
            launch = {"type": "group", "tooltip": translation("Launch interactive content"), "icon": "fas fa-rocket",
                      "buttons": [], "label": "launch-buttons"}
            buttons.insert(0, launch)
        launch["buttons"] = [button for button in launch["buttons"] if button.get("text") != "Colab"] + [colab]

    notebook = {"type": "link", "url": f"{context['pathto'](NOTEBOOKS_DIR, 1)}/{pagename}.ipynb", "text": ".ipynb",
                "icon": "fas fa-code", "tooltip": translation("Download notebook file"),
                "label": "download-notebook-button"}
    download = groups.get("download-buttons")
    if download is None:
        download = {"type": "group", "tooltip": translation("Download this page"), "icon": "fas fa-download",
                    "buttons": [], "label": "download-buttons"}
        buttons.append(download)
    # The theme's .ipynb (a copy of the executed notebook, outputs and all) or, on a lab, its source
    # (also an .ipynb) give way to the generated notebook.
    download["buttons"] = [notebook] + [button for button in download["buttons"]
                                        if button.get("label") != "download-notebook-button"
                                        and button.get("text") != ".ipynb"]


def _write_notebooks(app: Any, exception: Exception | None) -> None:
    """Writes ``_notebooks/<docname>.ipynb`` for every executable page (``build-finished``)."""
    if exception is not None or app.builder.format != "html":
        return
    book = _book(app)
    if book is None:
        return
    from sphinx.util import logging

    env = app.env
    pages = {docname: (env.titles[docname].astext() if docname in env.titles else docname,
                       book.site + app.builder.get_target_uri(docname))
             for docname in env.all_docs}
    written = 0
    for docname in sorted(env.all_docs):
        if not _is_executable(app, docname):
            continue
        title, url = pages[docname]
        notebook = page_notebook(Path(env.doc2path(docname)), docname, book=book, page_title=title, page_url=url,
                                 pages=pages, root=_root(app))
        target = Path(app.outdir, NOTEBOOKS_DIR, f"{docname}.ipynb")
        target.parent.mkdir(parents=True, exist_ok=True)
        text = nbformat.writes(notebook) + "\n"
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
        written += 1
    # GitHub Pages runs Jekyll on a branch without this file, and Jekyll serves no _folder.
    Path(app.outdir, ".nojekyll").touch()
    logging.getLogger(__name__).info(f"notebook_links: {written} notebooks in {NOTEBOOKS_DIR}/ "
                                     f"(install from {book.package_requirement})")


def setup(app: Any) -> dict[str, Any]:
    """Registers the extension with Sphinx.

    Args:
        app: The Sphinx application.

    Returns:
        The extension's metadata (safe for parallel reading and writing).
    """
    app.add_config_value("notebook_links_pages_branch", PAGES_BRANCH, "html", types=[str])
    app.add_config_value("notebook_links_from_index", False, "html", types=[bool])
    app.connect("doctree-resolved", _retarget_badges)
    app.connect("html-page-context", _header_buttons, priority=600)
    app.connect("build-finished", _write_notebooks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
