"""Exercise 4 of lab 4: the bug hunt, ``view`` without ``transpose``.

Contract (stated in the lab): ``fixed_multihead(x, layer)`` is :func:`.buggy_view_attention` with its
wrong lines fixed: the same output as exercise 3, and the lines that have no bug kept, so that the fix,
not a layer written anew, is what passes. Renaming a variable is fine (the lines are compared with
their variable names left out); so is replacing a wrong line by several.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import CheckResult
from ..catalogue.ch04 import MESSAGES  # noqa: F401 (registers its messages)
from ..reader import checker, verdict
from .layer import run_layers

__all__ = ["buggy_view_attention", "check_view_fix"]


def buggy_view_attention(x: Tensor, layer: Any) -> Tensor:
    """Multi-head self-attention with ``layer``'s weights and one classic bug (lab exercise 4).

    Shape:
        x ``(B, L, D)`` -> ``(B, L, D)``.
    """
    batch, length, d_model = x.shape
    heads = layer.num_heads
    e = d_model // heads
    q = layer.q_proj(x).view(batch, heads, length, e)  # (B, H, L, E)?
    k = layer.k_proj(x).view(batch, heads, length, e)
    v = layer.v_proj(x).view(batch, heads, length, e)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)  # (B, H, L, L)
    out = (weights @ v).reshape(batch, length, d_model)  # (B, L, D)
    return layer.o_proj(out)


_FIX_WORDS = {
    "ch04.layer.no_transpose": "ch04.fix.unchanged",
    "ch04.layer.split_no_transpose": "ch04.fix.split_left",
    "ch04.layer.merge_no_transpose": "ch04.fix.merge_left",
}


def _statements(fn: Callable[..., Any]) -> list[ast.stmt] | None:
    """The top-level statements of a function's body (its docstring left out), or ``None``."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


class _Unnamed(ast.NodeTransformer):
    """Replaces every variable name by ``_``: a line is the same line whatever its variables are called."""

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name("_", node.ctx), node)


def _skeleton(statement: ast.stmt) -> str:
    return ast.dump(_Unnamed().visit(ast.parse(ast.unparse(statement)).body[0]))


def _returns(statements: list[ast.stmt]) -> int:
    """How many ``return`` statements the function has (those of nested functions left out)."""
    count, stack = 0, list(statements)
    while stack:
        node = stack.pop()
        count += isinstance(node, ast.Return)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return count


@checker
def check_view_fix(fn: Callable[[Tensor, Any], Tensor]) -> CheckResult:
    """Check the fix of :func:`.buggy_view_attention`: its lines that are right kept, the wrong ones fixed.

    The fixed function is run on the layers of exercise 3 (:func:`~helpers.exercises.multihead.layer.run_layers`);
    an output that is still the bug's, or that fixes only the split or only the merge, is named. A right
    output must also come from the buggy function fixed: its source must keep, in any order of its own
    lines, every line of the buggy function that has no bug (variables may be renamed), and return once, at
    the end.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    failure = run_layers(fn, seed=4400, rename=_FIX_WORDS)
    if failure is not None:
        return failure
    statements = _statements(fn)
    if statements is None:
        return verdict(False, "ch04.fix.no_source")
    buggy = _statements(buggy_view_attention) or []
    kept = [_skeleton(s) for s in buggy if "view" not in ast.dump(s) and "reshape" not in ast.dump(s)]
    theirs = {_skeleton(s) for s in statements}
    missing = sum(1 for line in kept if line not in theirs)
    if missing:
        return verdict(False, "ch04.fix.rewritten", missing=missing, total=len(kept))
    if _returns(statements) != 1 or _skeleton(statements[-1]) != _skeleton(buggy[-1]):
        return verdict(False, "ch04.fix.early_return")
    return verdict(True, "ch04.fix.passed")
