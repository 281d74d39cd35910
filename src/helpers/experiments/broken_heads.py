"""Lab 6.1-6.2's broken heads: a small language model trained with one collapsed and one dead head, and the
entropy of every head probed during training. Exercise 2 (:mod:`helpers.exercises.training.broken_heads`) asks
which heads are broken, from the monitor alone; its checker trains a second run with heads it draws itself."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from .. import seeding
from ..train import TrainingHistory, num_threads, set_seed, train
from . import training_failures as tf

__all__ = ["BrokenHeadsRun", "LAYERS", "HEADS", "default_broken", "trained", "train_broken_heads"]

LAYERS, HEADS = 2, 4  # MonitorLM's defaults


@dataclass
class BrokenHeadsRun:
    """A :class:`~helpers.experiments.training_failures.MonitorLM` trained with two heads broken on purpose.

    Which heads are broken is not stored: it is what the reader reads from the monitor.

    Attributes:
        seed: The seed of the model and the batches.
        model: The trained model (``None`` in the copies the checker hands the reader's function: the exercise reads
            the monitor, not the weights).
        probe_tokens: The fixed batch on which the entropy is measured, ``(32, 16)``.
        loss: The training loss per step.
        probe_step: The step of each probe (``-1``: before training).
        head_entropy: Per probe, the normalised entropy of each layer and head, ``(N, H)`` in ``[0, 1]`` (each causal
            row divided by ``log`` of the number of keys it sees).
    """

    seed: int
    model: Any
    probe_tokens: Tensor
    loss: list[float]
    probe_step: list[int]
    head_entropy: list[Tensor]

    @property
    def num_layers(self) -> int:
        """``N``, the number of layers."""
        return int(self.head_entropy[0].shape[0])

    @property
    def num_heads(self) -> int:
        """``H``, the number of heads per layer."""
        return int(self.head_entropy[0].shape[1])

    def entropy_table(self) -> Tensor:
        """All probes stacked: ``(P, N, H)``."""
        return torch.stack(self.head_entropy)


def _zero_rows_hook(rows: slice) -> Callable[[Tensor], Tensor]:
    def hook(grad: Tensor) -> Tensor:
        grad = grad.clone()
        grad[rows] = 0  # these rows stay frozen
        return grad

    return hook


def default_broken(seed: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The heads :func:`train_broken_heads` breaks for ``seed`` when it is not told which: ``(collapsed, dead)``."""
    order = torch.randperm(LAYERS * HEADS, generator=seeding.generator(7_000 + seed)).tolist()
    return divmod(order[0], HEADS), divmod(order[1], HEADS)


@functools.lru_cache(maxsize=8)
def trained(seed: int, collapsed: tuple[int, int], dead: tuple[int, int], steps: int = 100,
            lr: float = 1e-2) -> BrokenHeadsRun:
    """The run with these broken heads (trained once per setting in a session)."""
    set_seed(seed)
    model = tf.MonitorLM(num_layers=LAYERS, num_heads=HEADS)
    e = model.attns[0].head_dim
    with torch.no_grad():
        attn = model.attns[collapsed[0]]
        rows = slice(collapsed[1] * e, (collapsed[1] + 1) * e)
        for proj in (attn.q_proj, attn.k_proj):
            proj.weight[rows].normal_(0.0, 1.0)
        attn = model.attns[dead[0]]
        rows = slice(dead[1] * e, (dead[1] + 1) * e)
        attn.q_proj.weight[rows] = 0.0
        attn.q_proj.bias[rows] = 0.0
        attn.q_proj.weight.register_hook(_zero_rows_hook(rows))
        attn.q_proj.bias.register_hook(_zero_rows_hook(rows))
    probe_tokens, _ = tf.lag_batches(seed + 999, batch=32)(0)
    probe_step, head_entropy = [-1], [tf._probe_entropy(model, probe_tokens)]

    def probe(step: int, _model: torch.nn.Module, history: TrainingHistory) -> bool:
        if step % 10 == 0 or step == steps - 1:
            probe_step.append(step)
            head_entropy.append(tf._probe_entropy(model, probe_tokens))
        return not math.isfinite(history.loss[-1])

    with num_threads(1):
        history = train(model, tf.lag_batches(seed), steps=steps, lr=lr, seed=seed, loss_fn=tf.lag_loss(),
                        accuracy_fn=None, callback=probe)
    model.eval()
    return BrokenHeadsRun(seed, model, probe_tokens, history.loss, probe_step, head_entropy)


def _as_pair(value: Any, name: str) -> tuple[int, int]:
    try:
        layer, head = (int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a (layer, head) pair, got {value!r}") from None
    if not (0 <= layer < LAYERS and 0 <= head < HEADS):
        raise ValueError(f"{name} must have layer in 0..{LAYERS - 1} and head in 0..{HEADS - 1}, got {value!r}")
    return layer, head


def train_broken_heads(seed: int = 0, *, steps: int = 100, lr: float = 1e-2,
                       broken: tuple[tuple[int, int], tuple[int, int]] | None = None) -> BrokenHeadsRun:
    """Train a 2-layer, 4-head :class:`~helpers.experiments.training_failures.MonitorLM` on the lag task with one
    collapsed and one dead head.

    - The *collapsed* head has its ``W^Q`` and ``W^K`` rows drawn with standard deviation 1 (section 3 of the
      chapter: far too large), so its softmax is one-hot before training; it is left free to train, and the
      saturated softmax passes too little gradient to undo it.
    - The *dead* head has its ``W^Q`` rows and bias zeroed and frozen (as a pruning or weight-loading bug might
      leave them), so every score is 0 and its attention is uniform.

    The entropy of every head is probed every 10 steps on a fixed batch. Results are cached. Explained in
    chapter 6, section 2.

    Args:
        seed: The seed of the model and the batches (and of the broken heads when ``broken`` is ``None``).
        steps: Training steps.
        lr: The learning rate.
        broken: ``(collapsed, dead)``, each a ``(layer, head)`` pair; ``None``: chosen from ``seed``.

    Returns:
        A :class:`BrokenHeadsRun` (which heads are broken is not in it).

    Raises:
        ValueError: ``broken`` names a head outside the model, or the same head twice.
    """
    if broken is None:
        collapsed, dead = default_broken(seed)
    else:
        if not isinstance(broken, (tuple, list)) or len(broken) != 2:
            raise ValueError(f"broken must be (collapsed, dead), two (layer, head) pairs, got {broken!r}")
        collapsed, dead = _as_pair(broken[0], "broken[0] (collapsed)"), _as_pair(broken[1], "broken[1] (dead)")
        if collapsed == dead:
            raise ValueError(f"broken names the same head twice: {collapsed}")
    return trained(seed, collapsed, dead, steps, lr)
