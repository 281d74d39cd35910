"""Checkers for the exercises of chapter 7, "One real LLM, every why" (``notebooks/07-llm-lab.ipynb``).

One module an exercise, in ``helpers.exercises.llm``; each states the exercise's contract:

- :func:`.check_induction_scores`: every head's induction score from the weights of sequences written twice, on
  random weights and on SmolLM2-135M's own, on random sequences the checker draws itself (``llm.induction``).
- :func:`.check_sink_share`: each layer's weight on the first token, after a prediction recorded with
  :func:`.predict`; the checker measures it on a passage it draws itself (``llm.sink_share``).
- :func:`.check_cache_size`: the KV cache of a Llama configuration for a given context, by formula, then against
  the model's caches filled with a context the checker draws (``llm.cache_size``).

Every function of the package is refused while an answer runs. Each checker takes ``language`` (``"en"``,
``"zh"``) and writes its verdict from ``helpers.exercises.catalogue.ch07``.
"""

from __future__ import annotations

from .catalogue.ch07 import MESSAGES
from .llm.cache_size import check_cache_size
from .llm.induction import check_induction_scores
from .llm.sink_share import CLOSE, SINK_SHARE, check_sink_share
from .predictions import predict

__all__ = ["check_induction_scores", "check_sink_share", "check_cache_size", "predict", "SINK_SHARE", "CLOSE",
           "MESSAGES"]
