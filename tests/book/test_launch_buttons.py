"""Every chapter and lab page, in both editions, has a JupyterHub and a Binder launch button, made from _config.yml.

The JupyterHub button is an nbgitpuller link, ``<launch_buttons.jupyterhub_url>/hub/user-redirect/git-pull``
with ``repo`` = ``repository.url``, ``branch`` = ``repository.branch`` and ``urlpath`` =
``lab/tree/<repository name>/<the page's file>`` (``zh/...`` for a Chinese page: its own file); the
Binder button opens the same file on ``launch_buttons.binderhub_url``. Every value is read from
``_config.yml`` here, never retyped. The teachers' page's link table (``book/teaching.md``,
generated from the table of contents) lists exactly these links, in the table of contents' order;
its 50-minute-path table holds every chapter's path, and its resources table every lab.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
EDITIONS = {"en": ("", ROOT), "zh": ("zh/", ROOT / "zh")}  # site folder and source folder


def _toc_files(source: Path) -> list[str]:
    """The edition's pages, in its _toc.yml's order, as source files relative to ``source``."""
    toc = yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(entry: object) -> None:
        if isinstance(entry, dict):
            if "file" in entry:
                names.append(entry["file"])
            for key in ("parts", "chapters", "sections"):
                for child in entry.get(key) or []:
                    walk(child)

    walk(toc)
    files = []
    for name in names:
        for suffix in (".ipynb", ".md"):
            if (source / f"{name}{suffix}").is_file():
                files.append(f"{name}{suffix}")
                break
    return files


def _runs(source: Path, file: str) -> bool:
    """A page that runs: a notebook, or a MyST markdown notebook (a kernelspec in its front matter)."""
    if file.endswith(".ipynb"):
        return True
    text = (source / file).read_text(encoding="utf-8")
    return text.startswith("---\n") and "\nkernelspec:" in text.split("\n---\n", 1)[0]


def _links(page: Path) -> list[str]:
    return [html_lib.unescape(href) for href in re.findall(r'href="([^"]+)"', page.read_text(encoding="utf-8"))]


def _expected(edition: str, file: str) -> tuple[str, str]:
    """The JupyterHub and Binder links of a page's file, from _config.yml."""
    repository, launch = CONFIG["repository"], CONFIG["launch_buttons"]
    url, branch = repository["url"].rstrip("/"), repository["branch"]
    name = url.split("/")[-1]
    folder = "/".join(part for part in (str(repository.get("path_to_book") or "").strip("/"),
                                        EDITIONS[edition][0].strip("/")) if part)
    path = f"{folder}/{file}" if folder else file
    assert launch["notebook_interface"] == "jupyterlab"
    hub = f"{launch['jupyterhub_url'].rstrip('/')}/hub/user-redirect/git-pull?" + "|".join(
        [f"repo={url}", f"branch={branch}", f"urlpath=lab/tree/{name}/{path}"])
    owner = urlsplit(url).path.strip("/").split("/")[0]
    binder = f"{launch['binderhub_url'].rstrip('/')}/v2/gh/{owner}/{name}/{branch}?urlpath=lab/tree/{path}"
    return hub, binder


def _normal(link: str) -> str:
    """A JupyterHub link with its query decoded and sorted (the order of its parameters does not matter)."""
    base, _, query = link.partition("?")
    params = {key: values[0] for key, values in parse_qs(query, keep_blank_values=True).items()}
    order = {"repo": 0, "branch": 1, "urlpath": 2}
    return base + "?" + "|".join(f"{key}={params[key]}" for key in sorted(params, key=lambda k: order.get(k, 9)))


def _pages(edition: str) -> list[str]:
    source = EDITIONS[edition][1]
    return [file for file in _toc_files(source) if _runs(source, file)]


@pytest.mark.book
@pytest.mark.parametrize("edition", sorted(EDITIONS))
def test_every_chapter_and_lab_page_has_jupyterhub_and_binder_buttons_from_config(built_html: Path,
                                                                                   edition: str) -> None:
    pages = _pages(edition)
    labs = [file for file in pages if file.startswith("notebooks/")]
    chapters = [file for file in pages if re.fullmatch(r"book/0\d-[a-z-]+/index\.md", file)]
    assert len(labs) == 8 and len(chapters) == 8, (labs, chapters)  # chapters 0-7, and their labs
    problems = {}
    for file in pages:
        page = built_html / EDITIONS[edition][0] / Path(file).with_suffix(".html")
        links = _links(page)
        hub, binder = _expected(edition, file)
        hubs = [_normal(link) for link in links if "/hub/user-redirect/git-pull?" in link]
        binders = [link for link in links if link.startswith(CONFIG["launch_buttons"]["binderhub_url"])]
        if hubs != [hub] or binders != [binder]:
            problems[file] = (hubs, binders)
        colab = [link for link in links if link.startswith(CONFIG["launch_buttons"]["colab_url"] + "/github/")]
        # Colab opens the page's generated notebook, written into the edition's site (_notebooks/, zh/_notebooks/):
        # every chapter and lab of both editions; a Chinese notebook's words are Chinese
        docname = Path(file).with_suffix("").as_posix()
        site = built_html / EDITIONS[edition][0]
        notebook = site / "_notebooks" / f"{docname}.ipynb"
        folder = f"{EDITIONS[edition][0].strip('/')}/_notebooks" if EDITIONS[edition][0].strip("/") else "_notebooks"
        if not colab or not all(link.endswith(f"/blob/gh-pages/{folder}/{docname}.ipynb") for link in colab):
            problems[file] = f"Colab button {colab}"
        elif not notebook.is_file():
            problems[file] = f"no generated notebook {notebook}"
        elif edition == "zh":
            cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
            install = next(cell for cell in cells if cell["cell_type"] == "code")
            if "本笔记本即" not in "".join(cells[0]["source"]):
                problems[file] = "the Chinese notebook's first cell is not Chinese"
            elif 'os.environ.setdefault("HELPERS_LANGUAGE", "zh")' not in "".join(install["source"]):
                problems[file] = "the Chinese notebook's checkers would speak English on Colab"
            else:  # a class in China: a wheel at hand, then the reader's index (a mirror), then GitHub
                source = "".join(install["source"])
                wheel = source.find('glob.glob("why_attention_helpers-*.whl")')
                index = source.find('"why-attention-helpers==')
                github = source.find("@ git+")  # (none once the package is on the index: notebook_links_from_index)
                if not 0 <= wheel < index or (github >= 0 and github < index) or "PIP_INDEX_URL" not in source:
                    problems[file] = "the Chinese notebook does not try a wheel and the reader's index before GitHub"
    assert not problems, problems


@pytest.mark.book
@pytest.mark.parametrize("edition", sorted(EDITIONS))
def test_the_teachers_page_tables_are_made_from_the_toc_the_chapters_and_the_measurements(built_html: Path,
                                                                                          edition: str) -> None:
    page = built_html / EDITIONS[edition][0] / "book" / "teaching.html"
    text = page.read_text(encoding="utf-8")
    # every page's JupyterHub link, in the table of contents' order, each the page's own button's
    hubs = [_normal(link) for link in _links(page) if "/hub/user-redirect/git-pull?" in link]
    assert hubs == [_expected(edition, file)[0] for file in _pages(edition)]
    binders = [link for link in _links(page) if link.startswith(CONFIG["launch_buttons"]["binderhub_url"])]
    assert binders == [_expected(edition, file)[1] for file in _pages(edition)]
    tables = re.findall(r'<table class="[^"]*teaching-table.*?</table>', text, flags=re.S)
    assert len(tables) == 3, len(tables)
    # the 50-minute paths: one row a chapter that has one (1 to 7), taken from its page, in minutes
    chapters = [file for file in _pages(edition) if re.fullmatch(r"book/0[1-9]-[a-z-]+/index\.md", file)]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", tables[1], flags=re.S)[1:]
    assert len(rows) == len(chapters) == 7, (len(rows), chapters)
    minutes = "分钟" if edition == "zh" else "min"
    assert all(minutes in re.sub(r"<[^>]+>", "", row) for row in rows)
    # each lab's measured cost, one row a lab
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", tables[2], flags=re.S)[1:]
    labs = [file for file in _pages(edition) if file.startswith("notebooks/")]
    assert len(rows) == len(labs) == 8 and all(re.search(r">\d+</p>", row) for row in rows), rows
