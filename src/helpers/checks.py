"""Input checks shared by every module: one place that says what a bad argument is.

Each check raises :class:`TypeError` when an argument has the wrong type and :class:`ValueError`
when it has the right type but a wrong value, with a message that names the argument and says
what it got. The package checks with ``if ...: raise`` (never ``assert``, which ``python -O``
removes), before any tensor work, so that a mistake is reported where it was made instead of
as a shape error deep inside PyTorch. Chapter 0 explains the convention.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = [
    "check_int",
    "check_positive_int",
    "check_positive_ints",
    "check_tensor",
    "check_scale",
    "check_attn_mask",
    "check_key_mask",
    "reject_pytorch_padding_mask",
    "check_qkv",
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
    """Return ``value`` if it is an int ``>= 1``; see :func:`check_int`.

    Raises:
        TypeError: ``value`` is not an int (a bool is not accepted as one).
        ValueError: ``value < 1``.
    """
    check_int(name, value)
    if value < 1:
        raise ValueError(f"{name} must be a positive int, got {value}")
    return value


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


def check_scale(name: str, value: object) -> float | None:
    """Return ``value`` if it is ``None`` or a finite real number (not a bool).

    The ``scale`` of every attention kernel: ``None`` means the default ``1 / sqrt(E)``.

    Raises:
        TypeError: ``value`` is not a number.
        ValueError: ``value`` is NaN or infinite.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a float or None, got {value!r} of type {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number or None, got {value!r}")
    return value


def check_attn_mask(attn_mask: object, query: Tensor, weights_shape: Sequence[int]) -> Tensor:
    """Return ``attn_mask`` if it is a valid mask for attention weights of ``weights_shape``.

    The rules of :func:`helpers.attention.scaled_dot_product_attention` (chapter 5), shared by
    :class:`helpers.multihead.MultiHeadAttention`: a bool mask (``True`` = may attend) or a
    float bias of the query's dtype, on the query's device, at least 2-D, broadcasting to
    ``weights_shape`` without enlarging it; a float bias holds finite values and ``-inf`` only
    (not read on the ``meta`` device, which has no values).

    Args:
        attn_mask: What the caller passed.
        query: The queries (for dtype and device).
        weights_shape: Shape of the attention weights, ``(..., L, S)``.

    Returns:
        ``attn_mask``, unchanged.

    Raises:
        TypeError: not a tensor; an integer mask; a float mask of another dtype than ``query``.
        ValueError: another device; a shape that does not broadcast; NaN or ``+inf`` entries.
    """
    weights_shape = tuple(weights_shape)
    if not isinstance(attn_mask, Tensor):
        raise TypeError(f"attn_mask must be a torch.Tensor or None, got {type(attn_mask).__name__}")
    if attn_mask.dtype != torch.bool and not attn_mask.is_floating_point():
        raise TypeError(
            f"attn_mask must be a bool tensor (True = may attend) or a float tensor added to the scores, "
            f"got dtype {attn_mask.dtype}; for a 0/1 integer mask use attn_mask.bool()"
        )
    if attn_mask.is_floating_point() and attn_mask.dtype != query.dtype:
        raise TypeError(f"a float attn_mask must have the query's dtype {query.dtype}, got {attn_mask.dtype}")
    if attn_mask.device != query.device:
        raise ValueError(f"attn_mask is on {attn_mask.device} but query is on {query.device}")
    ok = attn_mask.dim() >= 2
    if ok:
        try:
            ok = torch.broadcast_shapes(attn_mask.shape, weights_shape) == torch.Size(weights_shape)
        except RuntimeError:
            ok = False
    if not ok:
        raise ValueError(
            f"attn_mask of shape {tuple(attn_mask.shape)} does not broadcast to the attention weights' "
            f"shape {weights_shape} (..., L, S); use e.g. (L, S), (B, 1, L, S) or (B, 1, 1, S)"
        )
    if (
        attn_mask.is_floating_point()
        and attn_mask.device.type != "meta"
        and bool(attn_mask.isnan().any() or attn_mask.isposinf().any())
    ):
        raise ValueError("a float attn_mask may hold finite values and -inf only, got NaN or +inf")
    return attn_mask


def check_key_mask(name: str, key_mask: object, batch: int, source_length: int, device: torch.device) -> Tensor:
    """Return ``key_mask`` as a ``(B, 1, 1, S)`` bool mask if it is a valid key mask.

    The key mask of :class:`helpers.multihead.MultiHeadAttention` and of the blocks and models
    built on it (chapter 5): ``True`` = a real token that may be attended to, ``False`` =
    padding, the polarity of every boolean mask of the package. It may have shape ``(B, S)`` or
    ``(B, 1, 1, S)``, the output of :func:`helpers.masks.padding_mask`.

    Args:
        name: The argument's name, for the message.
        key_mask: What the caller passed.
        batch: ``B``.
        source_length: ``S``, the number of keys (with a KV cache: cached + new).
        device: The device the mask must be on (the queries').

    Returns:
        The mask as ``(B, 1, 1, S)``, broadcasting over heads and queries.

    Raises:
        TypeError: not a bool tensor (a float mask, or an integer 0/1 mask).
        ValueError: another shape than ``(B, S)`` or ``(B, 1, 1, S)``, or another device.
    """
    if not isinstance(key_mask, Tensor) or key_mask.dtype != torch.bool:
        got = key_mask.dtype if isinstance(key_mask, Tensor) else type(key_mask).__name__
        raise TypeError(f"{name} must be a bool tensor (True = real token, may be attended to), got {got}")
    if key_mask.shape == (batch, source_length):
        key_mask = key_mask[:, None, None, :]  # (B, S) -> (B, 1, 1, S)
    elif key_mask.shape != (batch, 1, 1, source_length):
        raise ValueError(
            f"{name} must have shape (B, S) = {(batch, source_length)} or (B, 1, 1, S) = "
            f"{(batch, 1, 1, source_length)} (as helpers.masks.padding_mask returns), got {tuple(key_mask.shape)}"
        )
    if key_mask.device != device:
        raise ValueError(f"{name} is on {key_mask.device} but query is on {device}")
    return key_mask


def reject_pytorch_padding_mask(name: str, value: object, new_name: str) -> None:
    """Raise a ``TypeError`` if PyTorch's padding-mask argument ``name`` was passed (not ``None``).

    PyTorch's ``key_padding_mask`` (``nn.MultiheadAttention``), ``memory_key_padding_mask`` and
    ``src_key_padding_mask`` (``nn.Transformer*``) take ``True`` = padding to *ignore*; the
    package's key masks take ``True`` = a real token that may be attended to, like every
    boolean mask here. So the package does not take PyTorch's names: a mask copied from PyTorch
    code under its own name fails here instead of being silently inverted (chapter 5).

    Args:
        name: The PyTorch name that was used.
        value: What the caller passed under it.
        new_name: The package's argument that replaces it.

    Raises:
        TypeError: ``value`` is not ``None``.
    """
    if value is not None:
        raise TypeError(
            f"{name} is not an argument here: in PyTorch True means 'padding, ignore it', but every mask of "
            f"this package means True = may attend. Pass {new_name}= instead, True for a real token; "
            f"from a PyTorch mask: {new_name}=~{name}"
        )


def check_qkv(query: object, key: object, value: object) -> int:
    """Check the 4-D query/key/value of the efficient kernels; return ``H / H_kv``.

    The layout of :func:`torch.nn.functional.scaled_dot_product_attention`: query
    ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)``, floating point, one
    device, with ``H_kv`` dividing ``H`` (grouped-query attention, chapter 6). The kernels then
    share each key/value head among ``H / H_kv`` query heads with
    :func:`helpers.attention.repeat_kv`.

    Args:
        query: Queries.
        key: Keys.
        value: Values.

    Returns:
        ``n_rep = H // H_kv``, the number of query heads per key/value head.

    Raises:
        TypeError: not floating-point tensors.
        ValueError: not 4-D, shapes that do not fit together, several devices, or ``H_kv``
            that does not divide ``H``.
    """
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor(name, t)
        if t.dim() != 4:
            raise ValueError(f"{name} must have shape (B, H, len, dim), got {tuple(t.shape)}")
        if t.device != query.device:
            raise ValueError(f"query, key and value must be on one device, got query {query.device}, {name} {t.device}")
    (b, h, _, e), (bk, hk, s, ek), (bv, hv, sv, _) = query.shape, key.shape, value.shape
    if not (bk == bv == b and hv == hk and sv == s and ek == e):
        raise ValueError(
            "expected query (B, H, L, E), key (B, H_kv, S, E), value (B, H_kv, S, Ev), got "
            f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
        )
    if hk == 0 or h % hk != 0:
        raise ValueError(f"key/value heads H_kv={hk} must divide query heads H={h}")
    return h // hk
