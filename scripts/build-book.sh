#!/usr/bin/env bash
# Sets everything up and builds the book into _build/html, warnings as errors.
# The build needs Node.js and npm (the site's scripts come from npm; its two bundles are built with
# esbuild; math is typeset in Node.js): installed from Debian when missing.
set -eo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
bash scripts/setup.sh
source .venv/bin/activate
bash scripts/build.sh "$@"
