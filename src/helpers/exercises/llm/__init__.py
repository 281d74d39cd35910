"""The exercises of lab 7, "One real LLM, every why" (``notebooks/07-llm-lab.ipynb``), one module each; the lab
imports them all from :mod:`helpers.exercises.ch07`."""
