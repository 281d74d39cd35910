"""Checkers for the exercises of chapter 4, "Why many heads" (``notebooks/04-multihead-lab.ipynb``).

One module an exercise, in :mod:`helpers.exercises.multihead`; each states the exercise's contract:

- :func:`.check_split_heads`, :func:`.check_merge_heads`: the two reshapes (``multihead.heads``).
- :func:`.check_multihead_attention`: the whole layer from scratch, with a layer's weights
  (``multihead.layer``, which also simulates the typical mistakes: ``view(B, H, L, E)`` without
  ``transpose``, a merge without the transpose back, heads concatenated in the wrong order, the scale of
  the whole model, biases forgotten, ``x @ W`` for ``x @ W.T``, the softmax over the queries...).
- :func:`.buggy_view_attention`, :func:`.check_view_fix`: the bug hunt (``multihead.view_fix``).
- :func:`.check_parameter_count`: parameters of a layer (MHA, GQA, MQA), by formula.
- :func:`.check_head_ablation`: the reader's ablation, and the prediction recorded before it.

Every function of the package is refused while an answer runs (the few a solution needs are allowed),
and so are PyTorch's fused attention and ``nn.MultiheadAttention``
(:data:`helpers.exercises.targets.ATTENTION`). Each checker takes ``language`` (``"en"``, ``"zh"``) and
writes its verdict from ``helpers.exercises.catalogue.ch04``.
"""

from __future__ import annotations

from .catalogue.ch04 import MESSAGES
from .multihead.ablation import ABLATION, check_head_ablation
from .multihead.heads import check_merge_heads, check_split_heads
from .multihead.layer import check_multihead_attention
from .multihead.parameter_count import check_parameter_count
from .multihead.view_fix import buggy_view_attention, check_view_fix

__all__ = ["check_split_heads", "check_merge_heads", "check_multihead_attention", "buggy_view_attention",
           "check_view_fix", "check_parameter_count", "check_head_ablation", "ABLATION", "MESSAGES"]
