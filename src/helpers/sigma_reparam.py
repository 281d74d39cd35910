"""σReparam, the spectral reparametrisation of a weight matrix (Zhai et al., 2023).

Every linear layer's weight ``W`` is used as ``W_hat = (gamma / sigma(W)) W``, where ``sigma(W)``
is the largest singular value of ``W`` (its spectral norm) and ``gamma`` a learnable scalar. The
spectral norm of the matrix the layer applies is then ``gamma``, whatever the optimiser does to
the entries of ``W``; for the query and key projections that bounds the attention logits' growth,
the cause of attention-entropy collapse that Zhai et al. study. As in their code
(``apple/ml-sigma-reparam``, ``vision/layers.py``), ``sigma`` comes from an SVD at creation and
then from one step of power iteration per forward pass in training mode, and ``gamma`` starts at
``sigma(W_0)``, so that the layer computes the same function as before at step 0.

Built on :func:`torch.nn.utils.parametrize.register_parametrization`: the module keeps its
weight as ``module.parametrizations.weight.original``, and ``module.weight`` returns ``W_hat``.
Explained in chapter 6, section 2 (entropy collapse, beside QK-norm).

Shape legend:
    O output features, I input features.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils import parametrize

__all__ = ["SigmaReparam", "sigma_reparam", "apply_sigma_reparam", "reparam_gammas"]


class SigmaReparam(nn.Module):
    """The parametrisation ``W -> (gamma / sigma(W)) W`` of one weight matrix.

    Args:
        weight: The weight it will parametrise, ``(O, I)``: its SVD gives the starting right
            singular vector ``u`` and ``gamma = sigma(W)``.

    Raises:
        ValueError: If ``weight`` is not a 2-D matrix.
    """

    def __init__(self, weight: Tensor) -> None:
        super().__init__()
        if not isinstance(weight, Tensor) or weight.dim() != 2:
            raise ValueError(f"weight must be a 2-D tensor (O, I), got {getattr(weight, 'shape', type(weight))}")
        with torch.no_grad():
            _, s, vh = torch.linalg.svd(weight.detach().float(), full_matrices=False)  # s: (min(O, I),), vh: (., I)
        self.register_buffer("u", vh[0].to(weight.dtype))  # (I,): right singular vector estimate
        self.gamma = nn.Parameter(s[0].to(weight.dtype).clone())  # (): the spectral norm the layer will have

    def sigma(self, weight: Tensor) -> Tensor:
        """One power-iteration step from the stored ``u``; returns ``v^T W u``, differentiable in ``W``.

        In training mode the new ``u`` is stored, so the estimate improves step by step as ``W`` moves.
        """
        with torch.no_grad():
            v = F.normalize(weight @ self.u, dim=0)  # (O, I) x (I,) -> (O,)
            u = F.normalize(weight.T @ v, dim=0)  # (I, O) x (O,) -> (I,)
            if self.training:
                self.u.copy_(u)
        return v @ weight @ u  # (O,) x (O, I) x (I,) -> (): the largest singular value, estimated

    def forward(self, weight: Tensor) -> Tensor:
        return self.gamma * weight / self.sigma(weight)  # (O, I)


def sigma_reparam(module: nn.Module, name: str = "weight") -> nn.Module:
    """Register :class:`SigmaReparam` on ``module.<name>`` (in place) and return the module.

    Args:
        module: A layer with a 2-D weight, such as :class:`torch.nn.Linear`.
        name: The parameter to reparametrise.

    Returns:
        ``module``, whose ``<name>`` now reads ``(gamma / sigma(W)) W``.

    Raises:
        ValueError: If ``module`` has no 2-D parameter called ``name``.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor) or weight.dim() != 2:
        raise ValueError(f"module must have a 2-D parameter {name!r}, got {type(module).__name__}.{name} = "
                         f"{getattr(weight, 'shape', weight)}")
    parametrize.register_parametrization(module, name, SigmaReparam(weight))
    return module


def apply_sigma_reparam(model: nn.Module) -> list[str]:
    """Reparametrise the weight of every :class:`torch.nn.Linear` in ``model``, as Zhai et al. do.

    Args:
        model: Any module; it is changed in place.

    Returns:
        The names of the linear layers reparametrised, in the order of ``named_modules``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    names = [name for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    for name in names:
        sigma_reparam(model.get_submodule(name))
    return names


def reparam_gammas(model: nn.Module) -> dict[str, float]:
    """The current ``gamma`` of every σReparam layer in ``model``, by layer name."""
    return {name: float(m.parametrizations.weight[0].gamma.detach()) for name, m in model.named_modules()
            if parametrize.is_parametrized(m, "weight") and isinstance(m.parametrizations.weight[0], SigmaReparam)}
