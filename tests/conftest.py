"""Shared test set-up: one thread for torch, and the session's headless Chromium."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

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


# --- the package's tests beside the book's (pytest-xdist) -------------------------------------------------

BOOK_GROUP = "book"
"""The xdist group of every test marked ``book``: with ``--dist loadgroup`` (scripts/test.sh) they run in one
worker, in their order, because they share one build, one local server and the browsers' visits, and the
notebook-cache test rebuilds ``_build`` in place; the package's tests are shared out among the workers
meanwhile (on two cores they run beside the build and the single-threaded book tests)."""

_WORKER_MEASUREMENTS: list[str] = []
"""The book tests' measurements, sent back by the worker that ran them (``tests/book/conftest.py``)."""


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("book") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(BOOK_GROUP))


@pytest.hookimpl(optionalhook=True)  # an xdist hook: called in the controller when a worker has finished
def pytest_testnodedown(node: object, error: object) -> None:
    _WORKER_MEASUREMENTS.extend(getattr(node, "workeroutput", {}).get("measurements", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The book tests' measurements, when a worker ran them (else ``tests/book/conftest.py`` prints them)."""
    if _WORKER_MEASUREMENTS:
        terminalreporter.section("book: measurements")
        for line in _WORKER_MEASUREMENTS:
            terminalreporter.write_line(line)
