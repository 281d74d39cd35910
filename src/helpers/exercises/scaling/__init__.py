"""The exercises of lab 3, "Why scale by sqrt(d_k)" (``notebooks/03-scaling-lab.ipynb``), one module each; the
lab imports them all from :mod:`helpers.exercises.ch03`."""
