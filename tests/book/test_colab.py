"""The generated notebooks run as on Colab today (issue 46): ``scripts/colab-check.sh --sample``.

In a fresh environment with Colab's versions of what the book touches (plotly 5.24.1, ipywidgets 7.7.1, notebook
6.5.7, transformers 5.15, numpy 2.1.3, ...: ``scripts/colab_check.py``), each notebook's own first cell installs the
helper package (from the build's wheel instead of the public repository) and what the page uses, then the notebook
runs top to bottom: no error, no resolver conflict, and the install cell, run again after a restart, installs and
says nothing. Two things differ from Colab here, and the test says so: Python and torch are the project's own (3.11
and the CPU build of 2.13.0 on this machine's disk), as Colab's (3.13, torch 2.11) would cost a download of several
GB every run; ``bash scripts/colab-check.sh`` with no argument runs every generated notebook with Python 3.13 and
torch 2.11. The sample is the same every run (:data:`colab_check.SAMPLE`: every lab, and one chapter of each
edition). Where the checkout has no build, the notebooks are written from the sources as the build writes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import colab_check  # noqa: E402  (a script of the repository, not a package)

pytestmark = [pytest.mark.book, pytest.mark.slow]


def test_the_sample_is_every_lab_and_one_chapter_of_each_edition() -> None:
    labs = sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb"))
    sample = set(colab_check.SAMPLE)
    assert {f"notebooks/{lab}" for lab in labs} <= sample
    assert any(name.startswith("zh/notebooks/") for name in sample)  # the Chinese lab's install path
    for edition in ("", "zh/"):
        assert len([name for name in sample if name.startswith(f"{edition}book/")]) == 1, edition or "en"
    for name in sample:
        assert (ROOT / f"{name}.md").is_file() or (ROOT / f"{name}.ipynb").is_file(), name


def test_the_sample_runs_top_to_bottom_in_a_colab_like_environment(tmp_path: Path) -> None:
    out = tmp_path / "colab"
    # The project's Python and torch (the CPU build on this machine's disk), Colab's versions of the rest: Colab's
    # own torch for Python 3.13 is a CUDA build of several GB (scripts/colab-check.sh, without these, uses it).
    import torch

    env = {**os.environ, "COLAB_OUT": str(out), "COLAB_VENV": str(ROOT / ".venv-colab-light"),
           "COLAB_PYTHON": getattr(sys, "_base_executable", sys.executable),
           "COLAB_TORCH": torch.__version__.split("+")[0]}
    run = subprocess.run(["bash", str(ROOT / "scripts" / "colab-check.sh"), "--sample"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=3 * 3600, check=False)
    said = "\n".join(line for line in run.stdout.splitlines() if line.startswith(("colab-check", "|")))
    print(said)  # the times, in the test's output
    record = [json.loads(line) for line in (out / "times.jsonl").read_text(encoding="utf-8").splitlines()] \
        if (out / "times.jsonl").is_file() else []
    assert run.returncode == 0, said + "\n" + run.stderr[-3000:]
    ran = {entry["notebook"]: entry for entry in record if "scenario" not in entry}
    assert set(ran) == set(colab_check.SAMPLE)
    for name, entry in ran.items():
        assert entry["ok"] and entry["second_run"] == "silent", (name, entry)
        assert entry["install_said"] and ("no restart needed" in entry["install_said"][0]
                                          or "无需重启" in entry["install_said"][0]), (name, entry)
    [restart] = [entry for entry in record if "scenario" in entry]
    assert restart["ok"], restart
