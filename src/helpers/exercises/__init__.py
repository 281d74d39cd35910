"""Checkers for the labs' exercises: each says what is wrong (shape, scale, mask, sign...), not only that something is.

One module per chapter: :mod:`helpers.exercises.ch01`, ...
"""
