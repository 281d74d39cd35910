#!/usr/bin/env bash
# Creates .venv (Python 3.11) with the CPU build of PyTorch and everything the book and tests need.
# Idempotent: a second run only checks that everything is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
fi
# The CPU build first: a bare `torch` would pull a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0" \
  || .venv/bin/python -m pip install --quiet "torch>=2.5" --index-url https://download.pytorch.org/whl/cpu
.venv/bin/python -m pip install --quiet -r requirements.txt
.venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
echo "setup: $(.venv/bin/python -c 'import torch, helpers; print("torch", torch.__version__)')"
