"""Show the source of a helper in a notebook, highlighted, so the book never copies code by hand.

The output is a Markdown code block (``text/markdown``): myst-nb renders it with the site's own
Pygments styles (light and dark), and JupyterLab and Colab highlight it too.

Used by every chapter that shows a helper; see "How to read these figures" (``book/figures.md``).
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import Any

__all__ = ["SourceListing", "show_source"]


class SourceListing:
    """The source of an object as a Markdown code block (displayed by IPython as ``text/markdown``).

    Attributes:
        name: The object's qualified name, e.g. ``helpers.attention.scaled_dot_product_attention``.
        source: Its source code.
        path: The file it comes from, relative to the package's parent folder.
        line: The line it starts on.
    """

    def __init__(self, name: str, source: str, path: str, line: int) -> None:
        self.name, self.source, self.path, self.line = name, source, path, line
        self.qualname = name.split(".")[-1] if not path else _strip_module(name, path)

    def _repr_markdown_(self) -> str:
        fence = "`" * max(3, 1 + max((len(run) for run in _backtick_runs(self.source)), default=0))
        # The short name, then the file: a long dotted name in one inline code span would not
        # wrap and would overflow a phone's screen.
        return (f"`{self.qualname}` from `{self.path}`, line {self.line}:\n\n"
                f"{fence}python\n{self.source.rstrip()}\n{fence}\n")

    def __repr__(self) -> str:
        return f"# {self.name} ({self.path}, line {self.line})\n{self.source}"


def _strip_module(name: str, path: str) -> str:
    """``helpers.viz.source.SourceListing.__init__`` -> ``SourceListing.__init__`` (module from the path)."""
    module = path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    return name.removeprefix(module + ".") if name.startswith(module + ".") else name


def _backtick_runs(text: str) -> list[str]:
    runs, current = [], ""
    for char in text:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    return runs + ([current] if current else [])


def show_source(obj: Any) -> SourceListing:
    """The source of a function, class or method of the package, for display in a notebook.

    Args:
        obj: A function, class, method or module.

    Returns:
        A :class:`SourceListing`; left last in a cell, it shows as a highlighted code block
        headed by the object's name, file and line.

    Raises:
        TypeError: If ``obj`` has no Python source (a builtin, a C extension, an instance).
    """
    try:
        lines, line = inspect.getsourcelines(obj)
        file = inspect.getsourcefile(obj)
    except (TypeError, OSError) as error:
        raise TypeError(f"obj must be a Python function, class, method or module with source, "
                        f"got {type(obj).__name__} ({error})") from None
    module = inspect.getmodule(obj)
    qualname = getattr(obj, "__qualname__", getattr(obj, "__name__", ""))
    name = f"{module.__name__}.{qualname}" if module is not None and qualname != module.__name__ else qualname
    path = Path(file or "?")
    parts = path.parts
    shown = "/".join(parts[parts.index("helpers"):]) if "helpers" in parts else path.name
    return SourceListing(name, textwrap.dedent("".join(lines)), shown, max(line, 1))
