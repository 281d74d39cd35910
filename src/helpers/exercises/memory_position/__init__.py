"""The exercises of lab 6.3-6.6, "Memory, decoding, position and long context"
(``notebooks/06-memory-position-lab.ipynb``), one module each; the lab imports them from
:mod:`helpers.exercises.ch06_memory` (exercises 1-6) and :mod:`helpers.exercises.ch06_long_context` (7-9)."""
