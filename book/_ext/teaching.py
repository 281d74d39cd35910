"""The tables of the teachers' page (``book/teaching.md``), generated at build time in both editions.

A local Sphinx extension (build tooling, never imported by a reader) with three directives, each a
table that cannot drift from what it describes:

``launch-links``
    Every chapter and lab page of the edition's table of contents (``_toc.yml``, in its order) that
    runs (has a kernel), with its JupyterHub link (nbgitpuller) and its Binder link: the same links
    as the page's launch buttons, made from the same theme options (``repository`` and
    ``launch_buttons`` of ``_config.yml``; :mod:`editions_launch` for the Chinese edition).
``fifty-minute-paths``
    Each chapter's "50-minute path for a teacher", copied from the chapter's own page (the
    paragraph that opens with it and the lists right after it, or the admonition titled with it),
    glued numbers and links resolved.
``lab-resources``
    Each lab's CPU time, peak memory and wall time, from ``benchmarks/results/lab_resources.json``
    (written by ``benchmarks/lab_resources.py``), with where and when it was measured. A lab of the
    table of contents without a measurement is a build warning (an error under ``-W``).

Headers and sentences are in the edition's language (Sphinx ``language``: ``zh_CN`` or English).
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import yaml
from docutils import nodes
from docutils.parsers.rst import Directive

__all__ = ["hub_link", "binder_link", "setup"]

WORDS = {
    "en": {"page": "Page", "hub": "JupyterHub", "binder": "Binder", "open": "open", "chapter": "Chapter",
           "path": "A 50-minute path", "lab": "Lab", "cpu": "CPU time (s)", "rss": "Peak memory of the kernel (MiB)",
           "wall": "Wall time (s)", "marker": "50-minute path",
           "measured": ("Measured on {date} on {cpu} ({cores} cores), torch {torch}, by "
                        "benchmarks/lab_resources.py: each lab run top to bottom in a fresh kernel, one at a time. "
                        "An idle JupyterLab server adds {server:.0f} MiB.")},
    "zh": {"page": "页面", "hub": "JupyterHub", "binder": "Binder", "open": "打开", "chapter": "章",
           "path": "50 分钟路线", "lab": "实验", "cpu": "CPU 时间（秒）", "rss": "内核的内存峰值（MiB）",
           "wall": "耗时（秒）", "marker": "50 分钟",
           "measured": ("{date} 在 {cpu}（{cores} 个核心）上测得，torch {torch}，由 "
                        "benchmarks/lab_resources.py 逐个在新内核中从头到尾运行每个实验。"
                        "一个空闲的 JupyterLab 服务器另占 {server:.0f} MiB。")},
}


class teaching_table(nodes.General, nodes.Element):
    """A placeholder, replaced by its table once every page is known (``doctree-resolved``)."""


def _language(app: Any) -> str:
    return "zh" if str(app.config.language or "").startswith("zh") else "en"


def _placeholder(kind: str) -> type[Directive]:
    class TableDirective(Directive):
        has_content = False

        def run(self) -> list[nodes.Node]:
            return [teaching_table(kind=kind)]

    return TableDirective


def _root(app: Any) -> Path:
    srcdir = Path(app.srcdir)
    return next((folder for folder in (srcdir, *srcdir.parents) if (folder / "pyproject.toml").is_file()), srcdir)


def _toc_docnames(app: Any) -> list[str]:
    """The edition's pages in the order of its ``_toc.yml``."""
    toc = yaml.safe_load((Path(app.srcdir) / "_toc.yml").read_text(encoding="utf-8"))
    names: list[str] = []

    def walk(entry: Any) -> None:
        if isinstance(entry, dict):
            if "file" in entry:
                names.append(str(entry["file"]).removesuffix(".md").removesuffix(".ipynb"))
            for key in ("parts", "chapters", "sections"):
                for child in entry.get(key, []) or []:
                    walk(child)

    names.append(str(toc["root"]))
    walk(toc)
    return names


def _repo_path(app: Any, docname: str) -> str:
    """A page's source file in the repository (``zh/book/...md`` in the Chinese edition)."""
    options = app.config.html_theme_options or {}
    prefix = str(options.get("path_to_docs") or "").strip("/")
    suffix = Path(app.env.doc2path(docname)).suffix
    return f"{prefix}/{docname}{suffix}" if prefix else f"{docname}{suffix}"


def hub_link(options: dict[str, Any], path: str) -> str:
    """The nbgitpuller link of a file of the repository, as sphinx-book-theme's JupyterHub button makes it.

    Args:
        options: The theme options (``repository_url``, ``repository_branch``, ``launch_buttons``).
        path: The file, relative to the repository's root.
    """
    url = options["repository_url"].rstrip("/")
    launch = options.get("launch_buttons") or {}
    interface = {"classic": "tree", "jupyterlab": "lab/tree"}[launch.get("notebook_interface", "classic")]
    query = urlencode({"repo": url, "urlpath": f"{interface}/{url.split('/')[-1]}/{path}",
                       "branch": options.get("repository_branch") or "master"}, safe="/")
    return f"{launch['jupyterhub_url'].strip('/')}/hub/user-redirect/git-pull?{query}"


def binder_link(options: dict[str, Any], path: str) -> str:
    """The Binder link of a file of the repository, as sphinx-book-theme's Binder button makes it (GitHub)."""
    url = options["repository_url"].rstrip("/")
    launch = options.get("launch_buttons") or {}
    interface = {"classic": "tree", "jupyterlab": "lab/tree"}[launch.get("notebook_interface", "classic")]
    parts = urlsplit(url)
    branch = options.get("repository_branch") or "master"
    if parts.netloc == "github.com":
        owner, name = parts.path.strip("/").split("/")[:2]
        base = f"{launch['binderhub_url'].strip('/')}/v2/gh/{owner}/{name}/{branch}"
    else:
        base = f"{launch['binderhub_url'].strip('/')}/v2/git/{quote(url)}/{branch}"
    return f"{base}?urlpath={interface}/{path}"


def _table(headers: list[str], rows: list[list[nodes.Node | str]], widths: list[int]) -> nodes.table:
    table = nodes.table(classes=["teaching-table"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for header in headers:
        row += nodes.entry("", nodes.paragraph(text=header))
    head += row
    body = nodes.tbody()
    group += body
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            if isinstance(cell, str):
                entry += nodes.paragraph(text=cell)
            elif isinstance(cell, list):
                entry.extend(cell)
            else:
                entry += cell
            row += entry
        body += row
    return table


def _page_link(app: Any, fromdoc: str, docname: str) -> nodes.paragraph:
    title = app.env.titles[docname].astext() if docname in app.env.titles else docname
    uri = app.builder.get_relative_uri(fromdoc, docname)
    return nodes.paragraph("", "", nodes.reference("", title, refuri=uri, internal=True))


def _external(text: str, url: str) -> nodes.paragraph:
    return nodes.paragraph("", "", nodes.reference("", text, refuri=url, classes=["teaching-link"]))


def _launch_links(app: Any, fromdoc: str, words: dict[str, str]) -> nodes.Node:
    options = app.config.html_theme_options or {}
    launch = options.get("launch_buttons") or {}
    if not options.get("repository_url") or not launch.get("jupyterhub_url") or not launch.get("binderhub_url"):
        raise ValueError("launch-links: _config.yml names no repository.url, jupyterhub_url or binderhub_url")
    rows = []
    for docname in _toc_docnames(app):
        if "kernelspec" not in app.env.metadata.get(docname, {}):
            continue
        path = _repo_path(app, docname)
        rows.append([_page_link(app, fromdoc, docname), _external(path, hub_link(options, path)),
                     _external(words["open"], binder_link(options, path))])
    return _table([words["page"], words["hub"], words["binder"]], rows, [30, 55, 15])


def _rebase(node: nodes.Node, source_uri: str, target_uri: str) -> None:
    """Relative links of a node copied from page ``source_uri`` made relative to page ``target_uri``."""
    for reference in node.findall(nodes.reference):
        uri = reference.get("refuri", "")
        if not uri or urlsplit(uri).scheme or uri.startswith("/"):
            continue
        if uri.startswith("#"):
            absolute = source_uri + uri
        else:
            absolute = posixpath.normpath(posixpath.join(posixpath.dirname(source_uri), uri))
        reference["refuri"] = posixpath.relpath(absolute.split("#")[0], posixpath.dirname(target_uri) or ".") + (
            "#" + absolute.split("#", 1)[1] if "#" in absolute else "")


def _fifty_minute_path(app: Any, docname: str, marker: str) -> list[nodes.Node]:
    """A chapter's 50-minute path, from its resolved page: the admonition titled with it, or the
    paragraph that opens with it in bold (the bold lead left out) and the lists right after it."""
    doctree = app.env.get_and_resolve_doctree(docname, app.builder)
    for admonition in doctree.findall(nodes.admonition):
        titles = [child for child in admonition.children if isinstance(child, nodes.title)]
        if titles and marker in titles[0].astext():
            return [child.deepcopy() for child in admonition.children if not isinstance(child, nodes.title)]
    for paragraph in doctree.findall(nodes.paragraph):
        first = next((child for child in paragraph.children
                      if not (isinstance(child, nodes.Text) and not str(child).strip())), None)
        if isinstance(first, nodes.strong) and marker in first.astext():
            lead = paragraph.deepcopy()
            while lead.children and not isinstance(lead[0], nodes.strong):
                lead.remove(lead[0])  # empty text before the bold lead
            lead.remove(lead[0])
            if lead.children and isinstance(lead[0], nodes.Text):
                rest = str(lead[0]).lstrip(" .。")
                lead.replace(lead[0], nodes.Text(rest))
            found = [lead] if lead.astext().strip() else []
            sibling = paragraph.next_node(descend=False, siblings=True)
            while isinstance(sibling, (nodes.bullet_list, nodes.enumerated_list)):
                found.append(sibling.deepcopy())
                sibling = sibling.next_node(descend=False, siblings=True)
            return found
    return []


def _fifty_minute_paths(app: Any, fromdoc: str, words: dict[str, str]) -> nodes.Node:
    rows = []
    target_uri = app.builder.get_target_uri(fromdoc)
    for docname in _toc_docnames(app):
        if not (docname.startswith("book/") and docname.endswith("/index")) or docname == "book/api/index":
            continue
        found = _fifty_minute_path(app, docname, words["marker"])
        if not found:
            continue
        for node in found:
            _rebase(node, app.builder.get_target_uri(docname), target_uri)
        rows.append([_page_link(app, fromdoc, docname), found])
    if len(rows) < 6:
        raise ValueError(f"fifty-minute-paths: {len(rows)} chapters with a 50-minute path, expected 6")
    return _table([words["chapter"], words["path"]], rows, [25, 75])


def _lab_resources(app: Any, fromdoc: str, words: dict[str, str]) -> list[nodes.Node]:
    measured = json.loads((_root(app) / "benchmarks" / "results" / "lab_resources.json").read_text(encoding="utf-8"))
    by_lab = {row["lab"]: row for row in measured["rows"]}
    rows = []
    for docname in _toc_docnames(app):
        if not docname.startswith("notebooks/"):
            continue
        name = docname.split("/")[-1] + ".ipynb"
        if name not in by_lab:
            raise ValueError(f"lab-resources: no measurement of {name} in benchmarks/results/lab_resources.json")
        row = by_lab[name]
        rows.append([_page_link(app, fromdoc, docname), f"{row['cpu_s']:.0f}", f"{row['peak_rss_mib']:.0f}",
                     f"{row['wall_s']:.0f}"])
    environment = measured["environment"]
    note = nodes.paragraph(text=words["measured"].format(
        date=environment["date"][:10], cpu=environment["cpu"], cores=environment["cpu_count"],
        torch=environment["torch"], server=measured["server_rss_mib"]))
    return [_table([words["lab"], words["cpu"], words["rss"], words["wall"]], rows, [40, 20, 25, 15]), note]


def _fill(app: Any, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(teaching_table))
    if not placeholders:
        return
    from sphinx.util import logging

    words = WORDS[_language(app)]
    makers = {"launch-links": _launch_links, "fifty-minute-paths": _fifty_minute_paths,
              "lab-resources": _lab_resources}
    for placeholder in placeholders:
        try:
            made = makers[placeholder["kind"]](app, docname, words)
        except (OSError, KeyError, ValueError) as error:
            logging.getLogger(__name__).warning(f"teaching: {placeholder['kind']}: {error}", location=docname)
            made = []
        placeholder.replace_self(made)


def setup(app: Any) -> dict[str, Any]:
    """Registers the three directives and fills their tables once the pages are resolved."""
    app.add_node(teaching_table)
    for kind in ("launch-links", "fifty-minute-paths", "lab-resources"):
        app.add_directive(kind, _placeholder(kind))
    app.connect("doctree-resolved", _fill)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
