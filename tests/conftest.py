"""Shared test set-up: one thread for torch, the session's headless Chromium, the measurements printed at
the end, and the order and groups of the tests for pytest-xdist.

``scripts/test.sh`` runs the suite in two processes (pytest-xdist, ``--dist loadgroup``): each test file is
one unit of work, kept whole in one process (its module and session fixtures are made once), and the three
files that read the same desktop visits of every page (``DESKTOP_FILES``) are one unit. That unit goes
first, then the tests that need no built book (the package's tests: they run in the other process while the
first builds the book), then the rest. Measurements made in a worker process reach the terminal summary
through xdist's ``workeroutput``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

# The suite's tensors are tiny: one thread avoids the oversubscription that makes a 2-layer forward
# pass take ~500 ms instead of ~0.5 ms on a loaded 2-core machine. Results do not depend on it.
torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parent / "book"))  # the shared browser helpers (book/browser.py)
from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    """Debian's headless Chromium driven by Playwright (never a downloaded browser), one for the whole
    session: Playwright's synchronous API refuses a second instance while one is running in the thread,
    so the book's browser tests and the JupyterLab tests share this one."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (scripts/test.sh does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


DESKTOP_FILES = ("test_accessibility_browser.py", "test_browser.py", "test_page_weight.py")
"""The book's test files that share ``desktop_visits`` and ``figure_pages`` (tests/book/conftest.py): one
pytest-xdist group, so that each page is loaded once in the run, not once a process."""
BUILT_BOOK = ("book_build", "built_html")
"""Fixtures that need the built book."""

_MEASUREMENTS = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_MEASUREMENTS] = []


@pytest.fixture(scope="session")
def measurements(pytestconfig: pytest.Config) -> list[str]:
    """Append a line here to have it printed in the terminal summary (book build, page sizes, transfers,
    slider latency...)."""
    return pytestconfig.stash[_MEASUREMENTS]


def _group(item: pytest.Item) -> str:
    if item.path.name in DESKTOP_FILES:
        return "desktop visits"
    return item.path.relative_to(item.config.rootpath).as_posix()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """One pytest-xdist group a test file (``DESKTOP_FILES`` together), and the order: the desktop visits'
    group, the files that need no built book, the others (a stable sort: each file's tests keep their order;
    ``scripts/test.sh`` passes ``--no-loadscope-reorder`` so that xdist keeps this order)."""
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item)))

    def needs_the_book(item: pytest.Item) -> bool:
        return bool(set(BUILT_BOOK) & set(getattr(item, "fixturenames", ())))

    # a file with one test that needs the book waits for the build: the whole file goes after the others
    waits = {_group(item) for item in items if needs_the_book(item)}
    items.sort(key=lambda item: 0 if _group(item) == "desktop visits" else 2 if _group(item) in waits else 1)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: its measurements go to the controlling process
        workeroutput["measurements"] = list(session.config.stash[_MEASUREMENTS])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: a worker has finished; keep its measurements for the summary."""
    node.config.stash[_MEASUREMENTS].extend(getattr(node, "workeroutput", {}).get("measurements", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Prints the measurements of the book tests (build time, page sizes, transfers, slider latency)."""
    lines = terminalreporter.config.stash.get(_MEASUREMENTS, [])
    if lines:
        terminalreporter.section("book: measurements")
        for line in lines:
            terminalreporter.write_line(line)
