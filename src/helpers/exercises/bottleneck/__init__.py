"""The exercises of lab 1, "Why attention" (``notebooks/01-bottleneck-lab.ipynb``), one module each; the lab
imports them all from :mod:`helpers.exercises.ch01`."""
