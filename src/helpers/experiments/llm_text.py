"""Real English for chapter 7, with no download: the book's own prose, and random token sequences.

The chapter runs SmolLM2-135M on text, and a text must come from somewhere that needs no network.
It comes from the book itself: :func:`book_prose` reads the English pages of chapters 1-6 (MyST
markdown) and keeps their paragraphs of prose, with code, math, directives, tables and the roles
that glue a number into the page taken out (:func:`prose`). A lab, which may run on Colab without
the book's files, reads the English of the package's own docstrings instead (:func:`package_prose`).
Windows of a given number of tokens are drawn at random through ``helpers.seeding``
(:func:`text_windows`), so that ``HELPERS_SEED_OFFSET`` draws others; :func:`repeated_random_tokens`
draws the random sequences, repeated, on which induction heads show (Olsson et al., 2022).

Shape legend:
    B     number of windows or sequences
    L     tokens in each
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor

from .. import seeding
from ..checks import check_positive_int

__all__ = ["CHAPTER_PAGES", "prose", "book_prose", "package_prose", "text_windows", "repeated_random_tokens"]

CHAPTER_PAGES = (
    "book/01-bottleneck/index.md",
    "book/02-dot-product/index.md",
    "book/03-scaling/index.md",
    "book/04-multihead/index.md",
    "book/05-variants/01-self-cross.md",
    "book/05-variants/02-masks.md",
    "book/05-variants/03-efficient.md",
    "book/06-pitfalls/01-reading-maps.md",
    "book/06-pitfalls/02-training.md",
    "book/06-pitfalls/03-memory.md",
    "book/06-pitfalls/05-position.md",
)
"""The English pages whose prose :func:`book_prose` reads (paths from the repository's root)."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_ROLE_WITH_TEXT = re.compile(r"\{(?:doc|ref)\}`([^`<]+?)\s*<[^>]*>`")  # {doc}`text <target>` -> text
_ROLE = re.compile(r"\{[a-z:]+\}`[^`]*`")  # {cite}`x`, {glue:text}`x`: dropped with their sentence
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def prose(markdown: str) -> str:
    """The paragraphs of plain prose of a MyST markdown page, one a line.

    Kept: paragraphs of text (bullets too, without their marker). Dropped: the front matter,
    fenced blocks (code cells, directives), headings, tables, display math, and every sentence that
    holds inline math, inline code or a role that glues a number in (the sentence would read
    wrong without it); ``{doc}`` and ``{ref}`` roles and links keep their text, markup
    (``**``, ``*``) goes.

    Args:
        markdown: The page's source.

    Returns:
        The prose, paragraphs separated by a blank line.
    """
    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be a str, got {type(markdown).__name__}")
    lines = markdown.splitlines()
    if lines and lines[0].strip() == "---":  # front matter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = lines[end + 1:]
    paragraphs: list[str] = []
    current: list[str] = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            current = _flush(current, paragraphs)
            continue
        stripped = line.strip()
        if fenced or not stripped or stripped.startswith(("#", "|", "$$", "(", ":", "<", ">", "```")):
            current = _flush(current, paragraphs)
            continue
        stripped = re.sub(r"^([-*]|\d+\.)\s+", "", stripped)
        if line[:1] in "-*" or re.match(r"\d+\.\s", line):
            current = _flush(current, paragraphs)
        current.append(stripped)
    _flush(current, paragraphs)
    return "\n\n".join(paragraphs)


def _flush(current: list[str], paragraphs: list[str]) -> list[str]:
    """Cleans the paragraph being read and appends what is left of it; returns a fresh one."""
    text = " ".join(current)
    text = _LINK.sub(r"\1", _ROLE_WITH_TEXT.sub(r"\1", text))
    sentences = re.split(r"(?<=[.!?:;])\s+", text)
    kept = [s for s in sentences if not _ROLE.search(s) and "$" not in s and "`" not in s]
    text = re.sub(r"\*\*|(?<!\w)\*|\*(?!\w)", "", " ".join(kept)).strip()
    if len(text.split()) >= 8:
        paragraphs.append(text)
    return []


def book_prose(root: str | Path = ".", pages: Sequence[str] = CHAPTER_PAGES) -> str:
    """The prose of the book's English chapter pages (:func:`prose` of each), in the order given.

    Args:
        root: The repository's root (the folder that holds ``book/``).
        pages: The pages to read, from the root.

    Returns:
        The text, pages separated by a blank line.

    Raises:
        FileNotFoundError: A page is missing (the chapter reads the book's own files).
    """
    folder = Path(root)
    return "\n\n".join(prose((folder / page).read_text(encoding="utf-8")) for page in pages)


@functools.cache
def package_prose() -> str:
    """The English of the package's own module docstrings (shipped with it: no file of the book needed).

    Returns:
        The docstrings of ``helpers`` and its modules (exercises and their catalogues left out), in
        the modules' alphabetical order, with their shape legends cut off, separated by a blank line.
    """
    import helpers

    names = sorted(module.name for module in pkgutil.walk_packages(helpers.__path__, "helpers.")
                   if ".exercises" not in module.name and ".claim_text" not in module.name)
    texts = []
    for name in ["helpers", *names]:
        doc = inspect.getdoc(importlib.import_module(name)) or ""
        doc = doc.split("Shape legend")[0].split("Shape:")[0].strip()
        if len(doc.split()) >= 20:
            texts.append(doc)
    return "\n\n".join(texts)


def text_windows(ids: Tensor, length: int, count: int, seed: int) -> Tensor:
    """``count`` windows of ``length`` consecutive tokens of a text, drawn at random, without overlap.

    The start of each window is drawn with ``helpers.seeding.generator`` (``seed``): another
    ``HELPERS_SEED_OFFSET`` draws other windows. The windows do not overlap.

    Args:
        ids: The text's token ids.
        length: Tokens in a window.
        count: Windows to draw.
        seed: The seed the page names.

    Returns:
        The windows.

    Raises:
        ValueError: The text is too short for ``count`` windows of ``length``.

    Shape:
        ids: ``(N,)``; output: ``(count, length)``.
    """
    check_positive_int("length", length)
    check_positive_int("count", count)
    if not isinstance(ids, Tensor) or ids.dim() != 1:
        raise ValueError(f"ids must be a 1-D tensor of token ids, got {type(ids).__name__}")
    slots = ids.numel() // length  # non-overlapping slots, then a random shift inside the slack
    if slots < count:
        raise ValueError(f"the text has {ids.numel()} tokens: too few for {count} windows of {length}")
    gen = seeding.generator(seed)
    chosen = torch.randperm(slots, generator=gen)[:count].sort().values  # (count,)
    slack = ids.numel() - slots * length
    shift = int(torch.randint(0, slack + 1, (1,), generator=gen))
    starts = chosen * length + shift  # (count,)
    return torch.stack([ids[s:s + length] for s in starts.tolist()])  # (count, length)


def repeated_random_tokens(batch: int, length: int, seed: int, *, repeats: int = 2, low: int = 1000,
                           high: int = 20000, generator: torch.Generator | None = None) -> Tensor:
    """Random token sequences, each repeated: the input on which induction heads show.

    Each row is ``length`` tokens drawn uniformly from ``[low, high)`` (ordinary words and pieces
    of SmolLM2's vocabulary, no special tokens), written ``repeats`` times. In the first copy no
    token can be predicted; in the second every one can, by copying what followed the same token
    the first time. Olsson et al. (2022), section "Per-token loss analysis" and their definitions of
    the prefix-matching and copying scores, use such sequences.

    Args:
        batch: ``B``, sequences.
        length: tokens in one copy.
        seed: the seed the page names (ignored when ``generator`` is given).
        repeats: copies of each sequence.
        low: the smallest token id drawn.
        high: one past the largest.
        generator: draw with this generator instead (a checker's fresh one).

    Returns:
        The sequences.

    Shape:
        output: ``(B, repeats * length)``.
    """
    for name, value in (("batch", batch), ("length", length), ("repeats", repeats)):
        check_positive_int(name, value)
    if not 0 <= low < high:
        raise ValueError(f"low and high must satisfy 0 <= low < high, got {low}, {high}")
    gen = seeding.generator(seed) if generator is None else generator
    once = torch.randint(low, high, (batch, length), generator=gen)  # (B, length)
    return once.repeat(1, repeats)  # (B, repeats * length)
