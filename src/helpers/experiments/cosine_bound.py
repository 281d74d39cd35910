"""Chapter 2: is the cosine's bound what stops it? The task's real ceiling, and three controls.

A plain cosine puts at most ``e^2 / (e^2 + S - 1)`` of its weight on one of ``S`` slots
(:func:`~helpers.experiments.score_learning.cosine_weight_bound`), but only if the query's key
sits at cosine 1 and all ``S - 1`` others at cosine -1 *at once*, which no set of shared key
vectors can give every query. :func:`cosine_task_ceiling` finds the best geometry for the recall
task itself by direct optimisation of free unit vectors (no model in between), and
:func:`weight_on_match` measures how close a trained model comes.

A fixed factor on the cosine lifts the bound, but it also starts the scores more spread and
moves them further per step. :func:`compare_cosine_controls` trains the runs of
:data:`COSINE_CONTROLS` that separate the three: the plain cosine at ``factor`` times the
learning rate (bigger steps, same bound and start), the cosine times ``factor`` (all three
changed) and the cosine times ``factor`` at ``1 / factor`` of the learning rate (a wider bound
and a wider start, about the plain cosine's change of the scores per step).

Shape legend::

    B   sequences               S   memory slots
    K   distinct key tokens     N   distinct tokens (keys and values)
    E   head dimension d_k

Explained in chapter 2 (``book/02-dot-product``, "Is it the bound?").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import seeding
from ..checks import check_positive_int
from ..train import num_threads
from .recall import RecallConfig, RecallRun, train_recall
from .score_learning import SCORE_RECALL, _flush_denormal, score_config

__all__ = ["COSINE_CONTROLS", "CONTROL_FACTOR", "CosineCeiling", "cosine_task_ceiling", "weight_on_match",
           "compare_cosine_controls"]

CONTROL_FACTOR = 4.0
"""The factor f of the controls, 4 (cosines times 4 span [-4, 4], a bound above 99 % for 24 slots)."""

COSINE_CONTROLS: tuple[str, ...] = ("cosine, lr × f", "cosine × f", "cosine × f, lr / f")
"""The controls of :func:`compare_cosine_controls`, each named by what it changes in the plain-cosine
run: the learning rate times the factor f; the scale f; the scale f and the learning rate over f."""


def _control_config(label: str, factor: float, config: RecallConfig) -> RecallConfig:
    plain = score_config("cosine", config)
    if label == "cosine, lr × f":
        return replace(plain, lr=plain.lr * factor)
    if label == "cosine × f":
        return replace(plain, scale=factor)
    if label == "cosine × f, lr / f":
        return replace(plain, scale=factor, lr=plain.lr / factor)
    raise ValueError(f"label must be one of {tuple(COSINE_CONTROLS)}, got {label!r}")


def compare_cosine_controls(
    factor: float = CONTROL_FACTOR, seeds: Sequence[int] = (0, 1, 2), *, config: RecallConfig = SCORE_RECALL,
) -> dict[str, list[RecallRun]]:
    """Train the controls of :data:`COSINE_CONTROLS` against the plain cosine, one run per seed.

    Each run is chapter 2's plain-cosine run (``score_config("cosine")``) with one or two fields
    changed: ``lr`` times ``factor``; ``scale=factor``; ``scale=factor`` and ``lr`` over ``factor``.
    With Adam a step moves the parameters by about the learning rate, and a factor on the scores
    multiplies what that step does to them, so ``lr × f`` on the plain cosine and ``scale=f`` make the
    scores move about as far per step, while only the second lifts the bound.

    Args:
        factor: The factor f, > 1.
        seeds: Seeds; the same for every label.
        config: The settings the plain-cosine run starts from.

    Returns:
        Label -> its runs, one per seed.
    """
    if not (isinstance(factor, (int, float)) and factor > 1):
        raise ValueError(f"factor must be a number > 1, got {factor!r}")
    runs: dict[str, list[RecallRun]] = {}
    with _flush_denormal():
        for label in COSINE_CONTROLS:
            run_config = _control_config(label, float(factor), config)
            runs[label] = [train_recall(run_config, seed=seed, label=label) for seed in seeds]
    return runs


def _slots(tokens: Tensor, config: RecallConfig) -> tuple[Tensor, Tensor]:
    """The token that finds each slot ``(B, S)``, and which slot holds the query's key ``(B, S)``."""
    stride = 2 if config.slots == "pairs" else 1
    slot_tokens = tokens[:, 0:-1:stride]  # (B, S)
    return slot_tokens, slot_tokens == tokens[:, -1:]  # exactly one True a row: the keys of a sequence differ


@dataclass(frozen=True)
class CosineCeiling:
    """The best cosine geometry found for the recall task, one entry per seed (:func:`cosine_task_ceiling`)."""

    mean_weight: tuple[float, ...]
    """Mean weight on the matching slot over the held-out sequences."""
    max_weight: tuple[float, ...]
    """The largest weight given to any slot of any held-out sequence."""
    steps: int
    """Optimisation steps of each seed."""


def cosine_task_ceiling(
    config: RecallConfig = SCORE_RECALL, seeds: Sequence[int] = (0, 1, 2), *, steps: int = 600,
    batch_size: int = 256, lr: float = 0.05,
) -> CosineCeiling:
    """The most weight plain cosine scores can put on the right slot of ``config``'s task, found by search.

    No model in between: every key token gets a free query vector and every token a free key vector
    (``E = config.head_dim`` entries each), and Adam maximises the mean softmax weight of the
    cosines on the matching slot over the task's sequences. Any :class:`~helpers.experiments.recall.RecallAttention`
    with plain cosine scores computes cosines between such vectors (its queries and keys are
    projections of shared embeddings), so it cannot do better than the best geometry, which this
    search estimates from below (a search can miss the optimum; the seeds say how far they agree).

    Args:
        config: The task (``num_pairs``, ``num_keys``, ``num_values``, ``slots``, ``head_dim``).
        seeds: Seeds of the starting vectors and of the sequences.
        steps: Adam steps per seed.
        batch_size: Sequences per step.
        lr: Adam's learning rate.

    Returns:
        The weights reached on ``config``'s held-out sequences, one entry per seed.
    """
    check_positive_int("steps", steps)
    check_positive_int("batch_size", batch_size)
    if config.num_test < 1:
        raise ValueError(f"config.num_test must be >= 1 (the held-out sequences), got {config.num_test}")
    with num_threads(1):  # tiny tensors: one thread is faster (helpers.train.num_threads)
        found = [_search(config, seed, steps, batch_size, lr) for seed in seeds]
    return CosineCeiling(tuple(m for m, _ in found), tuple(x for _, x in found), steps)


def _search(config: RecallConfig, seed: int, steps: int, batch_size: int, lr: float) -> tuple[float, float]:
    """One seed of :func:`cosine_task_ceiling`: the held-out mean weight on the match, and the largest weight."""
    E, K, N = config.head_dim, config.num_keys, config.num_keys + config.num_values
    gen = seeding.generator(seed)
    query_vectors = torch.randn(K, E, generator=gen).requires_grad_()  # (K, E): one per key token
    key_vectors = torch.randn(N, E, generator=gen).requires_grad_()  # (N, E): one per token

    def weights(tokens: Tensor) -> tuple[Tensor, Tensor]:
        slot_tokens, match = _slots(tokens, config)
        q = F.normalize(query_vectors, dim=-1)[tokens[:, -1]]  # (B, E)
        k = F.normalize(key_vectors, dim=-1)[slot_tokens]  # (B, S, E)
        return torch.softmax((k @ q.unsqueeze(-1)).squeeze(-1), dim=-1), match  # (B, S) each

    optimiser = torch.optim.Adam([query_vectors, key_vectors], lr=lr)
    for step in range(steps):
        tokens, _ = config._batch(batch_size, 7_919 * (seed + 1) + step)  # not the held-out seed
        w, match = weights(tokens)
        loss = -(w * match).sum(-1).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        w, match = weights(config.test_set()[0])
    return float((w * match).sum(-1).mean()), float(w.max())


def weight_on_match(model: nn.Module, config: RecallConfig = SCORE_RECALL) -> float:
    """Mean weight a trained recall model puts on the slot that holds the query's key (held-out sequences).

    Args:
        model: A trained :class:`~helpers.experiments.recall.RecallAttention` (one head).
        config: The settings whose held-out sequences to use.

    Returns:
        The mean weight.
    """
    tokens, _ = config.test_set()
    with torch.no_grad():
        weights = model(tokens)[1]  # (B, H, 1, S)
    if weights.shape[1] != 1:
        raise ValueError(f"model must have one head, got {weights.shape[1]}")
    _, match = _slots(tokens, config)
    return float((weights[:, 0, 0] * match).sum(-1).mean())
