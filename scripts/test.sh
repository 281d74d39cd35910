#!/usr/bin/env bash
# Sets everything up (Python packages, Debian's Chromium for browser tests) and runs the whole test suite.
set -eo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
bash scripts/setup.sh
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 PYDEVD_DISABLE_FILE_VALIDATION=1
python -m pytest "$@"
