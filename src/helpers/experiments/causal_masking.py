"""Experiments of chapter 5.2: the causal mask ("no peeking") and the padding mask.

- :func:`future_perturbation`: change the tokens after position ``t`` and measure how much the
  outputs at positions ``<= t`` move, with and without the causal mask.
- :func:`block_jacobian`: the ``L x L`` map of ``||d y_i / d x_j||`` of one Transformer block,
  lower-triangular when the block is causal.
- :func:`train_chain_decoder`: a TinyGPT trained for next-token prediction on a noisy Markov
  chain, with or without the causal mask; the masked model's loss has a floor (the chain's
  entropy), the unmasked one goes under it by reading the answer, and then cannot generate.
- :func:`mask_value_table`: boolean, additive ``-inf``, additive ``-1e9`` and ``finfo.min``
  masks in float32/float16/bfloat16, on a partly and a fully masked row.
- :func:`padding_broadcast`: a padding mask applied to the keys (right) or to the queries (the
  broadcast bug), and what each does to the real tokens' outputs and to the loss.

Shape legend: B batch, L length, D model width, V vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from helpers.blocks import TransformerBlock
from helpers.masks import padding_mask
from helpers.models import TinyConfig, TinyGPT
from helpers.train import num_threads, set_seed, train

__all__ = ["future_perturbation", "block_jacobian", "markov_sequences", "chain_entropy", "ChainRun",
           "train_chain_decoder",
           "mask_value_table", "padding_broadcast", "PaddingResult"]


def _set_causal(model: TinyGPT, causal: bool) -> TinyGPT:
    model.stack.is_causal = causal  # the stack passes it to every block's self-attention
    return model


@torch.no_grad()
def future_perturbation(model: TinyGPT, tokens: Tensor, t: int, *, seed: int = 0) -> dict[str, float]:
    """Max ``|change|`` of the logits at positions ``<= t`` and ``> t`` when tokens after ``t`` change.

    Args:
        model: A TinyGPT (its causal flag is used as it is).
        tokens: ``(B, L)`` token ids.
        t: Last position kept; positions ``t+1 ..`` get new random tokens.
        seed: Seed of the new tokens.

    Returns:
        ``{"past": max change at positions <= t, "future": max change at positions > t}``.
    """
    gen = torch.Generator().manual_seed(seed)
    changed = tokens.clone()
    vocab = model.config.vocab_size
    changed[:, t + 1:] = (tokens[:, t + 1:] + torch.randint(1, vocab, tokens[:, t + 1:].shape, generator=gen)) % vocab
    before, after = model(tokens).output, model(changed).output  # (B, L, V) twice
    diff = (before - after).abs()
    return {"past": diff[:, : t + 1].max().item(), "future": diff[:, t + 1:].max().item()}


def block_jacobian(length: int = 8, embed_dim: int = 16, *, is_causal: bool, seed: int = 0) -> Tensor:
    """``J[i, j] = ||d y_i / d x_j||_F`` for one Pre-LN Transformer block on a random input.

    Returns:
        ``(L, L)``: row ``i`` is output position ``i``, column ``j`` input position ``j``.
    """
    torch.manual_seed(seed)
    block = TransformerBlock(embed_dim, 2).eval()
    x = torch.randn(length, embed_dim)
    jac = torch.autograd.functional.jacobian(
        lambda inp: block(inp[None], is_causal=is_causal)[0][0], x)  # (L, D, L, D)
    return jac.pow(2).sum(dim=(1, 3)).sqrt()  # (L, L)


def markov_sequences(num_samples: int, length: int, vocab_size: int, *, follow: float = 0.6, seed: int,
                     chain_seed: int = 0) -> tuple[Tensor, Tensor]:
    """Sequences from a noisy chain: the next token is ``successor[x]`` with probability ``follow``,
    otherwise uniform over the vocabulary (a stand-in for text: partly predictable, never fully).

    Returns:
        ``(tokens, successor)``: ``(N, length)`` ids and the chain's ``(V,)`` successor table
        (a random permutation fixed by ``chain_seed``, the same for training and test data).
    """
    successor = torch.randperm(vocab_size, generator=torch.Generator().manual_seed(chain_seed))
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.empty(num_samples, length, dtype=torch.long)
    tokens[:, 0] = torch.randint(0, vocab_size, (num_samples,), generator=gen)
    follows = torch.rand(num_samples, length, generator=gen) < follow
    noise = torch.randint(0, vocab_size, (num_samples, length), generator=gen)
    for t in range(1, length):
        tokens[:, t] = torch.where(follows[:, t], successor[tokens[:, t - 1]], noise[:, t])
    return tokens, successor


def chain_entropy(vocab_size: int, follow: float) -> float:
    """Entropy (nats) of one step of :func:`markov_sequences`: the lowest loss without peeking."""
    top = follow + (1 - follow) / vocab_size
    rest = (1 - follow) / vocab_size
    return -(top * math.log(top) + ((vocab_size - 1) * rest * math.log(rest) if rest > 0 else 0.0))


@dataclass
class ChainRun:
    """One TinyGPT trained for next-token prediction on :func:`markov_sequences`."""

    causal: bool
    seed: int
    losses: list[float]  # training loss per step
    floor: float  # the chain's entropy: the lowest loss of a model that cannot see the future
    final_loss: float  # mean training loss over the last 20 steps
    generation_accuracy: float  # share of generated steps that follow the chain's successor
    model: TinyGPT


def train_chain_decoder(causal: bool, *, seed: int, length: int = 16, vocab_size: int = 16, follow: float = 0.6,
                        steps: int = 250, batch_size: int = 32, embed_dim: int = 32) -> ChainRun:
    """Train a 2-layer TinyGPT on :func:`markov_sequences`, with or without the causal mask.

    A model that cannot see the future cannot beat the chain's entropy (:func:`chain_entropy`);
    a model that can may read the next token from the input. Generation is the honest test:
    greedy continuation of one token for ``length - 1`` steps (``use_cache=False``, so the model
    sees the whole prefix as in training), scored by the share of steps that take the chain's
    most likely successor (what a perfect model's greedy choice is; chance ``1 / V``).
    """
    set_seed(seed)
    config = TinyConfig(vocab_size=vocab_size, max_positions=length, embed_dim=embed_dim, num_heads=2, num_layers=2)
    model = _set_causal(TinyGPT(config), causal)
    data, successor = markov_sequences(4096, length, vocab_size, follow=follow, seed=seed)

    def make_batch(step: int) -> tuple[Tensor, Tensor]:
        rows = data[(step * batch_size) % 4096:][:batch_size]
        return rows[:, :-1], rows[:, 1:]

    with num_threads(1):
        history = train(model, make_batch, steps=steps, lr=3e-3, seed=seed, accuracy_fn=None)
        model.eval()
        start = torch.arange(vocab_size).repeat(16)[:, None]  # (N, 1): every token as a prompt
        with torch.no_grad():
            generated = model.generate(start, length - 1, use_cache=False)  # (N, length)
    accuracy = (generated[:, 1:] == successor[generated[:, :-1]]).float().mean().item()
    final = sum(history.loss[-20:]) / 20
    return ChainRun(causal, seed, history.loss, chain_entropy(vocab_size, follow), final, accuracy, model)


def _masked_softmax_row(scores: Tensor, keep: Tensor, how: str) -> Tensor:
    dtype = scores.dtype
    if how == "bool (SDPA)":
        q = torch.eye(scores.numel(), dtype=dtype)[:1]  # one query picking the scores as they are
        k = torch.eye(scores.numel(), dtype=dtype) * scores[:, None]  # q . k_j = scores[j]
        v = torch.eye(scores.numel(), dtype=dtype)  # output = the weights themselves
        return torch.nn.functional.scaled_dot_product_attention(
            q[None, None], k[None, None], v[None, None], attn_mask=keep[None, None, None], scale=1.0)[0, 0, 0]
    fill = {"additive -inf": -math.inf, "additive -1e9": -1e9, "finfo.min": torch.finfo(dtype).min}[how]
    bias = torch.where(keep, torch.zeros((), dtype=dtype), torch.tensor(fill, dtype=dtype))
    return torch.softmax(scores + bias, dim=-1)


def mask_value_table(dtypes: tuple[torch.dtype, ...] = (torch.float32, torch.float16, torch.bfloat16)
                     ) -> list[dict[str, object]]:
    """Apply four masking methods to two score rows in each dtype, and say what comes out.

    The rows: ``[2, 1, 3, 0.5]`` with the last two keys masked (partly masked) and with every
    key masked (fully masked). Softmax in the dtype itself (as a naive implementation does).

    Returns:
        A list with one dict per (method, dtype), with keys ``method``, ``dtype``, ``fill`` (the
        masked value as stored in that dtype), ``partial_ok`` (weights on masked keys exactly 0 and the rest sums to 1),
        ``full`` (what a fully masked row gives: ``"NaN"``, ``"uniform"`` or ``"zeros"``).
    """
    rows = []
    for how in ("bool (SDPA)", "additive -inf", "additive -1e9", "finfo.min"):
        for dtype in dtypes:
            scores = torch.tensor([2.0, 1.0, 3.0, 0.5], dtype=dtype)
            part = torch.tensor([True, True, False, False])
            w_part = _masked_softmax_row(scores, part, how).float()
            w_full = _masked_softmax_row(scores, torch.zeros(4, dtype=torch.bool), how).float()
            if torch.isnan(w_full).any():
                full = "NaN"
            elif torch.allclose(w_full, torch.full((4,), 0.25), atol=1e-3):
                full = "uniform (1/4 each)"
            elif (w_full == 0).all():
                full = "zeros"
            else:
                full = "other"
            partial_ok = bool((w_part[2:] == 0).all() and abs(w_part[:2].sum().item() - 1) < 1e-2)
            fill = {"bool (SDPA)": "False", "additive -inf": "-inf",
                    "additive -1e9": str(torch.tensor(-1e9, dtype=dtype).item()),
                    "finfo.min": f"{torch.finfo(dtype).min:.3g}"}[how]
            rows.append(dict(method=how, dtype=str(dtype).replace("torch.", ""), fill=fill,
                             partial_ok=partial_ok, full=full))
    return rows


@dataclass
class PaddingResult:
    """The same batch through one attention layer with the padding mask on keys (right) or queries (bug)."""

    real_change: dict[str, float]  # max change of real tokens' outputs when the padding's content changes
    loss_change: dict[str, float]  # change of the loss on real tokens when the batch is padded further
    nan_rows: dict[str, int]  # output rows that are NaN


@torch.no_grad()
def padding_broadcast(seed: int = 0) -> PaddingResult:
    """Key-padding mask ``(B, 1, 1, S)`` against the bug ``(B, 1, S, 1)`` (queries masked instead).

    A batch of two sequences of lengths 5 and 3 goes through a TinyGPT-sized attention layer
    (:class:`~helpers.blocks.TransformerBlock`, bidirectional) and a fixed linear readout; the
    loss is the cross-entropy of the real tokens only. Two changes that should not matter:
    new random content in the padding slots, and padding to length 9 instead of 6.
    """
    torch.manual_seed(seed)
    block = TransformerBlock(16, 2).eval()
    readout = torch.nn.Linear(16, 8)
    lengths = torch.tensor([5, 3])
    targets = torch.randint(0, 8, (2, 9))

    def run(x: Tensor, bug: bool) -> tuple[Tensor, Tensor]:
        keys_ok = padding_mask(lengths, x.shape[1])  # (B, 1, 1, S): True = real key
        mask = keys_ok.transpose(-1, -2) if bug else keys_ok  # the bug: (B, 1, S, 1), real *queries*
        mask = mask.expand(2, 1, x.shape[1], x.shape[1])
        scores_mask = torch.where(mask, 0.0, -math.inf)  # additive, as a naive implementation
        y = block(x, attn_mask=scores_mask)[0]  # (B, S, D)
        real = torch.arange(x.shape[1])[None] < lengths[:, None]  # (B, S)
        logits = readout(y)  # (B, S, 8)
        loss = torch.nn.functional.cross_entropy(logits[real], targets[:, : x.shape[1]][real])
        return y, loss

    x = torch.randn(2, 6, 16)
    x_new_pad = x.clone()
    x_new_pad[0, 5:] = torch.randn(1, 16)
    x_new_pad[1, 3:] = torch.randn(3, 16)
    x_longer = torch.cat([x, torch.randn(2, 3, 16)], dim=1)
    real = torch.arange(6)[None] < lengths[:, None]  # (B, 6)
    result = PaddingResult({}, {}, {})
    for name, bug in (("keys masked (right)", False), ("queries masked (bug)", True)):
        y, loss = run(x, bug)
        y_pad, _ = run(x_new_pad, bug)
        _, loss_longer = run(x_longer, bug)
        result.real_change[name] = (y - y_pad)[real].abs().max().item()
        result.loss_change[name] = abs(loss - loss_longer).item()
        result.nan_rows[name] = int(torch.isnan(y).any(-1).sum())
    return result
