#!/usr/bin/env bash
# Builds the book into _build/html, warnings as errors, in an environment set up by scripts/setup.sh.
# scripts/build-book.sh (the README's command) runs both; the test suite runs this one, unless the last
# build was made from the same files and succeeded: scripts/build_record.py records each build (its log
# in _build/build.log) and the suite's book_build fixture reuses it, so CI builds once.
set -eo pipefail
cd "$(dirname "$0")/.."
[ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ] && source .venv/bin/activate
if [ -z "${BOOK_BUILD_RECORDED:-}" ]; then
    BOOK_BUILD_RECORDED=1 exec python scripts/build_record.py bash scripts/build.sh "$@"
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 PYDEVD_DISABLE_FILE_VALIDATION=1
# A claim of the book that this run contradicts fails the build (helpers.claims; in a reader's kernel it only says so).
# HELPERS_SEED_OFFSET, when set, shifts every seed (helpers.seeding): the book built with another seed set.
export HELPERS_CLAIMS=strict
# The notebook cache is keyed by each notebook's text, not by the package it imports, and Sphinx's
# viewcode keeps module pages it thinks are fresh: when what the notebooks run changes (the key of
# scripts/cache_key.py: src/helpers, not the site's build in book/_ext), start afresh.
notebook_key=$(python scripts/cache_key.py)
if [ "$(cat _build/.notebook-key 2>/dev/null)" != "$notebook_key" ]; then
    rm -rf _build/.jupyter_cache _build/.doctrees _build/html _build/jupyter_execute
    mkdir -p _build && echo "$notebook_key" > _build/.notebook-key
fi
# vendored JavaScript (Plotly, RequireJS, ...) from the registries' packages (book/_ext/sitebuild)
PYTHONPATH="book/_ext${PYTHONPATH:+:$PYTHONPATH}" python -m sitebuild.vendor _build/html
# Sphinx reads (executes) BOOK_JOBS notebooks at once, one per core, each kernel on its share of threads.
export BOOK_JOBS="${BOOK_JOBS:-$(nproc)}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( $(nproc) / BOOK_JOBS > 0 ? $(nproc) / BOOK_JOBS : 1 ))}"
status=0
python scripts/jb.py build . -W -n --keep-going "$@" || status=$?
if [ "$status" -ne 0 ]; then
    echo "build: THE ENGLISH EDITION FAILED (exit $status, the errors are above): the Chinese edition is not built," \
        "so _build/html/zh is the last build's, if any, and the English pages' 中文 links may lead nowhere" >&2
    exit "$status"
fi
bash scripts/build-zh.sh  # the Chinese edition into _build/html/zh, from the English notebook cache
echo "book: $(pwd)/_build/html/index.html"
