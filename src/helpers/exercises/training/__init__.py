"""The exercises of lab 6.1-6.2, "Reading maps and training" (``notebooks/06-training-lab.ipynb``), one module
each; the lab imports them all from :mod:`helpers.exercises.ch06_training`."""
