"""Checkers for the exercises of chapter 6, sections 1-2 (``notebooks/06-training-lab.ipynb``).

One module an exercise, in :mod:`helpers.exercises.training`; each states the exercise's contract:

- :func:`.check_head_entropy`: attention entropy per head from scores and a padding mask.
- :func:`.check_rollout`: attention rollout (Abnar & Zuidema, 2020) from the weights of each layer.
- :func:`.train_broken_heads`, :func:`.check_broken_heads`: a model trained with one collapsed and one dead head
  (:mod:`helpers.experiments.broken_heads`), and the reader's search for them in its entropy monitor.
- :func:`.buggy_pre_ln_block`, :func:`.check_pre_ln_fix`: the LayerNorm bug hunt.
- :func:`.check_post_ln_fix`: the reader's settings that rescue a Post-LN run that fails (trained by the checker,
  :mod:`helpers.experiments.post_ln_rescue`), the mechanism (a choice among :data:`.MECHANISMS`), and the prediction
  recorded before.

Each checker takes ``language`` (``"en"``, ``"zh"``) and writes its verdict from
``helpers.exercises.catalogue.ch06_training``.
"""

from __future__ import annotations

from ..experiments.broken_heads import BrokenHeadsRun, train_broken_heads
from .catalogue.ch06_training import MESSAGES
from .predictions import predict
from .training.broken_heads import check_broken_heads
from .training.entropy import check_head_entropy
from .training.post_ln import FAILING_SETTINGS, MECHANISMS, SETTING_RANGES, WARMUP_PREDICTION, check_post_ln_fix
from .training.pre_ln import buggy_pre_ln_block, check_pre_ln_fix
from .training.rollout import check_rollout

__all__ = ["check_head_entropy", "check_rollout", "BrokenHeadsRun", "train_broken_heads", "check_broken_heads",
           "buggy_pre_ln_block", "check_pre_ln_fix", "FAILING_SETTINGS", "SETTING_RANGES", "MECHANISMS",
           "WARMUP_PREDICTION", "predict", "check_post_ln_fix", "MESSAGES"]
