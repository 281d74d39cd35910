"""Checkers for the exercises of chapter 5, "Variants" (``notebooks/05-variants-lab.ipynb``).

One module an exercise, in :mod:`helpers.exercises.variants`; each states the exercise's contract:

- :func:`.check_sliding_window_attention`: a sliding window mask and attention from scratch.
- :func:`.check_linear_attention`: the reordering ``phi(Q) (phi(K)^T V)``, checked against the explicit kernel form,
  for the absence of an ``L x S`` matrix and for work that grows linearly with the length.
- :func:`.check_se_block`: squeeze, excite, scale (on pre-activations of both signs).
- :func:`.buggy_padded_attention`, :func:`.check_padding_fix`: the padding-mask bug hunt.
- :func:`.check_crossover`: the reader's timing of dense against windowed attention, checked against the checker's
  own measurement, and the crossover length predicted before (:data:`.CROSSOVER`).
- :func:`.check_causal_attention`: causal attention of ``L`` queries, the last ``L`` of ``S`` positions.
- :func:`.check_masked_scores`: scores with a boolean mask applied so that their softmax is right in float32,
  float16 and bfloat16, on fully masked rows and with two masks too (chapter 5.2).

Every package function is refused while an answer runs (except what an exercise names), and so are PyTorch's
fused attention and the other libraries' versions. The window and padding checkers include a case whose scores
are all about -100, where a finite fill such as -30 leaks (named). Each checker takes ``language`` (``"en"``,
``"zh"``) and writes its verdict from ``helpers.exercises.catalogue.ch05``.
"""

from __future__ import annotations

from .catalogue.ch05 import MESSAGES
from .variants.causal import check_causal_attention
from .variants.crossover import CROSSOVER, check_crossover
from .variants.linear import check_linear_attention
from .variants.masked_scores import check_masked_scores
from .variants.padding import buggy_padded_attention, check_padding_fix
from .variants.se_block import check_se_block
from .variants.window import check_sliding_window_attention

__all__ = ["check_sliding_window_attention", "check_linear_attention", "check_se_block", "buggy_padded_attention",
           "check_padding_fix", "check_crossover", "check_causal_attention", "check_masked_scores", "CROSSOVER",
           "MESSAGES"]
