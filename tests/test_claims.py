"""helpers.claims: strict in the build (a failed claim fails it), a sentence and no stop in a reader's kernel."""

import ast
import json
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from helpers.claim_text import STATEMENTS_ZH
from helpers.claims import ClaimFailed, claim, claims_mode
from helpers.language import set_language


@pytest.fixture(autouse=True)
def _english(monkeypatch):
    monkeypatch.delenv("HELPERS_CLAIMS", raising=False)
    monkeypatch.delenv("HELPERS_CLAIMS_LOG", raising=False)
    set_language("en")
    yield
    set_language(None)


def test_a_claim_that_holds_says_nothing_and_returns_true(capsys, monkeypatch):
    for mode in ("strict", "report"):
        monkeypatch.setenv("HELPERS_CLAIMS", mode)
        assert claim(2 > 1, "two is more than one", two=2) is True
    assert capsys.readouterr().out == ""


def test_strict_raises_with_the_statement_and_the_numbers(monkeypatch):
    monkeypatch.setenv("HELPERS_CLAIMS", "strict")
    with pytest.raises(ClaimFailed, match=r"additive attention is slower \(ratio = 0.8123\)") as raised:
        claim(0.81234 > 2, "additive attention is slower", ratio=0.81234)
    assert isinstance(raised.value, AssertionError)  # a build that failed on an assert still fails


def test_report_prints_one_sentence_in_the_readers_language_and_goes_on(capsys, monkeypatch, tmp_path):
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("HELPERS_CLAIMS_LOG", str(log))
    monkeypatch.setitem(STATEMENTS_ZH, "every seed trains", "每个种子都训练成功")
    assert claim(False, "every seed trains", failed=[0, 1, 0]) is False
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert out.startswith("The book found that every seed trains, but this run did not (failed = [0, 1, 0])")
    set_language("zh")
    assert claim(torch.tensor(False), "every seed trains", share=np.float64(0.25)) is False
    out = capsys.readouterr().out
    assert out.startswith("本书构建时发现每个种子都训练成功，但这次运行没有（share = 0.25）")
    claim(True, "every seed trains", share=np.float64(1.0))
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["statement"], r["holds"]) for r in records] == [("every seed trains", False)] * 2 + [
        ("every seed trains", True)]
    assert records[0]["values"] == {"failed": [0, 1, 0]} and records[2]["values"] == {"share": 1.0}


def test_numbers_are_shown_to_four_significant_digits():
    with pytest.raises(ClaimFailed, match=r"x = 3.142, n = 1,024, d = \{a: 0.3333\}, t = \[1, 2\]"):
        import os
        os.environ["HELPERS_CLAIMS"] = "strict"
        try:
            claim(False, "s", x=3.14159, n=1024, d={"a": 1 / 3}, t=torch.tensor([1, 2]))
        finally:
            del os.environ["HELPERS_CLAIMS"]


def test_bad_input_names_the_argument(monkeypatch):
    with pytest.raises(TypeError, match="holds must be one truth value, got a tensor of shape"):
        claim(torch.tensor([True, False]), "s")
    with pytest.raises(TypeError, match="holds must be one truth value, got an array"):
        claim(np.array([True, True]), "s")
    with pytest.raises(TypeError, match="statement must be a non-empty string"):
        claim(True, "")
    monkeypatch.setenv("HELPERS_CLAIMS", "loose")
    with pytest.raises(ValueError, match="HELPERS_CLAIMS must be one of"):
        claims_mode()


def _notebook(*sources):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return notebook


FAILING = ("from helpers.claim_text import STATEMENTS_ZH\n"
           "from helpers.claims import claim\n"
           "STATEMENTS_ZH['one is more than two'] = '一大于二'\n"
           "claim(1 > 2, 'one is more than two', one=1, two=2)")


def test_in_a_plain_kernel_a_failed_claim_is_reported_and_the_next_cell_runs(monkeypatch, tmp_path):
    """As a reader's "Run all" in JupyterLab or Colab: the sentence, then the rest of the notebook."""
    monkeypatch.delenv("HELPERS_LANGUAGE", raising=False)
    notebook = _notebook(FAILING, "print('the next cell ran')")
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    first, second = ("".join(o.get("text", "") for o in cell.outputs) for cell in notebook.cells)
    assert first.startswith("The book found that one is more than two, but this run did not (one = 1, two = 2)")
    assert second == "the next cell ran\n"


def test_in_a_chinese_editions_kernel_the_sentence_is_chinese(monkeypatch, tmp_path):
    monkeypatch.delenv("HELPERS_LANGUAGE", raising=False)
    folder = tmp_path / "zh" / "book" / "03-scaling"
    folder.mkdir(parents=True)
    notebook = _notebook(FAILING, "print('next')")
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    assert "".join(o.get("text", "") for o in notebook.cells[0].outputs).startswith("本书构建时发现一大于二")


def test_in_a_strict_kernel_a_failed_claim_stops_the_notebook(monkeypatch, tmp_path):
    """As the book's build: the page does not build."""
    monkeypatch.setenv("HELPERS_CLAIMS", "strict")
    notebook = _notebook(FAILING, "print('the next cell ran')")
    with pytest.raises(CellExecutionError, match="ClaimFailed"):
        NotebookClient(notebook, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert notebook.cells[1].outputs == []


ROOT = Path(__file__).resolve().parents[1]


def _code_cells(path: Path) -> list[str]:
    if path.suffix == ".ipynb":
        return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                if c["cell_type"] == "code"]
    return re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def _python_of(cell: str) -> str:
    """A MyST code cell's Python: its options (``:tags:`` lines or a ``---`` block) and magics left out."""
    lines = cell.splitlines()
    start = lines.index("---", 1) + 1 if lines and lines[0] == "---" else 0
    while start < len(lines) and lines[start].startswith(":"):
        start += 1
    return "\n".join(line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in lines[start:])


def _claimed_statements() -> dict[str, list[str]]:
    """Every claim's English sentence in the English pages and labs, with where it is."""
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.glob("book/**/*.md")) + sorted(ROOT.glob("notebooks/*.ipynb")):
        for cell in _code_cells(path):
            for node in ast.walk(ast.parse(_python_of(cell))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "claim":
                    statement = node.args[1]
                    assert isinstance(statement, ast.Constant) and isinstance(statement.value, str), (
                        f"{path.relative_to(ROOT)}: a claim's sentence must be a literal string: {ast.unparse(node)}")
                    found.setdefault(statement.value, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_claim_of_the_book_has_its_chinese_and_no_chinese_is_left_over():
    claimed = _claimed_statements()
    missing = sorted(set(claimed) - set(STATEMENTS_ZH))
    assert not missing, "claims without Chinese in helpers/claim_text/chNN.py:\n" + "\n".join(
        f"{claimed[s][0]}: {s}" for s in missing)
    unused = sorted(set(STATEMENTS_ZH) - set(claimed))
    assert not unused, "Chinese sentences whose claim is gone (helpers/claim_text/chNN.py):\n" + "\n".join(unused)
    english_left = [s for s, zh in STATEMENTS_ZH.items() if not re.search(r"[\u4e00-\u9fff]", zh)]
    assert not english_left, f"entries that are not Chinese: {english_left}"
