"""Previous-token and induction heads in SmolLM2-135M, found on repeated random tokens and ablated (chapter 7).

On a random sequence written twice, nothing in the first copy can be predicted and everything in
the second can: the token that followed the same token the first time comes next. Olsson et al.
(2022) find the heads that do it, **induction heads**: in the second copy, the query at position
``t`` attends to the token *after* the earlier occurrence of its own token, ``t - n + 1`` for
copies of ``n`` tokens (their "prefix matching" score). An induction head needs an earlier
**previous-token head**, whose query at ``t`` attends to ``t - 1`` (a head of an earlier layer
writes into each token which token preceded it). :func:`head_scores` measures both for every
head; :func:`second_repeat_loss` is the loss on the second copy with some heads removed
(``head_mask``), which :func:`ablation` compares for the top induction heads and for as many heads
drawn at random.

Paper: Olsson et al., 2022, "In-context Learning and Induction Heads" (Transformer Circuits
Thread): the definitions of the prefix-matching and copying scores, and the ablations of their
section "Argument 3" (knocking out induction heads removes in-context learning in small models).

Shape legend:
    B     sequences
    N     layers; H heads a layer
    L     tokens (two copies of n)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import seeding
from ..checks import check_positive_int
from ..llama import LlamaForCausalLM

__all__ = ["HeadScores", "head_scores", "scores_from_weights", "top_heads", "second_repeat_loss", "Ablation",
           "ablation"]


@dataclass(frozen=True)
class HeadScores:
    """The mean attention of every head to the two places that name its kind.

    Attributes:
        previous: ``(N, H)``: weight on ``t - 1``, mean over the queries of both copies.
        induction: ``(N, H)``: weight on ``t - n + 1`` (after the earlier occurrence of the token),
            mean over the queries of the second copy.
        first: ``(N, H)``: weight on token 0 (the sink), mean over the queries of the second copy.
    """

    previous: Tensor
    induction: Tensor
    first: Tensor


def scores_from_weights(weights: Tensor, length: int) -> tuple[Tensor, Tensor, Tensor]:
    """Previous-token, induction and first-token scores of one layer's weights on sequences repeated twice.

    Args:
        weights: one layer's attention weights on ``B`` sequences, two copies of ``length`` tokens.
        length: ``n``, the tokens of one copy.

    Returns:
        ``(previous, induction, first)``, each ``(H,)``: mean weight on ``t - 1`` over queries
        ``1 .. 2n - 1``; on ``t - n + 1`` over queries ``n .. 2n - 1``; on token 0 over queries
        ``n .. 2n - 1``.

    Shape:
        weights: ``(B, H, 2n, 2n)``.
    """
    check_positive_int("length", length)
    if weights.dim() != 4 or weights.shape[-2:] != (2 * length, 2 * length):
        raise ValueError(f"weights must be (B, H, {2 * length}, {2 * length}), got {tuple(weights.shape)}")
    t = torch.arange(1, 2 * length)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))  # (H,)
    t2 = torch.arange(length, 2 * length)
    induction = weights[:, :, t2, t2 - length + 1].mean(dim=(0, 2))  # (H,)
    first = weights[:, :, t2, 0].mean(dim=(0, 2))  # (H,)
    return previous, induction, first


@torch.no_grad()
def head_scores(model: LlamaForCausalLM, input_ids: Tensor) -> HeadScores:
    """Every head's previous-token, induction and first-token scores on sequences repeated twice.

    Args:
        model: the Llama.
        input_ids: two copies of ``n`` tokens a row
            (:func:`helpers.experiments.llm_text.repeated_random_tokens`).

    Returns:
        A :class:`HeadScores`.

    Shape:
        input_ids: ``(B, 2n)``.
    """
    length = input_ids.size(1) // 2
    if input_ids.size(1) != 2 * length or not torch.equal(input_ids[:, :length], input_ids[:, length:]):
        raise ValueError("input_ids must be sequences written twice (B, 2n)")
    out = model.run(input_ids, need_weights=True)
    rows = [scores_from_weights(out.attentions[i], length) for i in range(len(model.layers))]
    return HeadScores(*(torch.stack(part) for part in zip(*rows)))  # 3 x (N, H)


def top_heads(scores: Tensor, count: int) -> list[tuple[int, int]]:
    """The ``count`` heads with the highest scores, as ``(layer, head)``, highest first."""
    check_positive_int("count", count)
    flat = scores.flatten().argsort(descending=True)[:count]
    return [(int(i) // scores.size(1), int(i) % scores.size(1)) for i in flat]


@torch.no_grad()
def second_repeat_loss(model: LlamaForCausalLM, input_ids: Tensor, removed: list[tuple[int, int]] = ()) -> Tensor:
    """The mean loss (nats) of each sequence's second copy, with the ``removed`` heads' outputs set to zero.

    The tokens scored are those of the second copy after its first (positions ``n + 1 .. 2n - 1``,
    predicted from ``n .. 2n - 2``): each can be copied from the first copy.

    Returns:
        ``(B,)``.
    """
    config = model.config
    mask = torch.ones(config.num_hidden_layers, config.num_attention_heads)
    for layer, head in removed:
        mask[layer, head] = 0.0
    length = input_ids.size(1) // 2
    logits = model(input_ids, head_mask=mask)[:, length:-1]  # (B, n - 1, V)
    target = input_ids[:, length + 1:]  # (B, n - 1)
    return F.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="none").view(target.shape).mean(-1)


@dataclass(frozen=True)
class Ablation:
    """The loss on the second copy with every head, without the top induction heads, and without random heads.

    Attributes:
        removed: the induction heads removed, ``(layer, head)``.
        random_sets: the sets of as many heads drawn at random (none of ``removed``).
        full: ``(B,)``, every head kept.
        without_induction: ``(B,)``.
        without_random: ``(sets, B)``.
        first_copy: ``(B,)``: the loss of the first copy (nothing to copy), every head kept.
    """

    removed: list[tuple[int, int]]
    random_sets: list[list[tuple[int, int]]]
    full: Tensor
    without_induction: Tensor
    without_random: Tensor
    first_copy: Tensor


@torch.no_grad()
def ablation(model: LlamaForCausalLM, input_ids: Tensor, induction: Tensor, count: int = 4, random_sets: int = 3,
             seed: int = 0) -> Ablation:
    """Removes the ``count`` top induction heads, then ``random_sets`` sets of ``count`` random heads.

    Args:
        model: the Llama.
        input_ids: two copies a row.
        induction: the induction scores ``(N, H)`` (:func:`head_scores`) that rank the heads.
        count: heads removed at once.
        random_sets: sets of random heads to compare with.
        seed: draws the random heads (``helpers.seeding.generator``).

    Returns:
        An :class:`Ablation`.
    """
    removed = top_heads(induction, count)
    others = [(layer, head) for layer in range(induction.size(0)) for head in range(induction.size(1))
              if (layer, head) not in removed]
    gen = seeding.generator(seed)
    sets = [[others[int(i)] for i in torch.randperm(len(others), generator=gen)[:count]] for _ in range(random_sets)]
    length = input_ids.size(1) // 2
    logits = model(input_ids)  # (B, 2n, V)
    first = F.cross_entropy(logits[:, :length - 1].flatten(0, 1), input_ids[:, 1:length].flatten(),
                            reduction="none").view(input_ids.size(0), -1).mean(-1)  # (B,)
    target = input_ids[:, length + 1:]
    full = F.cross_entropy(logits[:, length:-1].flatten(0, 1), target.flatten(),
                           reduction="none").view(target.shape).mean(-1)  # (B,)
    return Ablation(removed, sets, full, second_repeat_loss(model, input_ids, removed),
                    torch.stack([second_repeat_loss(model, input_ids, s) for s in sets]), first)
