"""Chapter 4: the heads of a real model (all-MiniLM-L6-v2), summarised one number per head.

For each layer and head, averaged over the queries of a few sentences: the entropy of the
attention row (divided by ``log L``, so 0 = one token, 1 = uniform), and the share of weight on
the previous token, on ``[CLS]`` and on ``[SEP]`` (the kinds of head Clark et al., 2019, found
in BERT). Descriptive only: chapter 6 says how not to over-read attention maps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

__all__ = ["head_summary"]


def head_summary(sentences: Sequence[str], *, model=None, tokenizer=None) -> dict[str, torch.Tensor]:
    """Per-head statistics of a BERT-style model over ``sentences``.

    Args:
        sentences: A few short sentences.
        model, tokenizer: From :func:`helpers.viz.load_attention_model`; all-MiniLM-L6-v2 when None.

    Returns:
        ``{"entropy / log L", "on previous token", "on [CLS]", "on [SEP]"}`` -> ``(layers, H)``.
    """
    from ..viz import sentence_attention

    totals: dict[str, torch.Tensor] = {}
    for text in sentences:
        weights, tokens, _ = sentence_attention(text, model=model, tokenizer=tokenizer)  # (layers, H, L, L)
        length = weights.shape[-1]
        i = torch.arange(1, length)
        stats = {
            "entropy / log L": (-torch.special.xlogy(weights, weights).sum(-1) / math.log(length)).mean(-1),
            "on previous token": weights[..., i, i - 1].mean(-1),
            "on [CLS]": weights[..., [t == "[CLS]" for t in tokens]].sum(-1).mean(-1),
            "on [SEP]": weights[..., [t == "[SEP]" for t in tokens]].sum(-1).mean(-1),
        }
        for name, value in stats.items():
            totals[name] = totals.get(name, 0) + value / len(sentences)
    return totals
