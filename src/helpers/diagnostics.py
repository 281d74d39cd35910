"""Diagnostics for attention: entropy, softmax saturation, gradient norms, attention rollout.

The instruments of chapters 3 and 6. Each one measures something that goes wrong in practice:
attention that collapses onto one token (entropy near 0) or spreads out uniformly (entropy near
``log S``); softmax saturation, where the Jacobian ``diag(p) - p p^T`` and with it the gradient
vanish; layers whose gradients explode or die; and the question "which input did this output
come from?" across layers (rollout).

Shape legend:
    B: batch size
    H: number of heads
    L: number of queries (target length)
    S: number of keys (source length); a softmax row has S entries
    ...: any leading dimensions
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .checks import check_tensor

__all__ = [
    "attention_entropy",
    "SaturationStats",
    "saturation_stats",
    "softmax_jacobian",
    "softmax_jacobian_norm",
    "GradientNormTracker",
    "attention_rollout",
    "norm_weighted_attention",
]


def attention_entropy(weights: Tensor, *, normalized: bool = False, average_queries: bool = True) -> Tensor:
    """Shannon entropy of attention distributions, in nats, per head.

    ``H(p) = -sum_s p_s log p_s`` for every query row, with ``0 log 0 = 0`` (so masked keys with
    weight exactly 0 do not count). A uniform row over S keys has entropy ``log S``, a one-hot
    row has 0. With ``normalized=True`` the entropy is divided by ``log S`` and lies in
    ``[0, 1]``, comparable across sequence lengths (a row with ``S = 1`` gives 0). Collapsing
    entropy during training is an early sign of attention-logit growth (chapter 6). Explained
    in chapters 3 and 6.

    Args:
        weights: Attention weights, non-negative, each row along the last axis summing to 1 (a
            fully masked row of zeros is allowed and has entropy 0).
        normalized: Divide by ``log S``.
        average_queries: Average over the query axis (``-2``), giving one number per head; with
            ``False`` one number per query row is returned.

    Returns:
        The entropies in float32.

    Shape:
        weights: ``(..., L, S)``, e.g. ``(B, H, L, S)``.
        output: ``(...)`` e.g. ``(B, H)``, or ``(..., L)`` when ``average_queries=False``.

    Raises:
        ValueError: if ``weights`` has negative or non-finite entries, or rows that sum to
            neither 1 nor 0 (these are scores, not weights: apply softmax first).
    """
    check_tensor("weights", weights, min_dim=2)
    p = weights.float()
    if p.device.type != "meta":  # the meta device has shapes but no values to check
        if not torch.isfinite(p).all() or (p < 0).any():
            raise ValueError(
                f"weights must be finite and non-negative (got shape {tuple(weights.shape)}, "
                f"min {p.min().item():.4g}); pass softmax probabilities, not scores"
            )
        sums = p.sum(-1)
        bad = ((sums - 1).abs() > 1e-3) & (sums.abs() > 1e-6)
        if bad.any():
            raise ValueError(
                f"rows of weights must sum to 1 (or 0 when fully masked); got row sums such as "
                f"{sums[bad].flatten()[0].item():.4g} in weights of shape {tuple(weights.shape)}"
            )
    entropy = -torch.special.xlogy(p, p).sum(-1)  # (..., L)
    if normalized:
        size = weights.shape[-1]
        entropy = entropy / math.log(size) if size > 1 else torch.zeros_like(entropy)
    return entropy.mean(-1) if average_queries else entropy


@dataclass(frozen=True)
class SaturationStats:
    """How saturated a batch of softmax rows is (see :func:`saturation_stats`).

    Attributes:
        max_weight: Mean over rows of the largest weight of the row.
        saturated_fraction: Fraction of rows whose largest weight exceeds the threshold.
        entropy: Mean entropy of the rows, in nats.
        normalized_entropy: Mean entropy divided by ``log S``.
        jacobian_norm: Mean Frobenius norm of the softmax Jacobian of the rows: how much
            gradient flows back through the softmax (0 when saturated).
        threshold: The threshold used for ``saturated_fraction``.
    """

    max_weight: float
    saturated_fraction: float
    entropy: float
    normalized_entropy: float
    jacobian_norm: float
    threshold: float


def saturation_stats(scores: Tensor, *, threshold: float = 0.99) -> SaturationStats:
    """Summarise how saturated ``softmax(scores)`` is, row by row along the last axis.

    When scores grow (unscaled dot products with a large ``d_k``), the softmax puts almost all
    its weight on one key: the largest weight nears 1, entropy nears 0, and the Jacobian
    ``diag(p) - p p^T`` nears 0, so no gradient reaches the scores. This is the argument for
    dividing by ``sqrt(d_k)`` (Vaswani et al., 2017). Explained in chapter 3.

    Args:
        scores: Attention scores (logits); ``-inf`` marks a masked key, but each row needs at
            least one finite score.
        threshold: A row counts as saturated when its largest weight exceeds this (in (0, 1)).

    Returns:
        A :class:`SaturationStats` of Python floats.

    Shape:
        scores: ``(..., S)``.
    """
    check_tensor("scores", scores, min_dim=1)
    if not 0 < threshold < 1:
        raise ValueError(f"threshold must be in (0, 1), got {threshold}")
    logits = scores.float()
    if torch.isnan(logits).any() or (logits == math.inf).any():
        raise ValueError(f"scores must not contain NaN or +inf (shape {tuple(scores.shape)})")
    if (logits == -math.inf).all(-1).any():
        raise ValueError(f"every row of scores needs at least one finite entry (shape {tuple(scores.shape)})")
    p = torch.softmax(logits, dim=-1)  # (..., S)
    top = p.amax(-1)  # (...)
    entropy = -torch.special.xlogy(p, p).sum(-1)  # (...)
    size = scores.shape[-1]
    normalized = entropy / math.log(size) if size > 1 else torch.zeros_like(entropy)
    return SaturationStats(
        max_weight=top.mean().item(),
        saturated_fraction=(top > threshold).float().mean().item(),
        entropy=entropy.mean().item(),
        normalized_entropy=normalized.mean().item(),
        jacobian_norm=softmax_jacobian_norm(logits).mean().item(),
        threshold=threshold,
    )


def softmax_jacobian(logits: Tensor) -> Tensor:
    """Jacobian of softmax along the last axis: ``J = diag(p) - p p^T``.

    ``J[i, j] = d p_i / d z_j = p_i (delta_ij - p_j)``. When ``p`` is one-hot, ``J = 0``: a
    saturated softmax passes back no gradient. Computed in float32. Explained in chapter 3.

    Args:
        logits: Scores ``z``.

    Returns:
        The Jacobian for every row.

    Shape:
        logits: ``(..., S)``; output: ``(..., S, S)``.
    """
    check_tensor("logits", logits, min_dim=1)
    p = torch.softmax(logits.float(), dim=-1)  # (..., S)
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., S, S)


def softmax_jacobian_norm(logits: Tensor, *, ord: str = "fro") -> Tensor:
    """Norm of the softmax Jacobian of every row: how much gradient the softmax lets through.

    ``"fro"`` is the Frobenius norm, ``sqrt(sum_i p_i^2 (1 - p_i)^2 + sum_{i != j} p_i^2 p_j^2)``;
    ``"spectral"`` is the largest singular value. Both are at most ``1`` (well below for any real
    row) and go to 0 as the softmax saturates. Explained in chapter 3.

    Args:
        logits: Scores.
        ord: ``"fro"`` or ``"spectral"``.

    Returns:
        One norm per row, float32.

    Shape:
        logits: ``(..., S)``; output: ``(...)``.
    """
    if ord not in ("fro", "spectral"):
        raise ValueError(f"ord must be 'fro' or 'spectral', got {ord!r}")
    jac = softmax_jacobian(logits)  # (..., S, S)
    if ord == "fro":
        return torch.linalg.matrix_norm(jac, ord="fro")
    return torch.linalg.matrix_norm(jac, ord=2)


class GradientNormTracker:
    """Record the gradient norm of every parameter (or every layer) at each backward pass.

    A context manager: on entry it registers a post-accumulate-grad hook on each parameter that
    requires a gradient; each time a backward pass accumulates into ``param.grad`` the hook
    appends ``||param.grad||_2`` to :attr:`history`. On exit every hook is removed. The norms are
    of ``.grad`` right after accumulation, before any clipping or optimizer step, so they are
    what the optimizer would see without clipping. Use it to spot exploding or vanishing
    gradients per layer, e.g. Post-LN vs Pre-LN (chapter 6).

    Example::

        with GradientNormTracker(model) as tracker:
            loss.backward()
        tracker.latest()          # {"encoder.weight_ih_l0": 0.31, ...}
        tracker.layer_norms()     # {"encoder": 0.52, ...} combined per module

    Args:
        model: The module whose parameters to watch (named by ``model.named_parameters()``).

    Attributes:
        history: Parameter name to the list of its gradient norms, one per backward pass in which
            the parameter received a gradient.
    """

    def __init__(self, model: nn.Module) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        self.model = model
        self.history: dict[str, list[float]] = {}
        self._handles: list[torch.utils.hooks.RemovableHandle] = []

    def _make_hook(self, name: str) -> Callable[[Tensor], None]:
        def hook(param: Tensor) -> None:
            grad = param.grad
            if grad is not None:
                self.history.setdefault(name, []).append(grad.detach().float().norm().item())

        return hook

    def __enter__(self) -> GradientNormTracker:
        if self._handles:
            raise RuntimeError("GradientNormTracker is already active; leave it before entering again")
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self._handles.append(param.register_post_accumulate_grad_hook(self._make_hook(name)))
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()

    def remove(self) -> None:
        """Remove every hook (called on leaving the ``with`` block)."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    @property
    def active(self) -> bool:
        """Whether hooks are currently registered."""
        return bool(self._handles)

    def latest(self) -> dict[str, float]:
        """Last recorded gradient norm of each parameter that has received a gradient."""
        return {name: norms[-1] for name, norms in self.history.items()}

    def layer_norms(self) -> dict[str, float]:
        """Last gradient norms combined per module: ``sqrt(sum of squared parameter norms)``.

        A parameter ``"encoder.layers.0.weight"`` belongs to layer ``"encoder.layers.0"``; a
        parameter of the root module to layer ``""``.
        """
        squares: dict[str, float] = {}
        for name, norm in self.latest().items():
            layer = name.rpartition(".")[0]
            squares[layer] = squares.get(layer, 0.0) + norm**2
        return {layer: math.sqrt(total) for layer, total in squares.items()}

    def clear(self) -> None:
        """Forget the recorded history (the hooks stay)."""
        self.history = {}


def attention_rollout(
    attentions: Sequence[Tensor] | Tensor, *, add_residual: bool = True, head_fusion: str = "mean"
) -> Tensor:
    """Attention rollout (Abnar & Zuidema, 2020): how much each output token draws on each input.

    Per layer, fuse the heads (mean by default), and with ``add_residual`` account for the
    residual connection as ``A' = 0.5 A + 0.5 I`` re-normalised per row. Then multiply through
    the layers, first layer innermost: ``R = A'_N ... A'_2 A'_1``. Row ``i`` of ``R`` is a
    distribution over the input tokens: an estimate, not an explanation (chapter 6 shows
    where it misleads). Explained in chapter 6.

    Args:
        attentions: One weight tensor per layer, first layer first, e.g. the ``attentions`` a
            Hugging Face model returns with ``output_attentions=True``; or one stacked tensor.
        add_residual: Mix in the identity for the residual stream.
        head_fusion: ``"mean"``, ``"max"`` or ``"min"`` over heads.

    Returns:
        The rolled-out attention, float32.

    Shape:
        attentions: a sequence of N tensors ``(B, H, L, L)``, or ``(N, B, H, L, L)``.
        output: ``(B, L, L)``.
    """
    if isinstance(attentions, Tensor):
        if attentions.dim() != 5:
            raise ValueError(
                f"attentions as one tensor must be (num_layers, B, H, L, L), got shape {tuple(attentions.shape)}"
            )
        layers = list(attentions.unbind(0))
    else:
        layers = list(attentions)
    if not layers:
        raise ValueError("attentions must hold at least one layer")
    if head_fusion not in ("mean", "max", "min"):
        raise ValueError(f"head_fusion must be 'mean', 'max' or 'min', got {head_fusion!r}")
    shape = layers[0].shape if isinstance(layers[0], Tensor) else None
    for index, layer in enumerate(layers):
        check_tensor(f"attentions[{index}]", layer, min_dim=4)
        if layer.dim() != 4 or layer.shape[-1] != layer.shape[-2] or layer.shape != shape:
            raise ValueError(
                f"every layer of attentions must be (B, H, L, L) with one shape; "
                f"layer 0 is {tuple(shape)}, layer {index} is {tuple(layer.shape)}"
            )
    eye = torch.eye(shape[-1], device=layers[0].device)
    rollout = None
    for layer in layers:
        heads = layer.float()
        if head_fusion == "mean":
            fused = heads.mean(1)  # (B, L, L)
        elif head_fusion == "max":
            fused = heads.amax(1)  # (B, L, L)
        else:
            fused = heads.amin(1)  # (B, L, L)
        if add_residual:
            fused = 0.5 * fused + 0.5 * eye  # (B, L, L)
            fused = fused / fused.sum(-1, keepdim=True)
        rollout = fused if rollout is None else fused @ rollout  # (B, L, L) x (B, L, L) -> (B, L, L)
    return rollout


def norm_weighted_attention(weights: Tensor, values: Tensor, output_weight: Tensor | None = None) -> Tensor:
    """How much each attended token actually moves the output: ``||alpha_ij f(x_j)||``.

    A head's output for query ``i`` is ``sum_j alpha_ij f(x_j)`` with ``f(x_j) = v_j W^O_h`` (the
    value vector carried through the head's block of the output projection). A large weight on a
    token whose transformed vector is short adds almost nothing: Kobayashi et al. (2020),
    "Attention is Not Only a Weight", show that BERT's heavy attention to [CLS], [SEP] and
    punctuation mostly carries such short vectors. This returns ``alpha_ij * ||f(x_j)||`` per
    head; divide by its row sum to compare it with the weights. Explained in chapter 6.

    Args:
        weights: Attention weights ``alpha`` of each head.
        values: Each head's value vectors ``v_j``.
        output_weight: The output projection's weight, as ``nn.Linear`` stores it
            (``(D, H * E)``); head ``h`` uses columns ``h*E .. (h+1)*E - 1``. ``None`` uses
            ``||v_j||`` alone.

    Returns:
        ``alpha_ij * ||f(x_j)||`` in float32.

    Shape:
        weights: ``(B, H, L, S)``; values: ``(B, H, S, E)``; output_weight: ``(D, H * E)``;
        output: ``(B, H, L, S)``.
    """
    check_tensor("weights", weights, min_dim=4)
    check_tensor("values", values, min_dim=4)
    if weights.dim() != 4 or values.dim() != 4 or weights.shape[:2] != values.shape[:2] \
            or weights.shape[-1] != values.shape[-2]:
        raise ValueError(
            f"weights must be (B, H, L, S) and values (B, H, S, E) with the same B, H and S; "
            f"got weights {tuple(weights.shape)} and values {tuple(values.shape)}"
        )
    v = values.float()
    if output_weight is not None:
        heads, head_dim = values.shape[1], values.shape[-1]
        if output_weight.dim() != 2 or output_weight.shape[1] != heads * head_dim:
            raise ValueError(
                f"output_weight must be (D, H * E) = (D, {heads * head_dim}), got {tuple(output_weight.shape)}"
            )
        blocks = output_weight.float().T.reshape(heads, head_dim, -1)  # (H, E, D): head h's rows of W^O
        v = torch.einsum("bhse,hed->bhsd", v, blocks)  # (B, H, S, E) x (H, E, D) -> (B, H, S, D)
    norms = v.norm(dim=-1)  # (B, H, S)
    return weights.float() * norms.unsqueeze(-2)  # (B, H, L, S) x (B, H, 1, S)
