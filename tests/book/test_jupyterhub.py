"""The book's JupyterHub launch link, followed in a real JupyterHub, as a class would follow it.

A JupyterHub (the PyPI package ``jupyterhub``) is started on 127.0.0.1 with the proxy it runs,
``configurable-http-proxy`` (npm, pinned by ``tools/jupyterhub``'s lock file, installed there with
``npm ci`` when missing), ``DummyAuthenticator`` (any name logs in) and ``SimpleLocalProcessSpawner``
(each student's server a local process, their home a folder of the test's temporary directory). The
student's server is this environment's ``jupyterhub-singleuser`` (JupyterLab, Jupytext, nbgitpuller),
with ``binder/overrides.json`` as its administrator's settings (what ``binder/postBuild`` installs in
an image) and the student's clone's ``src`` on ``PYTHONPATH`` (a hub's image installs the package
instead; here the kernel then runs the code it has just pulled).

The "public" repository is a local one: a repository made from the files of this checkout (what git
tracks or would track), named as ``repository.url`` of ``_config.yml`` names it, on the branch
``repository.branch``. The launch link is read from the built lab page's JupyterHub button; the test
checks that it is the nbgitpuller link ``_config.yml`` makes, then swaps only its hub address and its
``repo`` for the local ones. Headless Chromium, with every request off 127.0.0.1 aborted (and none
allowed to happen), then

1. logs student ``ada`` in and follows the lab's link: nbgitpuller clones the repository into her home,
   JupyterLab opens the lab; *Run → Run All Cells*, then *File → Save Notebook*; the saved notebook
   ran every cell, raised nothing, and each exercise's checker rejected the stub and accepted the
   folded solution (``tests/book/test_labs.py``'s criterion);
2. logs student ``ben`` in, in a browser context of his own, and follows chapter 0's link (a MyST
   markdown chapter): he gets a clone of his own, without Ada's outputs, and JupyterLab opens the
   chapter as a notebook;
3. after a new commit in the public repository, Ada follows the lab's link again: nbgitpuller merges
   the new commit and keeps her edit (her outputs) in the lab.

The hub, the proxy, the students' servers and their kernels are stopped at the end, failure or not
(any process of the hub's tree still alive then is killed, by its id). The test prints its time.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import jupytext
import nbformat
import pytest
import yaml
from lab_probes import KERNEL_READY, RUN_OVER

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "jupyterhub"
PROXY = TOOLS / "node_modules" / ".bin" / "configurable-http-proxy"
VENV_BIN = Path(sys.executable).parent
LAB = "notebooks/04-multihead-lab.ipynb"  # the fastest lab (about 10 s in the build)
CHAPTER = "book/00-start/index.md"  # a chapter: MyST markdown, opened as a notebook through Jupytext
EXERCISES = 6  # the lab's exercises (tests/book/test_labs.py's LABS)
KERNEL_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
              "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
TIMEOUT_MS = 240_000


@dataclass
class Hub:
    """A running JupyterHub, its public repository and its students' homes."""

    url: str
    process: subprocess.Popen
    log: Path
    homes: Path
    public: Path
    branch: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@127.0.0.1",
           "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@127.0.0.1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def _npm_ci() -> None:
    """``npm ci`` in tools/jupyterhub unless its node_modules holds exactly the lock file's packages."""
    lock = hashlib.sha256((TOOLS / "package-lock.json").read_bytes()).hexdigest()
    stamp = TOOLS / "node_modules" / ".book-lock-sha256"
    if stamp.is_file() and stamp.read_text().strip() == lock and PROXY.exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is missing: install Node.js and npm (scripts/test.sh does)")
    subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], cwd=TOOLS,
                   check=True, capture_output=True, text=True)
    stamp.write_text(lock + "\n")


def _public_repository(parent: Path, name: str, branch: str) -> Path:
    """A repository named like the public one, holding this checkout's files on ``branch``, as a bare one."""
    work = parent / "work" / name
    work.mkdir(parents=True)
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for relative in filter(None, listed):
        source = ROOT / relative
        if source.is_file() and not source.is_symlink():
            target = work / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    _git("init", "-q", "-b", branch, cwd=work)
    _git("add", "-A", cwd=work)
    _git("commit", "-q", "-m", "the book, as the public repository holds it", cwd=work)
    bare = parent / "public" / name
    bare.parent.mkdir()
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=parent)
    return bare


HUB_CONFIG = """
c = get_config()  # noqa: F821
settings = json.loads({settings!r})
c.JupyterHub.bind_url = settings["url"]
c.JupyterHub.hub_bind_url = settings["hub_url"]
c.ConfigurableHTTPProxy.api_url = settings["proxy_api"]
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.auth_token = settings["proxy_token"]
c.JupyterHub.db_url = "sqlite:///" + settings["db"]
c.JupyterHub.cookie_secret = bytes.fromhex(settings["cookie_secret"])
c.JupyterHub.pid_file = settings["pid_file"]
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
c.JupyterHub.authenticator_class = "jupyterhub.auth.DummyAuthenticator"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
c.SimpleLocalProcessSpawner.home_dir_template = settings["homes"] + "/{{username}}"
c.Spawner.cmd = [settings["singleuser"]]
c.Spawner.default_url = "/lab"
c.Spawner.args = settings["args"]
c.Spawner.start_timeout = 240
c.Spawner.http_timeout = 240
c.Spawner.environment = dict(settings["environment"])
# the student's clone's src first on the kernel's path (a hub's image installs the package instead)
c.Spawner.environment["PYTHONPATH"] = lambda spawner: spawner.home_dir + "/" + settings["repository"] + "/src"
"""


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """JupyterHub on 127.0.0.1, stopped (with its proxy, servers and kernels) at the end, whatever happened."""
    import psutil

    begun = started = time.perf_counter()
    _npm_ci()
    base = tmp_path_factory.mktemp("jupyterhub")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    name = config["repository"]["url"].rstrip("/").split("/")[-1]
    branch = config["repository"]["branch"]
    public = _public_repository(base, name, branch)
    homes, state, lab_settings = base / "homes", base / "hub", base / "lab-settings"
    for folder in (homes, state, lab_settings):
        folder.mkdir()
    # binder/postBuild's setting: a chapter's .md opens as a notebook (an administrator's default)
    shutil.copy(ROOT / "binder" / "overrides.json", lab_settings / "overrides.json")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    settings = {
        "url": url, "hub_url": f"http://127.0.0.1:{_free_port()}", "proxy_api": f"http://127.0.0.1:{_free_port()}",
        "proxy": str(PROXY), "proxy_token": secrets.token_hex(32), "db": str(state / "jupyterhub.sqlite"),
        "cookie_secret": secrets.token_hex(32), "pid_file": str(state / "jupyterhub.pid"), "homes": str(homes),
        "singleuser": str(VENV_BIN / "jupyterhub-singleuser"), "repository": name,
        "args": ["--allow-root",  # the tests run as root in containers; a real hub's users are not
                 f"--LabApp.app_settings_dir={lab_settings}", "--LabApp.news_url=",
                 "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                 "--LabApp.expose_app_in_browser=True"],  # a test-only flag: the test reads JupyterLab's state
        "environment": {**KERNEL_ENV, "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"},
    }
    (state / "jupyterhub_config.py").write_text("import json\n" + HUB_CONFIG.format(settings=json.dumps(settings)))
    log = state / "jupyterhub.log"
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "JUPYTER_PATH"}}
    env["PATH"] = settings["environment"]["PATH"]
    with log.open("w") as out:
        process = subprocess.Popen([str(VENV_BIN / "jupyterhub"), "-f", str(state / "jupyterhub_config.py")],
                                   cwd=state, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    seen: set[int] = set()

    def remember_tree() -> None:
        try:
            seen.update(child.pid for child in psutil.Process(process.pid).children(recursive=True))
        except psutil.NoSuchProcess:
            pass

    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"jupyterhub exited with {process.returncode}:\n{log.read_text()[-4000:]}")
            try:
                urllib.request.urlopen(f"{url}/hub/api", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyterhub did not answer within 120 s:\n{log.read_text()[-4000:]}")
                time.sleep(0.5)
        started = time.perf_counter()
        yield Hub(url, process, log, homes, public, branch)
    finally:
        stopping = time.perf_counter()
        remember_tree()  # the proxy, the students' servers and their kernels
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # JupyterHub stops the servers (cleanup_servers) and its proxy
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        left = []
        for pid in sorted(seen):  # what the hub left running: asked to stop, then killed (by id)
            try:
                child = psutil.Process(pid)
                if child.is_running() and child.status() != psutil.STATUS_ZOMBIE:
                    left.append(child)
                    child.terminate()
            except psutil.NoSuchProcess:
                pass
        _, alive = psutil.wait_procs(left, timeout=10)
        for child in alive:
            child.kill()
        print(f"\n[jupyterhub] up in {started - begun:.1f} s, stopped in {time.perf_counter() - stopping:.1f} s; "
              f"{len(seen)} processes under the hub, {len(left)} left running by it and stopped here")


def _launch_link(built_html: Path, page: str) -> str:
    """The JupyterHub button's link on a built page (``page``: the source file, e.g. notebooks/x.ipynb)."""
    import re

    html = (built_html / Path(page).with_suffix(".html")).read_text(encoding="utf-8")
    links = [match.replace("&amp;", "&") for match in re.findall(r'href="([^"]*/hub/user-redirect/git-pull\?[^"]*)"',
                                                                  html)]
    assert len(links) == 1, f"{page}: {len(links)} JupyterHub links"
    return links[0]


def _local_link(link: str, hub: Hub, page: str) -> str:
    """The book's link, checked against _config.yml, pointed at the test's hub and public repository."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repository, launch = config["repository"], config["launch_buttons"]
    hub_url = launch["jupyterhub_url"].rstrip("/")
    assert link.startswith(f"{hub_url}/hub/user-redirect/git-pull?"), link
    query = {key: values[0] for key, values in parse_qs(urlsplit(link).query).items()}
    name = repository["url"].rstrip("/").split("/")[-1]
    assert query == {"repo": repository["url"], "branch": repository["branch"],
                     "urlpath": f"lab/tree/{name}/{page}"}, query
    query["repo"] = hub.public.as_uri()  # file:///.../<name>: nbgitpuller clones it into <home>/<name>
    return f"{hub.url}/hub/user-redirect/git-pull?{urlencode(query, safe='/')}"


_NOTEBOOK_OPEN = """(path) => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!(w && w.context && w.context.path === path && w.content && w.content.model
            && w.content.model.cells && w.content.model.cells.length > 0);
}"""
_SAVED = "() => !window.jupyterapp.shell.currentWidget.context.model.dirty"
_CODE_CELLS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  let n = 0;
  for (let i = 0; i < cells.length; i++) n += cells.get(i).type === 'code' ? 1 : 0;
  return n;
}"""


def _student(chromium: object, hub: Hub, name: str, external: list[str]) -> object:
    """A browser context for a student, logged in to the hub; requests off 127.0.0.1 are aborted and recorded."""
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)

    def route(request_route: object) -> None:
        url = request_route.request.url
        if url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")):
            request_route.continue_()
        else:
            external.append(url)
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", "any")  # DummyAuthenticator: any password
    page.click("#login_submit")
    page.wait_for_url("**/hub/**", wait_until="load")
    return page


def _saved_lab(path: Path) -> tuple[list[tuple[bool, bool]], list[str], list[object]]:
    """The saved lab: (is a solution, passed) per checker verdict, its errors, its code cells' counts."""
    notebook = nbformat.read(path, as_version=4)
    verdicts, errors = [], []
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for cell in code:
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                errors.append(f"{output.ename}: {output.evalue}")
            text = output.get("data", {}).get("text/plain", "")
            if text.startswith("CheckResult("):
                verdicts.append(("hide-input" in cell.metadata.get("tags", []), "passed=True" in text))
    return verdicts, errors, [cell.get("execution_count") for cell in code]


@pytest.mark.slow
@pytest.mark.book
@pytest.mark.browser
def test_a_class_follows_the_books_jupyterhub_links(hub: Hub, built_html: Path, chromium: object,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    start = time.perf_counter()
    timings: dict[str, float] = {}
    external: list[str] = []
    lab_link = _local_link(_launch_link(built_html, LAB), hub, LAB)
    chapter_link = _local_link(_launch_link(built_html, CHAPTER), hub, CHAPTER)
    name = hub.public.name
    ada_lab, ben_root = hub.homes / "ada" / name / LAB, hub.homes / "ben" / name

    # 1. Ada: clone, open the lab, run it all, save.
    ada = _student(chromium, hub, "ada", external)
    ada.goto(lab_link)
    ada.wait_for_url(f"**/user/ada/lab/tree/{name}/{LAB}*")
    ada.wait_for_function(_NOTEBOOK_OPEN, arg=f"{name}/{LAB}", polling=250)
    ada.wait_for_function(KERNEL_READY, polling=250)
    timings["Ada's server up, lab cloned and open"] = time.perf_counter() - start
    assert ada_lab.is_file() and (hub.homes / "ada" / name / ".git").is_dir()
    assert _git("rev-parse", "--abbrev-ref", "HEAD", cwd=ada_lab.parents[1]).strip() == hub.branch
    ada.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    ada.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
    ada.wait_for_function(RUN_OVER, polling=500)
    timings["lab ran"] = time.perf_counter() - start
    ada.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
    ada.locator(".lm-Menu-itemLabel").get_by_text("Save Notebook", exact=True).click()
    ada.wait_for_function(_SAVED, polling=250)
    verdicts, errors, counts = _saved_lab(ada_lab)
    assert not errors, errors
    assert counts == list(range(1, len(counts) + 1)), counts  # every code cell ran, once, in order
    assert len(verdicts) == 2 * EXERCISES, verdicts
    assert all(passed == is_solution for is_solution, passed in verdicts), verdicts  # stubs rejected, solutions pass
    edited = ada_lab.read_bytes()

    # 2. Ben: a clone of his own; the chapter's link opens the chapter as a notebook.
    ben = _student(chromium, hub, "ben", external)
    ben.goto(chapter_link)
    ben.wait_for_url(f"**/user/ben/lab/tree/{name}/{CHAPTER}*")
    ben.wait_for_function(_NOTEBOOK_OPEN, arg=f"{name}/{CHAPTER}", polling=250)
    chapter = jupytext.reads((ROOT / CHAPTER).read_text(encoding="utf-8"), fmt="md:myst")
    expected = sum(cell.cell_type == "code" for cell in chapter.cells)
    try:  # the notebook's cells arrive in the model as the document loads
        ben.wait_for_function(f"() => ({_CODE_CELLS})() === {expected}", polling=250, timeout=60_000)
    except PlaywrightTimeout:
        pytest.fail(f"the chapter did not open as a notebook (through Jupytext) with its {expected} code cells: "
                    f"{ben.evaluate(_CODE_CELLS)} code cells")
    timings["Ben's server up, chapter cloned and open as a notebook"] = time.perf_counter() - start
    assert (ben_root / LAB).is_file() and (ben_root / ".git").is_dir()
    assert (ben_root / LAB).read_bytes() == (ROOT / LAB).read_bytes()  # the public file, not Ada's run
    assert not (ben_root / LAB).samefile(ada_lab)
    ben.context.close()

    # 3. The repository moves on; Ada's second click merges it and keeps her work.
    work = hub.public.parents[1] / "work" / name
    (work / "UPSTREAM.md").write_text("A change published after the first lesson.\n")
    _git("add", "UPSTREAM.md", cwd=work)
    _git("commit", "-q", "-m", "a change after the first lesson", cwd=work)
    _git("push", "-q", str(hub.public), f"{hub.branch}:{hub.branch}", cwd=work)
    ada.goto(lab_link)
    ada.wait_for_url(f"**/user/ada/lab/tree/{name}/{LAB}*")
    ada.wait_for_function(_NOTEBOOK_OPEN, arg=f"{name}/{LAB}", polling=250)
    timings["Ada's second click"] = time.perf_counter() - start
    assert (ada_lab.parents[1] / "UPSTREAM.md").is_file(), "nbgitpuller did not merge the new commit"
    assert ada_lab.read_bytes() == edited, "the second click lost Ada's edit"
    assert "Automatic commit by nbgitpuller" in _git("log", "--format=%s", cwd=ada_lab.parents[1])
    ada.context.close()

    with capsys.disabled():
        print(f"\n[jupyterhub] {time.perf_counter() - start:.1f} s: "
              + ", ".join(f"{step} at {seconds:.1f} s" for step, seconds in timings.items()))
    assert not external, f"requests that left 127.0.0.1: {external}"
