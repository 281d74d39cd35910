"""A chapter read as a notebook in a real JupyterLab, the way the README tells a reader to.

A ``jupyter lab`` server (this environment's, with Jupytext's server extension) is started on a
random free port with a token, ``--no-browser``, the repository as its root, and temporary
config, data, runtime, settings, workspace and checkpoint folders (no user setting leaks in, and
nothing of the session is left in the repository). Headless Chromium opens the chapter's folder in
the file browser, right-clicks the chapter's ``.md`` file and chooses *Open With → Notebook* (the
README's words) or *Open With → Jupytext Notebook* (Jupytext's own entry), then *Run → Run All
Cells*, and waits for the kernel to go idle. It checks that every code cell ran in order, that
no output is an error or shows a traceback, and that every Plotly figure the kernel sent
(``application/vnd.plotly.v1+json``, drawn by the plotly wheel's lab extension) is drawn
(``.js-plotly-plot`` with its ``.main-svg``). Requests that leave 127.0.0.1 are blocked and must
not happen. The chapter's file must be byte-for-byte unchanged and ``git status`` of its folder
(ignored files included) the same afterwards. The server is stopped through its REST API.
Two pages: chapter 0 (the shortest; it prints and draws nothing) through *Notebook*, and chapter
5's masks section (three Plotly figures, six small trainings) through *Jupytext Notebook*.

The browser only *reads* state through ``window.jupyterapp`` (``expose_app_in_browser``, a
test-only flag); every action goes through the menus a reader clicks. Autosave is switched off
in the temporary settings: JupyterLab marks a chapter as modified as soon as it opens it (the
kernel's display name replaces the one in the file) and would otherwise save it, through
Jupytext, after two minutes (see ``test_saving_a_chapter_from_jupyterlab_keeps_it_a_book_chapter``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
import pytest
from lab_probes import KERNEL_READY, RUN_OVER

ROOT = Path(__file__).resolve().parents[1]
KERNEL_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
              "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
RUN_TIMEOUT_S = 300

# User settings of the temporary profile: no autosave (see the module docstring), no news pop-up.
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}


@dataclass(frozen=True)
class Chapter:
    """A page to open, the *Open With* entry to use, and the fewest Plotly figures it must draw."""

    path: str
    open_with: str
    min_figures: int


CHAPTERS = [
    Chapter("book/00-start/index.md", "Notebook", 0),  # the shortest chapter: prints, no figure
    Chapter("book/05-variants/02-masks.md", "Jupytext Notebook", 3),  # a short chapter with figures
]


@dataclass
class Lab:
    """A running JupyterLab server."""

    url: str
    token: str
    process: subprocess.Popen
    log: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api(lab: Lab, path: str, method: str = "GET") -> bytes:
    request = urllib.request.Request(f"{lab.url}{path}", method=method,
                                     headers={"Authorization": f"token {lab.token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """``jupyter lab`` on 127.0.0.1 with a fresh, temporary profile; stopped through its REST API."""
    home = tmp_path_factory.mktemp("jupyterlab")
    dirs = {name: home / name for name in ("config", "data", "runtime", "settings", "workspaces", "checkpoints", "xdg")}
    for folder in dirs.values():
        folder.mkdir()
    for name, values in SETTINGS.items():
        (dirs["settings"] / name).parent.mkdir(parents=True, exist_ok=True)
        (dirs["settings"] / name).write_text(json.dumps(values))
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "JUPYTER_PATH"}}
    env.update(KERNEL_ENV, JUPYTER_CONFIG_DIR=str(dirs["config"]), JUPYTER_DATA_DIR=str(dirs["data"]),
               JUPYTER_RUNTIME_DIR=str(dirs["runtime"]), JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
               JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]), XDG_CONFIG_HOME=str(dirs["xdg"]))
    port, token = _free_port(), secrets.token_hex(24)
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={ROOT}", f"--FileCheckpoints.root_dir={dirs['checkpoints']}",
               "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.extension_manager=readonly", "--LabApp.expose_app_in_browser=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers run as root; JupyterLab refuses it otherwise
    log = home / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = Lab(f"http://127.0.0.1:{port}", token, process, log)
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"jupyter lab exited with {process.returncode}:\n{log.read_text()[-4000:]}")
            try:
                _api(server, "/api/status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not answer within 120 s:\n{log.read_text()[-4000:]}")
                time.sleep(0.25)
        yield server
    finally:
        if process.poll() is None:
            try:
                _api(server, "/api/shutdown", method="POST")  # stops the kernels, then the server
                process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    assert process.returncode == 0, f"jupyter lab exited with {process.returncode}:\n{log.read_text()[-4000:]}"


def _folder_state(folder: Path) -> str:
    """``git status`` of a folder, ignored and untracked files included."""
    return subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "--", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout


_REPORT = """() => {
  const w = window.jupyterapp.shell.currentWidget, cells = w.content.model.cells, report = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    const outputs = [];
    for (let j = 0; j < c.outputs.length; j++) {
      const o = c.outputs.get(j).toJSON();
      outputs.push({type: o.output_type, name: o.name || null, mimes: Object.keys(o.data || {}),
                    error: o.output_type === 'error' ? `${o.ename}: ${o.evalue}` : null});
    }
    const node = w.content.widgets[i].node.querySelector('.jp-Cell-outputArea, .jp-OutputArea');
    report.push({count: c.executionCount, outputs,
                 drawn: node ? node.querySelectorAll('.js-plotly-plot .main-svg').length : 0,
                 plots: node ? node.querySelectorAll('.js-plotly-plot').length : 0,
                 text: node ? node.innerText : ''});
  }
  return {path: w.context.path, factory: w.context.factoryName || null, cells: report};
}"""
_SETTING = """async () => (await window.jupyterapp.serviceManager.settings.fetch(
  '@jupyterlab/docmanager-extension:plugin')).settings.autosave"""


@pytest.mark.slow
@pytest.mark.book  # the book's chapters, not the package: left out of `-m "not book"` (the package alone)
@pytest.mark.browser
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.path for c in CHAPTERS])
def test_chapter_opens_and_runs_as_a_notebook_in_jupyterlab(lab: Lab, chromium: object, chapter: Chapter,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    document = ROOT / chapter.path
    before_bytes, before_mtime = document.read_bytes(), document.stat().st_mtime_ns
    before_git = _folder_state(document.parent)
    start = time.perf_counter()
    timings: dict[str, float] = {}

    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    external: list[str] = []
    page_errors: list[str] = []
    page.on("pageerror", lambda error: page_errors.append(str(error)))

    def route(request_route: object) -> None:
        url = request_route.request.url
        if url.startswith(lab.url):
            request_route.continue_()
        else:
            external.append(url)
            request_route.abort()

    page.route("**/*", route)
    try:
        # The file browser, in the chapter's folder (what clicking down from the root shows), in a
        # workspace of its own: the server keeps the last one, and restoring the chapter opened by the
        # previous test (its kernel, its tab) left the next chapter's "Run All" waiting.
        workspace = f"test-{secrets.token_hex(4)}"
        page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{Path(chapter.path).parent.as_posix()}"
                  f"?reset&token={lab.token}")
        item = page.locator(".jp-DirListing-item", has_text=Path(chapter.path).name)
        item.wait_for(timeout=120_000)
        assert page.evaluate(_SETTING) is False  # the temporary profile is the one in use
        timings["JupyterLab up"] = time.perf_counter() - start

        item.click(button="right")
        page.locator(".lm-Menu-item", has_text="Open With").hover()
        entries = page.locator(".lm-Menu-itemLabel")
        entries.get_by_text(chapter.open_with, exact=True).click()
        page.wait_for_function(KERNEL_READY, timeout=120_000, polling=250)
        timings["opened, kernel idle"] = time.perf_counter() - start

        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        entries.get_by_text("Run All Cells", exact=True).click()
        page.wait_for_function(RUN_OVER, timeout=RUN_TIMEOUT_S * 1000, polling=500)
        timings["ran all cells"] = time.perf_counter() - start
        page.wait_for_timeout(500)  # the last outputs' renderers
        report = page.evaluate(_REPORT)
    finally:
        page.close()
    with capsys.disabled():
        print(f"\n[jupyterlab] {chapter.path} (Open With → {chapter.open_with}): "
              + ", ".join(f"{step} at {seconds:.1f} s" for step, seconds in timings.items()))

    cells = report["cells"]
    assert report["path"] == chapter.path
    assert cells, "no code cell: the file was not opened as a notebook"
    errors = [(i, o["error"]) for i, cell in enumerate(cells) for o in cell["outputs"] if o["type"] == "error"]
    assert not errors, f"(code cell, error): {errors}"
    # Every code cell ran, once, in order.
    assert [cell["count"] for cell in cells] == list(range(1, len(cells) + 1)), [cell["count"] for cell in cells]
    tracebacks = [i for i, cell in enumerate(cells) if "Traceback" in cell["text"]]
    assert not tracebacks, [cells[i]["text"][:2000] for i in tracebacks]
    # Every Plotly figure the kernel sent is drawn by the lab extension.
    sent = [sum("application/vnd.plotly.v1+json" in o["mimes"] for o in cell["outputs"]) for cell in cells]
    drawn = [cell["plots"] for cell in cells]
    assert drawn == sent, f"Plotly figures per code cell: sent {sent}, drawn {drawn}"
    assert all(cell["drawn"] >= cell["plots"] for cell in cells)  # each plot has its SVG
    assert sum(sent) >= chapter.min_figures, f"{sum(sent)} figures, expected at least {chapter.min_figures}"
    assert not page_errors, page_errors
    assert not external, f"requests that left 127.0.0.1: {external}"
    # Reading the chapter changed nothing in the repository.
    assert document.read_bytes() == before_bytes and document.stat().st_mtime_ns == before_mtime
    assert _folder_state(document.parent) == before_git


def _chapters() -> list[Path]:
    """Every page of the book that is a notebook (MyST markdown with code cells)."""
    return [path for path in sorted((ROOT / "book").rglob("*.md"))
            if "_build" not in path.parts and "```{code-cell}" in path.read_text()]


def test_saving_a_chapter_from_jupyterlab_keeps_it_a_book_chapter(tmp_path: Path) -> None:
    """A save through Jupytext's contents manager (JupyterLab's Ctrl+S or autosave) writes back the same chapter.

    Each chapter is opened as JupyterLab opens it (Jupytext's server extension, with the
    repository's ``jupytext.toml``), changed as a run changes it (outputs, execution counts, the
    kernel's display name), and saved, in a copy of the repository's layout. The saved file must
    hold the same cells (types, sources, tags and other cell metadata), the same ``mystnb``
    settings for the book's build and kernelspec name, no output, and no file next to it (no pairing).
    """
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class

    config = ROOT / "jupytext.toml"
    assert config.is_file(), "jupytext.toml is missing: a save from JupyterLab drops the chapters' mystnb settings"
    (tmp_path / "jupytext.toml").write_bytes(config.read_bytes())
    chapters = _chapters()
    assert len(chapters) >= 10
    for path in chapters:
        copy = tmp_path / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    manager = build_async_jupytext_contents_manager_class(AsyncLargeFileManager)(root_dir=str(tmp_path))

    async def open_run_and_save(relative: str) -> None:
        notebook = (await manager.get(relative, type="notebook", content=True))["content"]
        notebook.metadata["kernelspec"]["display_name"] = "Python 3 (ipykernel)"  # what JupyterLab sets on open
        for count, cell in enumerate((c for c in notebook.cells if c.cell_type == "code"), start=1):
            cell.execution_count = count
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="OUTPUT-MARKER\n")]
        await manager.save({"type": "notebook", "format": "json", "content": notebook}, relative)

    changed = []
    for path in chapters:
        relative = path.relative_to(ROOT).as_posix()
        before = set((tmp_path / relative).parent.iterdir())
        # In a thread of its own: Playwright's sync API (the browser tests) leaves an event loop running here.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, open_run_and_save(relative)).result()
        saved_text = (tmp_path / relative).read_text()
        original, saved = jupytext.reads(path.read_text(), fmt="md:myst"), jupytext.reads(saved_text, fmt="md:myst")
        assert [(c.cell_type, c.source, dict(c.metadata)) for c in saved.cells] == \
            [(c.cell_type, c.source, dict(c.metadata)) for c in original.cells], relative
        assert saved.metadata.get("mystnb") == original.metadata.get("mystnb"), relative
        assert saved.metadata["kernelspec"]["name"] == original.metadata["kernelspec"]["name"], relative
        assert "OUTPUT-MARKER" not in saved_text, relative
        assert set((tmp_path / relative).parent.iterdir()) == before, relative  # nothing paired, nothing new
        changed += [relative] if saved_text != path.read_text() else []
    print(f"{len(changed)} of {len(chapters)} chapters differ in their text (header only) after a save: {changed}")
