"""No figure caption or text alternative carries a typed result.

A caption (``viz.captioned(fig, caption, alt=...)``) is where a reader checks first and where drift
hides: a number typed into it stays while the run that produced it changes. So a number written in
the literal text of a caption or text alternative must be an *input* of the page, a number its code
sets (``D_KS = (1, 4, 16)``, ``steps=120``), never a result; a result enters through the f-string
that computes it (``f"{ratio:.1f}"``). The Chinese figure texts are held to the same rule when the
book is built (``book/_ext/editions_zh.py``: a number the English caption of that figure does not show
in that build fails it).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"(?<![\w.])(\d+(?:,\d{3})*(?:\.\d+)?)(\s?%)?")
"""A number as a caption writes it: 12, 0.41, 16,384, 90 % (not the digits of L6-v2 or of x²)."""


def code_cells(path: Path) -> list[str]:
    """The code of a page (MyST markdown notebook) or a lab (``.ipynb``), cell by cell."""
    notebook = nbformat.read(path, as_version=4) if path.suffix == ".ipynb" else jupytext.read(path)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def _parse(source: str) -> ast.Module | None:
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]  # magics
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _literal_text(node: ast.AST) -> str:
    """The text typed into an expression's string literals (an f-string's fixed parts), not what it computes."""
    inside = {id(c) for f in ast.walk(node) if isinstance(f, ast.FormattedValue) for c in ast.walk(f.value)}
    return " ".join(sub.value for sub in ast.walk(node)
                    if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and id(sub) not in inside)


def typed_results(sources: list[str]) -> list[tuple[int, str, str]]:
    """The numbers typed into the captions and text alternatives of ``sources`` that the code does not set.

    Returns:
        ``(cell index, which, number)`` for each: ``which`` is ``"caption"`` or ``"alt"``.
    """
    trees = [_parse(source) for source in sources]
    inputs: set[float] = set()
    texts: list[tuple[int, str, ast.AST]] = []
    for index, tree in enumerate(trees):
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                inputs.add(float(node.value))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "captioned":
                if len(node.args) > 1:
                    texts.append((index, "caption", node.args[1]))
                texts.extend((index, keyword.arg, keyword.value) for keyword in node.keywords
                             if keyword.arg in ("caption", "alt"))
    found = []
    for index, which, expression in texts:
        for match in NUMBER.finditer(_literal_text(expression)):
            value = float(match.group(1).replace(",", ""))
            candidates = {value, value / 100} if match.group(2) else {value}
            if not candidates & inputs:
                found.append((index, which, match.group(0).strip()))
    return found


def code_inputs(sources: list[str]) -> set[float]:
    """Every number the code of a page sets (its numeric literals)."""
    return {float(node.value) for tree in map(_parse, sources) if tree is not None for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and type(node.value) in (int, float)}


MARKDOWN_CAPTION = re.compile(r"^(?:\*\*Figure [^*]+\*\*|\*The figure's takeaway:|\*\*图 [^*]+\*\*|\*图的要点：)"
                              r"(.*?)(?:\n\n|\Z)", re.S | re.M)
"""A caption written as prose under a figure (chapters 1 and 2): ``**Figure 1.7.** On a CPU, ...`` or
``*The figure's takeaway: ...*``, and the Chinese pages' ``**图 1.7**`` and ``*图的要点：...*``."""
GLUED_OR_MATH = re.compile(r"\{glue:[a-z]+\}`[^`]*`|\$[^$]*\$")


def typed_results_in_prose_captions(text: str, inputs: set[float]) -> list[str]:
    """The numbers typed into a page's prose captions (glued values and formulas aside) that its code does not set."""
    found = []
    for caption in MARKDOWN_CAPTION.finditer(text):
        for match in NUMBER.finditer(GLUED_OR_MATH.sub("", caption.group(1))):
            value = float(match.group(1).replace(",", ""))
            if not ({value, value / 100} if match.group(2) else {value}) & inputs:
                found.append(match.group(0).strip())
    return found


PAGES = sorted([*ROOT.glob("book/**/*.md"), *ROOT.glob("notebooks/*.ipynb")])
ZH_PAGES = sorted(ROOT.glob("zh/book/**/*.md"))


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_no_caption_or_text_alternative_carries_a_typed_result(path: Path) -> None:
    sources = code_cells(path)
    found = typed_results(sources)
    if path.suffix == ".md":
        found += [(None, "prose caption", number)
                  for number in typed_results_in_prose_captions(path.read_text(encoding="utf-8"), code_inputs(sources))]
    assert not found, (f"{path.relative_to(ROOT)}: typed numbers in captions or text alternatives that the page's "
                       f"code does not set (compute them in the f-string): {found}")


@pytest.mark.parametrize("path", ZH_PAGES, ids=[str(p.relative_to(ROOT)) for p in ZH_PAGES])
def test_no_chinese_prose_caption_carries_a_typed_result(path: Path) -> None:
    found = typed_results_in_prose_captions(path.read_text(encoding="utf-8"), code_inputs(code_cells(path)))
    assert not found, f"{path.relative_to(ROOT)}: typed numbers in prose captions (glue them): {found}"


def test_a_typed_result_planted_in_a_caption_is_found_and_inputs_and_computed_numbers_pass(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text('''---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A page

```{code-cell} ipython3
D_KS = (16, 256)
runs = train(D_KS, steps=300)
viz.captioned(fig, "Unscaled heads reach 90% in 300 steps at d_k = 256.",
              alt=f"Curves for d_k = 16 and 256; the unscaled head reaches {runs.acc:.1%} after 97.3 seconds.")
```
''')
    found = typed_results(code_cells(page))
    # 90 % is 0.9, set nowhere: a result; 300, 16, 256 are set by the code; 97.3 is typed; runs.acc is computed
    assert found == [(0, "caption", "90%"), (0, "alt", "97.3")], found
    assert code_cells(page)  # the page was read as a notebook


def test_a_typed_result_planted_in_a_prose_caption_is_found() -> None:
    text = "**Figure 1.7.** The GRU is {glue:text}`gru_ratio:.1f` times slower at $n = 512$, and 2.5 times at 256.\n\n"
    assert typed_results_in_prose_captions(text, {256.0, 512.0}) == ["2.5"]


def test_every_page_with_a_figure_is_read() -> None:
    with_figures = [path for path in PAGES if any("captioned(" in source for source in code_cells(path))
                    or (path.suffix == ".md" and MARKDOWN_CAPTION.search(path.read_text(encoding="utf-8")))]
    assert len(with_figures) >= 13, [str(p.relative_to(ROOT)) for p in with_figures]
