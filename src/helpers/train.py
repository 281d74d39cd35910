"""A small, seeded training loop for the book's experiments, and the metrics it reports.

One loop for every experiment of the book: AdamW, an optional linear warm-up, optional
gradient clipping, and a :class:`TrainingHistory` that records per step the loss, the batch
accuracy, the learning rate, the gradient norm (total, and per parameter on request), the
attention entropy (on request) and the wall time.

How the loop talks to a model (the contract):

- ``make_batch(step)`` returns ``(inputs, targets)``. ``inputs`` is a tensor (called as
  ``model(inputs)``), a tuple (``model(*inputs)``) or a dict (``model(**inputs)``).
- The model returns either ``logits`` or a tuple ``(logits, attention)``. ``attention`` is
  ``None``, one tensor of attention weights (each row along the last axis sums to 1, e.g.
  ``(B, H, L, S)``), or a list/tuple of such tensors, one per layer. Extra tuple items after
  the second are ignored. The loop needs ``attention`` only when
  ``record_attention_entropy=True``.
- ``loss_fn(logits, targets)`` gives the scalar loss; the default is cross-entropy over the
  last axis of ``logits`` (:func:`cross_entropy_loss`).

Shape legend:
    B: batch size
    L: target length (any number of leading target dimensions is allowed)
    V: number of classes (vocabulary size)

Explained in chapter 6 (warm-up, clipping, entropy monitoring); used in every chapter.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import seeding
from .diagnostics import GradientNormTracker, attention_entropy

__all__ = [
    "set_seed",
    "num_threads",
    "token_accuracy",
    "sequence_accuracy",
    "cross_entropy_loss",
    "lr_schedule",
    "TrainingHistory",
    "train",
]


def set_seed(seed: int) -> None:
    """Seed Python's ``random``, NumPy and PyTorch with ``seed`` plus the book's seed offset.

    Every experiment of the book calls it first (the same build gives the same figures); it is
    :func:`helpers.seeding.manual_seed`, so ``HELPERS_SEED_OFFSET`` shifts it with every other seed.

    Args:
        seed: The seed.
    """
    seeding.manual_seed(seed)


@contextmanager
def num_threads(threads: int) -> Iterator[None]:
    """Run a block with ``torch.set_num_threads(threads)``, then restore the previous setting.

    The book's models are tiny: their operations are too small to gain from several threads,
    and on a busy 2-core machine the threads mostly wait for each other. Measured on the
    book's build machine (2 cores, shared), a 150-step run of a tiny attention classifier took
    about 1 s with 2 threads and 0.1 s with 1 thread. Used by the experiments of every chapter.

    Args:
        threads: Number of intra-op threads inside the block (``>= 1``).
    """
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be an int >= 1, got {threads!r}")
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _predictions(logits: Tensor, targets: Tensor) -> Tensor:
    if not isinstance(logits, Tensor) or not isinstance(targets, Tensor):
        raise TypeError(
            f"logits and targets must be tensors, got {type(logits).__name__} and {type(targets).__name__}"
        )
    if logits.shape == targets.shape and not logits.is_floating_point():
        return logits
    if logits.dim() != targets.dim() + 1 or logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"logits must be (..., V) for targets (...) (or predictions of the targets' shape); "
            f"got logits {tuple(logits.shape)} and targets {tuple(targets.shape)}"
        )
    return logits.argmax(-1)


def token_accuracy(logits: Tensor, targets: Tensor, *, ignore_index: int | None = None) -> float:
    """Fraction of target tokens predicted correctly (arg-max of the logits).

    Used from chapter 1 on (the bottleneck experiment reports it next to
    :func:`sequence_accuracy`).

    Args:
        logits: Scores over V classes, or integer predictions with the targets' shape.
        targets: Class indices.
        ignore_index: Target value not counted (e.g. padding).

    Returns:
        The accuracy in [0, 1] (``nan`` when every target is ignored).

    Shape:
        logits: ``(..., V)`` or ``(...)``; targets: ``(...)``.
    """
    correct = _predictions(logits, targets) == targets
    if ignore_index is not None:
        keep = targets != ignore_index
        return (correct & keep).sum().item() / keep.sum().item() if keep.any() else math.nan
    return correct.float().mean().item()


def sequence_accuracy(logits: Tensor, targets: Tensor, *, ignore_index: int | None = None) -> float:
    """Fraction of whole sequences predicted without a single mistake.

    A sequence is one row along the first axis: all its (non-ignored) tokens must be right.
    For targets ``(B,)`` this is the same as :func:`token_accuracy`. It is the strict measure
    of chapter 1: one wrong token in forty makes the whole reversal wrong.

    Args:
        logits: Scores over V classes, or integer predictions with the targets' shape.
        targets: Class indices.
        ignore_index: Target value not counted (e.g. padding).

    Returns:
        The accuracy in [0, 1].

    Shape:
        logits: ``(B, ..., V)`` or ``(B, ...)``; targets: ``(B, ...)``.
    """
    correct = _predictions(logits, targets) == targets
    if ignore_index is not None:
        correct = correct | (targets == ignore_index)
    return correct.reshape(correct.shape[0], -1).all(1).float().mean().item()


def cross_entropy_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean cross-entropy over all target positions, logits in float32.

    The default loss of :func:`train`, used by every chapter's experiments.

    Args:
        logits: Scores over V classes.
        targets: Class indices.

    Returns:
        The scalar loss.

    Shape:
        logits: ``(..., V)``; targets: ``(...)``.
    """
    _predictions(logits, targets)  # shape check
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))  # (B*L, V)


def lr_schedule(step: int, *, lr: float, steps: int, warmup_steps: int = 0, decay: str = "none") -> float:
    """The learning rate of (0-based) ``step``: linear warm-up, then constant or decaying.

    Warm-up multiplies ``lr`` by ``min(1, (step + 1) / warmup_steps)``: the first step uses
    ``lr / warmup_steps`` and step ``warmup_steps - 1`` reaches ``lr``. Warm-up keeps Adam's
    first, badly estimated updates small, which Post-LN Transformers need (Xiong et al., 2020).
    After it, with ``p = (step - warmup_steps) / (steps - warmup_steps)`` going from 0 towards 1,
    the factor is 1 (``"none"``), ``1 - p`` (``"linear"``) or ``(1 + cos(pi p)) / 2``
    (``"cosine"``; Loshchilov & Hutter, 2017). Explained in chapter 6.

    Args:
        step: Index of the optimisation step, from 0.
        lr: The peak learning rate.
        steps: Total number of steps (the decay reaches 0 at ``step == steps``).
        warmup_steps: Length of the warm-up (0 for none).
        decay: ``"none"``, ``"linear"`` or ``"cosine"``.

    Returns:
        The learning rate.
    """
    if step < 0 or warmup_steps < 0 or steps < 1:
        raise ValueError(
            f"step and warmup_steps must be >= 0 and steps >= 1, got step={step}, "
            f"warmup_steps={warmup_steps}, steps={steps}"
        )
    if decay not in ("none", "linear", "cosine"):
        raise ValueError(f"decay must be 'none', 'linear' or 'cosine', got {decay!r}")
    if step < warmup_steps:
        return lr * (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / max(1, steps - warmup_steps))
    if decay == "linear":
        return lr * (1.0 - progress)
    if decay == "cosine":
        return lr * 0.5 * (1.0 + math.cos(math.pi * progress))
    return lr


@dataclass
class TrainingHistory:
    """What :func:`train` recorded, one entry per optimisation step unless said otherwise.

    Chapter 6 plots these curves (loss, gradient norms, attention entropy) to diagnose a run.

    Attributes:
        step: Step indices, from 0.
        loss: Training loss of the step's batch (before the update).
        accuracy: Token accuracy on the step's batch (``nan`` when it does not apply).
        lr: Learning rate used by the step.
        grad_norm: Total gradient norm before clipping.
        clipped_grad_norm: Total gradient norm after clipping (what the optimiser used).
        grad_norms: Parameter name to its gradient norm per step (``record_grad_norms=True``;
            ``nan`` where a parameter got no gradient).
        attention_entropy: Mean attention entropy in nats over all layers, heads and queries
            (``record_attention_entropy=True``).
        attention_entropy_by_layer: Per step, the mean entropy of each layer.
        eval_step: Steps at which ``eval_fn`` ran.
        eval_metrics: What ``eval_fn`` returned at those steps.
        wall_time: Seconds of training (evaluation excluded) at the end of each step.
    """

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    clipped_grad_norm: list[float] = field(default_factory=list)
    grad_norms: dict[str, list[float]] = field(default_factory=dict)
    attention_entropy: list[float] = field(default_factory=list)
    attention_entropy_by_layer: list[list[float]] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    eval_metrics: list[dict[str, float]] = field(default_factory=list)
    wall_time: list[float] = field(default_factory=list)

    def eval_series(self, key: str) -> list[float]:
        """The values of one evaluation metric, aligned with :attr:`eval_step`."""
        if self.eval_metrics and key not in self.eval_metrics[0]:
            raise KeyError(f"no eval metric {key!r}; recorded: {sorted(self.eval_metrics[0])}")
        return [metrics[key] for metrics in self.eval_metrics]

    @property
    def final_loss(self) -> float:
        """Loss of the last step (``nan`` before any step)."""
        return self.loss[-1] if self.loss else math.nan


def _model_device(model: nn.Module) -> torch.device | None:
    """Device of the model's first parameter (or buffer); ``None`` for a model with neither."""
    for tensor in (*model.parameters(), *model.buffers()):
        return tensor.device
    return None


def _to_device(batch: Any, device: torch.device | None) -> Any:
    """Move every tensor of ``batch`` (a tensor, or tuples, lists and dicts of them) to ``device``."""
    if device is None:
        return batch
    if isinstance(batch, Tensor):
        return batch.to(device)
    if isinstance(batch, Mapping):
        return {key: _to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, (tuple, list)):
        items = [_to_device(item, device) for item in batch]
        return type(batch)(*items) if hasattr(batch, "_fields") else type(batch)(items)  # namedtuples too
    return batch


def _call_model(model: nn.Module, inputs: Any) -> Any:
    if isinstance(inputs, Tensor):
        return model(inputs)
    if isinstance(inputs, Mapping):
        return model(**inputs)
    if isinstance(inputs, Sequence):
        return model(*inputs)
    raise TypeError(
        f"make_batch must return (inputs, targets) with inputs a Tensor, tuple or dict; got {type(inputs).__name__}"
    )


def _split_output(output: Any) -> tuple[Tensor, list[Tensor] | None]:
    if isinstance(output, Tensor):
        return output, None
    if isinstance(output, (tuple, list)) and output and isinstance(output[0], Tensor):
        attention = output[1] if len(output) > 1 else None
        if attention is None:
            return output[0], None
        if isinstance(attention, Tensor):
            return output[0], [attention]
        if isinstance(attention, (tuple, list)) and all(isinstance(a, Tensor) for a in attention):
            return output[0], list(attention)
    raise TypeError(
        "the model must return logits or (logits, attention) with attention None, a tensor or a list of "
        f"tensors; got {type(output).__name__}"
    )


def _total_norm(model: nn.Module) -> float:
    norms = [p.grad.detach().float().norm() for p in model.parameters() if p.grad is not None]
    return torch.linalg.vector_norm(torch.stack(norms)).item() if norms else 0.0


def train(
    model: nn.Module,
    make_batch: Callable[[int], tuple[Any, Tensor]],
    *,
    steps: int,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    warmup_steps: int = 0,
    lr_decay: str = "none",
    clip_grad_norm: float | None = None,
    loss_fn: Callable[[Tensor, Tensor], Tensor] = cross_entropy_loss,
    accuracy_fn: Callable[[Tensor, Tensor], float] | None = token_accuracy,
    eval_fn: Callable[[nn.Module], Mapping[str, float] | float] | None = None,
    eval_every: int = 100,
    record_grad_norms: bool = False,
    record_attention_entropy: bool = False,
    seed: int = 0,
    callback: Callable[[int, nn.Module, TrainingHistory], bool | None] | None = None,
) -> TrainingHistory:
    """Train ``model`` with AdamW on batches from ``make_batch``; return what happened.

    Each step: set the learning rate (warm-up and decay, :func:`lr_schedule`), draw
    ``make_batch(step)`` and move its tensors (also inside tuples, lists and dicts) to the
    device of the model's parameters, run the model (see the module docstring for the contract), compute
    ``loss_fn``, back-propagate, record the gradient norm, clip it to ``clip_grad_norm`` if
    given, and take an AdamW step (Loshchilov & Hutter, 2019). Every ``eval_every`` steps and
    after the last one, ``eval_fn(model)`` runs with the model in eval mode and under
    ``torch.no_grad()``; the model is back in train mode afterwards. Used by every chapter;
    its knobs (warm-up, clipping, entropy and gradient-norm monitoring) are explained in
    chapter 6.

    Args:
        model: The model to train (in place).
        make_batch: ``step -> (inputs, targets)``.
        steps: Number of optimisation steps.
        lr: Peak learning rate.
        weight_decay: AdamW's decoupled weight decay.
        warmup_steps: Linear warm-up length (0 for none).
        lr_decay: Decay after warm-up: ``"none"``, ``"linear"`` or ``"cosine"`` (to 0 at ``steps``).
        clip_grad_norm: Clip the total gradient norm to this value (``None`` for no clipping).
        loss_fn: ``(logits, targets) -> scalar loss``.
        accuracy_fn: ``(logits, targets) -> float`` for the batch accuracy, or ``None``; it is
            skipped (``nan``) when the targets are not integer class indices.
        eval_fn: ``model -> {name: value}`` (or one float, stored as ``"eval"``).
        eval_every: Evaluation period in steps.
        record_grad_norms: Record each parameter's gradient norm per step
            (:class:`~helpers.diagnostics.GradientNormTracker`).
        record_attention_entropy: Record the entropy of the attention the model returns.
        seed: Passed to :func:`set_seed` before the first batch (it fixes dropout and any
            global-RNG sampling in ``make_batch``; build the model after ``set_seed`` to fix
            its initialisation too).
        callback: ``(step, model, history) -> stop?`` called after every step, once the step is
            recorded; the gradients of the step are still in ``.grad``. Returning ``True`` ends
            training early.

    Returns:
        A :class:`TrainingHistory`.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if not isinstance(warmup_steps, int) or warmup_steps < 0:
        raise ValueError(f"warmup_steps must be an int >= 0, got {warmup_steps!r}")
    if clip_grad_norm is not None and not clip_grad_norm > 0:
        raise ValueError(f"clip_grad_norm must be > 0 or None, got {clip_grad_norm}")
    if lr_decay not in ("none", "linear", "cosine"):
        raise ValueError(f"lr_decay must be 'none', 'linear' or 'cosine', got {lr_decay!r}")
    if not isinstance(eval_every, int) or eval_every < 1:
        raise ValueError(f"eval_every must be a positive int, got {eval_every!r}")

    set_seed(seed)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model has no parameters that require gradients")
    device = _model_device(model)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    history = TrainingHistory()
    tracker = GradientNormTracker(model) if record_grad_norms else None
    if tracker is not None:
        tracker.__enter__()
    model.train()
    start = time.perf_counter()
    eval_seconds = 0.0  # wall_time counts training only
    try:
        for step in range(steps):
            step_lr = lr_schedule(step, lr=lr, steps=steps, warmup_steps=warmup_steps, decay=lr_decay)
            for group in optimizer.param_groups:
                group["lr"] = step_lr
            inputs, targets = _to_device(make_batch(step), device)  # the batch goes where the model is
            logits, attention = _split_output(_call_model(model, inputs))
            loss = loss_fn(logits, targets)
            optimizer.zero_grad(set_to_none=True)
            if tracker is not None:
                tracker.clear()
            loss.backward()

            history.step.append(step)
            history.loss.append(loss.item())
            history.lr.append(step_lr)
            with torch.no_grad():
                if accuracy_fn is not None and isinstance(targets, Tensor) and not targets.is_floating_point():
                    history.accuracy.append(accuracy_fn(logits, targets))
                else:
                    history.accuracy.append(math.nan)
                if record_attention_entropy:
                    if attention is None:
                        raise ValueError(
                            "record_attention_entropy=True needs a model that returns (logits, attention); "
                            "this model returned no attention"
                        )
                    per_layer = [attention_entropy(a.detach()).mean().item() for a in attention]
                    history.attention_entropy_by_layer.append(per_layer)
                    history.attention_entropy.append(sum(per_layer) / len(per_layer))
            if tracker is not None:
                latest = tracker.latest()
                for name, _ in model.named_parameters():
                    if name in latest or name in history.grad_norms:
                        history.grad_norms.setdefault(name, [math.nan] * step).append(latest.get(name, math.nan))

            history.grad_norm.append(_total_norm(model))
            if clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(params, clip_grad_norm)
                history.clipped_grad_norm.append(_total_norm(model))
            else:
                history.clipped_grad_norm.append(history.grad_norm[-1])
            optimizer.step()
            history.wall_time.append(time.perf_counter() - start - eval_seconds)

            if eval_fn is not None and ((step + 1) % eval_every == 0 or step == steps - 1):
                eval_start = time.perf_counter()
                model.eval()
                with torch.no_grad():
                    metrics = eval_fn(model)
                model.train()
                if isinstance(metrics, Mapping):
                    history.eval_metrics.append({key: float(value) for key, value in metrics.items()})
                else:
                    history.eval_metrics.append({"eval": float(metrics)})
                history.eval_step.append(step)
                eval_seconds += time.perf_counter() - eval_start
            if callback is not None and callback(step, model, history):
                break
    finally:
        if tracker is not None:
            tracker.remove()
    return history
