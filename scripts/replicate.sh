#!/usr/bin/env bash
# The replication run: every chapter page and lab executed again, strict (HELPERS_CLAIMS=strict), under
# (a) another seed offset, (b) other numerical paths (MKL's AVX2 and COMPATIBLE paths, PyTorch's own kernels
# without vector instructions) and (c) two threads where a page pins one. Every claim must hold under each.
#
#   bash scripts/replicate.sh                    # all of them: offset mkl-avx2 mkl-compatible aten-default threads
#   bash scripts/replicate.sh offset             # (a) only: what the test command runs (tests/book/test_replication.py)
#   bash scripts/replicate.sh offset --offset 2000 --only book/03   # another offset, pages whose name has book/03
#   bash scripts/replicate.sh mkl-avx2 --report  # go on past a failed claim and list every one that fails
#
# Prints a line a page (seconds, ok or FAILED with the claim) and writes _build/replication/<variant>.json.
# Details: scripts/replicate.py; what a claim is and how to check a new one: book/AUTHORING.md.
set -eo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/setup.sh
source .venv/bin/activate
variants=()
while [ $# -gt 0 ] && [[ "$1" != -* ]]; do variants+=("$1"); shift; done
[ ${#variants[@]} -gt 0 ] || variants=(offset mkl-avx2 mkl-compatible aten-default threads)
exec python scripts/replicate.py "${variants[@]}" "$@"
