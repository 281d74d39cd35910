"""Checkers for exercises 7-9 of chapter 6.3-6.6, "Long context in practice"
(``notebooks/06-memory-position-lab.ipynb``).

One module an exercise, in :mod:`helpers.exercises.memory_position`; each states the exercise's contract:

- :func:`.check_position_interpolation`: RoPE with position interpolation (Chen et al., 2023, section 2.3, Eq. 4).
- :func:`.check_sink_prediction`: which caches keep a small RoPE model working past its window (full, window only,
  window + sinks), recorded with :func:`.predict` before the run; one of the runs is trained again.
- :func:`.check_rolling_cache`: the memory of a rolling KV cache in GiB, on Mistral 7B's shape and on made-up ones.

Each checker takes ``language`` (``"en"``, ``"zh"``) and writes its verdict from
``helpers.exercises.catalogue.ch06_long_context``.
"""

from __future__ import annotations

from .catalogue.ch06_long_context import MESSAGES
from .memory_position.interpolation import check_position_interpolation
from .memory_position.rolling_cache import MISTRAL_7B, check_rolling_cache
from .memory_position.sinks import CACHE_CHOICES, SINK_CACHES, WORKING_DROP, check_sink_prediction
from .predictions import predict

__all__ = ["check_position_interpolation", "check_sink_prediction", "check_rolling_cache", "predict",
           "SINK_CACHES", "CACHE_CHOICES", "WORKING_DROP", "MISTRAL_7B", "MESSAGES"]
