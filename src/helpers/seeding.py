"""The one place every seed of the book is drawn from, so that the whole book can be run with other seeds.

Every random number the package, the chapters and the labs use comes from a generator or a global seed
made here: :func:`generator` (a ``torch.Generator``) and :func:`manual_seed` (PyTorch's global generator,
NumPy's and Python's ``random``). Each adds the **seed offset** to the seed it is given:

- ``HELPERS_SEED_OFFSET=<int>`` in the environment shifts every seed of the book by that integer at once
  (read at every call, so a test can set it). Unset or ``0``: the book as it is published.
- :func:`seed_offset` reads it; :func:`shifted` applies it.

Why: a result that holds for seeds 0, 1 and 2 and fails for 1000, 1001 and 1002 is a description of
three draws, not a finding about the method. The replication run (``scripts/replicate.sh``) executes
every page and lab again with another offset, and every claim the book makes must still hold
(chapter 0, "How the book checks its claims"; ``book/AUTHORING.md``).

A checker's fresh draw (:func:`fresh_generator`) comes from the operating system, not from the offset: the
answer it checks must not be able to know it in advance. The checker reports that seed in its verdict.
"""

from __future__ import annotations

import os
import random
import secrets

import torch

__all__ = ["ENVIRONMENT_VARIABLE", "seed_offset", "shifted", "generator", "manual_seed", "fresh_generator"]

ENVIRONMENT_VARIABLE = "HELPERS_SEED_OFFSET"
"""The environment variable that shifts every seed of the book (an integer; unset or empty means 0)."""


def seed_offset() -> int:
    """The offset added to every seed: ``int(os.environ["HELPERS_SEED_OFFSET"])``, or 0 when it is unset.

    Returns:
        The offset (any integer, negative included).

    Raises:
        ValueError: ``HELPERS_SEED_OFFSET`` is set to something that is not an integer.
    """
    text = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not text:
        return 0
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{ENVIRONMENT_VARIABLE} must be an integer, got {text!r}") from None


def _check_seed(seed: object) -> int:
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} ({seed!r})")
    return seed


def shifted(seed: int) -> int:
    """``seed`` plus the seed offset, folded into ``[0, 2**63)`` (every generator accepts it).

    Args:
        seed: The seed the book names (e.g. ``0``, ``1``, ``2`` for three runs).

    Returns:
        The seed actually used.

    Raises:
        TypeError: ``seed`` is not an int.
    """
    return (_check_seed(seed) + seed_offset()) % 2**63


def generator(seed: int, device: torch.device | str | None = None) -> torch.Generator:
    """A ``torch.Generator`` seeded with ``shifted(seed)``: pass it as ``generator=`` to ``torch.randn`` & co.

    Args:
        seed: The seed the book names.
        device: The generator's device (``None``: the CPU). A CUDA tensor drawn with ``generator=``
            needs a CUDA generator.

    Returns:
        A new generator.

    Raises:
        TypeError: ``seed`` is not an int.
    """
    gen = torch.Generator() if device is None else torch.Generator(device=device)
    return gen.manual_seed(shifted(seed))


def manual_seed(seed: int) -> None:
    """Seeds PyTorch's global generator (CPU and every GPU), NumPy's and Python's ``random`` with ``shifted(seed)``.

    Code that draws without a generator (``torch.randn(3)``, a layer's initial weights, dropout) draws
    from the global generator: call this first, as every experiment of the book does.

    Args:
        seed: The seed the book names.

    Raises:
        TypeError: ``seed`` is not an int.
    """
    value = shifted(seed)
    random.seed(value)
    torch.manual_seed(value)
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency; seeding does not need it
        return
    np.random.seed(value % 2**32)


def fresh_generator() -> torch.Generator:
    """A generator seeded from the operating system (not shifted): for a checker's inputs, which an answer
    must not be able to know in advance.

    Returns:
        A new CPU generator; ``generator.initial_seed()`` is its seed, which a checker that draws with it
        reports in its verdict, so that the case can be replayed.
    """
    return torch.Generator().manual_seed(secrets.randbits(63))
