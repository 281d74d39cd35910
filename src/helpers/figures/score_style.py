"""One colour and one display name per score function, shared by chapter 2's figures.

The palette is the book template's default colour sequence (:mod:`helpers.viz`), named so that
one score function keeps one colour in every figure of chapter 2.
"""

from __future__ import annotations

__all__ = ["PALETTE", "SCORE_COLORS", "SCORE_LABELS"]

PALETTE: tuple[str, ...] = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")
"""The book template's colour sequence."""

SCORE_COLORS: dict[str, str] = {
    "dot": PALETTE[0], "cosine": PALETTE[1], "neg_euclidean": PALETTE[2], "general": PALETTE[3],
    "additive": PALETTE[4], "cosine_learned_scale": PALETTE[6], "distance": PALETTE[5], "dot_unscaled": PALETTE[7],
}
"""One colour per score function, shared by the chapter's figures."""

SCORE_LABELS: dict[str, str] = {
    "dot": "dot (scaled)", "cosine": "cosine", "neg_euclidean": "−‖q−k‖²", "general": "general qᵀWk",
    "additive": "additive", "cosine_learned_scale": "cosine × learned scale", "dot_unscaled": "dot, unscaled",
}
"""Display names of the score functions of the learning experiment."""
