"""Chapter 3 figures of :mod:`helpers.experiments.dot_variance`: ``Var(q . k)`` against ``d_k``."""

from __future__ import annotations

import plotly.graph_objects as go

from .. import viz
from ..experiments.dot_variance import DISTRIBUTIONS, VarianceSweep
from .style import dashed, significant

__all__ = ["variance_figure", "variance_table"]


def variance_figure(sweeps: dict[str, VarianceSweep]) -> go.Figure:
    """Measured ``Var(q . k)``, its closed form and the scaled variance, with a slider over the inputs.

    Args:
        sweeps: Distribution name -> :class:`~helpers.experiments.dot_variance.VarianceSweep`, all over the same sizes.

    Returns:
        A :func:`helpers.viz.line_sweep` figure (log-log).
    """
    sizes = next(iter(sweeps.values())).d_k
    if any(s.d_k != sizes for s in sweeps.values()):
        raise ValueError("every sweep must cover the same d_k values (start at 2 to include 'layernorm')")
    curves = {
        name: {
            "Var(q·k)": significant(s.measured),
            "closed form": significant(s.theory),
            "Var(q·k/√d_k)": significant(s.scaled),
        }
        for name, s in sweeps.items()
    }
    fig = viz.line_sweep(
        sizes, curves, param_name="inputs", x_title="d_k", y_title="variance", log_x=True, log_y=True,
        title="Var(q·k) against d_k (slider: how q and k are drawn)",
    )
    return dashed(fig, "closed form")


def variance_table(sweeps: dict[str, VarianceSweep]) -> str:
    """A Markdown table: per distribution, measured/closed form at the largest ``d_k``, and the scaled variance."""
    rows = [
        "| inputs | what they test | Var(q·k) at d_k = {d} | closed form | Var(q·k / √d_k) |".format(
            d=next(iter(sweeps.values())).d_k[-1]
        ),
        "|---|---|---:|---:|---:|",
    ]
    for name, s in sweeps.items():
        rows.append(
            f"| `{name}` | {DISTRIBUTIONS[name]} | {s.measured[-1]:,.0f} | {s.theory[-1]:,.0f} | {s.scaled[-1]:.2f} |"
        )
    return "\n".join(rows)

