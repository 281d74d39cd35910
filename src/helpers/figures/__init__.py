"""The chapters' figures and tables, drawn from the results of the experiments.

One module per experiment module of ``helpers.experiments``, with the same name (``dot_variance``
draws what ``experiments.dot_variance`` measured); ``style`` and ``score_style`` hold what several
of them share. The drawing primitives (heatmaps, line sweeps, sliders) are in ``helpers.viz``.
Nothing here trains or measures.
"""
