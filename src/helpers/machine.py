"""The machine a page ran on, in words: what a timing is reported with (chapter 0; ``book/AUTHORING.md``).

A timing ratio depends on the CPU (its vector units: AVX-512 computes ``tanh`` several times faster than
AVX2; its caches; its load), so the book asserts only ratios far from their threshold on every CPU, and
reports the others with the machine they were measured on: :func:`cpu_description`.
"""

from __future__ import annotations

import platform
from pathlib import Path

import torch

__all__ = ["cpu_description"]


def _cpu_model() -> str:
    """The CPU's model name as the operating system reports it (``/proc/cpuinfo`` on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "an unknown CPU"


def cpu_description() -> str:
    """The CPU and the vector instructions PyTorch's kernels use on it, in names only (the same in every
    language of the book), e.g. ``"Intel(R) Xeon(R) Processor, AVX512"`` or ``"AMD EPYC 7B13, AVX2"``.

    Returns:
        One phrase, for a sentence such as "measured on {cpu_description()}".
    """
    try:
        capability = torch.backends.cpu.get_cpu_capability()
    except (AttributeError, RuntimeError):  # pragma: no cover - very old PyTorch
        capability = "unknown"
    return f"{_cpu_model()}, {capability}"
