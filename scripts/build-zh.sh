#!/usr/bin/env bash
# Builds the Chinese edition (zh/, see zh/TRANSLATING.md) into _build/html/zh, warnings as errors.
# Run it after the English build (scripts/build.sh calls it last): it reads the English build's
# notebook cache (_build/.jupyter_cache: a Chinese page's code cells are its English page's, so no
# notebook runs twice) and its objects.inv (links to pages not translated yet go to the English ones).
#   bash scripts/build-zh.sh [--path-output DIR] [jupyter-book options]
# --path-output: the English build's --path-output (default: the repository), so DIR/_build/html/zh.
set -eo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT"
options=()
while [ $# -gt 0 ]; do
    case "$1" in
        --path-output) OUT="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
        *) options+=("$1"); shift ;;
    esac
done
[ -z "${VIRTUAL_ENV:-}" ] && [ -f "$ROOT/.venv/bin/activate" ] && source "$ROOT/.venv/bin/activate"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 PYDEVD_DISABLE_FILE_VALIDATION=1
if [ ! -f "$OUT/_build/html/objects.inv" ]; then
    echo "build-zh: no English build in $OUT/_build/html: run scripts/build.sh first" >&2
    exit 1
fi
# The Chinese build's own folder (doctrees, executed notebooks, pages), copied into the site at the end.
# Started afresh when what the notebooks run changed (scripts/cache_key.py), as scripts/build.sh does
# for the English build.
STAGE="$OUT/_build/zh"
if [ "$(cat "$STAGE/.notebook-key" 2>/dev/null)" != "$(cat "$OUT/_build/.notebook-key" 2>/dev/null)" ]; then
    rm -rf "$STAGE"
fi
mkdir -p "$STAGE" && cp "$OUT/_build/.notebook-key" "$STAGE/.notebook-key" 2>/dev/null || true
PYTHONPATH="$ROOT/book/_ext${PYTHONPATH:+:$PYTHONPATH}" \
    python -m sitebuild.vendor "$STAGE/_build/html" --cache "$OUT/_build/.vendor-cache" >/dev/null
export BOOK_JOBS="${BOOK_JOBS:-$(nproc)}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( $(nproc) / BOOK_JOBS > 0 ? $(nproc) / BOOK_JOBS : 1 ))}"
start=$SECONDS
# zh/_config.yml names the notebook cache (and editions.py the English site) relative to the folder the
# build runs in: the output root.
# A failure says so loudly, and says what it leaves: the English pages' 中文 links lead into _build/html/zh,
# which holds what this build wrote (with -W --keep-going Sphinx writes every page it can before it fails),
# or nothing at all when it wrote nothing (a notebook that failed to run stops Sphinx at once).
fail() {
    {
        echo "================================================================================"
        echo "build-zh: THE CHINESE EDITION FAILED: $1"
        echo "build-zh: $2"
        echo "================================================================================"
    } >&2
    exit "${3:-1}"
}
status=0
(cd "$OUT" && python "$ROOT/scripts/jb.py" build "$ROOT/zh" --path-output "$STAGE" -W -n --keep-going "${options[@]}") \
    || status=$?
rm -rf "$OUT/_build/html/zh"
if [ ! -f "$STAGE/_build/html/index.html" ]; then
    fail "jupyter-book exited with $status and wrote no site" \
        "$OUT/_build/html/zh is missing: every English page's 中文 link leads nowhere" "$(( status ? status : 1 ))"
fi
cp -a "$STAGE/_build/html" "$OUT/_build/html/zh" \
    || fail "the copy of $STAGE/_build/html into $OUT/_build/html/zh failed" \
        "$OUT/_build/html/zh is incomplete: the English pages' 中文 links may lead nowhere"
built=$(cd "$STAGE/_build/html" && find . -type f | wc -l)
copied=$(cd "$OUT/_build/html/zh" && find . -type f | wc -l)
[ "$built" = "$copied" ] || fail "the copy holds $copied files of the $built built" \
    "$OUT/_build/html/zh is incomplete: the English pages' 中文 links may lead nowhere"
if [ "$status" -ne 0 ]; then
    fail "jupyter-book exited with $status (the warnings and errors are above)" \
        "$OUT/_build/html/zh holds what it wrote, which may be incomplete or show an error" "$status"
fi
echo "book (中文): $OUT/_build/html/zh/index.html ($(( SECONDS - start )) s)"
