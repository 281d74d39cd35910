#!/usr/bin/env bash
# Sets everything up and builds the book into _build/html, warnings as errors.
set -eo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 PYDEVD_DISABLE_FILE_VALIDATION=1
python -m helpers.site_assets _build/html  # vendored JavaScript (Plotly, RequireJS, ...) from the registries' packages
jupyter-book build . -W -n --keep-going "$@"
echo "book: $(pwd)/_build/html/index.html"
