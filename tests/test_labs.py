"""Every lab, run top to bottom as a reader would: it is stored without outputs, opens with its
Colab badge and install cell, raises nothing, prints nothing on stderr, and each exercise's
checker rejects the stub the reader starts from and accepts the folded reference solution."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
LABS = {  # lab -> number of exercises (each has a stub cell and a folded solution cell)
    "01-bottleneck-lab.ipynb": 6,
    "02-dot-product-lab.ipynb": 7,
    "03-scaling-lab.ipynb": 6,
    "04-multihead-lab.ipynb": 6,
    "05-variants-lab.ipynb": 5,
    "06-memory-position-lab.ipynb": 5,
    "06-training-lab.ipynb": 4,
}


def test_every_lab_in_the_repository_is_checked_here() -> None:
    assert sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb")) == sorted(LABS)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LABS))
def test_lab_runs_top_to_bottom_with_stubs_rejected_and_solutions_accepted(name: str) -> None:
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.get("outputs") and cell.get("execution_count") is None for cell in code), (
        f"{name} is stored with outputs")
    first = notebook.cells[0]
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    badge = (f"https://colab.research.google.com/github/{repository['url'].removeprefix('https://github.com/')}"
             f"/blob/{repository['branch']}/notebooks/{name}")  # this lab, from _config.yml's repository and branch
    assert first.cell_type == "markdown" and f"]({badge})" in first.source, "the Colab badge opens another notebook"
    assert "import helpers" in code[0].source and "pip install" in code[0].source, "no install cell first"

    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    verdicts = []
    for cell in code:
        for output in cell.outputs:
            assert output.output_type != "error", output
            assert not (output.output_type == "stream" and output.name == "stderr"), output.text
            text = output.get("data", {}).get("text/plain", "")
            if text.startswith("CheckResult("):
                is_solution = "hide-input" in cell.metadata.get("tags", [])
                verdicts.append((is_solution, "passed=True" in text))
    assert len(verdicts) == 2 * LABS[name], verdicts
    assert all(passed == is_solution for is_solution, passed in verdicts), verdicts
