"""Figures of the book: static Plotly figures with built-in sliders, live ipywidgets explorers, BertViz."""
