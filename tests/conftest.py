"""Shared test set-up: one thread for torch, and the session's headless Chromium."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

# The suite's tensors are tiny: one thread avoids the oversubscription that makes a 2-layer forward
# pass take ~500 ms instead of ~0.5 ms on a loaded 2-core machine. Results do not depend on it.
torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parent / "book"))  # the shared browser helpers (book/browser.py)
from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    """Debian's headless Chromium driven by Playwright (never a downloaded browser), one for the whole
    session: Playwright's synchronous API refuses a second instance while one is running in the thread,
    so the book's browser tests and the JupyterLab tests share this one."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (scripts/test.sh does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
