#!/usr/bin/env bash
# Sets everything up and builds the book into _build/html, warnings as errors.
set -eo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source .venv/bin/activate
bash scripts/build.sh "$@"
