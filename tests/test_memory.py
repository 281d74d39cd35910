"""Memory tools: the KV-cache size, gradient checkpointing, and the allocation tracker itself.

References: closed forms (the KV cache of Llama-2-7B), real tensors, and the plain module that
a checkpointed one must equal in outputs and gradients.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers.memory import TensorMemoryTracker, checkpointed, kv_cache_bytes


def test_kv_cache_bytes_closed_form_and_real_tensors():
    # Llama-2-7B: 32 layers, 32 KV heads of 128, 4096 tokens, fp16 -> 2 GiB per sequence.
    assert kv_cache_bytes(32, 32, 128, 4096, 1, torch.float16) == 2 * 1024**3
    assert kv_cache_bytes(32, 8, 128, 4096, 1, torch.float16) == 2 * 1024**3 // 4  # GQA with 8 KV heads
    layers, heads, dim, seq, batch = 3, 2, 8, 5, 4
    cache = [torch.zeros(batch, heads, seq, dim, dtype=torch.bfloat16) for _ in range(2 * layers)]
    measured = sum(t.numel() * t.element_size() for t in cache)
    assert kv_cache_bytes(layers, heads, dim, seq, batch, torch.bfloat16) == measured


def test_checkpointed_module_same_outputs_and_gradients_with_fewer_live_activations():
    torch.manual_seed(0)
    net = nn.Sequential(*[nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64)) for _ in range(4)])
    x = torch.randn(32, 64, requires_grad=True)
    with TensorMemoryTracker() as plain_mem:
        out = net(x)
    plain_live = plain_mem.current_bytes
    grads = torch.autograd.grad(out.sum(), [x, *net.parameters()])
    wrapped = checkpointed(net)
    with TensorMemoryTracker() as ckpt_mem:
        out_c = wrapped(x)
    ckpt_live = ckpt_mem.current_bytes
    grads_c = torch.autograd.grad(out_c.sum(), [x, *wrapped.parameters()])
    torch.testing.assert_close(out_c, out)
    for a, b in zip(grads_c, grads):
        torch.testing.assert_close(a, b)
    assert ckpt_live <= 32 * 64 * 4 * 2  # the output and little else survives the forward
    assert plain_live > 10 * ckpt_live  # 12 saved activations of 32 x 256 or 32 x 64


def test_memory_tracker_sees_allocations_and_frees():
    with TensorMemoryTracker() as tracker:
        a = torch.ones(1000)  # 4000 bytes
        b = a.view(10, 100)  # a view: no new storage
        a.add_(1)  # in place: no new storage
        c = a * 2  # 4000 bytes
        del c
    assert tracker.peak_bytes == 8000 and tracker.current_bytes == 4000
    assert tracker.max_numel == 1000 and b.shape == (10, 100)


def test_kv_cache_bytes_rejects_bad_arguments_naming_them():
    with pytest.raises(TypeError, match="dtype"):
        kv_cache_bytes(1, 1, 1, 1, 1, "float16")
    with pytest.raises(ValueError, match="seq_len"):
        kv_cache_bytes(1, 1, 1, 0, 1, torch.float16)
    with pytest.raises(TypeError, match="num_layers"):
        kv_cache_bytes(1.0, 1, 1, 1, 1, torch.float16)


def test_checkpointed_rejects_what_is_not_a_module():
    with pytest.raises(TypeError, match="module"):
        checkpointed(lambda x: x)


def test_memory_tools_are_exported_from_the_package():
    import helpers
    import helpers.memory as memory

    for name in memory.__all__:
        assert getattr(helpers, name) is getattr(memory, name)
