"""Checkers for the exercises of chapter 2, "Why a dot product" (``notebooks/02-dot-product-lab.ipynb``).

One module an exercise, in :mod:`helpers.exercises.dot_product`; each states the exercise's contract:

- :func:`.check_dot_scores`: dot-product scores as one batched matrix product.
- :func:`.check_dot_flops`: the operation count of ``Q K^T``.
- :func:`.check_euclidean_scores`: minus the squared Euclidean distance, a usable score.
- :func:`.check_vectorised_cosine`: a looped cosine similarity (:func:`.looped_cosine_scores`), vectorised.
- :func:`.check_why_additive_is_slower`: reading the measured cost table, a choice among stated
  mechanisms (:func:`.additive_options`), with feedback on each.
- :func:`.check_cosine_bound`: predict, before a run, the most weight cosine scores can give one slot.
- :func:`.check_temperature_ablation`: design the run that tells whether the cosine's trouble is its
  bounded range or its division by lengths.

Every checker runs the reader's code under the guard (:mod:`helpers.exercises.guard`): an answer that reaches
a function of the package (or, for the cosine, PyTorch's ``cosine_similarity``), by whatever route, is refused,
naming the function. Named seeded cases and one fresh case (:mod:`helpers.exercises.cases`); the experiments
are the checkers' own runs (:mod:`helpers.experiments.cosine_runs`). Each checker takes ``language``
(``"en"``, ``"zh"``) and writes its verdict from ``helpers.exercises.catalogue.ch02``.
"""

from __future__ import annotations

from .catalogue.ch02 import MESSAGES
from .dot_product.additive_choice import ADDITIVE_OPTIONS, additive_options, check_why_additive_is_slower
from .dot_product.cosine import SPEEDUP_REQUIRED, check_vectorised_cosine, looped_cosine_scores
from .dot_product.cosine_bound import check_cosine_bound
from .dot_product.dot_scores import check_dot_scores
from .dot_product.euclidean import check_euclidean_scores
from .dot_product.flops import check_dot_flops
from .dot_product.temperature import check_temperature_ablation

__all__ = ["check_dot_scores", "check_dot_flops", "check_euclidean_scores", "check_vectorised_cosine",
           "looped_cosine_scores", "SPEEDUP_REQUIRED", "ADDITIVE_OPTIONS", "additive_options",
           "check_why_additive_is_slower", "check_cosine_bound", "check_temperature_ablation", "MESSAGES"]
