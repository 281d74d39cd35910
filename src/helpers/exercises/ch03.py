"""Checkers for the exercises of chapter 3, "Why scale by sqrt(d_k)" (``notebooks/03-scaling-lab.ipynb``).

One module an exercise, in :mod:`helpers.exercises.scaling`; each states the exercise's contract. The lab's
exercises, in its order:

1. :func:`.check_predicted_variance`: ``Var(q . k)`` for entries of variance ``sigma^2`` (predicted on paper,
   then measured by the checker).
2. :func:`.check_row_spread`: measure the spread the softmax sees, within a row (after a prediction).
3. :func:`.check_softmax_jacobian`: write the softmax Jacobian ``diag(p) - p p^T``.
4. :func:`.check_lr_prediction`: predict the usable learning rates, run :func:`.run_learning_rate_sweep`, then read
   them off the runs (one run is trained again).
5. :func:`.check_attention_scale`: the right scale for a head layout (MHA, GQA, MQA).
6. :func:`.check_multihead_fix`: find and fix the scaling bug in :func:`.buggy_multihead_attention`.

Not in the lab (a teacher's extra): :func:`.check_entropy_prediction`, the attention entropy for a given ``d_k``.
Predictions are recorded before the result is shown (:func:`helpers.exercises.predictions.predict`, under
:data:`.VARIANCE_KEY`, :data:`.ROW_SPREAD_KEY`, :data:`.LEARNING_RATES_KEY`, :data:`.ENTROPY_KEY`). Each checker takes
``language`` (``"en"``, ``"zh"``) and writes its verdict from ``helpers.exercises.catalogue.ch03``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..multihead import MultiHeadAttention
from .catalogue.ch03 import MESSAGES
from .scaling.attention_scale import check_attention_scale
from .scaling.entropy import ENTROPY_KEY, check_entropy_prediction, expected_entropy
from .scaling.jacobian import check_softmax_jacobian
from .scaling.learning_rates import (
    LEARNING_RATES_KEY,
    MIN_LEARNING_RATES,
    MIN_SEEDS,
    RETRAINED_STEPS,
    check_lr_prediction,
    run_learning_rate_sweep,
)
from .scaling.multihead_fix import check_multihead_fix
from .scaling.row_spread import ROW_SPREAD_KEY, check_row_spread
from .scaling.variance import VARIANCE_KEY, check_predicted_variance

__all__ = ["MIN_SEEDS", "MIN_LEARNING_RATES", "RETRAINED_STEPS", "VARIANCE_KEY", "ROW_SPREAD_KEY",
           "LEARNING_RATES_KEY", "ENTROPY_KEY", "check_predicted_variance", "check_row_spread",
           "check_softmax_jacobian", "run_learning_rate_sweep", "check_lr_prediction", "check_attention_scale",
           "buggy_multihead_attention", "check_multihead_fix", "expected_entropy", "check_entropy_prediction",
           "MESSAGES"]


def buggy_multihead_attention(x: Tensor, layer: MultiHeadAttention) -> Tensor:
    """Multi-head self-attention with ``layer``'s weights, and one bug (exercise 6 of the lab).

    Find it: the output differs from ``layer(x)[0]``. The bug is easy to write and nothing
    fails when it is there; chapter 3 measures what it costs.

    Args:
        x: Input tokens.
        layer: A :class:`~helpers.multihead.MultiHeadAttention` (no GQA) whose projections to use.

    Returns:
        The attention output.

    Shape:
        x ``(B, L, D)`` -> ``(B, L, D)``.
    """
    batch, length, d_model = x.shape
    num_heads = layer.num_heads
    head_dim = d_model // num_heads
    q = layer.q_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    k = layer.k_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    v = layer.v_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_model)  # (B, H, L, E) x (B, H, E, L) -> (B, H, L, L)
    weights = torch.softmax(scores, dim=-1)  # (B, H, L, L)
    out = weights @ v  # (B, H, L, L) x (B, H, L, E) -> (B, H, L, E)
    out = out.transpose(1, 2).reshape(batch, length, d_model)  # (B, L, D): heads concatenated
    return layer.o_proj(out)  # (B, L, D)
