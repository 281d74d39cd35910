"""Chapter 4, "Why many heads": does one bad head *during training* ruin a many-head layer?

The seed claims that with many heads, one head that is badly initialised or goes wrong during
training cannot ruin the model. :mod:`helpers.experiments.heads_training` breaks a head after
training; this module tests the claim as stated, on the one-offset filter that every ``H``
solves (``offsets=(2,)``, ``embed_dim=32``, as chapter 4's robustness run).

What "bad" means here: a **saturated head**. Its query and key projections (weights and
biases of its rows of ``W_Q`` and ``W_K``) are multiplied by ``qk_scale`` (10), so its content
scores ``q . k`` are ``qk_scale ** 2`` (100) times larger and its softmax is nearly one-hot on a
key chosen by content, not by position. A saturated softmax passes back little gradient
(chapter 3: at initialisation the head's position-bias gradient is 2 to 5 times smaller, and its
``W_Q`` gradient relative to ``W_Q`` 4 to 6 times), and with AdamW's steps of about ``lr`` per weight,
weights 10 times larger take about 10 times longer to shrink, while the position bias must grow
to the size of scores 100 times larger: the head is slow to learn its way out. Its output is a
read of a wrong position, not a loud one (``W_V`` is left at its usual size, so a bad head is
not simply a large one). Two timings:

- ``"init"``: the head is saturated from the first step (:func:`scale_head_scores`).
- ``"mid"``: after ``break_step`` of the ``steps`` updates, the head's rows of ``q_proj.weight``,
  ``k_proj.weight``, ``v_proj.weight`` are
  re-drawn and its position bias zeroed (as :func:`~helpers.experiments.heads_training.break_one_head`
  does), then saturated, and training goes on with the same optimiser (:func:`reinit_head`).

:func:`train_with_bad_head` trains one model so, :func:`bad_head_sweep` every ``H`` and seed.
:func:`break_and_finetune` takes a model trained cleanly, breaks one head (a plain re-draw, or a
saturated one) and fine-tunes it for a few steps: :func:`finetune_sweep`.

With one head, the saturated head is the whole layer and 300 steps do not get it out; with four
or eight on a one-offset task (heads to spare), the other heads learn the task around it. Liu et
al. (2021, "Multi-head or Single-head?") make a different stability argument, about depth: a
shallow multi-head model trains stably where a deep single-head one attending as many places
needs stabilising. One layer does not test depth.

Shape legend:
    B  batch;  L  positions;  D  embed_dim;  H  heads;  E  head_dim
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from ..checks import check_int, check_positive_int, check_positive_ints
from ..tasks import offset_filter_task
from ..train import num_threads, set_seed, train
from .heads_training import FilterHeads, FilterRun, r_squared, redraw_head

__all__ = [
    "CONDITIONS", "scale_head_scores", "reinit_head", "head_saturation", "head_offset_weight", "BadHeadRun",
    "train_with_bad_head",
    "bad_head_sweep", "FinetuneResult", "break_and_finetune", "finetune_sweep",
]

CONDITIONS = ("none", "init", "mid")
"""The three timings of a bad head, in this order (never, the clean run; from the start; mid-training)."""


def _check_head(num_heads: int, head: int, name: str = "head") -> int:
    check_int(name, head, minimum=0)
    if head >= num_heads:
        raise ValueError(f"{name} must be below num_heads={num_heads}, got {head}")
    return head


def _check_scale(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def scale_head_scores(model: FilterHeads, head: int, qk_scale: float) -> None:
    """Multiply one head's query and key projections (weights and biases) by ``qk_scale``, in place.

    The head's ``q`` and ``k`` both grow by ``qk_scale``, so its content scores ``q . k`` grow by
    ``qk_scale ** 2``: with ``qk_scale = 10`` the softmax saturates. The other heads, ``W_V`` and
    the position bias are unchanged. Chapter 4.

    Args:
        model: The model to change.
        head: Which head, ``0 <= head < H``.
        qk_scale: The factor, ``> 0``.
    """
    _check_head(model.attention.num_heads, head)
    qk_scale = _check_scale("qk_scale", qk_scale)
    attention = model.attention
    rows = slice(head * attention.head_dim, (head + 1) * attention.head_dim)  # the head's E rows of D
    with torch.no_grad():
        for proj in (attention.q_proj, attention.k_proj):
            proj.weight[rows] *= qk_scale  # (E, D)
            if proj.bias is not None:
                proj.bias[rows] *= qk_scale  # (E,)


def reinit_head(model: FilterHeads, head: int, *, qk_scale: float = 1.0, generator: torch.Generator | None = None
                ) -> None:
    """Re-draw one head's ``W_Q, W_K, W_V`` rows and zero its position bias, then scale its scores.

    The re-draw is :func:`~helpers.experiments.heads_training.redraw_head`, as in
    :func:`~helpers.experiments.heads_training.break_one_head`'s ``"reinit"`` (so ``qk_scale = 1``
    breaks the head exactly as it does). Then :func:`scale_head_scores` with ``qk_scale``. Chapter 4.

    Args:
        model: The model to change, in place.
        head: Which head, ``0 <= head < H``.
        qk_scale: Factor on the head's query and key projections after the re-draw (1: none).
        generator: Source of the new weights; ``None`` for ``seeding.generator(head)``.
    """
    _check_head(model.attention.num_heads, head)
    qk_scale = _check_scale("qk_scale", qk_scale)
    redraw_head(model, head, generator)
    if qk_scale != 1.0:
        scale_head_scores(model, head, qk_scale)


def head_saturation(model: FilterHeads, x: Tensor, head: int) -> float:
    """Mean over sequences and queries of one head's largest attention weight (1: one-hot; ``1/L``: uniform).

    Chapter 4 uses it to show that a head scaled by :func:`scale_head_scores` is saturated.

    Shape:
        x: ``(B, L, dim)``.
    """
    _check_head(model.attention.num_heads, head)
    with torch.no_grad():
        _, weights = model(x, need_weights=True)  # (B, H, L, L)
    return float(weights[:, head].amax(-1).mean())


def head_offset_weight(model: FilterHeads, x: Tensor, head: int, offsets: Sequence[int]) -> float:
    """One head's total attention weight on the positions ``i + o`` (``o`` in ``offsets``), averaged over queries ``i``.

    On the filter task these are the positions the target reads: a head that has learned the
    task puts most of its weight there, a head still saturated on positions picked by content
    about ``len(offsets) / L`` or less. Unlike :func:`head_saturation`, which is large for any
    sharp head, it tells a head that healed (sharp on the task's offset) from one that stayed
    stuck (sharp elsewhere). Chapter 4.

    Shape:
        x: ``(B, L, dim)``.
    """
    _check_head(model.attention.num_heads, head)
    with torch.no_grad():
        _, weights = model(x, need_weights=True)  # (B, H, L, L)
    seq_len = weights.shape[-1]
    i = torch.arange(seq_len)
    on = sum(weights[:, head, i, (i + o) % seq_len] for o in {o % seq_len for o in offsets})  # (B, L)
    return float(on.mean())


@dataclass(frozen=True)
class BadHeadRun:
    """One model trained with (or without) a bad head, scored on held-out data.

    Attributes:
        num_heads: H.
        seed: The seed (filters, data, initialisation), as in :func:`~helpers.experiments.heads_training.train_filter`.
        condition: ``"none"``, ``"init"`` or ``"mid"`` (see :data:`CONDITIONS`).
        r2: Held-out R² at the end of training.
        r2_without_bad_head: The same with the bad head zeroed by ``head_mask`` (how much the
            model still uses it).
        saturation: :func:`head_saturation` of the bad head at the end, on the held-out inputs.
        r2_before_break: For ``"mid"``, R² just before the head went bad (``nan`` otherwise).
        r2_after_break: For ``"mid"``, R² just after (``nan`` otherwise).
        weight_on_offsets: :func:`head_offset_weight` of the bad head at the end, on the task's
            offsets (near 1: it healed onto them; near ``len(offsets) / L`` or below: it did not).
    """

    num_heads: int
    seed: int
    condition: str
    r2: float
    r2_without_bad_head: float
    saturation: float
    r2_before_break: float = math.nan
    r2_after_break: float = math.nan
    weight_on_offsets: float = math.nan


def _filter_data(seed: int, offsets: tuple[int, ...], seq_len: int, dim: int, steps: int, batch_size: int,
                 num_test: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The data of :func:`~helpers.experiments.heads_training.train_filter` for one seed, drawn the same way."""
    _, _, filters = offset_filter_task(1, seq_len, dim, offsets, seed=seed)  # (K, dim, dim)
    x, y, _ = offset_filter_task(steps * batch_size, seq_len, dim, offsets, seed=seed + 1000, filters=filters)
    test_x, test_y, _ = offset_filter_task(num_test, seq_len, dim, offsets, seed=seed + 2000, filters=filters)
    return x, y, test_x, test_y  # (N, L, dim) each


def train_with_bad_head(num_heads: int, condition: str = "init", *, seed: int = 0, bad_head: int = 0,
                        qk_scale: float = 10.0, break_step: int | None = None, offsets: Sequence[int] = (2,),
                        seq_len: int = 12, dim: int = 4, embed_dim: int = 32, steps: int = 300,
                        batch_size: int = 32, lr: float = 1e-2, num_test: int = 300) -> BadHeadRun:
    """Train a filter model as :func:`~helpers.experiments.heads_training.train_filter` does, with one bad head.

    The model is a :class:`~helpers.experiments.heads_training.FilterHeads`.

    Same data, initialisation, optimiser and steps as ``train_filter`` for the same seed (with
    ``condition="none"`` the result is its R²); ``"init"`` saturates ``bad_head`` before the
    first step (:func:`scale_head_scores`), ``"mid"`` re-draws and saturates it after
    ``break_step`` updates (:func:`reinit_head`) and trains on with the same AdamW state.
    One thread, about a second. Chapter 4.

    Args:
        num_heads: H.
        condition: ``"none"``, ``"init"`` or ``"mid"``.
        seed: As in ``train_filter``.
        bad_head: Which head goes bad, ``0 <= bad_head < H``.
        qk_scale: Factor on the bad head's query and key projections (10: scores x 100).
        break_step: For ``"mid"``, the number of updates before the break (default ``steps // 2``).
        offsets, seq_len, dim, embed_dim, steps, batch_size, lr, num_test: As in ``train_filter``
            (the defaults are chapter 4's robustness run).

    Returns:
        A :class:`BadHeadRun`.
    """
    check_positive_int("num_heads", num_heads)
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    check_positive_int("steps", steps)
    check_positive_int("batch_size", batch_size)
    break_step = steps // 2 if break_step is None else break_step
    check_int("break_step", break_step, minimum=1)
    if break_step >= steps:
        raise ValueError(f"break_step must be below steps={steps}, got {break_step}")
    _check_head(num_heads, bad_head, "bad_head")
    qk_scale = _check_scale("qk_scale", qk_scale)
    x, y, test_x, test_y = _filter_data(seed, tuple(offsets), seq_len, dim, steps, batch_size, num_test)
    set_seed(seed)
    model = FilterHeads(seq_len, dim, embed_dim, num_heads)
    if condition == "init":
        scale_head_scores(model, bad_head, qk_scale)
    around_break: dict[str, float] = {}

    def score() -> float:
        with torch.no_grad():
            return r_squared(model(test_x)[0], test_y)

    def go_bad(step: int, _model, _history) -> None:
        if condition == "mid" and step == break_step - 1:  # after break_step updates
            around_break["before"] = score()
            reinit_head(model, bad_head, qk_scale=qk_scale)
            around_break["after"] = score()

    with num_threads(1):
        train(model, lambda s: (x[s * batch_size:(s + 1) * batch_size], y[s * batch_size:(s + 1) * batch_size]),
              steps=steps, lr=lr, loss_fn=F.mse_loss, accuracy_fn=None, seed=seed, callback=go_bad)
        model.eval()
        keep = 1 - torch.eye(num_heads)[bad_head]  # (H,): every head but the bad one
        with torch.no_grad():
            without = r_squared(model(test_x, head_mask=keep)[0], test_y)
        return BadHeadRun(num_heads, seed, condition, score(), without, head_saturation(model, test_x, bad_head),
                          around_break.get("before", math.nan), around_break.get("after", math.nan),
                          head_offset_weight(model, test_x, bad_head, offsets))


def bad_head_sweep(num_heads: Sequence[int] = (1, 4, 8), seeds: Sequence[int] = (0, 1, 2),
                   conditions: Sequence[str] = CONDITIONS, **kwargs) -> dict[str, dict[int, list[BadHeadRun]]]:
    """:func:`train_with_bad_head` for each condition, number of heads and seed.

    Returns:
        ``{condition: {H: [run per seed]}}``. Chapter 4.
    """
    heads = check_positive_ints("num_heads", num_heads)
    return {c: {h: [train_with_bad_head(h, c, seed=s, **kwargs) for s in seeds] for h in heads} for c in conditions}


@dataclass(frozen=True)
class FinetuneResult:
    """R² of a trained model before one head is broken, just after, and after fine-tuning.

    Attributes:
        num_heads: H.
        seed: The run's seed.
        head: The broken head.
        steps: Fine-tuning steps.
        r2_before: The trained model's held-out R².
        r2_broken: Right after the break.
        r2_finetuned: After ``steps`` of fine-tuning (``r2_broken`` when ``steps == 0``).
    """

    num_heads: int
    seed: int
    head: int
    steps: int
    r2_before: float
    r2_broken: float
    r2_finetuned: float


def break_and_finetune(run: FilterRun, head: int, *, steps: int = 50, qk_scale: float = 1.0, lr: float = 1e-2,
                       batch_size: int = 32) -> FinetuneResult:
    """Break one head of a trained model with :func:`reinit_head`, then fine-tune every weight for ``steps``.

    Works on a copy: ``run`` is left as it was. Fine-tuning uses fresh inputs of the run's task
    (seeded with ``run.seed + 3000``, unseen in training and testing), MSE and a new AdamW at
    ``lr``, one thread. With ``qk_scale = 1`` the break is
    :func:`~helpers.experiments.heads_training.break_one_head`'s ``"reinit"``. Chapter 4.

    Args:
        run: A run of :func:`~helpers.experiments.heads_training.train_filter` (with its filters).
        head: Which head to break.
        steps: Fine-tuning steps (0: none).
        qk_scale: Factor on the re-drawn head's query and key projections (10: saturated).
        lr: Fine-tuning learning rate.
        batch_size: Sequences per step.

    Returns:
        A :class:`FinetuneResult`.
    """
    if not isinstance(run, FilterRun) or run.filters is None:
        raise TypeError(f"run must be a FilterRun with its filters (from train_filter), got {type(run).__name__}")
    check_int("steps", steps, minimum=0)
    check_positive_int("batch_size", batch_size)
    model = copy.deepcopy(run.model)
    _check_head(model.attention.num_heads, head)
    seq_len, dim = run.test_x.shape[1:]  # test_x: (N, L, dim)

    def score() -> float:
        with torch.no_grad():
            return r_squared(model(run.test_x)[0], run.test_y)

    before = score()
    reinit_head(model, head, qk_scale=qk_scale)
    broken = score()
    if steps:
        x, y, _ = offset_filter_task(steps * batch_size, seq_len, dim, run.offsets, seed=run.seed + 3000,
                                     filters=run.filters)  # (steps * batch_size, L, dim) each
        with num_threads(1):
            train(model, lambda s: (x[s * batch_size:(s + 1) * batch_size], y[s * batch_size:(s + 1) * batch_size]),
                  steps=steps, lr=lr, loss_fn=F.mse_loss, accuracy_fn=None, seed=run.seed)
        model.eval()
    return FinetuneResult(run.num_heads, run.seed, head, steps, before, broken, score() if steps else broken)


def finetune_sweep(runs: dict[int, Sequence[FilterRun]], **kwargs) -> dict[int, list[list[FinetuneResult]]]:
    """:func:`break_and_finetune` for every head of every run.

    Returns:
        ``{H: [[result per head] per run]}``. Chapter 4.
    """
    return {h: [[break_and_finetune(r, head, **kwargs) for head in range(r.num_heads)] for r in per_seed]
            for h, per_seed in runs.items()}
