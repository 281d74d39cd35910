"""The exercises of lab 5, "Variants" (``notebooks/05-variants-lab.ipynb``), one module each; the lab imports them
all from :mod:`helpers.exercises.ch05`."""
