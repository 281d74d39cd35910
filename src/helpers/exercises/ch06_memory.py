"""Checkers for exercises 1-6 of chapter 6.3-6.6, "memory, decoding and position"
(``notebooks/06-memory-position-lab.ipynb``).

One module an exercise, in :mod:`helpers.exercises.memory_position`; each states the exercise's contract:

- :func:`.check_decode_step`: one KV-cache decoding step from scratch, against the full causal pass.
- :func:`.check_cache_bytes`: the KV cache of real model shapes, and of made-up ones, by formula.
- :func:`.check_rope`: RoPE from scratch, against a float64 rotation, and the offset property.
- :func:`.buggy_rope_attention`, :func:`.check_rope_fix`: the bug hunt (interleaved pairing with a half-split table,
  and RoPE applied to the values).
- :func:`.check_extrapolation_ranking`: the ranking of the encodings, recorded with :func:`.predict` before the run.
- :func:`.check_online_softmax`: attention one block of keys at a time with a running max and sum, and its peak memory.

Each checker takes ``language`` (``"en"``, ``"zh"``) and writes its verdict from
``helpers.exercises.catalogue.ch06_memory``.
"""

from __future__ import annotations

from .catalogue.ch06_memory import MESSAGES
from .memory_position.cache_bytes import check_cache_bytes
from .memory_position.decode import check_decode_step
from .memory_position.online_softmax import check_online_softmax
from .memory_position.ranking import RANKING, check_extrapolation_ranking
from .memory_position.rope import check_rope
from .memory_position.rope_fix import buggy_rope_attention, check_rope_fix
from .predictions import predict

__all__ = ["check_decode_step", "check_cache_bytes", "check_rope", "buggy_rope_attention", "check_rope_fix",
           "check_extrapolation_ranking", "check_online_softmax", "predict", "RANKING", "MESSAGES"]
