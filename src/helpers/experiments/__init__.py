"""The chapters' experiments: each module computes one measurement and returns its numbers.

Nothing here draws: the figures and tables of an experiment are in the :mod:`helpers.figures`
module of the same name. Every experiment is seeded and sized for a CPU.

Chapter 1, why attention:
    ``seq2seq_training`` (training the GRU encoder-decoders), ``bottleneck`` (accuracy against
    length), ``alignments`` (where attention looked, and what the output depends on),
    ``gradient_paths`` (path length, measured), ``parallelism`` (sequential steps, counted and timed).
Chapters 2 and 3, the recall experiment they share:
    ``recall`` (one attention layer that looks a key up, with any score function and scale).
Chapter 2, why a dot product:
    ``score_geometry``, ``score_cost``, ``score_stability``, ``score_learning``.
Chapter 3, why scale by sqrt(d_k):
    ``dot_variance``, ``saturation``, ``qk_gradient``, ``logit_scale``, ``scale_training``,
    ``temperature``, ``scale_bug``.
Chapter 4, why many heads:
    ``heads`` (the mechanics, traced and counted), ``heads_training`` (trained tiny models),
    ``heads_robustness`` (one bad head during training, and a broken head fine-tuned),
    ``heads_real`` (the heads of a real model), ``heads_real_ablation`` (its heads removed, on paraphrases).
Chapter 5, variants:
    ``cross_attention`` (self, cross and encoder-decoder attention), ``causal_masking`` (the causal
    mask, its absence, how masks are applied), ``efficient_cost`` and ``efficient_accuracy`` (what
    efficient attention saves and what it loses), ``vision_attention`` (SE and CBAM).
Chapter 6, pitfalls:
    ``map_reading`` (what an attention map can and cannot tell), ``training_failures`` (Post-LN,
    warm-up, initialisation, entropy collapse), ``position`` (permutation equivariance, encodings,
    length extrapolation), ``rope_extrapolation`` (RoPE's scaling rules on the position toy, and
    the rotation angles training never saw), ``attention_sinks`` (StreamingLLM's sink cache against
    window and full caches on a tiny trained decoder).
The runs the labs' checkers train themselves (:mod:`helpers.exercises`):
    ``mystery_alignments`` (lab 1), ``cosine_runs`` (lab 2), ``broken_heads`` and ``post_ln_rescue`` (lab 6.1-6.2).
"""
