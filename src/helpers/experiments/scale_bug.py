"""Chapter 3: a real bug, scaling multi-head scores by ``sqrt(d_model)`` instead of ``sqrt(head_dim)``.

:func:`multihead_scale_bug` measures the score variance, the attention entropy at
initialisation, and two training runs of the recall model of :mod:`helpers.experiments.recall`
that differ only in the scale. Figures: :func:`helpers.figures.recall.accuracy_figure`.

Shape legend::

    N   query/key pairs     E   head dimension
    B   batch size          H   heads         P   keys attended to

Explained in chapter 3 (``book/03-scaling``, "A real bug").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .. import seeding
from ..checks import check_positive_int
from ..diagnostics import attention_entropy
from ..train import set_seed
from .recall import RecallAttention, RecallConfig, RecallRun
from .scale_training import SCALE_RECALL, SEEDS, STOP_AFTER_TARGET, recall_config, train_seeds

__all__ = ["ScaleBugReport", "multihead_scale_bug"]


@dataclass
class ScaleBugReport:
    """What scaling by ``sqrt(d_model)`` instead of ``sqrt(head_dim)`` does (see :func:`multihead_scale_bug`).

    Attributes:
        embed_dim: Model width ``d_model``.
        num_heads: Heads H.
        head_dim: ``d_model / H``, the size each dot product runs over.
        score_variance: ``{"1/sqrt(head_dim)": ..., "1/sqrt(d_model)": ...}``: measured variance
            of the scores for unit-variance queries and keys of size ``head_dim``.
        init_entropy: Mean attention entropy (nats) of the model at initialisation, per label.
        max_entropy: ``log P``, the entropy of uniform attention over the P keys.
        runs: The training runs (:class:`~helpers.experiments.recall.RecallRun`), labelled
            ``"÷ √head_dim (right)"`` then ``"÷ √d_model (bug)"``, each for every seed.
    """

    embed_dim: int
    num_heads: int
    head_dim: int
    score_variance: dict[str, float]
    init_entropy: dict[str, float]
    max_entropy: float
    runs: list[RecallRun]


def multihead_scale_bug(
    embed_dim: int = 128,
    num_heads: int = 16,
    *,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    num_samples: int = 8192,
    config: RecallConfig = SCALE_RECALL,
    seed: int = 0,
    seeds: Sequence[int] = SEEDS,
    stop_after_target: int | None = STOP_AFTER_TARGET,
) -> ScaleBugReport:
    """Measure the multi-head bug: dividing by ``sqrt(d_model)`` where ``sqrt(head_dim)`` is meant.

    Each head's dot product runs over ``head_dim = d_model / H`` features, so its variance is
    ``head_dim``; dividing by ``sqrt(d_model)`` leaves ``head_dim / d_model = 1 / H``: the
    scores are ``sqrt(H)`` times too small and the attention starts (and stays) flatter. The
    model can make up for it by growing ``W_q`` and ``W_k``, which takes steps. Measured: the
    score variance for unit-variance vectors, the attention entropy of the model at
    initialisation, and two training runs that differ only in the scale. Explained in chapter 3.

    Args:
        embed_dim: Model width ``d_model``.
        num_heads: Heads H (must divide ``embed_dim``).
        lr: Learning rate.
        steps: Optimisation steps per run.
        target: Accuracy for the steps-to-target count.
        num_samples: Query/key pairs for the variance measurement.
        config: Task and batch settings.
        seed: Seed of the variance samples and of the model measured at initialisation.
        seeds: Seeds of the training runs (initialisation and batches).
        stop_after_target: End a run this many steps after it reaches ``target`` (``None``: never).

    Returns:
        A :class:`ScaleBugReport`.
    """
    check_positive_int("embed_dim", embed_dim)
    check_positive_int("num_heads", num_heads)
    if embed_dim % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide embed_dim={embed_dim}")
    head_dim = embed_dim // num_heads
    scales = {"1/sqrt(head_dim)": 1 / math.sqrt(head_dim), "1/sqrt(d_model)": 1 / math.sqrt(embed_dim)}
    labels = {"1/sqrt(head_dim)": "÷ √head_dim (right)", "1/sqrt(d_model)": "÷ √d_model (bug)"}
    gen = seeding.generator(seed)
    q = torch.randn(num_samples, head_dim, generator=gen)  # (N, E)
    k = torch.randn(num_samples, head_dim, generator=gen)  # (N, E)
    dots = (q * k).sum(-1)  # (N,)
    variance = {label: (dots * scale).var().item() for label, scale in scales.items()}
    tokens, _ = config.make_batch(0)
    entropy = {}
    for label, scale in scales.items():
        set_seed(seed)
        model = RecallAttention.from_config(recall_config(head_dim, num_heads=num_heads, scale=scale, config=config))
        with torch.no_grad():
            _, weights = model(tokens)  # (B, H, 1, P)
        entropy[label] = attention_entropy(weights).mean().item()
    runs = [
        run
        for label, scale in scales.items()
        for run in train_seeds(recall_config(head_dim, num_heads=num_heads, scale=scale, lr=lr, steps=steps,
                                             target=target, config=config, stop_after_target=stop_after_target),
                               seeds, label=labels[label])
    ]
    return ScaleBugReport(embed_dim, num_heads, head_dim, variance, entropy, math.log(config.num_pairs), runs)
