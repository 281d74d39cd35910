"""scripts/jb.py's order of the pages Sphinx reads in parallel (one notebook executed a core), checked with
Sphinx's own ``ParallelTasks`` (forked workers), without a build: the longest recorded execution first,
so that the two workers finish together, and every page the book executes has a recorded time."""

from __future__ import annotations

import importlib.util
import json
import time
import warnings
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _jb() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jb", ROOT / "scripts" / "jb.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():  # jupyter-book 1.x's command line on Click 8.2+ (not ours to fix)
        warnings.filterwarnings("ignore", "'BaseCommand' is deprecated", DeprecationWarning)
        spec.loader.exec_module(module)
    return module


jb = _jb()


def _toc_documents(toc: dict) -> list[str]:
    found: list[str] = []

    def walk(entry: object) -> None:
        if isinstance(entry, dict):
            if "file" in entry:
                found.append(str(entry["file"]))
            for value in entry.values():
                walk(value)
        elif isinstance(entry, list):
            for value in entry:
                walk(value)

    walk(toc)
    return found


def test_every_executed_page_has_a_recorded_time_and_none_is_stale() -> None:
    recorded = json.loads(jb.NOTEBOOK_SECONDS.read_text(encoding="utf-8"))
    documents = _toc_documents(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")))
    executed = [name for name in documents
                if (ROOT / f"{name}.ipynb").is_file()
                or ((ROOT / f"{name}.md").is_file() and "```{code-cell}" in (ROOT / f"{name}.md").read_text("utf-8"))]
    assert len(executed) >= 20
    assert sorted(set(executed) - set(recorded)) == [], "pages the build executes with no recorded time"
    assert sorted(set(recorded) - set(documents)) == [], "recorded times of pages no longer in the book"
    assert all(isinstance(seconds, (int, float)) and seconds >= 0 for seconds in recorded.values())


def test_the_order_puts_the_longest_first_in_the_order_sphinx_starts_them(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Sphinx starts the first ``nproc`` tasks as they come and the waiting ones last in, first out: the
    pages must start longest first all the same, whatever their names and sizes."""
    from sphinx.util.parallel import ParallelTasks

    seconds = {"a": 5.0, "b": 90.0, "c": 1.0, "d": 40.0, "e": 130.0, "f": 60.0, "g": 0.5}
    table = tmp_path / "notebook-seconds.json"
    table.write_text(json.dumps(seconds), encoding="utf-8")
    monkeypatch.setattr(jb, "NOTEBOOK_SECONDS", table)
    monkeypatch.chdir(tmp_path)  # no page files here: unlisted pages would sort by size 0
    chunks = jb._one_document_per_task(sorted(seconds) + ["unlisted"], 2)
    assert all(len(chunk) == 1 for chunk in chunks)
    assert sorted(chunk[0] for chunk in chunks) == sorted([*seconds, "unlisted"])

    started = tmp_path / "started"

    def read(chunk: list[str]) -> None:  # in a forked worker, as Sphinx's read_process
        with started.open("a", encoding="utf-8") as log:
            log.write(chunk[0] + "\n")
        time.sleep(0.3 + seconds.get(chunk[0], 0) / 100)  # longer pages take longer: the finishing order is fixed

    tasks = ParallelTasks(2)
    for chunk in chunks:
        tasks.add_task(read, chunk)
    tasks.join()
    order = started.read_text(encoding="utf-8").split()
    assert sorted(order[:2]) == ["b", "e"]  # the two longest start at once
    assert order[2:] == ["f", "d", "a", "c", "g", "unlisted"]  # then each free worker takes the longest left


def test_an_unlisted_page_is_ordered_by_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "notebook-seconds.json"
    table.write_text(json.dumps({"listed": 10.0}), encoding="utf-8")
    monkeypatch.setattr(jb, "NOTEBOOK_SECONDS", table)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.md").write_text("x" * 50_000, encoding="utf-8")  # 50 "seconds"
    (tmp_path / "small.md").write_text("x" * 2_000, encoding="utf-8")  # 2
    expected = jb._expected_seconds(["listed", "big", "small", "missing"])
    assert expected == {"listed": 10.0, "big": 50.0, "small": 2.0, "missing": 0.0}
    assert [chunk[0] for chunk in jb._one_document_per_task(["small", "missing", "listed", "big"], 2)] == \
        ["big", "listed", "missing", "small"]  # then last in, first out: small, then missing
