"""The code passes the linter configured in pyproject.toml (pyflakes, import order, line length)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing_in_the_package_tests_benchmarks_and_scripts() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is not installed: it is in requirements.txt (scripts/setup.sh installs it)"
    paths = [p for p in ("src", "tests", "benchmarks", "scripts", "book/_ext") if (ROOT / p).exists()]
    result = subprocess.run([ruff, "check", "--no-cache", *paths], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
