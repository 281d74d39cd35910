"""Every part of the package runs on the device of its inputs, and makes its tensors there.

The ``meta`` device has shapes and dtypes but no values: a function that runs on it creates
every tensor where its inputs are (a tensor made on the CPU would raise a device error when it
meets a meta tensor). Each test below also runs on ``cuda`` where a GPU is present (Colab's GPU
runtime); without one that case is skipped. The training loop's device handling is checked on
the CPU with a model whose parameters live on ``meta`` and batches made on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import helpers
from helpers import efficient, efficient_linear, masks, positional
from helpers.attention import repeat_kv, scaled_dot_product_attention
from helpers.blocks import TransformerBlock
from helpers.chunked import chunked_attention, online_softmax_attention
from helpers.models import TinyConfig, TinyEncoder, TinyEncoderDecoder, TinyGPT
from helpers.multihead import KVCache, MultiHeadAttention, RollingKVCache
from helpers.train import train
from helpers.vision import CBAM, SqueezeExcitation, TinyCNN

DEVICES = [
    "meta",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU")),
]
RANDOM_DEVICES = [  # devices that can draw random numbers (a generator on meta cannot)
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU")),
]


def qkv(device: str, *, B: int = 2, H: int = 4, H_kv: int = 4, L: int = 16, S: int = 16, E: int = 8) -> list[Tensor]:
    shapes = [(B, H, L, E), (B, H_kv, S, E), (B, H_kv, S, E)]
    return [torch.randn(shape, device=device) for shape in shapes]


def on(device: str, out: Tensor, shape: tuple[int, ...]) -> None:
    assert out.device.type == torch.device(device).type, (out.device, device)
    assert tuple(out.shape) == shape, (tuple(out.shape), shape)


# ---------------------------------------------------------------------------------------------
# Kernels: scaled dot-product, efficient, linear, chunked
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_scaled_dot_product_attention_runs_on_the_inputs_device(device):
    q, k, v = qkv(device, H_kv=2)
    on(device, scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), (2, 4, 16, 8))
    mask = masks.causal_mask(16, device=device)
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True, need_weights=True)
    on(device, out, (2, 4, 16, 8))
    on(device, weights, (2, 4, 16, 16))
    bias = positional.alibi_bias(4, 16, 16, is_causal=True, device=device)
    on(device, scaled_dot_product_attention(q, k, v, attn_mask=bias, enable_gqa=True), (2, 4, 16, 8))
    on(device, repeat_kv(k, 2), (2, 4, 16, 8))


KERNELS: dict[str, Callable[..., Tensor]] = {
    "sliding_window": lambda q, k, v: efficient.sliding_window_attention(q, k, v, 4, is_causal=True),
    "block_sparse": lambda q, k, v: efficient.block_sparse_attention(
        q, k, v, torch.ones(4, 4, dtype=torch.bool).tril(), 4
    ),
    "bigbird": lambda q, k, v: efficient.bigbird_attention(
        q, k, v, block_size=4, num_global=1, window_blocks=3, num_random=1,
        generator=torch.Generator().manual_seed(0),
    ),
    "hierarchical": lambda q, k, v: efficient.hierarchical_attention(q, k, v, block_size=4, is_causal=True),
    "linear": lambda q, k, v: efficient_linear.linear_attention(q, k, v, is_causal=True, chunk_size=5),
    "performer": lambda q, k, v: efficient_linear.performer_attention(q, k, v, num_features=8, orthogonal=False),
    "chunked": lambda q, k, v: chunked_attention(q, k, v, chunk_size=5, is_causal=True),
    "online_softmax": lambda q, k, v: online_softmax_attention(q, k, v, chunk_size=5, is_causal=True),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_efficient_kernels_run_on_the_inputs_device(name, device):
    q, k, v = qkv(device, H_kv=2)
    on(device, KERNELS[name](q, k, v), (2, 4, 16, 8))


@pytest.mark.parametrize("device", DEVICES)
def test_linformer_and_performer_projection_follow_the_device(device):
    module = efficient_linear.LinformerAttention(16, 4, 12, 3, device=device)
    on(device, module(torch.randn(2, 16, 12, device=device)), (2, 16, 12))
    on(device, efficient_linear.random_feature_projection(8, 4, orthogonal=False, device=device), (8, 4))


@pytest.mark.parametrize("device", RANDOM_DEVICES)
def test_a_generator_on_any_device_draws_the_same_pattern(device):
    """A generator draws on its own device; the result goes where the caller asked."""
    gen = lambda: torch.Generator(device=device).manual_seed(3)  # noqa: E731
    layout = efficient.bigbird_layout(6, 6, num_global=1, window_blocks=3, num_random=2, generator=gen())
    mask = masks.bigbird_mask(
        12, 12, block_size=2, num_global_blocks=1, window_blocks=3, num_random_blocks=2, generator=gen()
    )
    assert torch.equal(efficient.block_layout_to_mask(layout, 2), mask)
    assert masks.random_mask(5, 7, 3, generator=gen()).sum(-1).tolist() == [3] * 5
    q, k, v = (t.to("cpu") for t in qkv("cpu", L=12, S=12))  # a CPU computation with a generator elsewhere
    out = efficient.bigbird_attention(
        q, k, v, block_size=2, num_global=1, window_blocks=3, num_random=2, generator=gen()
    )
    torch.testing.assert_close(out, scaled_dot_product_attention(q, k, v, attn_mask=mask))
    w = efficient_linear.random_feature_projection(8, 4, generator=gen())
    assert w.device.type == "cpu" and w.shape == (8, 4)


# ---------------------------------------------------------------------------------------------
# Masks and positions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_masks_are_made_on_the_requested_device(device):
    built = [
        masks.causal_mask(5, 7, align="bottom_right", device=device),
        masks.sliding_window_mask(5, 7, 2, device=device),
        masks.dilated_mask(5, 7, 2, 2, device=device),
        masks.block_local_mask(5, 7, 2, device=device),
        masks.global_tokens_mask(5, 7, [0, 3], device=device),
        masks.random_mask(5, 7, 2, device=device),
    ]
    for mask in built:
        on(device, mask, (5, 7))
        assert mask.dtype == torch.bool
    on(device, masks.padding_mask([2, 7], 7, device=device), (2, 1, 1, 7))
    on(device, masks.padding_mask(torch.tensor([2, 7], device=device), 7), (2, 1, 1, 7))
    on(device, masks.combine_masks(built[0], built[1]), (5, 7))


@pytest.mark.parametrize("device", DEVICES)
def test_bigbird_builders_are_made_on_the_requested_device(device):
    mask = masks.bigbird_mask(
        8, 8, block_size=2, num_global_blocks=1, window_blocks=3, num_random_blocks=1, device=device
    )
    on(device, mask, (8, 8))
    on(device, efficient.bigbird_layout(4, 4, num_global=1, window_blocks=3, num_random=1, device=device), (4, 4))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_positional_encodings_take_device_and_dtype(device, dtype):
    sin = positional.sinusoidal_encoding(10, 6, device=device, dtype=dtype)
    on(device, sin, (10, 6))
    assert sin.dtype == dtype
    slopes = positional.alibi_slopes(6, device=device, dtype=dtype)
    on(device, slopes, (6,))
    assert slopes.dtype == dtype
    bias = positional.alibi_bias(6, 3, 5, is_causal=True, query_offset=2, device=device, dtype=dtype)
    on(device, bias, (1, 6, 3, 5))
    assert bias.dtype == dtype
    learned = positional.LearnedPositionalEmbedding(10, 6, device=device, dtype=dtype)
    assert learned.weight.device.type == torch.device(device).type and learned.weight.dtype == dtype
    t5 = positional.T5RelativeBias(2, device=device, dtype=dtype)
    on(device, t5(3, 5), (1, 2, 3, 5))
    rope = positional.RotaryEmbedding(8, device=device)
    cos, sin = rope(5, offset=2)
    on(device, cos, (1, 5, 8))
    on(device, sin, (1, 5, 8))
    cos, _ = rope(torch.arange(5))  # positions made on the CPU follow the module
    on(device, cos, (1, 5, 8))


def test_positional_defaults_are_unchanged_float32_on_cpu():
    assert positional.sinusoidal_encoding(4, 4).dtype == torch.float32
    assert positional.alibi_bias(2, 3, 3).device.type == "cpu"
    torch.testing.assert_close(
        positional.alibi_bias(4, 6, 6, is_causal=True, dtype=torch.bfloat16).float(),
        positional.alibi_bias(4, 6, 6, is_causal=True).bfloat16().float(),
    )


# ---------------------------------------------------------------------------------------------
# Modules: multi-head attention, blocks, tiny models, vision
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_multihead_attention_with_kv_cache_and_rope_runs_on_the_device(device):
    with torch.device(device):
        mha = MultiHeadAttention(16, 4, num_kv_heads=2)
        rope = positional.RotaryEmbedding(4)
        x = torch.randn(2, 6, 16)
    out, weights = mha(x, is_causal=True, need_weights=True, rope=rope)
    on(device, out, (2, 6, 16))
    on(device, weights, (2, 4, 6, 6))
    cache = KVCache()
    mha(x, is_causal=True, kv_cache=cache, rope=rope)
    keep = torch.ones(2, 7, dtype=torch.bool, device=device)  # (B, S): all cached + new keys are real
    out, _ = mha(x[:, :1], is_causal=True, kv_cache=cache, rope=rope, key_mask=keep)
    on(device, out, (2, 1, 16))
    assert cache.seq_len == 7


@pytest.mark.parametrize("device", RANDOM_DEVICES)
def test_the_recomputing_backward_gives_dense_gradients_on_the_device(device):
    from helpers.flash_backward import recomputing_attention

    q, k, v = (t.requires_grad_(True) for t in qkv(device, H_kv=2, L=40, S=56))
    dense = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    ours = recomputing_attention(q, k, v, block_size=16, is_causal=True)
    on(device, ours, tuple(dense.shape))
    torch.testing.assert_close(ours, dense, rtol=1e-4, atol=1e-5)
    upstream = torch.randn_like(dense)
    for a, b in zip(torch.autograd.grad(ours, (q, k, v), upstream), torch.autograd.grad(dense, (q, k, v), upstream)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", RANDOM_DEVICES)
def test_the_rolling_cache_decodes_on_the_device_as_on_the_cpu(device):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4, num_kv_heads=2).eval()
    rope = positional.RotaryEmbedding(4)
    x = torch.randn(2, 11, 16)
    outputs = {}
    for where in ("cpu", device):
        layer, cache = mha.to(where), RollingKVCache(4)
        with torch.no_grad():
            steps = [layer(x[:, t:t + 1].to(where), is_causal=True, kv_cache=cache, rope=rope.to(where))[0]
                     for t in range(11)]
        outputs[where] = torch.cat(steps, dim=1)
        on(where, outputs[where], (2, 11, 16))
        assert cache.key.device.type == torch.device(where).type and cache.key.shape[2] == 4
    torch.testing.assert_close(outputs[device].cpu(), outputs["cpu"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("positional_kind", ["learned", "sinusoidal", "rope", "alibi", "none"])
def test_tiny_models_forward_on_the_device(device, positional_kind):
    config = TinyConfig(vocab_size=11, embed_dim=16, num_heads=4, num_layers=2, positional=positional_kind)
    with torch.device(device):
        gpt, encoder, seq2seq = TinyGPT(config), TinyEncoder(config), TinyEncoderDecoder(config)
        block = TransformerBlock(16, 4)
    tokens = torch.randint(0, 11, (2, 7), device=device)
    out = gpt(tokens, need_weights=True)
    on(device, out.output, (2, 7, 11))
    on(device, out.attentions, (2, 2, 4, 7, 7))
    on(device, encoder(tokens).output, (2, 7, 16))
    _, decoded = seq2seq(tokens, tokens[:, :5])
    on(device, decoded.output, (2, 5, 11))
    on(device, block(torch.randn(2, 7, 16, device=device))[0], (2, 7, 16))
    caches = gpt.new_kv_caches()
    gpt(tokens, kv_caches=caches)
    on(device, gpt(tokens[:, :1], kv_caches=caches).output, (2, 1, 11))


@pytest.mark.parametrize("device", DEVICES)
def test_the_llama_decodes_on_the_device_through_each_cache(device):
    from helpers.llama import LlamaConfig, LlamaForCausalLM
    from helpers.streaming import SinkKVCache

    config = LlamaConfig(vocab_size=11, hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=4)
    with torch.device(device):
        model = LlamaForCausalLM(config).eval()
    tokens = torch.randint(0, 11, (2, 7), device=device)
    out = model.run(tokens, need_weights=True, output_hidden_states=True,
                    head_mask=torch.ones(2, 4, device=device))
    on(device, out.logits, (2, 7, 11))
    on(device, out.attentions[1], (2, 4, 7, 7))
    on(device, out.hidden_states[2], (2, 7, 16))
    for factory in (KVCache, lambda: RollingKVCache(3), lambda: SinkKVCache(1, 3)):
        on(device, model(tokens, caches=model.new_caches(factory)), (2, 7, 11))
    on(device, model.generate(tokens, 3), (2, 10))


@pytest.mark.parametrize("device", DEVICES)
def test_vision_modules_run_on_the_device(device):
    with torch.device(device):
        modules = [SqueezeExcitation(8, reduction=2), CBAM(8, reduction=2), TinyCNN(8, 3, attention="cbam")]
        x = torch.randn(2, 8, 6, 6)
    on(device, modules[0](x), (2, 8, 6, 6))
    on(device, modules[1](x), (2, 8, 6, 6))
    on(device, modules[2](x), (2, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_diagnostics_that_need_no_values_run_on_the_device(device):
    weights = torch.softmax(torch.randn(2, 4, 5, 5, device=device), dim=-1)
    on(device, helpers.attention_entropy(weights), (2, 4))
    on(device, helpers.softmax_jacobian(weights[0, 0]), (5, 5, 5))
    on(device, helpers.attention_rollout([weights, weights]), (2, 5, 5))


# ---------------------------------------------------------------------------------------------
# The training loop moves each batch to the model's device
# ---------------------------------------------------------------------------------------------
class _Seen(Exception):
    """Raised by the probe once it has recorded where its inputs arrived."""


class _DeviceProbe(nn.Module):
    """Records the devices of what it is called with, then stops the loop."""

    def __init__(self, device: str) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(3, device=device))
        self.seen: list[torch.device] = []

    def forward(self, *args: Tensor, **kwargs: Tensor) -> Tensor:
        self.seen = [t.device for t in (*args, *kwargs.values())]
        raise _Seen


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "make_inputs",
    [
        lambda: torch.zeros(2, 3),
        lambda: (torch.zeros(2, 3), torch.ones(2, 3)),
        lambda: {"tokens": torch.zeros(2, 3), "mask": torch.ones(2, 3, dtype=torch.bool)},
    ],
    ids=["tensor", "tuple", "dict"],
)
def test_train_moves_every_batch_to_the_models_device(device, make_inputs):
    model = _DeviceProbe(device)  # on meta: a device that CPU tensors cannot meet by accident
    with pytest.raises(_Seen):
        train(model, lambda step: (make_inputs(), torch.zeros(2, dtype=torch.long)), steps=1)
    assert model.seen and all(d.type == torch.device(device).type for d in model.seen), model.seen


def test_train_with_cpu_batches_and_a_meta_model_reaches_the_loss_on_meta():
    """The bug of a run on a GPU: blocks.py's index_select got CPU tokens and GPU weights."""
    with torch.device("meta"):
        model = TinyGPT(TinyConfig(vocab_size=11, embed_dim=16, num_heads=4, num_layers=1))
    seen: list[torch.device] = []

    def loss_fn(logits: Tensor, targets: Tensor) -> Tensor:
        seen.extend([logits.device, targets.device])
        raise _Seen

    batch = lambda step: (torch.randint(0, 11, (2, 7)), torch.randint(0, 11, (2, 7)))  # noqa: E731
    with pytest.raises(_Seen):
        train(model, batch, steps=1, loss_fn=loss_fn)
    assert [d.type for d in seen] == ["meta", "meta"]
