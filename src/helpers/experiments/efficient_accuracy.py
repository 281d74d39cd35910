"""Experiment of chapter 5.4: what efficient attention loses on a task, not only in error.

One lookup task in two versions that differ only in *where* the answer sits: a sequence of
key-value pairs (one pair per token) ends with a query key, and the target is the value paired
with it. In the **near** version the matching pair is one of the last ``near`` pairs (a local
window sees it); in the **far** version it can be anywhere. A one-layer attention model reads the
answer at the query's position, with the attention swapped between:

- ``dense``: softmax attention over every token;
- ``window``: each token sees the ``window`` tokens before it and itself (sliding window);
- ``window + global``: the same, plus global attention on the query token, the task token
  (Longformer's global attention on ``[CLS]`` or the question);
- ``linear``: Katharopoulos' linear attention (``elu + 1`` features);
- ``Performer``: positive random features (FAVOR+), fixed per model.

Shape legend: B batch, P pairs, L = P + 1 tokens, D model width, H heads, E head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from helpers.attention import scaled_dot_product_attention
from helpers.efficient_linear import linear_attention, performer_attention
from helpers.masks import combine_masks, global_tokens_mask, sliding_window_mask
from helpers.train import num_threads, set_seed, train

from .. import seeding

__all__ = ["VARIANTS", "lookup_task", "LookupModel", "LookupRun", "train_lookup"]

VARIANTS = ("dense", "window", "window + global", "linear", "Performer")


def lookup_task(num_samples: int, num_pairs: int, *, num_keys: int = 32, num_values: int = 8, near: int | None = None,
                seed: int) -> tuple[Tensor, Tensor, Tensor]:
    """Key-value pairs, one per token, then a query key; the target is the query's value.

    Args:
        near: If given, the queried pair is one of the last ``near`` pairs; else any pair.

    Returns:
        ``(keys, values, target)``: ``keys (N, P + 1)`` (the last one is the query),
        ``values (N, P + 1)`` (the last one is ``num_values``, "no value"), ``target (N,)``.
    """
    gen = seeding.generator(seed)
    keys = torch.rand(num_samples, num_keys, generator=gen).argsort(dim=1)[:, :num_pairs]  # distinct keys
    values = torch.randint(0, num_values, (num_samples, num_pairs), generator=gen)
    low = 0 if near is None else num_pairs - near
    which = torch.randint(low, num_pairs, (num_samples,), generator=gen)
    rows = torch.arange(num_samples)
    keys = torch.cat([keys, keys[rows, which, None]], dim=1)  # (N, P + 1)
    values = torch.cat([values, torch.full((num_samples, 1), num_values)], dim=1)  # (N, P + 1)
    return keys, values, values[rows, which]


class LookupModel(nn.Module):
    """Embeddings (key + value + position) -> one attention layer -> MLP -> value logits at the query."""

    def __init__(self, variant: str, length: int, *, num_keys: int = 32, num_values: int = 8, embed_dim: int = 32,
                 num_heads: int = 2, window: int = 4, features: int = 32, seed: int = 0) -> None:
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.variant, self.num_heads = variant, num_heads
        self.key_embedding = nn.Embedding(num_keys, embed_dim)
        self.value_embedding = nn.Embedding(num_values + 1, embed_dim)
        self.position_embedding = nn.Parameter(torch.randn(length, embed_dim) * 0.1)
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.o_proj = nn.Linear(embed_dim, embed_dim)
        self.mlp = nn.Sequential(nn.LayerNorm(embed_dim), nn.Linear(embed_dim, 4 * embed_dim), nn.GELU(),
                                 nn.Linear(4 * embed_dim, num_values))
        mask = None
        if variant == "window":
            mask = sliding_window_mask(length, length, window + 1, is_causal=True)
        elif variant == "window + global":
            mask = combine_masks(sliding_window_mask(length, length, window + 1, is_causal=True),
                                 global_tokens_mask(length, length, [length - 1]))
        self.register_buffer("mask", mask, persistent=False)
        self.features = features
        self.generator_seed = seed

    def forward(self, keys: Tensor, values: Tensor) -> Tensor:
        x = self.key_embedding(keys) + self.value_embedding(values) + self.position_embedding  # (B, L, D)
        b, length, d = x.shape
        q, k, v = self.qkv(x).view(b, length, 3, self.num_heads, d // self.num_heads).permute(2, 0, 3, 1, 4)
        # q, k, v: (B, H, L, E) each
        if self.variant == "linear":
            out = linear_attention(q, k, v)
        elif self.variant == "Performer":
            out = performer_attention(q, k, v, num_features=self.features,
                                      generator=seeding.generator(self.generator_seed))
        else:
            out = scaled_dot_product_attention(q, k, v, attn_mask=self.mask)  # (B, H, L, E)
        out = out.transpose(1, 2).reshape(b, length, d)  # (B, L, D)
        h = x + self.o_proj(out)
        return self.mlp(h[:, -1])  # the query's position: (B, num_values)


@dataclass
class LookupRun:
    """One trained lookup model's held-out accuracy: which variant, which task, which seed."""

    variant: str
    task: str
    seed: int
    accuracy: float  # held-out


def train_lookup(variant: str, task: str, *, seed: int, num_pairs: int = 24, near: int = 3, steps: int = 200,
                 batch_size: int = 64, window: int = 4) -> LookupRun:
    """Train :class:`LookupModel` with one attention variant on the ``"near"`` or ``"far"`` task.

    ``window`` tokens before the query are visible to a windowed model, so the near task (the
    answer among the last ``near <= window`` pairs) is within its reach and the far one mostly not.
    """
    if task not in ("near", "far"):
        raise ValueError(f"task must be 'near' or 'far', got {task!r}")
    set_seed(seed)
    model = LookupModel(variant, num_pairs + 1, window=window, seed=seed)
    keys, values, target = lookup_task(8192, num_pairs, near=near if task == "near" else None, seed=seed)

    def make_batch(step: int) -> tuple[tuple[Tensor, Tensor], Tensor]:
        rows = slice((step * batch_size) % 8192, (step * batch_size) % 8192 + batch_size)
        return (keys[rows], values[rows]), target[rows]

    with num_threads(1):
        train(model, make_batch, steps=steps, lr=3e-3, seed=seed, accuracy_fn=None)
        model.eval()
        test_k, test_v, test_t = lookup_task(1024, num_pairs, near=near if task == "near" else None,
                                             seed=10_000 + seed)
        with torch.no_grad():
            accuracy = (model(test_k, test_v).argmax(-1) == test_t).float().mean().item()
    return LookupRun(variant, task, seed, accuracy)
