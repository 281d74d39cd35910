"""One colour and one display name per score function, shared by chapter 2's figures.

The palette is the book template's colour sequence (:data:`helpers.viz.style.PALETTE`, Okabe-Ito,
chosen for colour-blind readers), named so that one score function keeps one colour in every
figure of chapter 2.
"""

from __future__ import annotations

from helpers.viz import style

__all__ = ["PALETTE", "SCORE_COLORS", "SCORE_LABELS"]

PALETTE: tuple[str, ...] = style.PALETTE
"""The book template's colour sequence."""

SCORE_COLORS: dict[str, str] = {
    "dot": style.BLUE, "cosine": style.VERMILLION, "neg_euclidean": style.GREEN, "general": style.PURPLE,
    "additive": style.ORANGE, "cosine_learned_scale": style.SKY, "distance": style.ORANGE,  # never beside additive
    "dot_unscaled": style.NEUTRAL,
}
"""One colour per score function, shared by the chapter's figures."""

SCORE_LABELS: dict[str, str] = {
    "dot": "dot (scaled)", "cosine": "cosine", "neg_euclidean": "−‖q−k‖²", "general": "general qᵀWk",
    "additive": "additive", "cosine_learned_scale": "cosine × learned scale", "dot_unscaled": "dot, unscaled",
}
"""Display names of the score functions of the learning experiment."""
