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
# The notebook cache is keyed by each notebook's text, not by the package it imports, and Sphinx's
# viewcode keeps module pages it thinks are fresh: when src/helpers changes, start afresh.
helpers_hash=$(find src/helpers -name '*.py' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
if [ "$(cat _build/.helpers-hash 2>/dev/null)" != "$helpers_hash" ]; then
    rm -rf _build/.jupyter_cache _build/.doctrees _build/html _build/jupyter_execute
    mkdir -p _build && echo "$helpers_hash" > _build/.helpers-hash
fi
python -m helpers.site_vendor _build/html  # vendored JavaScript (Plotly, RequireJS, ...) from the registries' packages
# Sphinx reads (executes) BOOK_JOBS notebooks at once, one per core, each kernel on its share of threads.
export BOOK_JOBS="${BOOK_JOBS:-$(nproc)}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( $(nproc) / BOOK_JOBS > 0 ? $(nproc) / BOOK_JOBS : 1 ))}"
python scripts/jb.py build . -W -n --keep-going "$@"
bash scripts/build-zh.sh  # the Chinese edition into _build/html/zh, from the English notebook cache
echo "book: $(pwd)/_build/html/index.html"
