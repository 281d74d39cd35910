"""The exercises of lab 2, "Score functions from scratch" (``notebooks/02-dot-product-lab.ipynb``), one module
each; the lab imports them all from :mod:`helpers.exercises.ch02`."""
