"""Chapter 4, "Why many heads": trained experiments on tiny models (one thread, seconds each).

- The k-offset filter (:func:`helpers.tasks.offset_filter_task`): a head whose weights depend on
  the relative position outputs one matrix times one average, so it can follow one offset; ``m``
  offsets with linearly independent matrices need ``m`` such heads in one layer (chapter 4's own
  ceiling; Cordonnier et al., 2020, prove the converse, that enough heads can express a
  convolution). :func:`filter_sweep` trains
  ``H = 1, 2, ...`` heads at fixed ``embed_dim`` and compares the fit with the ceiling
  :func:`filter_ceiling` that the argument predicts.
- Why, from the trained maps: :func:`offset_profile` (each head's mean weight at each relative
  offset) and :func:`profile_r2` (the R² that position-only heads with exactly those maps can
  reach, by the same argument as the ceiling).
- Specialisation: :func:`offset_specialisation` measures which head serves which offset.
- Ablation and pruning with ``head_mask``: :func:`head_ablation`, :func:`greedy_pruning`,
  :func:`head_importance` (Michel et al.'s gradient score) against :func:`removal_loss_increase`
  (what removing each head really costs), :func:`importance_pruning`, :func:`random_pruning`,
  :func:`break_one_head`. The informed orders choose heads on :func:`selection_set` (fresh
  sequences from the training distribution, as Michel et al. score on training data) and are
  reported on the held-out set.
- Heads against head size on a lookup that needs rich scores: :func:`recall_head_sweep`.

Shape legend:
    B  batch;  L  positions;  D  model dimension;  H  heads;  m  offsets;  P  key-value pairs
"""

from __future__ import annotations

import hashlib
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import seeding
from ..checks import check_positive_int, check_positive_ints
from ..multihead import MultiHeadAttention
from ..tasks import associative_recall_task, offset_filter_task
from ..train import num_threads, set_seed, train

__all__ = [
    "FilterHeads", "FilterRun", "train_filter", "filter_ceiling", "filter_sweep", "r_squared",
    "offset_profile", "profile_r2", "offset_specialisation", "head_ablation", "greedy_pruning", "Pruning",
    "selection_set", "exhaustive_pruning", "head_importance", "removal_loss_increase", "importance_pruning",
    "random_pruning", "break_one_head", "redraw_head",
    "RecallHeads", "recall_head_sweep", "mean_spread",
]


def mean_spread(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, min, max)`` of a list of per-seed results."""
    return statistics.fmean(values), min(values), max(values)


class FilterHeads(nn.Module):
    """One multi-head attention layer whose scores get a learned bias per head and relative offset.

    ``x -> in_proj -> MultiHeadAttention(attn_mask = bias[h, (j - i) mod L]) -> out_proj``: the
    bias table is the relative positional attention of Cordonnier et al. (2020), passed to the
    package's layer as a float ``attn_mask`` of shape ``(1, H, L, L)``. The content term
    ``q . k`` is kept (the model may learn to ignore it).

    Args:
        seq_len: L (the sequence is circular).
        dim: size of the input and output vectors.
        embed_dim: width of the attention layer.
        num_heads: H.
    """

    def __init__(self, seq_len: int, dim: int, embed_dim: int, num_heads: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(dim, embed_dim)
        self.attention = MultiHeadAttention(embed_dim, num_heads)
        self.out_proj = nn.Linear(embed_dim, dim)
        self.position_bias = nn.Parameter(torch.zeros(num_heads, seq_len))  # (H, L): one score per offset
        i = torch.arange(seq_len)
        self.register_buffer("offset", (i[None, :] - i[:, None]) % seq_len, persistent=False)  # (L, L): j - i

    def forward(self, x: Tensor, head_mask: Tensor | None = None, need_weights: bool = False
                ) -> tuple[Tensor, Tensor | None]:
        bias = self.position_bias[:, self.offset][None]  # (1, H, L, L)
        out, weights = self.attention(self.in_proj(x), attn_mask=bias, head_mask=head_mask,
                                      need_weights=need_weights)  # (B, L, D), (B, H, L, L)
        return self.out_proj(out), weights  # (B, L, dim)


def r_squared(prediction: Tensor, target: Tensor) -> float:
    """Fraction of the target's variance explained: ``1 - MSE / Var(target)``."""
    return float(1 - F.mse_loss(prediction, target) / target.var())


@dataclass
class FilterRun:
    """One trained filter model and what it scores on held-out data."""

    num_heads: int
    seed: int
    offsets: tuple[int, ...]
    r2: float
    ceiling: float
    model: FilterHeads = field(repr=False)
    test_x: Tensor = field(repr=False)
    test_y: Tensor = field(repr=False)
    filters: Tensor | None = field(default=None, repr=False)  # (m, dim, dim): the task's A_k

    def score(self, head_mask: Tensor | None = None, data: tuple[Tensor, Tensor] | None = None) -> float:
        """R² on the held-out set (or on ``data = (x, y)``), optionally with some heads masked."""
        x, y = (self.test_x, self.test_y) if data is None else data
        with torch.no_grad():
            return r_squared(self.model(x, head_mask=head_mask)[0], y)


def filter_ceiling(filters: Tensor, num_heads: int) -> float:
    """The best R² that ``num_heads`` position-only heads can reach on a filter task.

    A head with position-only weights ``w`` outputs ``M sum_j w_j x_{i+j}``. With independent
    unit-variance inputs, the variance ``H`` such heads can explain is at most the sum of the
    ``H`` largest eigenvalues of the Gram matrix ``G_kl = <A_k, A_l>_F`` of the filters, divided
    by its trace (a rank-``H`` approximation in "offset space"; the weights' signs make it an
    upper bound). It is 1 when ``H`` reaches the rank of ``G`` (``m`` for linearly independent filters).

    Shape:
        filters: ``(m, dim, dim)``.
    """
    flat = filters.reshape(filters.shape[0], -1).double()  # (m, dim^2)
    eigenvalues = torch.linalg.eigvalsh(flat @ flat.T).flip(0)  # (m,), largest first
    return float(eigenvalues[:num_heads].sum() / eigenvalues.sum())


def train_filter(num_heads: int, *, offsets: Sequence[int] = (-1, 2, 4), seed: int = 0, seq_len: int = 12,
                 dim: int = 4, embed_dim: int = 24, steps: int = 300, batch_size: int = 32, lr: float = 1e-2,
                 num_test: int = 1000, filters: Tensor | None = None) -> FilterRun:
    """Train a :class:`FilterHeads` on the k-offset filter task and score it on held-out data.

    Fresh inputs every step, the same filters ``A_k`` for one seed (drawn from ``seed`` unless
    ``filters`` gives them, e.g. the same matrix at every offset); mean squared error, AdamW,
    one thread. About a second on the book's machine.
    """
    offsets = tuple(offsets)
    check_positive_int("num_heads", num_heads)
    if filters is None:
        _, _, filters = offset_filter_task(1, seq_len, dim, offsets, seed=seed)
    x, y, _ = offset_filter_task(steps * batch_size, seq_len, dim, offsets, seed=seed + 1000, filters=filters)
    test_x, test_y, _ = offset_filter_task(num_test, seq_len, dim, offsets, seed=seed + 2000, filters=filters)
    set_seed(seed)
    model = FilterHeads(seq_len, dim, embed_dim, num_heads)
    with num_threads(1):
        train(model, lambda s: (x[s * batch_size:(s + 1) * batch_size], y[s * batch_size:(s + 1) * batch_size]),
              steps=steps, lr=lr, loss_fn=F.mse_loss, accuracy_fn=None, seed=seed)
    model.eval()
    run = FilterRun(num_heads, seed, offsets, 0.0, filter_ceiling(filters, num_heads), model, test_x, test_y, filters)
    run.r2 = run.score()
    _TRAINED.add(run_digest(run))
    return run


_TRAINED: set[str] = set()
"""Digests of the runs :func:`train_filter` returned in this session (see :func:`trained_by_train_filter`)."""


def run_digest(run: FilterRun) -> str:
    """A digest of everything a run holds: its settings, its R², its model's weights, its held-out data."""
    digest = hashlib.sha256(repr((run.num_heads, run.seed, tuple(run.offsets), run.r2, run.ceiling)).encode())
    tensors = [*run.model.state_dict().values(), run.test_x, run.test_y]
    if run.filters is not None:
        tensors.append(run.filters)
    for tensor in tensors:
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def trained_by_train_filter(run: FilterRun) -> bool:
    """Whether ``run`` is, as it is now, a run that :func:`train_filter` returned in this session.

    A run built by hand, or one whose weights, data or R² were changed after training, is not:
    chapter 4's ablation checker (:func:`helpers.exercises.ch04.check_head_ablation`) refuses it.
    """
    return isinstance(run, FilterRun) and run_digest(run) in _TRAINED


def filter_sweep(num_heads: Sequence[int], seeds: Sequence[int] = (0, 1, 2), **kwargs) -> dict[int, list[FilterRun]]:
    """:func:`train_filter` for each number of heads and seed: ``{H: [run per seed]}``."""
    return {h: [train_filter(h, seed=s, **kwargs) for s in seeds] for h in check_positive_ints("num_heads", num_heads)}


def offset_profile(run: FilterRun, num_samples: int = 200) -> Tensor:
    """Each head's mean attention weight at each relative offset, over held-out sequences.

    Returns:
        ``(H, L)``: entry ``[h, o]`` is head ``h``'s weight on position ``(i + o) mod L``,
        averaged over the queries ``i`` and ``num_samples`` held-out sequences; each row sums to 1.
    """
    with torch.no_grad():
        _, weights = run.model(run.test_x[:num_samples], need_weights=True)  # (B, H, L, L)
    seq_len = weights.shape[-1]
    i = torch.arange(seq_len)
    return torch.stack([weights[:, :, i, (i + o) % seq_len].mean(dim=(0, 2)) for o in range(seq_len)], dim=1)


def profile_r2(profile: Tensor, offsets: Sequence[int], filters: Tensor) -> float:
    """The R² that position-only heads with these attention maps reach with the best output matrices.

    Head ``h`` with position-only weights ``P[h]`` outputs ``M_h z_h`` with
    ``z_h = sum_o P[h, o] x_{i+o}``. With independent unit-variance inputs, the best ``M_h``
    explain ``tr(G Q^T (P P^T)^{-1} Q) / tr(G)`` of the target's variance, where ``Q`` holds the
    columns of ``P`` at the task's offsets and ``G_kl = <A_k, A_l>_F`` (for one head this is
    ``q^T G q / (|p|^2 tr G)``: one mixture, one matrix). It plugs the *measured* maps into the
    argument of :func:`filter_ceiling`, so it says how much of a trained model's score its
    attention maps account for.

    Shape:
        profile: ``(H, L)`` (:func:`offset_profile`); filters: ``(m, dim, dim)``.
    """
    seq_len = profile.shape[-1]
    p = profile.double()  # (H, L)
    q = p[:, [o % seq_len for o in offsets]]  # (H, m): weight on the offsets that matter
    flat = filters.reshape(filters.shape[0], -1).double()  # (m, dim^2)
    gram = flat @ flat.T  # (m, m)
    explained = torch.trace(gram @ q.T @ torch.linalg.solve(p @ p.T, q))  # (m, H) x (H, H)^-1 x (H, m)
    return float(explained / torch.trace(gram))


def offset_specialisation(run: FilterRun) -> Tensor:
    """Mean attention weight each head puts on each of the task's offsets.

    Returns:
        ``(H, m)``: entry ``[h, k]`` is head ``h``'s average weight on position ``i + o_k``; a
        row near one-hot is a head that serves one offset.
    """
    profile = offset_profile(run)  # (H, L)
    return profile[:, [o % profile.shape[-1] for o in run.offsets]]


def head_ablation(run: FilterRun) -> list[float]:
    """R² with each head removed in turn (``head_mask`` with one zero), at test time."""
    heads = run.num_heads
    return [run.score(1 - torch.eye(heads)[h]) for h in range(heads)]


@dataclass(frozen=True)
class Pruning:
    """Greedy pruning of one model: the order heads were removed, and R² after each removal."""

    removed: list[int]
    r2: list[float]  # r2[0]: all heads; r2[n]: after removing n heads

    @property
    def fraction_removed(self) -> list[float]:
        return [n / len(self.removed) for n in range(len(self.r2))]


def selection_set(run: FilterRun, num_samples: int = 300) -> tuple[Tensor, Tensor]:
    """Fresh sequences from the run's task, for *choosing* heads: ``(x, y)``.

    Drawn from the training distribution (the run's filters, a seed of its own), never from the
    held-out set the results are reported on: a choice made on the test set would be tested on
    the data it was fitted to. Michel et al. (2019, section 4) score heads on training data.
    """
    check_positive_int("num_samples", num_samples)
    seq_len, dim = run.test_x.shape[1], run.test_x.shape[2]
    x, y, _ = offset_filter_task(num_samples, seq_len, dim, run.offsets, seed=run.seed + 3000, filters=run.filters)
    return x, y


def greedy_pruning(run: FilterRun, select_on: tuple[Tensor, Tensor] | None = None) -> Pruning:
    """Remove heads one at a time, each time the one whose removal costs the least R².

    An oracle: at every step it tries every remaining head, on ``select_on`` (default
    :func:`selection_set`); the R² it reports is the held-out one. It re-evaluates the model once
    per remaining head at every step, which a large model cannot afford (Michel et al., 2019,
    order heads by a score instead: :func:`importance_pruning`).
    """
    select_on = selection_set(run) if select_on is None else select_on
    keep = torch.ones(run.num_heads)
    removed, scores = [], [run.score(keep)]
    for _ in range(run.num_heads):
        candidates = [h for h in range(run.num_heads) if keep[h] == 1]
        trial = {h: run.score(keep * (1 - torch.eye(run.num_heads)[h]), data=select_on) for h in candidates}
        best = max(trial, key=trial.get)
        keep[best] = 0
        removed.append(best)
        scores.append(run.score(keep))
    return Pruning(removed, scores)


def exhaustive_pruning(run: FilterRun) -> list[float]:
    """The best held-out R² over *every* set of ``n`` heads removed, for ``n = 0 .. H``.

    Tries all ``2^H`` head masks (256 for 8 heads), so no order can do better: entry ``n`` bounds
    what any pruning order reaches after ``n`` removals, greedy included.

    Returns:
        ``[best R² with n heads removed for n in 0..H]``.
    """
    best = [-math.inf] * (run.num_heads + 1)
    for removed in range(run.num_heads + 1):
        for heads in itertools.combinations(range(run.num_heads), removed):
            keep = torch.ones(run.num_heads)
            keep[list(heads)] = 0
            best[removed] = max(best[removed], run.score(keep))
    return best


def head_importance(run: FilterRun, keep: Tensor | None = None,
                    data: tuple[Tensor, Tensor] | None = None) -> Tensor:
    """Michel et al.'s importance of each head: ``I_h = E_x |dL(x)/d xi_h|``, from one backward pass.

    ``xi`` is the ``head_mask``, one factor per example and head (``(B, H)``, 1 for a kept head,
    0 for a removed one), so one backward pass of the summed per-example losses gives every
    ``dL(x)/d xi_h``. The loss is the squared error on ``data = (x, y)`` (default: the held-out
    set; the pruning orders pass :func:`selection_set`). A removed head keeps its gradient, which
    is not used.

    It is a *ranking* heuristic, not an estimate of what removing the head costs. The model's
    output is linear in ``xi_h``, so with the residual ``r = prediction - y`` and the head's
    contribution ``c_h`` each example's squared error is the parabola ``|r + (xi_h - 1) c_h|^2``:
    its slope at 1 is ``2 <r, c_h>``, small when the fit is good, while removing the head costs
    ``|c_h|^2 - 2 <r, c_h>`` (chapter 4 compares it with :func:`removal_loss_increase`).

    Returns:
        ``(H,)``, larger = more important.
    """
    x, y = (run.test_x, run.test_y) if data is None else data
    keep = torch.ones(run.num_heads) if keep is None else keep
    xi = keep.expand(len(x), run.num_heads).clone().requires_grad_(True)  # (B, H)
    prediction, _ = run.model(x, head_mask=xi)  # (B, L, dim)
    per_example = ((prediction - y) ** 2).mean(dim=(1, 2))  # (B,)
    (grad,) = torch.autograd.grad(per_example.sum(), xi)  # (B, H): dL(x)/d xi_h per example
    return grad.abs().mean(0)


def removal_loss_increase(run: FilterRun, data: tuple[Tensor, Tensor] | None = None) -> Tensor:
    """How much the mean squared error rises when each head alone is removed (``head_mask`` with one 0).

    The quantity :func:`head_importance` ranks heads by, measured instead of estimated from a
    gradient; on ``data = (x, y)`` (default: the held-out set).

    Returns:
        ``(H,)``: ``L(without head h) - L(all heads)``.
    """
    x, y = (run.test_x, run.test_y) if data is None else data
    with torch.no_grad():
        base = F.mse_loss(run.model(x)[0], y)
        return torch.stack([F.mse_loss(run.model(x, head_mask=1 - torch.eye(run.num_heads)[h])[0], y) - base
                            for h in range(run.num_heads)])


def _prune_in_order(run: FilterRun, choose) -> Pruning:
    keep = torch.ones(run.num_heads)
    removed, scores = [], [run.score(keep)]
    for _ in range(run.num_heads):
        head = choose(keep)
        keep[head] = 0
        removed.append(head)
        scores.append(run.score(keep))
    return Pruning(removed, scores)


def importance_pruning(run: FilterRun, select_on: tuple[Tensor, Tensor] | None = None) -> Pruning:
    """Remove heads one at a time, each time the kept head of lowest :func:`head_importance`.

    Michel et al. (2019, section 4) prune 10 % of a large model's heads per step by this score,
    computed on training data; with 8 heads this removes one per step, recomputing the score with
    the heads already removed, on ``select_on`` (default :func:`selection_set`). The R² it reports
    is the held-out one.
    """
    select_on = selection_set(run) if select_on is None else select_on

    def least_important(keep: Tensor) -> int:
        scores = head_importance(run, keep, data=select_on).masked_fill(keep == 0, float("inf"))
        return int(scores.argmin())
    return _prune_in_order(run, least_important)


def random_pruning(run: FilterRun, seed: int = 0) -> Pruning:
    """Remove heads in a random order: the baseline for the two informed orders."""
    order = torch.randperm(run.num_heads, generator=seeding.generator(seed)).tolist()
    return _prune_in_order(run, lambda keep: order[int((keep == 0).sum())])


def break_one_head(run: FilterRun, how: str = "zero") -> list[float]:
    """R² after breaking each head in turn: ``"zero"`` (head_mask) or ``"reinit"`` (fresh random
    rows of ``q_proj.weight``, ``k_proj.weight``, ``v_proj.weight`` and positional bias for that head, the rest
    unchanged)."""
    if how == "zero":
        return head_ablation(run)
    if how != "reinit":
        raise ValueError(f"how must be 'zero' or 'reinit', got {how!r}")
    results = []
    for h in range(run.num_heads):
        state = {k: v.clone() for k, v in run.model.state_dict().items()}
        redraw_head(run.model, h)
        results.append(run.score())
        run.model.load_state_dict(state)
    return results


def redraw_head(model: FilterHeads, head: int, generator: torch.Generator | None = None) -> None:
    """Re-draw one head's rows of ``q_proj``, ``k_proj``, ``v_proj`` weights and zero its position bias, in place.

    Uniform in ``+-1/sqrt(D)`` (as :class:`torch.nn.Linear` initialises), drawn from ``generator``,
    by default ``seeding.generator(head)``; the projections' biases are kept. The
    ``"reinit"`` of :func:`break_one_head`, and the start of a bad head in
    :mod:`helpers.experiments.heads_robustness`.
    """
    generator = seeding.generator(head) if generator is None else generator
    attention = model.attention
    rows = slice(head * attention.head_dim, (head + 1) * attention.head_dim)  # the head's E rows of D
    with torch.no_grad():
        for proj in (attention.q_proj, attention.k_proj, attention.v_proj):
            bound = proj.in_features ** -0.5
            proj.weight[rows] = (torch.rand(proj.weight[rows].shape, generator=generator) * 2 - 1) * bound  # (E, D)
        model.position_bias[head] = 0.0  # (L,)


class RecallHeads(nn.Module):
    """A lookup by content: the query key attends over P keys and reads their values.

    ``MultiHeadAttention(query=emb(q), key=emb(keys), value=emb(values))`` followed by a linear
    read-out: to answer, a head's score must single out the matching key among P, which needs
    enough dimensions in ``q . k`` (a head of size 1 scores every key on one line).
    """

    def __init__(self, num_keys: int, num_values: int, embed_dim: int, num_heads: int) -> None:
        super().__init__()
        self.num_keys = num_keys
        self.embed = nn.Embedding(num_keys + num_values, embed_dim)
        self.attention = MultiHeadAttention(embed_dim, num_heads)
        self.readout = nn.Linear(embed_dim, num_values)

    def forward(self, tokens: Tensor, head_mask: Tensor | None = None, need_weights: bool = False
                ) -> tuple[Tensor, Tensor | None]:
        keys, values, query = tokens[:, 0:-1:2], tokens[:, 1:-1:2], tokens[:, -1:]  # (B, P), (B, P), (B, 1)
        out, weights = self.attention(self.embed(query), self.embed(keys), self.embed(values),
                                      head_mask=head_mask, need_weights=need_weights)  # (B, 1, D)
        return self.readout(out[:, 0]), weights  # (B, V)


def recall_head_sweep(num_heads: Sequence[int], seeds: Sequence[int] = (0, 1, 2), *, embed_dim: int = 16,
                      num_pairs: int = 8, num_keys: int = 16, num_values: int = 8, steps: int = 300,
                      batch_size: int = 64, lr: float = 1e-2) -> dict[int, list[float]]:
    """Test accuracy of :class:`RecallHeads` for each number of heads at fixed ``embed_dim``.

    Returns:
        ``{H: [accuracy per seed]}``.
    """
    results: dict[int, list[float]] = {}
    for h in check_positive_ints("num_heads", num_heads):
        results[h] = []
        for seed in seeds:
            tokens, target = associative_recall_task(steps * batch_size, num_pairs, num_keys, num_values,
                                                     seed=seed + 1000)
            test_tokens, test_target = associative_recall_task(2000, num_pairs, num_keys, num_values, seed=seed + 2000)
            target, test_target = target - num_keys, test_target - num_keys  # value index 0 .. V-1
            set_seed(seed)
            model = RecallHeads(num_keys, num_values, embed_dim, h)
            with num_threads(1):
                train(model, lambda s: (tokens[s * batch_size:(s + 1) * batch_size],
                                        target[s * batch_size:(s + 1) * batch_size]),
                      steps=steps, lr=lr, seed=seed)
                model.eval()
                with torch.no_grad():
                    accuracy = (model(test_tokens)[0].argmax(-1) == test_target).float().mean().item()
            results[h].append(accuracy)
    return results
