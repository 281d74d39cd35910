"""Experiments of chapter 5.2: the causal mask ("no peeking") and the padding mask.

- :func:`future_perturbation`: change the tokens after position ``t`` and measure how much the
  outputs at positions ``<= t`` move, with and without the causal mask.
- :func:`block_jacobian`: the ``L x L`` map of ``||d y_i / d x_j||`` of one Transformer block,
  lower-triangular when the block is causal.
- :func:`train_chain_decoder`: a TinyGPT trained for next-token prediction on a noisy Markov
  chain, with or without the causal mask; the masked model's loss has a floor (the chain's
  entropy), the unmasked one goes under it by reading the answer, and then cannot generate.
- :func:`mask_value_table`: boolean, additive ``-inf``, additive ``-1e9``, ``finfo.min`` added
  (once or by two masks) and ``finfo.min`` written with ``masked_fill``, in float32/float16/bfloat16,
  on a partly masked row and on fully masked rows of positive and of negative scores;
  :func:`float16_overflow_score`: the score below which ``score + finfo.min`` is ``-inf`` in float16.
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

from .. import seeding

__all__ = ["future_perturbation", "block_jacobian", "markov_sequences", "chain_entropy", "ChainRun",
           "train_chain_decoder",
           "mask_value_table", "MASK_METHODS", "MASK_ROWS", "float16_overflow_score",
           "padding_broadcast", "PaddingResult"]


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
    gen = seeding.generator(seed)
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
    seeding.manual_seed(seed)
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
    successor = torch.randperm(vocab_size, generator=seeding.generator(chain_seed))
    gen = seeding.generator(seed)
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
    final_loss: float  # mean training loss over the last 20 steps (training batches: noisy)
    generation_accuracy: float  # share of generated steps that follow the chain's successor
    model: TinyGPT
    test_loss: float | None = None  # next-token loss on 1024 held-out sequences


def train_chain_decoder(causal: bool, *, seed: int, length: int = 16, vocab_size: int = 16, follow: float = 0.6,
                        steps: int = 250, batch_size: int = 32, embed_dim: int = 32) -> ChainRun:
    """Train a 2-layer TinyGPT on :func:`markov_sequences`, with or without the causal mask.

    A model that cannot see the future cannot beat the chain's entropy (:func:`chain_entropy`);
    a model that can may read the next token from the input. Generation is the honest test:
    greedy continuation of one token for ``length - 1`` steps (``use_cache=False``, so the model
    sees the whole prefix as in training), scored by the share of steps that take the chain's
    most likely successor (what a perfect model's greedy choice is; chance ``1 / V``). ``test_loss``
    is the next-token loss on 1024 held-out sequences of the same chain (``final_loss``, the mean of
    the last 20 training batches, is noisier: it can land below the floor by chance).
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
        test, _ = markov_sequences(1024, length, vocab_size, follow=follow, seed=10_000 + seed)  # same chain
        with torch.no_grad():
            logits = model(test[:, :-1]).output  # (N, length - 1, V)
            test_loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab_size),
                                                          test[:, 1:].reshape(-1)).item()
    accuracy = (generated[:, 1:] == successor[generated[:, :-1]]).float().mean().item()
    final = sum(history.loss[-20:]) / 20
    return ChainRun(causal, seed, history.loss, chain_entropy(vocab_size, follow), final, accuracy, model, test_loss)


MASK_METHODS = ("bool (SDPA)", "additive -inf", "additive -1e9", "finfo.min added",
                "finfo.min added, two masks", "finfo.min by masked_fill")
"""The ways of applying a mask that :func:`mask_value_table` compares, in its order."""

MASK_ROWS = {"positive": (2.0, 1.0, 3.0, 0.5), "negative": (-20.0, -30.0, -25.0, -17.0),
             "one positive": (-20.0, -30.0, 5.0, -17.0)}
"""The score rows of :func:`mask_value_table`, by name (four keys each)."""


def _masked_softmax_row(scores: Tensor, keep: Tensor, how: str) -> Tensor:
    dtype = scores.dtype
    if how == "bool (SDPA)":
        q = torch.eye(scores.numel(), dtype=dtype)[:1]  # one query picking the scores as they are
        k = torch.eye(scores.numel(), dtype=dtype) * scores[:, None]  # q . k_j = scores[j]
        v = torch.eye(scores.numel(), dtype=dtype)  # output = the weights themselves
        return torch.nn.functional.scaled_dot_product_attention(
            q[None, None], k[None, None], v[None, None], attn_mask=keep[None, None, None], scale=1.0)[0, 0, 0]
    if how == "finfo.min by masked_fill":  # the masked scores are replaced, not added to
        return torch.softmax(scores.masked_fill(~keep, torch.finfo(dtype).min), dim=-1)
    fill = {"additive -inf": -math.inf, "additive -1e9": -1e9}.get(how, torch.finfo(dtype).min)
    bias = torch.where(keep, torch.zeros((), dtype=dtype), torch.tensor(fill, dtype=dtype))
    if how == "finfo.min added, two masks":  # e.g. a causal and a padding mask, each added, hiding the same keys
        return torch.softmax(scores + bias + bias, dim=-1)
    return torch.softmax(scores + bias, dim=-1)


def _describe(weights: Tensor) -> str:
    if torch.isnan(weights).any():
        return "NaN"
    if torch.allclose(weights, torch.full_like(weights, 1 / weights.numel()), atol=1e-3):
        return f"uniform (1/{weights.numel()} each)"
    if (weights == 0).all():
        return "zeros"
    if weights.max() == 1 and int((weights == 0).sum()) == weights.numel() - 1:
        return f"one-hot (key {int(weights.argmax())})"  # keys counted from 0, as everywhere in the book
    return "other"


def float16_overflow_score() -> float:
    """The largest score that overflows to ``-inf`` in float16 when ``finfo.min`` is added to it.

    Returns:
        The largest whole number ``s <= 0`` with ``s + finfo(float16).min == -inf`` in float16
        (every score at or below it becomes ``-inf``; chapter 5.2).
    """
    low = torch.finfo(torch.float16).min
    for s in range(0, -100, -1):
        if torch.isneginf(torch.tensor(float(s), dtype=torch.float16) + torch.tensor(low, dtype=torch.float16)):
            return float(s)
    raise AssertionError("no overflow above -100")  # pragma: no cover - float16 overflows at -16


def mask_value_table(dtypes: tuple[torch.dtype, ...] = (torch.float32, torch.float16, torch.bfloat16)
                     ) -> list[dict[str, object]]:
    """Apply six masking methods to score rows in each dtype, and say what comes out.

    The rows (:data:`MASK_ROWS`): ``[2, 1, 3, 0.5]`` with the last two keys masked (partly
    masked), and three fully masked rows, the positive one, ``[-20, -30, -25, -17]`` and
    ``[-20, -30, 5, -17]``. The methods (:data:`MASK_METHODS`): a boolean mask through PyTorch's
    fused kernel; ``-inf``, ``-1e9`` or ``finfo(dtype).min`` added to the scores; ``finfo.min``
    added twice (two masks hiding the same keys, each added); and ``finfo.min`` written over the
    masked scores (``masked_fill``). Softmax in the dtype itself, as a naive implementation does.

    Args:
        dtypes: the floating dtypes to run.

    Returns:
        A list with one dict per (method, dtype), with keys ``method``, ``dtype``, ``fill`` (the
        masked value as stored in that dtype), ``partial_ok`` (weights on masked keys exactly 0
        and the rest sums to 1, on the positive and the negative row), and, for a fully masked
        row, ``full`` (the positive row), ``full_negative`` and ``full_one_positive``: each
        ``"NaN"``, ``"uniform (1/4 each)"``, ``"zeros"``, ``"one-hot (key 2)"`` (keys counted from 0) or
        ``"other"``.
    """
    out = []
    for how in MASK_METHODS:
        for dtype in dtypes:
            part = torch.tensor([True, True, False, False])
            none = torch.zeros(4, dtype=torch.bool)
            results = {name: (_masked_softmax_row(torch.tensor(row, dtype=dtype), part, how).float(),
                              _masked_softmax_row(torch.tensor(row, dtype=dtype), none, how).float())
                       for name, row in MASK_ROWS.items()}
            partial_ok = all(bool((w[2:] == 0).all() and abs(w[:2].sum().item() - 1) < 1e-2)
                             for name, (w, _) in results.items() if name != "one positive")
            fill = {"bool (SDPA)": "False", "additive -inf": "-inf",
                    "additive -1e9": str(torch.tensor(-1e9, dtype=dtype).item())}.get(
                        how, f"{torch.finfo(dtype).min:.3g}")
            out.append(dict(method=how, dtype=str(dtype).replace("torch.", ""), fill=fill, partial_ok=partial_ok,
                            full=_describe(results["positive"][1]), full_negative=_describe(results["negative"][1]),
                            full_one_positive=_describe(results["one positive"][1])))
    return out


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
    seeding.manual_seed(seed)
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
