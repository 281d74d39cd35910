"""What lab 7's checkers share: the model they are given, attention weights drawn for a named case, the real
model's weights on sequences the checker draws itself."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ..reader import reject

__all__ = ["check_model", "random_weights", "model_weights"]


def check_model(model: Any) -> Any:
    """``model`` if it is the package's Llama (``load_smollm2()[0]``), else a
    ``Rejected``."""
    from helpers.llama import LlamaForCausalLM

    if not isinstance(model, LlamaForCausalLM):
        raise reject("ch07.not_a_model", type=type(model).__name__)
    return model


def random_weights(generator: torch.Generator, layers: int, batch: int, heads: int, length: int) -> Tensor:
    """Causal attention weights drawn at random (each row a softmax of normal scores over its keys).

    Shape:
        output: ``(N, B, H, L, L)``, each row summing to 1.
    """
    scores = 2 * torch.randn(layers, batch, heads, length, length, generator=generator, dtype=torch.float64)
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    return scores.masked_fill(~causal, float("-inf")).softmax(-1).float()  # (N, B, H, L, L)


@torch.no_grad()
def model_weights(model: Any, input_ids: Tensor) -> Tensor:
    """Every layer's attention weights of the model on ``input_ids``, stacked.

    Shape:
        input_ids: ``(B, L)``; output: ``(N, B, H, L, L)``.
    """
    out = model.run(input_ids, need_weights=True)
    return torch.stack([out.attentions[i] for i in range(len(model.layers))])  # (N, B, H, L, L)
