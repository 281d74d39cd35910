#!/usr/bin/env bash
# Runs the book's generated notebooks as Colab would: in a fresh environment with Colab's versions of what the
# book touches, each notebook's own first cell installs the helper package (from a local wheel, or the local
# clone, instead of the public repository), then the notebook runs top to bottom; no error, no resolver
# conflict, and its install cell, run again after a restart, installs and says nothing. Records each notebook's
# install and run time (_build/colab/times.jsonl, and a table at the end). See scripts/colab_check.py.
#
#   bash scripts/colab-check.sh                 # every generated notebook, English and Chinese
#   bash scripts/colab-check.sh --sample        # the test command's sample (tests/book/test_colab.py)
#   bash scripts/colab-check.sh notebooks/03-scaling-lab zh/book/00-start/index   # these (docnames)
#   bash scripts/colab-check.sh --env-only      # makes the environment and stops (scripts/test-colab-python.sh)
#
# The notebooks are the build's (_build/html/_notebooks, _build/html/zh/_notebooks); with --generate, or where
# there is no build, they are written from the sources as the build writes them (colab_check.py generate).
#
# Colab (googlecolab/backend-info, pip-freeze.txt, August 2026): Python 3.13, torch 2.11.0+cpu, plotly 5.24.1,
# ipywidgets 7.7.1, anywidget 0.9.21, notebook 6.5.7, ipykernel 6.17.1, transformers 5.15.0, numpy 2.1.3,
# jupytext 1.19.5, Sphinx 8.2.3. Here: the same, but for torch's build: PyPI has no CPU build of torch 2.11, so
# .venv-colab gets PyPI's CUDA build of 2.11.0 (the environment is about 5 GB with its NVIDIA libraries; it runs
# on the CPU). Python is COLAB_PYTHON (default python3.13, or pyenv's 3.13; where there is none, 3.12, then 3.11:
# the version is said on the first line).
# The kernel runs with HF_HUB_OFFLINE=1 (no model hub here: the book's model files come from PyPI packages).
#
# The test command's sample (tests/book/test_colab.py) runs in a lighter environment, .venv-colab-light: the
# project's own Python (3.11) and torch (2.13.0, the CPU build this machine installs from its disk), Colab's versions
# of everything else; the CUDA build of torch for Python 3.13 is a download of several GB, too much for every run.
#
# Settings: COLAB_PYTHON, COLAB_TORCH (default 2.11.0), COLAB_VENV (default .venv-colab), COLAB_FROM=clone
# (install from git+file:// of this checkout at HEAD, built by pip as Colab builds the git requirement, instead of a wheel built once),
# COLAB_CELL_TIMEOUT (seconds a cell may run, default 900), COLAB_OUT (default _build/colab).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="${COLAB_OUT:-$ROOT/_build/colab}"
VENV="${COLAB_VENV:-$ROOT/.venv-colab}"
TORCH="${COLAB_TORCH:-2.11.0}"
PROJECT_PYTHON="$ROOT/.venv/bin/python"  # the project's own environment (scripts/setup.sh)
[ -x "$PROJECT_PYTHON" ] || PROJECT_PYTHON=python3
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1 PYDEVD_DISABLE_FILE_VALIDATION=1 \
    TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1

generate=0 sample=0 env_only=0 wanted=()
for argument in "$@"; do
    case "$argument" in
        --generate) generate=1 ;;
        --sample) sample=1 ;;
        --env-only) env_only=1 ;;
        -h|--help) sed -n '/^set -uo/q;2,$p' "$0"; exit 0 ;;
        *) wanted+=("${argument%.ipynb}") ;;
    esac
done
if [ "$sample" = 1 ]; then
    mapfile -t -O "${#wanted[@]}" wanted < <("$PROJECT_PYTHON" scripts/colab_check.py sample)
fi
mkdir -p "$OUT"

# 1. The Colab-like environment, made once (.venv-colab; remade when its pins change).
COLAB_PYTHON="${COLAB_PYTHON:-}"
if [ -z "$COLAB_PYTHON" ]; then
    # pyenv's shims answer `command -v` for versions that are installed but not selected: ask its folders too.
    PYENV_VERSIONS="$(pyenv root 2>/dev/null || echo /nonexistent)/versions"
    for candidate in python3.13 "$PYENV_VERSIONS"/3.13*/bin/python3 python3.12 "$PYENV_VERSIONS"/3.12*/bin/python3 \
            python3.11; do
        if command -v "$candidate" >/dev/null && "$candidate" -c 'import ssl, venv' 2>/dev/null; then
            COLAB_PYTHON=$candidate; break
        fi
    done
fi
PINS="torch==$TORCH $("$PROJECT_PYTHON" -c 'import sys; sys.path.insert(0, "scripts"); import colab_check; print(" ".join(colab_check.COLAB_PINS))') nbclient"
STAMP="$VENV/colab-pins.txt"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$COLAB_PYTHON $PINS" ]; then
    rm -rf "$VENV"
    "$COLAB_PYTHON" -m venv "$VENV" && "$VENV/bin/python" -m pip install -q --upgrade pip \
        && "$VENV/bin/python" -m pip install -q $PINS || { echo "colab-check: could not make $VENV" >&2; exit 2; }
    echo "$COLAB_PYTHON $PINS" > "$STAMP"
fi
echo "colab-check: $("$VENV/bin/python" -c 'import sys, torch, plotly, ipywidgets, numpy, transformers
print(f"Python {sys.version.split()[0]}, torch {torch.__version__}, plotly {plotly.__version__}, ipywidgets "
      f"{ipywidgets.__version__}, numpy {numpy.__version__}, transformers {transformers.__version__}")')"
[ "$env_only" = 1 ] && exit 0

# 2. The helper package, as a wheel (built once per commit and change), or the clone at HEAD.
rm -rf "$OUT/wheel" && mkdir -p "$OUT/wheel"
"$PROJECT_PYTHON" -m pip wheel -q --no-deps -w "$OUT/wheel" "$ROOT" >/dev/null \
    || { echo "colab-check: the wheel did not build" >&2; exit 2; }
COLAB_WHEEL=$(ls "$OUT"/wheel/why_attention_helpers-*.whl | tail -1)
export COLAB_WHEEL COLAB_CLONE=""
[ "${COLAB_FROM:-wheel}" = clone ] && COLAB_CLONE="$ROOT@$(git rev-parse HEAD)"

# 3. The notebooks: the build's (both editions), or written as the build writes them.
notebook_path() {  # the notebook of a docname (zh/... for the Chinese edition's) in the site $1
    case "$2" in
        zh/*) echo "$1/zh/_notebooks/${2#zh/}.ipynb" ;;
        *) echo "$1/_notebooks/$2.ipynb" ;;
    esac
}
SITE="$ROOT/_build/html"
[ -d "$SITE/_notebooks" ] && [ -d "$SITE/zh/_notebooks" ] || generate=1
for name in "${wanted[@]}"; do
    [ -f "$(notebook_path "$SITE" "$name")" ] || generate=1
done
if [ "$generate" = 1 ]; then
    rm -rf "$OUT/notebooks"
    PYTHONPATH="$ROOT/src" "$PROJECT_PYTHON" scripts/colab_check.py generate "$OUT/notebooks" || exit 2
    SITE="$OUT/notebooks"
else
    echo "colab-check: the build's notebooks, $SITE/_notebooks and $SITE/zh/_notebooks"
fi
notebooks=()
if [ "${#wanted[@]}" = 0 ]; then
    mapfile -t notebooks < <(find "$SITE/_notebooks" "$SITE/zh/_notebooks" -name '*.ipynb' 2>/dev/null | sort)
else
    for name in "${wanted[@]}"; do
        path=$(notebook_path "$SITE" "$name")
        [ -f "$path" ] || { echo "colab-check: no notebook $path" >&2; exit 2; }
        notebooks+=("$path")
    done
fi

# 4. Each notebook in a fresh copy of the environment (hard links), in a fresh folder.
RECORD="$OUT/times.jsonl"
: > "$RECORD"
failed=0
for notebook in "${notebooks[@]}"; do
    work="$OUT/run/$(basename "$(dirname "$notebook")")-$(basename "$notebook" .ipynb)"
    [[ "$notebook" == */zh/_notebooks/* ]] && work="$OUT/run/zh-$(basename "$(dirname "$notebook")")-$(basename "$notebook" .ipynb)"
    rm -rf "$work" "$OUT/env" && mkdir -p "$work"
    cp -al "$VENV" "$OUT/env"
    # HELPERS_CACHE_DIR: the package's disk cache (SmolLM2's dequantized weights) starts empty, as on a fresh runtime
    (cd "$work" && PATH="$OUT/env/bin:$PATH" JUPYTER_DATA_DIR="$work/jupyter" JUPYTER_PATH="$OUT/env/share/jupyter" \
        HELPERS_CACHE_DIR="$work/cache" "$OUT/env/bin/python" "$ROOT/scripts/colab_check.py" run "$notebook" "$work" \
        "$RECORD") || failed=$((failed + 1))
    rm -rf "$work/cache"
done
if [ "${COLAB_RESTART_CHECK:-1}" = 1 ] && [ "${#notebooks[@]}" -gt 0 ]; then
    work="$OUT/run/restart"
    rm -rf "$work" "$OUT/env" && mkdir -p "$work"
    cp -al "$VENV" "$OUT/env"
    (cd "$work" && PATH="$OUT/env/bin:$PATH" JUPYTER_DATA_DIR="$work/jupyter" JUPYTER_PATH="$OUT/env/share/jupyter" \
        "$OUT/env/bin/python" "$ROOT/scripts/colab_check.py" restart "${notebooks[0]}" "$work" "$RECORD") \
        || failed=$((failed + 1))
fi
rm -rf "$OUT/env"
"$PROJECT_PYTHON" scripts/colab_check.py table "$RECORD"
echo "colab-check: ${#notebooks[@]} notebooks, $failed failed (record: $RECORD)"
[ "$failed" = 0 ]
