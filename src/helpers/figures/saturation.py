"""Chapter 3 figures of :mod:`helpers.experiments.saturation`: softmax rows and their Jacobian against ``d_k``."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from torch import Tensor

from .. import viz
from ..experiments.saturation import SaturationSweep
from .style import dashed, legend_below, significant

__all__ = ["softmax_row_figure", "saturation_figure", "jacobian_figure"]


def softmax_row_figure(frames: dict[str, Tensor]) -> go.Figure:
    """One softmax row with and without the scale, with a slider over ``d_k``
    (see :func:`~helpers.experiments.saturation.softmax_row_frames`)."""
    keys = list(range(1, frames["weights"].shape[1] + 1))
    curves = {
        int(d): {"no scale": significant(w.tolist(), 3), "scaled (÷ √d_k)": significant(sw.tolist(), 3)}
        for d, w, sw in zip(frames["d_k"], frames["weights"], frames["scaled_weights"])
    }
    sizes = list(curves)
    fig = viz.line_sweep(
        keys, curves, param_name="d_k", x_title="key", y_title="softmax weight",
        title="One query, 8 keys: the softmax row as d_k grows",
        active=64 if 64 in curves else sizes[len(sizes) // 2],  # open where the two rows differ
    )
    dashed(fig, "scaled (÷ √d_k)")
    fig.update_yaxes(range=[0, 1.02])
    fig.update_xaxes(dtick=1)
    return fig


def saturation_figure(unscaled: SaturationSweep, scaled: SaturationSweep) -> go.Figure:
    """Largest weight and normalised entropy of softmax rows against ``d_k``, with and without the scale."""
    log_s = math.log(unscaled.num_keys)
    fig = viz.line_plot(
        unscaled.d_k,
        {
            "top weight, no scale": significant(unscaled.max_weight),
            "top weight, scaled": significant(scaled.max_weight),
            "entropy / log S, no scale": significant([e / log_s for e in unscaled.entropy]),
            "entropy / log S, scaled": significant([e / log_s for e in scaled.entropy]),
        },
        x_title="d_k", y_title="mean over rows", log_x=True,
        title=f"Saturation of a softmax over {unscaled.num_keys} keys",
    )
    return legend_below(dashed(fig, "top weight, scaled", "entropy / log S, scaled"))


def jacobian_figure(sweep: dict[str, list[float]]) -> go.Figure:
    """Norms of the softmax Jacobian against the standard deviation of the logits
    (see :func:`~helpers.experiments.saturation.jacobian_norm_sweep`)."""
    curves = {"‖J‖ (Frobenius), mean": significant(sweep["frobenius"])}
    if "median_frobenius" in sweep:
        curves["‖J‖ (Frobenius), median row"] = significant(sweep["median_frobenius"])
    curves["‖J‖ (spectral), mean"] = significant(sweep["spectral"])
    curves["top weight, mean"] = significant(sweep["max_weight"])
    fig = viz.line_plot(
        sweep["logit_std"], curves,
        x_title="std of the logits (1 = scaled, √d_k = unscaled)", y_title="over rows",
        log_x=True, title="Softmax Jacobian J = diag(p) − ppᵀ against the logits' spread",
    )
    if "median_frobenius" in sweep:
        dashed(fig, "‖J‖ (Frobenius), median row")
    return legend_below(fig)

