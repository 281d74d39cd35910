"""The chapters' figures and tables, one module per experiment module of :mod:`helpers.experiments`.

An experiment module computes (and returns a dataclass of numbers); the figure module of the same
name turns that result into a Plotly figure or a table, with the drawing primitives of
:mod:`helpers.viz`. Nothing here trains or measures.
"""
