"""Why attention, on SmolLM2-135M: one word read in two contexts, and a decoder that never peeks (chapter 7).

The seed article's example: a model writing "apple" after "ate" or after "company" should read it
differently, and its attention weights show where it looked. Here the same token, `` apple``,
ends two prompts that differ in the words before it (:data:`APPLE_PROMPTS`). :func:`reading` gives
what the model predicts next (the probability of a few fruit words and of a few company words,
:data:`FRUIT_WORDS`, :data:`COMPANY_WORDS`) and where the last query's attention goes in each
layer; :func:`reading` with ``hidden`` blocks that query's view of some words in every layer (a
mask on top of the causal one), which tests whether the prediction goes through attention to
them. A model that saw only the current token would predict the same thing after both prompts.

:func:`future_change` checks the causal mask on the real model: a token changed at some position
changes no logit before it.

Shape legend:
    L     tokens of a prompt
    N     layers; H heads
    V     vocabulary
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..llama import LlamaForCausalLM

__all__ = ["APPLE_PROMPTS", "FRUIT_WORDS", "COMPANY_WORDS", "word_ids", "Reading", "reading", "future_change"]

APPLE_PROMPTS = ("Yesterday I ate an apple", "Yesterday I bought shares of apple")
"""Two prompts that end with the same token, `` apple``, and differ in what comes before it."""
FRUIT_WORDS = (" pie", " juice", " tree", " trees", " cider", " slices", " seeds", " core", " sauce", " pies",
               " orchard", " peel")
"""Continuations of the fruit (each one token of SmolLM2's vocabulary)."""
COMPANY_WORDS = (" Inc", " stock", " shares", " Computer", " products", " company", " share", " stocks", " CEO",
                 " iPhone", "'s", " Corp")
"""Continuations of the company (each one token)."""


def word_ids(tokenizer: Any, words: Sequence[str]) -> list[int]:
    """The token id of each word, which must be one token.

    Raises:
        ValueError: A word is more than one token.
    """
    ids = []
    for word in words:
        pieces = tokenizer(word).input_ids
        if len(pieces) != 1:
            raise ValueError(f"{word!r} is {len(pieces)} tokens, not one")
        ids.append(pieces[0])
    return ids


@dataclass(frozen=True)
class Reading:
    """What the model does at the last token of a prompt.

    Attributes:
        tokens: the prompt's tokens, as text.
        weights: ``(N, L)``: the last query's attention to each token, mean over the heads, per layer.
        top: the five likeliest next tokens and their probabilities.
        fruit: the probability of the next token being one of :data:`FRUIT_WORDS`.
        company: the same for :data:`COMPANY_WORDS`.
        hidden: the positions the last query was kept from (empty: none).
    """

    tokens: list[str]
    weights: Tensor
    top: list[tuple[str, float]]
    fruit: float
    company: float
    hidden: tuple[int, ...] = ()


@torch.no_grad()
def reading(model: LlamaForCausalLM, tokenizer: Any, prompt: str, hidden: Sequence[int] = ()) -> Reading:
    """Runs ``prompt`` and reads the last token's prediction and attention, optionally blind to some positions.

    Args:
        model: the Llama.
        tokenizer: its tokenizer.
        prompt: the text (no special token is added: SmolLM2 adds none).
        hidden: positions the last query may not see, in any layer (the other queries see them).

    Returns:
        A :class:`Reading`.
    """
    ids = tokenizer(prompt, return_tensors="pt").input_ids  # (1, L)
    length = ids.size(1)
    mask = None
    if hidden:
        if not all(0 < p < length - 1 for p in hidden):
            raise ValueError(f"hidden must be positions between the first and the last, 1..{length - 2}, got {hidden}")
        mask = torch.ones(length, length, dtype=torch.bool)  # (L, L): True = may attend (the causal mask on top)
        mask[-1, list(hidden)] = False
    out = model.run(ids, need_weights=True, attn_mask=mask)
    weights = torch.stack([out.attentions[i][0, :, -1].mean(0) for i in range(len(model.layers))])  # (N, L)
    probs = out.logits[0, -1].softmax(-1)  # (V,)
    top = probs.topk(5)
    return Reading(
        tokens=[tokenizer.decode([int(i)]) for i in ids[0]],
        weights=weights,
        top=[(tokenizer.decode([int(i)]), float(p)) for p, i in zip(top.values, top.indices)],
        fruit=float(probs[word_ids(tokenizer, FRUIT_WORDS)].sum()),
        company=float(probs[word_ids(tokenizer, COMPANY_WORDS)].sum()),
        hidden=tuple(hidden),
    )


@torch.no_grad()
def future_change(model: LlamaForCausalLM, input_ids: Tensor, position: int, new_token: int) -> tuple[float, float]:
    """Changes the token at ``position`` and measures how much the logits move before and after it.

    Args:
        model: the Llama.
        input_ids: the text.
        position: where the token changes.
        new_token: what it becomes.

    Returns:
        ``(before, after)``: the largest absolute change of a logit at positions ``< position``
        (0 under the causal mask), and at ``position`` and after.

    Shape:
        input_ids: ``(1, L)``.
    """
    if not 0 < position < input_ids.size(1):
        raise ValueError(f"position must be in 1..{input_ids.size(1) - 1}, got {position}")
    changed = input_ids.clone()
    changed[0, position] = new_token
    if torch.equal(changed, input_ids):
        raise ValueError("new_token is the token already at position: nothing changes")
    a, b = model(input_ids), model(changed)  # (1, L, V) each
    before = (a[:, :position] - b[:, :position]).abs().max()
    return float(before), float((a[:, position:] - b[:, position:]).abs().max())
