"""Input checks shared by every module: one place that says what a bad argument is.

Each check raises :class:`TypeError` when an argument has the wrong type and :class:`ValueError`
when it has the right type but a wrong value, with a message that names the argument and says
what it got. The package checks with ``if ...: raise`` (never ``assert``, which ``python -O``
removes), before any tensor work, so that a mistake is reported where it was made instead of
as a shape error deep inside PyTorch. Chapter 0 explains the convention.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = [
    "check_int",
    "check_positive_int",
    "check_positive_ints",
    "check_tensor",
]


def check_int(name: str, value: object, minimum: int | None = None) -> int:
    """Return ``value`` if it is an ``int`` (not a ``bool``) and at least ``minimum``.

    Args:
        name: The argument's name, for the message.
        value: What the caller passed.
        minimum: The smallest allowed value; ``None`` allows any int.

    Returns:
        ``value``, unchanged.

    Raises:
        TypeError: ``value`` is not an int (a bool is not accepted as one).
        ValueError: ``value < minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r} of type {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` if it is an int ``>= 1``; see :func:`check_int`."""
    return check_int(name, value, 1)


def check_positive_ints(name: str, values: Sequence[int]) -> list[int]:
    """Return ``values`` as a list if it is a non-empty sequence of ints ``>= 1``.

    Raises:
        ValueError: ``values`` is empty, or one of its items is not a positive int.
    """
    items = list(values)
    if not items or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in items):
        raise ValueError(f"{name} must be a non-empty sequence of positive ints, got {items!r}")
    return items


def check_tensor(name: str, value: object, *, min_dim: int = 0, finite: bool = False) -> Tensor:
    """Return ``value`` if it is a floating-point tensor with at least ``min_dim`` dimensions.

    Args:
        name: The argument's name, for the message.
        value: What the caller passed.
        min_dim: The fewest dimensions allowed.
        finite: Also reject NaN and infinite entries (a check that reads the tensor: on a GPU it
            waits for the device).

    Returns:
        ``value``, unchanged.

    Raises:
        TypeError: ``value`` is not a tensor, or not of a floating dtype.
        ValueError: it has fewer than ``min_dim`` dimensions, or (``finite``) holds NaN or inf.
    """
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    if value.dim() < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dimension(s), got shape {tuple(value.shape)}")
    if finite and value.device.type != "meta" and not bool(torch.isfinite(value).all()):
        raise ValueError(f"{name} contains NaN or inf values (shape {tuple(value.shape)})")
    return value
