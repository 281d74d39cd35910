"""Every lab, as a reader gets it and as the build ran it: it is stored without outputs and opens with
its Colab badge and install cell; executed top to bottom by the book's build (every lab is in the table
of contents, ``execute_notebooks: cache``; its time is reported against the two minutes a notebook may take), it raised
nothing, printed nothing on stderr, and each exercise's checker rejected the stub the reader starts
from and accepted the folded reference solution. The executed outputs are read from the build's
notebook cache (``_build/.jupyter_cache``), matched by the lab's code, so the labs run once a test run."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LABS = {  # lab -> number of exercises (each has a stub cell and a folded solution cell)
    "01-bottleneck-lab.ipynb": 6,
    "02-dot-product-lab.ipynb": 7,
    "03-scaling-lab.ipynb": 7,  # six exercises and the extra prediction of the entropy
    "04-multihead-lab.ipynb": 6,
    "05-variants-lab.ipynb": 7,
    "06-memory-position-lab.ipynb": 9,
    "06-training-lab.ipynb": 5,
    "07-llm-lab.ipynb": 3,
}
LAB_SECONDS = 120  # the design's budget of one notebook: reported with each lab's time, not enforced


def test_every_lab_in_the_repository_is_checked_here() -> None:
    assert sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb")) == sorted(LABS)


def test_every_lab_is_in_the_books_table_of_contents() -> None:
    """What makes the build execute each lab (and so what the test below reads)."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert all(f"file: notebooks/{name.removesuffix('.ipynb')}\n" in toc for name in LABS), toc


@pytest.mark.parametrize("name", sorted(LABS))
def test_lab_is_stored_without_outputs_and_opens_with_its_badge_and_install_cell(name: str) -> None:
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.get("outputs") and cell.get("execution_count") is None for cell in code), (
        f"{name} is stored with outputs")
    first = notebook.cells[0]
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    badge = (f"https://colab.research.google.com/github/{repository['url'].removeprefix('https://github.com/')}"
             f"/blob/{repository['branch']}/notebooks/{name}")  # this lab, from _config.yml's repository and branch
    assert first.cell_type == "markdown" and f"]({badge})" in first.source, "the Colab badge opens another notebook"
    assert ('importlib.metadata.version("why-attention-helpers")' in code[0].source
            and "pip install" in code[0].source), "no install cell first (one that asks for the installed distribution)"


@pytest.mark.book
@pytest.mark.parametrize("name", sorted(LABS))
def test_lab_ran_top_to_bottom_in_the_build_with_stubs_rejected_and_solutions_accepted(
        name: str, built_html: Path, measurements: list[str]) -> None:
    from jupyter_cache import get_cache

    cache = get_cache(str(built_html.parent / ".jupyter_cache"))
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    try:
        record = cache.match_cache_notebook(notebook)  # the execution of exactly this lab's code
    except KeyError:
        pytest.fail(f"{name}: not in the build's notebook cache: the build did not run it as it is now")
    _, executed = cache.merge_match_into_notebook(notebook)
    seconds = record.data.get("execution_seconds")
    assert seconds is not None, f"{name}: the cache recorded no execution time"
    over = "  (over the budget)" if seconds > LAB_SECONDS else ""
    measurements.append(f"lab executed by the build: {seconds:5.1f} s of {LAB_SECONDS} s  {name}{over}")
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert [cell.source for cell in code] == [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.get("execution_count") for cell in code), f"{name}: a cell did not run"
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
