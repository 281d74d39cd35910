"""Experiments of chapter 5.1: self-attention, cross-attention and encoder-decoder attention.

- :func:`qkv_shapes`: where Q, K and V come from in self- and cross-attention, with ``L != S``.
- :func:`train_reversal`: a :class:`~helpers.models.TinyEncoderDecoder` trained on reversal,
  whose alignment is known (output ``i`` copies source ``S - 1 - i``), with the share of every
  cross-attention head's mass on that source position.

Shape legend: B batch, L target length, S source length, D model width, H heads, N layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from helpers.models import LogitsOnly, TinyConfig, TinyEncoderDecoder
from helpers.multihead import MultiHeadAttention
from helpers.tasks import BOS_TOKEN, reverse_task
from helpers.train import num_threads, set_seed, token_accuracy, train

from .. import seeding

__all__ = ["qkv_shapes", "ReversalRun", "train_reversal", "alignment_mass"]


def qkv_shapes(target_len: int = 5, source_len: int = 7, embed_dim: int = 16, num_heads: int = 2
               ) -> list[tuple[str, str, str, str, str]]:
    """Run one layer as self-attention and as cross-attention; report the shapes it produced.

    Returns:
        Rows ``(kind, Q from, K and V from, weights shape, output shape)``.
    """
    seeding.manual_seed(0)
    layer = MultiHeadAttention(embed_dim, num_heads)
    target = torch.randn(1, target_len, embed_dim)  # (B, L, D)
    source = torch.randn(1, source_len, embed_dim)  # (B, S, D)
    rows = []
    for kind, q_in, kv_in, q_name, kv_name in (
        ("self (encoder)", source, source, "source (B, S, D)", "source (B, S, D)"),
        ("self, causal (decoder)", target, target, "target (B, L, D)", "target (B, L, D)"),
        ("cross (encoder-decoder)", target, source, "target (B, L, D)", "encoder output (B, S, D)"),
    ):
        causal = "causal" in kind
        out, weights = layer(q_in, kv_in, kv_in, is_causal=causal, need_weights=True)
        rows.append((kind, q_name, kv_name, str(tuple(weights.shape)), str(tuple(out.shape))))
    return rows


@dataclass
class ReversalRun:
    """One TinyEncoderDecoder trained on reversal."""

    seed: int
    token_accuracy: float  # held-out, teacher-forced
    sequence_accuracy: float  # held-out, greedy generation: whole sequence right
    cross: Tensor  # (N, H, L, S) cross-attention averaged over held-out sequences
    encoder_self: Tensor  # (N, H, S, S) encoder self-attention averaged over held-out sequences
    mass: Tensor  # (N, H): mean weight on the aligned source position
    example_source: Tensor  # (S,) one held-out source sequence


def alignment_mass(cross: Tensor) -> Tensor:
    """Mean weight on the aligned source position ``S - 1 - i`` of reversal.

    Shape: ``(..., L, S)`` -> ``(...)``.
    """
    length, source_len = cross.shape[-2:]
    target = torch.zeros(length, source_len)
    target[torch.arange(length), source_len - 1 - torch.arange(length)] = 1  # the anti-diagonal
    return (cross * target).sum(dim=(-2, -1)) / length


def train_reversal(*, seed: int, seq_len: int = 8, vocab_size: int = 12, steps: int = 300,
                   batch_size: int = 64, embed_dim: int = 32, num_heads: int = 2, num_layers: int = 2
                   ) -> ReversalRun:
    """Train a TinyEncoderDecoder to reverse sequences; measure where its cross-attention looks.

    The decoder reads ``BOS, y_0 .. y_{L-2}`` and predicts ``y_0 .. y_{L-1}``; output position
    ``i`` must produce source token ``S - 1 - i``, so the ideal cross-attention is the
    anti-diagonal. Evaluation on 256 held-out sequences (teacher-forced tokens, greedy whole
    sequences, and the attention maps averaged over them).
    """
    set_seed(seed)
    config = TinyConfig(vocab_size=vocab_size, max_positions=seq_len, embed_dim=embed_dim, num_heads=num_heads,
                        num_layers=num_layers)
    model = TinyEncoderDecoder(config)
    src, tgt = reverse_task(8192, seq_len, vocab_size, seed=seed)
    bos = torch.full((len(src), 1), BOS_TOKEN)
    decoder_in = torch.cat([bos, tgt[:, :-1]], dim=1)  # teacher forcing

    def make_batch(step: int) -> tuple[tuple[Tensor, Tensor], Tensor]:
        rows = slice((step * batch_size) % 8192, (step * batch_size) % 8192 + batch_size)
        return (src[rows], decoder_in[rows]), tgt[rows]

    with num_threads(1):
        train(LogitsOnly(model), make_batch, steps=steps, lr=3e-3, seed=seed, accuracy_fn=None)
        model.eval()
        test_src, test_tgt = reverse_task(256, seq_len, vocab_size, seed=10_000 + seed)
        test_in = torch.cat([torch.full((256, 1), BOS_TOKEN), test_tgt[:, :-1]], dim=1)
        with torch.no_grad():
            encoded, decoded = model(test_src, test_in, need_weights=True)
            generated = model.generate(test_src, torch.full((256, 1), BOS_TOKEN), seq_len)[:, 1:]
    cross = decoded.cross_attentions.mean(dim=1)  # (N, B, H, L, S) -> (N, H, L, S)
    return ReversalRun(
        seed=seed,
        token_accuracy=token_accuracy(decoded.output, test_tgt),
        sequence_accuracy=(generated == test_tgt).all(dim=1).float().mean().item(),
        cross=cross,
        encoder_self=encoded.attentions.mean(dim=1),  # (N, H, S, S)
        mass=alignment_mass(cross),
        example_source=test_src[0],
    )
