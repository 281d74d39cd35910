"""The replication run's variation (a) in the test command: every chapter page and lab executed again with every seed
shifted (HELPERS_SEED_OFFSET=1000), strict: each claim of the book must hold for another seed set.

The other variations (MKL's numerical paths, PyTorch's kernels without vector instructions, two threads) are run by
``bash scripts/replicate.sh`` (book/AUTHORING.md); this one is the cheapest that catches a claim true of seeds 0-2
only. The run needs no built book: it executes the pages outside Sphinx, two at a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.book, pytest.mark.slow]


def test_every_claim_holds_with_every_seed_shifted(measurements):
    jobs = os.environ.get("REPLICATE_JOBS", str(min(os.cpu_count() or 1, 2)))
    result = subprocess.run([sys.executable, "scripts/replicate.py", "offset", "--offset", "1000", "--jobs", jobs],
                            cwd=ROOT, capture_output=True, text=True, timeout=3600)
    summary = json.loads((ROOT / "_build" / "replication" / "offset-1000.json").read_text(encoding="utf-8"))
    slowest = ", ".join("{page} {seconds:.0f} s".format(**page)
                        for page in sorted(summary["pages"], key=lambda page: -page["seconds"])[:3])
    measurements.append(f"replication, seeds + 1000: {len(summary['pages'])} pages in {summary['seconds']:.0f} s "
                        f"(slowest: {slowest})")
    assert result.returncode == 0 and not summary["failed"], (
        f"claims that do not hold with every seed shifted by 1000 ({', '.join(summary['failed'])}):\n"
        + result.stdout[-6000:] + result.stderr[-2000:])
    assert len(summary["pages"]) >= 20  # every chapter page and lab, not an empty run
