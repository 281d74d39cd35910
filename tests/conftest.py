"""Shared test set-up: one thread for torch, the session's headless Chromium, the measurements printed at
the end, and the order and groups of the tests for pytest-xdist.

``scripts/test.sh`` runs the suite in two processes (pytest-xdist, ``--dist loadfile``): each test file is
one unit of work, kept whole in one process (its module and session fixtures are made once), and the three
files that read the same desktop visits of every page (``DESKTOP_FILES``) are one unit. That unit goes
first, then the tests that need no built book (the package's tests: they run in the other process while the
first builds the book), then the rest. Measurements made in a worker process reach the terminal summary
through xdist's ``workeroutput``."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch

# The suite's tensors are tiny: one thread avoids the oversubscription that makes a 2-layer forward
# pass take ~500 ms instead of ~0.5 ms on a loaded 2-core machine. Results do not depend on it.
torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parent / "book"))  # the shared browser helpers (book/browser.py)
from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


@pytest.fixture(autouse=True)
def no_answer_is_left_running() -> Iterator[None]:
    """A test that leaves a checker's answer thread (``helpers.exercises.running``, named "answer") running fails:
    a spinning thread takes the GIL every 5 ms for the rest of the session, which once made the training tests
    after it 40x slower (and CI ran out of time)."""
    yield
    left = [thread for thread in threading.enumerate() if thread.name == "answer" and thread.is_alive()]
    for thread in left:
        thread.join(timeout=5)
    left = [thread for thread in left if thread.is_alive()]
    assert not left, f"{len(left)} answer thread(s) left running by this test"


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


ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
SHARED_BUILD = ROOT / "_build" / ".build-of-this-run.json"
"""The session's build, for the other pytest-xdist worker (:func:`book_build`)."""
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
       "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


# --- the built book: built once a test run, by the first test that needs it ----------------------------------
#
# The book is built by ``scripts/build.sh``, the build step of the README's ``scripts/build-book.sh``
# (``python -m sitebuild.vendor _build/html``, the site's build in ``book/_ext/sitebuild``, then
# ``jupyter-book build . -W -n --keep-going`` and the Chinese edition), the first time a test asks for it;
# every later test reuses that build. When ``scripts/build.sh`` has just built the book from the same files
# (``scripts/build-book.sh`` before ``scripts/test.sh``), that build and its log are taken instead.


@dataclass
class Build:
    """What the session's book build did."""

    returncode: int
    log: str
    seconds: float
    html: Path = HTML
    warnings: list[str] = field(default_factory=list)


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600, check=False)


def _recorded_build(measurements: list[str]) -> Build | None:
    """The last build of ``scripts/build.sh`` (e.g. ``scripts/build-book.sh``'s, just before
    ``scripts/test.sh`` in CI) when it succeeded from the files here now (``scripts/build_record.py``)."""
    spec = importlib.util.spec_from_file_location("build_record", ROOT / "scripts" / "build_record.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    record = module.reusable(ROOT)
    if record is None:
        return None
    log = str(record["log"])
    warnings = [line for line in log.splitlines() if re.search(r"\b(WARNING|ERROR|CRITICAL): ", line)]
    measurements.append(f"book build: {record['seconds']:.0f} s (exit {record['returncode']}, {len(warnings)} "
                        f"warnings), scripts/build.sh's build of {record['finished']} from these files, not run again")
    return Build(int(record["returncode"]), log, float(record["seconds"]), warnings=warnings)


@pytest.fixture(scope="session")
def book_build(request: pytest.FixtureRequest, measurements: list[str]) -> Build:
    """Builds the book once for the whole session (site assets, then ``jupyter-book build -W``), or
    takes the build that ``scripts/build.sh`` has just made from the same files (its recorded log).

    Under pytest-xdist (``scripts/test.sh``: two worker processes), the first worker that needs the
    book builds it, holding ``_build/.build.lock``; the other waits for the lock and takes that build,
    failed or not, from ``_build/.build-of-this-run.json`` (the test run's id in it): one build a run."""
    from filelock import FileLock

    run_id = getattr(request.config, "workerinput", {}).get("testrunuid")
    SHARED_BUILD.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(SHARED_BUILD.with_name(".build.lock"))):
        if run_id is not None and SHARED_BUILD.is_file():
            shared = json.loads(SHARED_BUILD.read_text(encoding="utf-8"))
            if shared.get("run") == run_id:
                return Build(**shared["build"])
        build = _recorded_build(measurements) or _build(measurements)
        if run_id is not None:
            SHARED_BUILD.write_text(json.dumps({"run": run_id, "build": {
                "returncode": build.returncode, "log": build.log, "seconds": build.seconds,
                "warnings": build.warnings}}), encoding="utf-8")
        return build


def _build(measurements: list[str]) -> Build:
    """Runs ``scripts/build.sh`` (the README's build: ``scripts/build-book.sh`` = ``scripts/setup.sh`` + it)."""
    env = {**os.environ, **ENV}
    start = time.perf_counter()
    build = _run(["bash", "scripts/build.sh"], env)
    seconds = time.perf_counter() - start
    log = build.stdout + build.stderr
    # Sphinx's "path:line: WARNING: ..." (and ERROR/CRITICAL); not the kernels' own log lines
    # ("[IPKernelApp] WARNING | Kernel is running over TCP ..."), which say nothing of the book.
    warnings = [line for line in log.splitlines() if re.search(r"\b(WARNING|ERROR|CRITICAL): ", line)]
    measurements.append(f"book build: {seconds:.0f} s (exit {build.returncode}, {len(warnings)} warnings)")
    return Build(build.returncode, log, seconds, warnings=warnings)


@pytest.fixture(scope="session")
def built_html(request: pytest.FixtureRequest) -> Path:
    """The built site; fails the test when the build did not get as far as writing its pages.
    ``BOOK_SITE`` (a built ``_build/html``) tests that site instead, with no build: for checking a
    page while working on it; the build's own tests still build."""
    if os.environ.get("BOOK_SITE"):
        return Path(os.environ["BOOK_SITE"]).resolve()
    book_build = request.getfixturevalue("book_build")
    if "build finished" not in book_build.log and "build succeeded" not in book_build.log:
        pytest.fail(f"the book build did not finish (exit {book_build.returncode}):\n{book_build.log[-3000:]}")
    return book_build.html



DESKTOP_FILES = ("test_accessibility_browser.py", "test_browser.py", "test_page_weight.py")
"""The book's test files that share ``desktop_visits`` and ``figure_pages`` (tests/book/conftest.py): one
unit of work for pytest-xdist, so that each page is loaded once in the run, not once a process."""
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


def _scope(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or "desktop visits" for ``DESKTOP_FILES``."""
    path = nodeid.split("::", 1)[0]
    return "desktop visits" if path.rsplit("/", 1)[-1] in DESKTOP_FILES else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (scripts/test.sh) with ``DESKTOP_FILES`` as one unit: xdist's own grouping
    (``xdist_group`` marks, ``--dist loadgroup``) rewrites a private attribute that pytest 9 no longer reads."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    return FileScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The order of the units of work (``_scope``): the desktop visits first, then the files that need no
    built book and have no test marked book, then the others. A stable sort: each file's tests keep their
    order (``scripts/test.sh`` passes ``--no-loadscope-reorder``: xdist keeps it)."""

    def needs_the_book(item: pytest.Item) -> bool:  # this file's book_build or built_html (not a module's own)
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs if info is not None else {}
        return any(definition.baseid == "" or definition.baseid == "tests"
                   for name in BUILT_BOOK for definition in definitions.get(name, ()))

    # a file with one test that needs the book (or is marked book) goes after the package's tests
    waits = {_scope(item.nodeid) for item in items if needs_the_book(item) or item.get_closest_marker("book")}
    items.sort(key=lambda item: 0 if _scope(item.nodeid) == "desktop visits" else 2 if _scope(item.nodeid) in waits
               else 1)


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
