"""Figures and tables of chapter 4, "Why many heads", from the results of
:mod:`helpers.experiments.heads` and :mod:`helpers.experiments.heads_training`. Nothing here trains."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
import torch

from .. import viz
from ..experiments import heads_training as ht
from ..experiments.heads import HeadCost, ScoreCost, ShapeStep
from ..experiments.heads_training import FilterRun, Pruning

__all__ = ["shapes_table", "cost_table", "score_cost_table", "filter_figure", "offset_maps_figure", "head_size_figure",
           "specialisation_figure",
           "specialisation_table", "pruning_figure", "robustness_figure", "real_model_figure"]


def shapes_table(steps: Sequence[ShapeStep]) -> str:
    """The traced forward pass as a Markdown table: step, code, shape."""
    rows = ["| step | code | shape |", "|---|---|---|"]
    rows += [f"| {s.step} | `{s.code}` | {tuple(s.shape)} |" for s in steps]
    return "\n".join(rows)


def _mib(m: float) -> str:
    return f"{m:,.0f}" if m >= 10 else f"{m:.2g}"


def cost_table(cost: HeadCost, ranks: Mapping[int, Sequence[int]], scores: ScoreCost | None = None) -> str:
    """Parameters, FLOPs and the largest score rank per head, for each number of heads.

    With ``scores`` (from :func:`~helpers.experiments.heads.score_costs`) three columns are added,
    what grows with H: the score tensor in MiB and the milliseconds of the readable and fused
    paths ("–" for an H that ``scores`` did not measure). Chapter 4.
    """
    header = ("| heads H | head size E | parameters | FLOPs: projections | FLOPs: attention "
              "| rank of each head's scores |")
    align = "|---:|---:|---:|---:|---:|---:|"
    measured: dict[int, str] = {}
    if scores is not None:
        b, n = scores.batch_size, scores.seq_len
        header += f" scores (B={b}, L={n}), MiB | readable path, ms | fused path, ms |"
        align += "---:|---:|---:|"
        measured = {h: f" {_mib(m)} | {r:,.1f} | {f:,.1f} |" for h, m, r, f in
                    zip(scores.num_heads, scores.score_mib, scores.readable_ms, scores.fused_ms)}
    rows = [header, align]
    for h, e, p, a, b in zip(cost.num_heads, cost.head_dim, cost.parameters, cost.flops_projections,
                              cost.flops_attention):
        extra = measured.get(h, " – | – | – |") if scores is not None else ""
        rows.append(f"| {h} | {e} | {p:,} | {a:,} | {b:,} | {max(ranks[h])} |{extra}")
    return "\n".join(rows)


def score_cost_table(scores: ScoreCost) -> str:
    """The measured cost of the heads' scores per number of heads, as a Markdown table.

    Columns: H, head size, the ``(B, H, L, L)`` float32 score tensor in MiB, and the median
    milliseconds of one forward pass on the readable and on the fused path, from
    :func:`~helpers.experiments.heads.score_costs` (chapter 4).
    """
    rows = [f"| heads H | head size E | scores (B={scores.batch_size}, L={scores.seq_len}), MiB "
            "| readable path, ms | fused path, ms |",
            "|---:|---:|---:|---:|---:|"]
    for h, m, r, f in zip(scores.num_heads, scores.score_mib, scores.readable_ms, scores.fused_ms):
        rows.append(f"| {h} | {scores.embed_dim // h} | {_mib(m)} | {r:,.1f} | {f:,.1f} |")
    return "\n".join(rows)


def _per_seed(values: Mapping[int, Sequence[float]]) -> dict[str, list[float]]:
    means = [sum(v) / len(v) for v in values.values()]
    return {"mean over seeds": means, "worst seed": [min(v) for v in values.values()],
            "best seed": [max(v) for v in values.values()]}


def filter_figure(sweep: Mapping[int, Sequence[FilterRun]]) -> go.Figure:
    """R² of the filter task against the number of heads, with the ceiling of the argument."""
    heads = list(sweep)
    curves = _per_seed({h: [r.r2 for r in runs] for h, runs in sweep.items()})
    curves["ceiling for position-only heads (mean)"] = [sum(r.ceiling for r in runs) / len(runs)
                                                        for runs in sweep.values()]
    fig = viz.line_plot(heads, curves, x_title="number of heads H (d_model fixed)", y_title="R² on held-out data",
                        title=f"A {len(sweep[heads[0]][0].offsets)}-offset filter: R² against the number of heads")
    fig.data[-1].line.dash = "dash"
    return fig


def offset_maps_figure(one_head: Sequence[FilterRun], many_heads: Sequence[FilterRun]) -> go.Figure:
    """Mean attention at each relative offset: the one head of H = 1 above the heads of a larger H (menu: seed).

    Rows are heads, columns relative offsets (centred on 0); each row is a head's weight at
    offset ``o`` averaged over queries and held-out sequences
    (:func:`~helpers.experiments.heads_training.offset_profile`).
    """
    seq_len = one_head[0].test_x.shape[1]
    order = [o % seq_len for o in range(-((seq_len - 1) // 2), seq_len // 2 + 1)]
    columns = [f"{o:+d}" if o else "0" for o in range(-((seq_len - 1) // 2), seq_len // 2 + 1)]
    h = many_heads[0].num_heads
    rows = ["H = 1: its head"] + [f"H = {h}: head {i}" for i in range(h)]
    maps = torch.stack([torch.cat([ht.offset_profile(a), ht.offset_profile(b)])[:, order]
                        for a, b in zip(one_head, many_heads)])  # (seeds, 1 + H, L)
    offsets = ", ".join(f"{o:+d}" for o in one_head[0].offsets)
    return viz.attention_heatmap(maps, columns, rows, head_names=[f"seed {r.seed}" for r in one_head],
                                 title=f"Mean attention at each offset (the task reads {offsets}); menu: seed")


def head_size_figure(embed_dim: int, filter_r2: Mapping[int, Sequence[float]],
                     recall_accuracy: Mapping[int, Sequence[float]]) -> go.Figure:
    """Two tasks, one budget: heads against head size at fixed d_model (mean and worst seed)."""
    heads = list(filter_r2)
    labels = [f"{h} (E={embed_dim // h})" for h in heads]
    ys = {"filter, 3 offsets: R² (mean)": [sum(v) / len(v) for v in filter_r2.values()],
          "filter: worst seed": [min(v) for v in filter_r2.values()],
          "lookup among 8 keys: accuracy (mean)": [sum(v) / len(v) for v in recall_accuracy.values()],
          "lookup: worst seed": [min(v) for v in recall_accuracy.values()]}
    fig = viz.line_plot(list(range(len(heads))), ys, x_title=f"heads H (head size E = {embed_dim}/H)",
                        y_title="score (1 = solved)",
                        title=f"d_model = {embed_dim}: more heads help the filter, thinner heads hurt the lookup")
    fig.update_xaxes(tickvals=list(range(len(heads))), ticktext=labels)
    for trace in fig.data[1::2]:
        trace.line.dash = "dot"
    return fig


def specialisation_figure(run: FilterRun, sample: int = 0) -> go.Figure:
    """Each head's attention map on one held-out sequence (menu: head)."""
    with torch.no_grad():
        _, weights = run.model(run.test_x[sample:sample + 1], need_weights=True)  # (1, H, L, L)
    offsets = ", ".join(f"{o:+d}" for o in run.offsets)
    return viz.attention_heatmap(weights[0], [str(i) for i in range(weights.shape[-1])],
                                 title=f"Each head's attention (menu: head); the task reads offsets {offsets}",
                                 head_names=[f"head {h}" for h in range(weights.shape[1])])


def specialisation_table(mass: torch.Tensor, offsets: Sequence[int]) -> str:
    """Mean weight of each head (rows) on each offset (columns), and the rest."""
    rows = ["| head | " + " | ".join(f"offset {o:+d}" for o in offsets) + " | elsewhere |",
            "|---|" + "---:|" * (len(offsets) + 1)]
    for h, row in enumerate(mass.tolist()):
        rows.append(f"| {h} | " + " | ".join(f"{v:.2f}" for v in row) + f" | {1 - sum(row):.2f} |")
    return "\n".join(rows)


def pruning_figure(prunings: Mapping[str, Sequence[Pruning]]) -> go.Figure:
    """R² against the fraction of heads removed, one curve per pruning order (mean over its runs)."""
    fractions = next(iter(prunings.values()))[0].fraction_removed
    curves = {name: [sum(p.r2[n] for p in runs) / len(runs) for n in range(len(fractions))]
              for name, runs in prunings.items()}
    heads = len(fractions) - 1
    return viz.line_plot(fractions, curves, x_title="fraction of heads removed", y_title="R² on held-out data (mean)",
                         title=f"Pruning {heads} heads, one at a time, in three orders")


def robustness_figure(results: Mapping[int, Sequence[Sequence[float]]]) -> go.Figure:
    """R² left after breaking one head (mean over heads and seeds, and the worst head)."""
    labels, means, worst = [], [], []
    for h, per_seed in results.items():
        flat = [v for seed in per_seed for v in seed]
        labels.append(f"H = {h}")
        means.append(sum(flat) / len(flat))
        worst.append(min(flat))
    fig = viz.bar(labels, means, y_title="R² after zeroing one head",
                  title="One head zeroed after training (mean over heads and seeds; marker: the worst head)")
    fig.add_trace(go.Scatter(x=labels, y=worst, mode="markers", name="worst head", marker=dict(size=10)))
    return fig


def real_model_figure(summary: Mapping[str, torch.Tensor]) -> go.Figure:
    """Per-head statistics of a real model as layer x head maps (slider: statistic)."""
    names = list(summary)
    stacked = torch.stack([summary[n] for n in names])[:, None]  # (stats, 1, layers, H)
    layers, heads = stacked.shape[-2:]
    return viz.attention_heatmap(stacked, [f"h{h}" for h in range(heads)], [f"layer {i}" for i in range(layers)],
                                 title="all-MiniLM-L6-v2, every head (slider: statistic; 0 to 1)",
                                 layer_names=names, head_names=["heads"])
