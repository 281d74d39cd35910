"""The exercises of lab 4, "Why many heads" (``notebooks/04-multihead-lab.ipynb``), one module each; the lab
imports them all from :mod:`helpers.exercises.ch04`."""
