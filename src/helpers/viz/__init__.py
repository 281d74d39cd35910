"""Figures of the book: static Plotly figures with built-in sliders, live ipywidgets explorers, BertViz.

- Static interactive figures (work on the static site, no kernel): :func:`attention_heatmap`,
  :func:`softmax_temperature_explorer`, :func:`mask_gallery`, :func:`positional_encoding_explorer`,
  :func:`learned_position_explorer`, :func:`t5_bucket_explorer`, :func:`alibi_explorer`,
  :func:`training_replay`, :func:`line_sweep`, :func:`line_plot`, :func:`bar`. Each returns a
  ``plotly.graph_objects.Figure``; leave it last in a cell to show it.
- Live explorers (need a kernel; show their static figure on the site):
  :func:`softmax_explorer`, :func:`sentence_attention_explorer`.
- BertViz on the real model: :func:`load_attention_model`, :func:`head_view`, :func:`model_view`;
  :func:`weights_head_view` for weights computed elsewhere (chapter 7's decoder).
- :func:`captioned`: a figure with its one-sentence takeaway as a caption and a text alternative.
- :func:`show_source`: a helper's source as a highlighted listing.
- :func:`quiz`: a chapter's self-check quiz (multiple choice and numeric), answered in the page
  without a kernel.

Importing this package registers the ``"book"`` Plotly renderer and template and makes them
the defaults (:func:`setup_book`; on Colab the default renderer is ``"colab"``). See
``helpers.viz.renderer`` for why, and ``book/figures.md`` for how to read the figures.
"""

from .bertviz import head_view, load_attention_model, model_view, sentence_attention, weights_head_view
from .encodings import (
    alibi_explorer,
    learned_position_explorer,
    positional_encoding_explorer,
    recent_window,
    rope_table,
    t5_bucket_explorer,
)
from .explorers import Explorer, sentence_attention_explorer, softmax_explorer, softmax_scores
from .heatmaps import attention_heatmap, mask_gallery, training_replay
from .lines import bar, line_plot, line_sweep
from .quiz import Quiz, fill_glued, glued_keys, quiz, quiz_digest, quiz_problems
from .renderer import (
    BookRenderer,
    CaptionedFigure,
    captioned,
    describe_figure,
    figure_html,
    in_colab,
    mime_bundle,
    setup_book,
)
from .site import building_book
from .softmax import softmax_temperature_explorer, softmax_with_temperature
from .source import SourceListing, show_source
from .style import MASK_COLORSCALE, SIGNED_COLORSCALE, WEIGHT_COLORSCALE

__all__ = [
    "WEIGHT_COLORSCALE", "SIGNED_COLORSCALE", "MASK_COLORSCALE",
    "attention_heatmap", "mask_gallery", "training_replay",
    "softmax_temperature_explorer", "softmax_with_temperature",
    "positional_encoding_explorer", "rope_table", "learned_position_explorer", "t5_bucket_explorer",
    "alibi_explorer", "recent_window",
    "line_sweep", "line_plot", "bar",
    "Explorer", "softmax_explorer", "sentence_attention_explorer", "softmax_scores",
    "load_attention_model", "sentence_attention", "head_view", "model_view", "weights_head_view",
    "show_source", "SourceListing",
    "quiz", "Quiz", "quiz_digest", "quiz_problems", "fill_glued", "glued_keys",
    "captioned", "CaptionedFigure",
    "BookRenderer", "figure_html", "describe_figure", "mime_bundle", "in_colab", "setup_book", "building_book",
]

setup_book()
