"""Memory tools: gradient checkpointing, the size of a KV cache, and measuring allocations.

Attention's memory is the subject of chapter 6: activations kept for the backward pass (traded
for time by :func:`checkpointed`), the KV cache of a decoder (:func:`kv_cache_bytes`; shrunk by
multi-query and grouped-query attention), and the ``L x S`` score matrix that chunked and sparse
kernels never build -- which :class:`TensorMemoryTracker` proves by recording every tensor ATen
allocates. The kernels themselves live in :mod:`helpers.efficient` and :mod:`helpers.chunked`.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.checkpoint import checkpoint

from .checks import check_positive_int

__all__ = [
    "Checkpointed",
    "checkpointed",
    "kv_cache_bytes",
    "TensorMemoryTracker",
]


class Checkpointed(nn.Module):
    """Runs ``module`` under ``torch.utils.checkpoint`` (``use_reentrant=False``) in training.

    Forward keeps only the module's inputs; backward runs the forward again to rebuild the
    activations it needs. Memory for time: about one extra forward per backward. Without
    gradients (``torch.no_grad`` or inputs that need none) it is a plain call.

    Paper: Chen et al., "Training Deep Nets with Sublinear Memory Cost" (2016). Explained in
    chapter 6.

    Args:
        module: The module to wrap (its parameters stay its own).

    Shape:
        Whatever ``module`` takes and returns.
    """

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
        self.module = module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if torch.is_grad_enabled():
            return checkpoint(self.module, *args, use_reentrant=False, **kwargs)
        return self.module(*args, **kwargs)


def checkpointed(module: nn.Module) -> Checkpointed:
    """Wrap ``module`` so that its forward runs under gradient checkpointing.

    Args:
        module: Any module, e.g. a Transformer block.

    Returns:
        A :class:`Checkpointed` wrapper with the same inputs and outputs. Explained in chapter 6.
    """
    return Checkpointed(module)


def kv_cache_bytes(
    num_layers: int, num_kv_heads: int, head_dim: int, seq_len: int, batch: int, dtype: torch.dtype
) -> int:
    """Bytes held by a decoder's KV cache: ``2 * layers * batch * kv_heads * seq_len * head_dim * size``.

    The 2 counts keys and values. Multi-query and grouped-query attention shrink it through
    ``num_kv_heads``. Paper: Shazeer, "Fast Transformer Decoding: One Write-Head is All You
    Need" (2019); Pope et al., "Efficiently Scaling Transformer Inference" (2022). Explained in
    chapter 6.

    Args:
        num_layers: Decoder layers.
        num_kv_heads: Key/value heads per layer.
        head_dim: Dimension per head.
        seq_len: Cached positions.
        batch: Sequences in the batch.
        dtype: Element type of the cache, e.g. ``torch.float16``.

    Returns:
        The size in bytes.
    """
    for name, val in (("num_layers", num_layers), ("num_kv_heads", num_kv_heads), ("head_dim", head_dim),
                      ("seq_len", seq_len), ("batch", batch)):
        check_positive_int(name, val)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__} {dtype!r}")
    return 2 * num_layers * batch * num_kv_heads * seq_len * head_dim * dtype.itemsize


class TensorMemoryTracker(TorchDispatchMode):
    """Records every tensor that ATen allocates while active: its size, and live bytes over time.

    Used as a context manager. Each op's outputs whose storage is new (not a view of, or an
    in-place result on, an input) are counted; a storage stops counting when it is freed
    (a weak reference to it fires). What it sees are tensors at the dispatcher level: scratch
    buffers that a fused kernel allocates inside itself are invisible to it.

    Attributes:
        max_numel: Elements of the largest tensor allocated.
        max_shape: Shape of that tensor.
        current_bytes: Bytes of tracked storages still alive.
        peak_bytes: The highest ``current_bytes`` seen.

    Example:
        >>> with TensorMemoryTracker() as tracker:
        ...     out = helpers.chunked_attention(q, k, v, chunk_size=256)
        >>> tracker.max_numel < q.shape[2] * k.shape[2]

    Explained in chapter 6.
    """

    def __init__(self) -> None:
        super().__init__()
        self.max_numel = 0
        self.max_shape: tuple[int, ...] = ()
        self.current_bytes = 0
        self.peak_bytes = 0
        self._live: dict[int, int] = {}

    def _free(self, key: int) -> None:
        self.current_bytes -= self._live.pop(key, 0)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage()._cdata for t in tree_flatten((args, kwargs))[0] if isinstance(t, Tensor)}
        for t in tree_flatten(out)[0]:
            if not isinstance(t, Tensor):
                continue
            if t.numel() > self.max_numel:
                self.max_numel, self.max_shape = t.numel(), tuple(t.shape)
            storage = t.untyped_storage()
            key = storage._cdata
            if key in inputs or key in self._live:
                continue
            self._live[key] = storage.nbytes()
            self.current_bytes += storage.nbytes()
            self.peak_bytes = max(self.peak_bytes, self.current_bytes)
            weakref.finalize(storage, self._free, key)
        return out
