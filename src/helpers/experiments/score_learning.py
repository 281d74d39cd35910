"""Chapter 2: does the score function change what a model learns?

The recall model of :mod:`helpers.experiments.recall` is trained with each score function, all
else equal (:func:`compare_score_functions`), and summarised per score function
(:func:`learning_summary`). "All else equal" includes the starting temperature: a softmax
ignores a constant added to a row, so what sets how sharp the first attention is, is the spread
of the scores *within* a row (:func:`initial_statistics`); with ``match_spread=True`` every score
function with a fixed factor is multiplied by the factor that gives it the row spread of the
scaled dot product at initialisation (:func:`matched_scale`). The cosine keeps its own definition
(its spread starts close to the dot product's; its problem is the bound,
:func:`cosine_weight_bound`). :func:`compare_at_large_dk` trains the unscaled dot product against
additive scoring at a large ``d_k``, the remark of Vaswani et al. (2017, section 3.2.1) that
chapter 3 takes up. Figures and tables: :mod:`helpers.figures.score_learning`.

Explained in chapter 2 (``book/02-dot-product``, "Does the choice change what a model learns?").
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import torch
from torch import nn

from ..train import set_seed
from .recall import RecallAttention, RecallConfig, RecallRun, train_recall

__all__ = ["LEARNING_SCORES", "EXTRA_SCORES", "FAST_SCALE_LR_FACTOR", "MATCHED_SCORES", "SCORE_RECALL", "LARGE_DK_RUNS",
           "score_config", "initial_statistics", "matched_scale", "cosine_weight_bound", "compare_score_functions",
           "compare_at_large_dk", "max_weight_on_one_slot", "learning_summary"]

LEARNING_SCORES: tuple[str, ...] = ("dot", "cosine", "neg_euclidean", "general", "additive")
"""Score functions compared in :func:`compare_score_functions` (``"dot"`` is scaled by ``1/sqrt(E)``)."""

EXTRA_SCORES: tuple[str, ...] = ("cosine_learned_scale",)
"""Further runs, the cosine times a learned scale ``exp(s)`` (``s`` starts at 0), the temperature
that bounded cosine scores need to become sharp."""

FAST_SCALE_LR_FACTOR: float = 10.0
"""The learning-rate factor of the learned scale's fast run, ``"cosine_learned_scale_fast"`` of :func:`score_config`:
its scale ``exp(s)`` learns at ``FAST_SCALE_LR_FACTOR`` times the others' learning rate. With Adam a step moves ``s``
by about the learning rate whatever its gradient, so at the common rate the scale can only climb so fast."""

MATCHED_SCORES: tuple[str, ...] = ("dot", "neg_euclidean", "general", "additive")
"""The score functions whose fixed factor ``match_spread=True`` sets (:func:`matched_scale`); the
dot product is the reference, so its factor stays ``1/sqrt(E)``."""

SCORE_RECALL = RecallConfig(
    num_pairs=12, num_keys=32, num_values=32, slots="tokens", embed_dim=16, hidden_dim=16,
    steps=300, batch_size=64, lr=3e-3, data_seed=0, num_test=1000, eval_every=20,
)
"""Chapter 2's recall runs, 12 pairs of 32 keys and 32 values; every token but the query is a
memory slot (24 slots); model size 16; 300 AdamW steps at ``3e-3``; each seed its own data;
1,000 held-out sequences measured every 20 steps."""

LARGE_DK_RUNS: dict[str, dict[str, object]] = {
    "dot_unscaled": {"score": "dot", "scale": 1.0},
    "additive": {"score": "additive", "scale": None},
    "dot": {"score": "dot", "scale": None},
}
"""The runs of :func:`compare_at_large_dk`, label -> fields of :class:`~helpers.experiments.recall.RecallConfig`."""


def score_config(name: str, config: RecallConfig = SCORE_RECALL) -> RecallConfig:
    """``config`` with the score function ``name`` (one of :data:`LEARNING_SCORES` or :data:`EXTRA_SCORES`, or
    ``"cosine_learned_scale_fast"``: the learned scale at :data:`FAST_SCALE_LR_FACTOR` times the learning rate)."""
    if name == "cosine_learned_scale":
        return replace(config, score="cosine", scale=None, learned_scale=True)
    if name == "cosine_learned_scale_fast":
        return replace(config, score="cosine", scale=None, learned_scale=True, scale_lr_factor=FAST_SCALE_LR_FACTOR)
    if name not in LEARNING_SCORES:
        raise ValueError(f"name must be one of {LEARNING_SCORES + EXTRA_SCORES + ('cosine_learned_scale_fast',)}, "
                         f"got {name!r}")
    return replace(config, score=name)


def initial_statistics(config: RecallConfig, seeds: Sequence[int] = (0, 1, 2), *,
                       num_sequences: int = 512) -> dict[str, float]:
    """What the scores look like before training, averaged over ``seeds``.

    The model of ``config`` is initialised as :func:`~helpers.experiments.recall.train_recall`
    does (``set_seed(seed)``, then :meth:`~helpers.experiments.recall.RecallAttention.from_config`) and run on
    ``num_sequences`` sequences. The spread of a row is measured from the attention weights:
    ``log w_j = scale * s_j - logsumexp_i(scale * s_i)``, and the standard deviation of ``log w``
    over the slots equals that of ``scale * s``, the part of the scores that a softmax sees
    (it ignores a constant added to a row).

    Args:
        config: The run's settings.
        seeds: Initialisation seeds.
        num_sequences: Sequences to measure on.

    Returns:
        ``query_norm`` and ``key_norm`` (mean length of the projected query and slot keys,
        ``|W_Q x|``, ``|W_K x|``), ``spread`` (mean over rows of the standard deviation over slots
        of the scaled scores) and ``max_weight`` (mean over rows of the largest weight).
    """
    tokens, _ = config._batch(num_sequences, 7)  # any fixed sequences; not the test set
    stats: dict[str, list[float]] = {"query_norm": [], "key_norm": [], "spread": [], "max_weight": []}
    for seed in seeds:
        set_seed(seed)
        model = RecallAttention.from_config(config)
        with torch.no_grad():
            x = model.embed(tokens)  # (B, T, D)
            stats["query_norm"].append(float(model.q_proj(x[:, -1]).norm(dim=-1).mean()))
            stats["key_norm"].append(float(model.k_proj(x[:, 0:-1:model.slot_stride]).norm(dim=-1).mean()))
            weights = model(tokens)[1].double()  # (B, H, 1, S)
            stats["spread"].append(float(weights.log().std(dim=-1).mean()))
            stats["max_weight"].append(float(weights.amax(dim=-1).mean()))
    return {name: float(np.mean(values)) for name, values in stats.items()}


def matched_scale(name: str, config: RecallConfig = SCORE_RECALL, seeds: Sequence[int] = (0, 1, 2)) -> float:
    """The fixed factor on score function ``name`` whose row spread at initialisation equals the
    scaled dot product's (:func:`initial_statistics`, same seeds): the same starting temperature.

    Args:
        name: One of :data:`MATCHED_SCORES`.
        config: The run's settings (its ``score`` and ``scale`` are replaced).
        seeds: Initialisation seeds to average over.

    Returns:
        The factor (``1/sqrt(E)`` for ``"dot"`` itself).
    """
    if name not in MATCHED_SCORES:
        raise ValueError(f"name must be one of {MATCHED_SCORES}, got {name!r}")
    reference = replace(config, score="dot", scale=None, learned_scale=False)
    if name == "dot":
        return reference.initial_scale
    target = initial_statistics(reference, seeds)["spread"]
    unit = replace(config, score=name, scale=1.0, learned_scale=False)
    return target / initial_statistics(unit, seeds)["spread"]


def cosine_weight_bound(num_slots: int) -> float:
    """The largest softmax weight cosine scores can give one of ``num_slots`` slots:
    ``e / (e + (S - 1) / e)``, the matching slot at cosine 1 and every other at -1.

    Args:
        num_slots: Number of slots S.

    Returns:
        The bound.
    """
    if num_slots < 1:
        raise ValueError(f"num_slots must be >= 1, got {num_slots}")
    return math.e / (math.e + (num_slots - 1) / math.e)


def compare_score_functions(
    scores: Sequence[str] = LEARNING_SCORES,
    seeds: Sequence[int] = (0, 1, 2),
    *,
    config: RecallConfig = SCORE_RECALL,
    match_spread: bool = False,
    lr_over_scale: bool = False,
    models: dict[str, list[nn.Module]] | None = None,
    **overrides: object,
) -> dict[str, list[RecallRun]]:
    """:func:`~helpers.experiments.recall.train_recall` for every score function and seed, all else equal.

    Args:
        scores: Score functions to compare (:data:`LEARNING_SCORES`, :data:`EXTRA_SCORES`).
        seeds: Seeds; every score function is trained once per seed.
        config: The settings of every run.
        match_spread: Give every score function of :data:`MATCHED_SCORES` the starting
            temperature of the scaled dot product (:func:`matched_scale`); the factor used is
            each run's ``config.scale``.
        lr_over_scale: Divide each run's learning rate by its fixed factor on the scores
            (:attr:`~helpers.experiments.recall.RecallConfig.initial_scale`). With Adam a step moves each weight
            by about the learning rate, and a factor ``f`` on the scores makes that step move them ``f`` times as
            far; at ``lr / f`` they move per step as far as the score function's without its factor, from the
            start the factor gives (chapter 2's control of the matched runs).
        models: When given, filled with the trained models: score function -> one per seed.
        **overrides: Fields of ``config`` to change (``steps=100``, ``num_pairs=8``...).

    Returns:
        Score function -> its runs, one per seed.
    """
    config = replace(config, **overrides)
    runs: dict[str, list[RecallRun]] = {}
    for name in scores:
        run_config = score_config(name, config)
        if match_spread and name in MATCHED_SCORES:
            run_config = replace(run_config, scale=matched_scale(name, config, seeds))
        if lr_over_scale:
            if run_config.learned_scale:
                raise ValueError(f"lr_over_scale needs a fixed factor on the scores; {name!r} learns its scale")
            run_config = replace(run_config, lr=run_config.lr / run_config.initial_scale)
        runs[name] = []
        for seed in seeds:
            kept: list[nn.Module] = []
            runs[name].append(train_recall(run_config, seed=seed, label=name,
                                           callback=lambda step, model, history, kept=kept: _keep(kept, model)))
            if models is not None:
                models.setdefault(name, []).append(kept[0])
    return runs


def _keep(kept: list[nn.Module], model: nn.Module) -> None:
    kept[:] = [model]


@contextmanager
def _flush_denormal() -> Iterator[None]:
    """Treat denormal floats as 0 on the CPU within the block (a saturated softmax produces many,
    and they make its backward pass several times slower); restores the default afterwards."""
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def compare_at_large_dk(
    d_k: int = 128,
    seeds: Sequence[int] = (0, 1, 2),
    *,
    config: RecallConfig = SCORE_RECALL,
    steps: int = 100,
    eval_every: int = 10,
    num_test: int = 500,
) -> dict[str, list[RecallRun]]:
    """The unscaled dot product against additive scoring (and the scaled dot product) at a large ``d_k``.

    Vaswani et al. (2017, section 3.2.1) note that additive attention beats the *unscaled* dot
    product at large ``d_k``, and suspect that large dot products saturate the softmax; their fix
    is the ``1/sqrt(d_k)`` scale. The runs of :data:`LARGE_DK_RUNS`, one model width
    ``d_k`` (one head), on chapter 2's recall task; denormals are flushed to 0 (only the speed changes).

    Args:
        d_k: Model width = head size.
        seeds: Seeds.
        config: The other settings.
        steps: Training steps.
        eval_every: Held-out accuracy every this many steps.
        num_test: Held-out sequences.

    Returns:
        Label of :data:`LARGE_DK_RUNS` -> runs, one per seed.
    """
    base = replace(config, embed_dim=d_k, steps=steps, eval_every=eval_every, num_test=num_test)
    runs: dict[str, list[RecallRun]] = {}
    with _flush_denormal():
        for label, fields in LARGE_DK_RUNS.items():
            run_config = replace(base, **fields)
            runs[label] = [train_recall(run_config, seed=seed, label=label) for seed in seeds]
    return runs


def max_weight_on_one_slot(model: nn.Module, config: RecallConfig = SCORE_RECALL) -> float:
    """The largest attention weight ``model`` gives any slot, over ``config``'s held-out sequences.

    Args:
        model: A trained :class:`~helpers.experiments.recall.RecallAttention`.
        config: The settings whose :meth:`~helpers.experiments.recall.RecallConfig.test_set` to use.

    Returns:
        The largest weight.
    """
    tokens, _ = config.test_set()
    with torch.no_grad():
        return float(model(tokens)[1].max())


def learning_summary(runs: dict[str, list[RecallRun]], threshold: float = 0.9) -> list[dict[str, object]]:
    """One row per score function: held-out accuracy (mean, min, max over seeds), steps to
    ``threshold`` (mean, min, max over the seeds that reached it), wall time and parameter count.

    Args:
        runs: The output of :func:`compare_score_functions` (runs with held-out sequences).
        threshold: Held-out accuracy for the "steps to" columns.

    Returns:
        Rows of a table, in the order of ``runs``. ``steps_to_threshold`` is ``None`` unless every
        seed reached ``threshold``; ``steps_per_seed`` holds each seed's (``None``: not reached).
    """
    rows = []
    for score, group in runs.items():
        accs = [r.final_test_accuracy for r in group]
        reached = [r.test_steps_to(threshold) for r in group]
        hit = [s for s in reached if s is not None]
        rows.append({
            "score": score,
            "accuracy": float(np.mean(accs)),
            "accuracy_min": float(np.min(accs)),
            "accuracy_max": float(np.max(accs)),
            "accuracy_per_seed": [float(a) for a in accs],
            "steps_to_threshold": None if len(hit) < len(reached) else float(np.mean(hit)),
            "steps_min": float(min(hit)) if hit else None,
            "steps_max": float(max(hit)) if hit else None,
            "steps_per_seed": reached,
            "seeds_reaching_threshold": len(hit),
            "num_seeds": len(group),
            "scale": group[0].scale,
            "wall_time": float(np.mean([r.wall_time for r in group])),
            "step_time": float(np.min([r.step_time for r in group])),
            "num_parameters": group[0].num_parameters,
        })
    return rows
