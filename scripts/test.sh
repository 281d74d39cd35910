#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: the Python packages (scripts/setup.sh); from Debian,
# when missing, Chromium (browser tests), Node.js with npm (the site's bundles) and zip (workflow tests).
set -eo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v npm >/dev/null || missing+=(nodejs npm)
command -v zip >/dev/null || missing+=(zip)
{ command -v fc-list >/dev/null && fc-list :lang=zh | grep -q .; } || missing+=(fonts-noto-cjk)  # the Chinese edition
if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
bash scripts/setup.sh
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 PYDEVD_DISABLE_FILE_VALIDATION=1
# One process by default. TEST_WORKERS=2 runs two side by side (pytest-xdist, one a core): one builds the
# book and then drives the browser through every page, while the other runs the package's tests and then the
# other tests of the built book; each test file stays whole in one process (--dist loadfile, the three files
# that share the desktop visits of every page as one: tests/conftest.py, which also orders them;
# --no-loadscope-reorder keeps that order). On a 2-core machine that is faster for the package's tests alone
# (-m "not book": 150 s, against 332 s in one measured earlier) but slower for the whole suite (the build, run beside the
# package's tests, took 1,418 s against 1,104 s alone, clean clones the same day: every part of the suite is
# bound by the two cores), so it is not the default.
# --durations: the slowest tests and fixtures, printed at the end of every run.
workers="${TEST_WORKERS:-0}"
if [ "$workers" = 0 ]; then
    python -m pytest --durations=30 "$@"
else
    python -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder --durations=30 "$@"
fi
