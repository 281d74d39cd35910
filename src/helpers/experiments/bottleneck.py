"""Chapter 1's experiments: why attention, from an information bottleneck to dynamic focus.

Each function measures one claim of the chapter on the package's own models
(:class:`~helpers.rnn.Seq2SeqGRU`, :class:`~helpers.multihead.MultiHeadAttention`):

1. :func:`bottleneck_sweep` -- the fixed-size state is a bottleneck: GRU encoder-decoders with
   and without additive attention, trained side by side on one task, scored against the source
   length; with learning curves at the longest length and the alignment of a watched example
   captured during training (the replay slider). :func:`alignment_mass` scores an alignment
   against the positions the task reads from.
2. :func:`occlusion_dependence` -- what an alignment does *not* show: how much each output
   actually changes when one source token is replaced, to set beside the attention weights.
3. :func:`geometric_decay_rate` -- the factor by which a gradient shrinks per step of distance
   (for :func:`helpers.rnn.gradient_by_distance`).
4. :func:`operation_profile`, :func:`operation_profiles` -- parallelism, counted rather than
   timed: how many matrix products a GRU and a self-attention layer run over ``n`` tokens, and
   the longest chain of them that must run one after another.

Shape legend::

    B     batch size
    S     source length
    T     target length (= S for the copy and reverse tasks)
    V     vocabulary size
    n     sequence length of the parallelism measurements
    d     model width

Every function is seeded and deterministic: the same arguments give the same numbers.
Explained in chapter 1.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from ..multihead import MultiHeadAttention
from ..rnn import AlignmentRecorder, Seq2SeqGRU, evaluate_seq2seq, train_seq2seq
from ..tasks import FIRST_CONTENT_TOKEN, copy_task, reverse_task, sort_task
from ..train import TrainingHistory, num_threads, set_seed

__all__ = [
    "MODEL_LABELS",
    "BottleneckResult",
    "bottleneck_sweep",
    "source_positions",
    "alignment_mass",
    "occlusion_dependence",
    "geometric_decay_rate",
    "OperationProfile",
    "operation_profile",
    "operation_profiles",
]

MODEL_LABELS: dict[bool, str] = {False: "GRU, no attention", True: "GRU + attention"}
"""Curve names of the two models, keyed by ``attention``."""

_TASKS: dict[str, Callable[..., tuple[Tensor, Tensor]]] = {
    "copy": copy_task, "reverse": reverse_task, "sort": sort_task,
}


# --------------------------------------------------------------------------------------------
# 1. The bottleneck: accuracy against length, learning curves, alignment replay
# --------------------------------------------------------------------------------------------


@dataclass
class BottleneckResult:
    """What :func:`bottleneck_sweep` measured.

    Attributes:
        rows: One dict per (hidden size, attention, evaluation length), in that loop order,
            with keys ``attention``, ``hidden_dim``, ``seq_len``, ``token_accuracy``,
            ``sequence_accuracy``, ``train_seconds``.
        curve_length: The source length of the learning curves.
        curves: ``(attention, hidden_dim)`` -> ``{"step": [...], "token_accuracy": [...],
            "sequence_accuracy": [...]}``: accuracy at ``curve_length`` during training (the
            step counts optimisation steps done; step 0 is the untrained model).
        histories: ``(attention, hidden_dim)`` -> the model's training history.
        models: ``(attention, hidden_dim)`` -> the trained model.
        watch_src: The watched source sequence ``(1, S)`` (None if nothing was watched).
        watch_tgt: Its target ``(1, T)``.
        watch_hidden: Hidden size of the attention model whose alignment was recorded.
        replay_steps: Optimisation steps done at each captured alignment.
        replay_alignments: The captured alignments, each ``(T, S)``.
        replay_losses: The training loss of the batch at each captured step (``nan`` at step 0).
    """

    rows: list[dict[str, Any]]
    curve_length: int
    curves: dict[tuple[bool, int], dict[str, list[float]]]
    histories: dict[tuple[bool, int], TrainingHistory]
    models: dict[tuple[bool, int], Seq2SeqGRU]
    watch_src: Tensor | None = None
    watch_tgt: Tensor | None = None
    watch_hidden: int | None = None
    replay_steps: list[int] = field(default_factory=list)
    replay_alignments: list[Tensor] = field(default_factory=list)
    replay_losses: list[float] = field(default_factory=list)

    @property
    def hidden_sizes(self) -> list[int]:
        """The hidden sizes, in the order they were trained."""
        return list(dict.fromkeys(int(r["hidden_dim"]) for r in self.rows))

    @property
    def lengths(self) -> list[int]:
        """The evaluation lengths, ascending."""
        return sorted({int(r["seq_len"]) for r in self.rows})

    def accuracy(self, attention: bool, hidden_dim: int, metric: str = "token_accuracy") -> list[float]:
        """One model's accuracy at each evaluation length (ascending lengths)."""
        if metric not in ("token_accuracy", "sequence_accuracy"):
            raise ValueError(f"metric must be 'token_accuracy' or 'sequence_accuracy', got {metric!r}")
        by_length = {int(r["seq_len"]): float(r[metric]) for r in self.rows
                     if r["attention"] == attention and r["hidden_dim"] == hidden_dim}
        if not by_length:
            raise KeyError(f"no model with attention={attention}, hidden_dim={hidden_dim}; "
                           f"hidden sizes: {self.hidden_sizes}")
        return [by_length[n] for n in self.lengths]

    def by_hidden_size(self, metric: str = "token_accuracy") -> dict[str, dict[str, list[float]]]:
        """``{"16": {label: accuracies}, ...}``, keyed by hidden size: the curves of :func:`helpers.viz.line_sweep`."""
        return {str(h): {MODEL_LABELS[a]: self.accuracy(a, h, metric) for a in (False, True)}
                for h in self.hidden_sizes}

    def train_seconds(self, attention: bool, hidden_dim: int) -> float:
        """Wall time of one model's training, in seconds."""
        return float(next(r["train_seconds"] for r in self.rows
                          if r["attention"] == attention and r["hidden_dim"] == hidden_dim))


def bottleneck_sweep(
    train_lengths: Sequence[int],
    hidden_sizes: Sequence[int],
    *,
    steps: int,
    eval_lengths: Sequence[int] | None = None,
    task: str = "reverse",
    vocab_size: int = 12,
    embed_dim: int = 16,
    batch_size: int = 32,
    lr: float = 1e-2,
    num_eval: int = 256,
    seed: int = 0,
    curve_length: int | None = None,
    curve_every: int = 100,
    curve_samples: int = 128,
    watch_length: int | None = None,
    watch_hidden: int | None = None,
    watch_every: int = 50,
) -> BottleneckResult:
    """Train GRU encoder-decoders with and without attention; score them against length.

    Besides accuracy against length, it records what the chapter needs: the evaluation lengths
    may differ from the training lengths, each model's accuracy at ``curve_length`` is measured during training (is the model still
    learning there?), and the alignment of one watched example is captured every
    ``watch_every`` steps while the attention model of size ``watch_hidden`` trains (the replay
    slider). For each hidden size and each of ``attention in (False, True)``: seed, build a
    :class:`~helpers.rnn.Seq2SeqGRU`, train it with :func:`~helpers.rnn.train_seq2seq` on
    lengths drawn uniformly from ``train_lengths``, then decode greedily at every evaluation
    length (:func:`~helpers.rnn.evaluate_seq2seq`). The learning rate follows
    :func:`~helpers.rnn.train_seq2seq`'s default schedule (a cosine decay to 0 over ``steps``).
    Runs single-threaded.

    Args:
        train_lengths: Source lengths to train on.
        hidden_sizes: Hidden sizes H to compare.
        steps: Optimisation steps per model.
        eval_lengths: Lengths to evaluate at (default: ``train_lengths``).
        task: ``"reverse"``, ``"copy"`` or ``"sort"``.
        vocab_size: Vocabulary size, the two special tokens included.
        embed_dim: Embedding size.
        batch_size: Training batch size.
        lr: AdamW learning rate.
        num_eval: Test sequences per evaluation length.
        seed: Seed of initialisation and training data; test data use ``seed + 10_007``.
        curve_length: Length of the learning curves (default: the longest evaluation length).
        curve_every: Period of the learning-curve evaluations, in steps.
        curve_samples: Test sequences per learning-curve point.
        watch_length: Length of the watched example (``None``: no replay).
        watch_hidden: Hidden size of the watched attention model (default: the last one).
        watch_every: Capture period in steps.

    Returns:
        A :class:`BottleneckResult`.
    """
    train_lengths = _positive_ints("train_lengths", train_lengths)
    hidden_sizes = _positive_ints("hidden_sizes", hidden_sizes)
    eval_lengths = train_lengths if eval_lengths is None else _positive_ints("eval_lengths", eval_lengths)
    if task not in _TASKS:
        raise ValueError(f"task must be one of {sorted(_TASKS)}, got {task!r}")
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    for name, value in (("curve_every", curve_every), ("watch_every", watch_every), ("curve_samples", curve_samples)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    curve_length = max(eval_lengths) if curve_length is None else curve_length
    watch_hidden = hidden_sizes[-1] if watch_hidden is None else watch_hidden
    if watch_length is not None and watch_hidden not in hidden_sizes:
        raise ValueError(f"watch_hidden ({watch_hidden}) must be one of hidden_sizes {hidden_sizes}")

    result = BottleneckResult(rows=[], curve_length=curve_length, curves={}, histories={}, models={})
    if watch_length is not None:
        src, tgt = _TASKS[task](1, watch_length, vocab_size, seed=seed + 20_011)  # (1, S), (1, T)
        result.watch_src, result.watch_tgt, result.watch_hidden = src, tgt, watch_hidden
    test_seed = seed + 10_007  # test data disjoint in seed from the training data

    with num_threads(1):
        for hidden_dim in hidden_sizes:
            for attention in (False, True):
                set_seed(seed)
                model = Seq2SeqGRU(vocab_size, embed_dim, hidden_dim, attention=attention)
                key = (attention, hidden_dim)
                curve: dict[str, list[float]] = {"step": [], "token_accuracy": [], "sequence_accuracy": []}

                def measure_curve(done: int, model: nn.Module = model, curve: dict = curve) -> None:
                    metrics = evaluate_seq2seq(model, curve_length, task=task, num_samples=curve_samples,
                                               seed=test_seed + 1)
                    curve["step"].append(done)
                    curve["token_accuracy"].append(metrics["token_accuracy"])
                    curve["sequence_accuracy"].append(metrics["sequence_accuracy"])

                recorder = None
                if watch_length is not None and attention and hidden_dim == watch_hidden:
                    recorder = AlignmentRecorder(result.watch_src, result.watch_tgt, every=watch_every)
                    recorder(0, model, TrainingHistory())  # the untrained alignment, as "step 0"

                def callback(step: int, model: nn.Module, history: TrainingHistory,
                             recorder: AlignmentRecorder | None = recorder,
                             measure_curve: Callable[[int], None] = measure_curve) -> None:
                    done = step + 1  # optimisation steps done after this one
                    if done % curve_every == 0 or done == steps:
                        measure_curve(done)
                    if recorder is not None:
                        recorder(done, model, history)  # snapshots when done % watch_every == 0

                measure_curve(0)
                start = time.perf_counter()
                history = train_seq2seq(model, task=task, lengths=train_lengths, steps=steps,
                                        batch_size=batch_size, lr=lr, seed=seed, callback=callback)
                seconds = time.perf_counter() - start
                for seq_len in eval_lengths:
                    metrics = evaluate_seq2seq(model, seq_len, task=task, num_samples=num_eval, seed=test_seed)
                    result.rows.append({"attention": attention, "hidden_dim": hidden_dim, "seq_len": seq_len,
                                        **metrics, "train_seconds": seconds})
                result.curves[key] = curve
                result.histories[key] = history
                result.models[key] = model
                if recorder is not None:
                    result.replay_steps = list(recorder.steps)
                    result.replay_alignments = [a[0] for a in recorder.alignments]  # (T, S) each
                    result.replay_losses = [math.nan if s == 0 else history.loss[s - 1] for s in recorder.steps]
    return result


def _positive_ints(name: str, values: Sequence[int]) -> list[int]:
    values = list(values)
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"{name} must be a non-empty sequence of positive ints, got {values!r}")
    return values


def source_positions(task: str, src: Tensor) -> Tensor:
    """For each output step, the source position a perfect model reads from.

    ``copy``: output ``i`` reads source ``i``; ``reverse``: source ``S - 1 - i``; ``sort``: the
    position of the ``i``-th smallest token (ties in source order, as a stable sort gives).

    Args:
        task: ``"copy"``, ``"reverse"`` or ``"sort"``.
        src: Source tokens.

    Returns:
        Source positions, int64.

    Shape:
        src ``(B, S)`` -> ``(B, S)``.
    """
    if not isinstance(src, Tensor) or src.dim() != 2:
        raise ValueError(f"src must be a (B, S) tensor, got {getattr(src, 'shape', type(src))}")
    batch, length = src.shape
    if task == "copy":
        return torch.arange(length).expand(batch, length).clone()
    if task == "reverse":
        return torch.arange(length - 1, -1, -1).expand(batch, length).clone()
    if task == "sort":
        return torch.sort(src, dim=1, stable=True).indices
    raise ValueError(f"task must be 'copy', 'reverse' or 'sort', got {task!r}")


def alignment_mass(alignment: Tensor, positions: Tensor, *, window: int = 0) -> float:
    """Mean attention weight within ``window`` positions of where each output step should read.

    With ``window=0``: the weight on the exact source position; 1 for an alignment that puts
    all its weight where the task reads from, ``1 / S`` for a uniform one. A bidirectional
    encoder state ``h_j`` also carries its neighbours' tokens, so a trained model may read
    token ``j`` from ``h_{j+1}`` or ``h_{j-1}``: ``window=1`` counts those too.

    Args:
        alignment: Attention of each output step over the source (rows sum to 1).
        positions: The source position of each output step (:func:`source_positions`).
        window: How far from the position a weight still counts (``>= 0``).

    Returns:
        The mean weight, in [0, 1].

    Shape:
        alignment ``(T, S)`` or ``(B, T, S)``; positions ``(T,)`` or ``(B, T)``.
    """
    if not isinstance(window, int) or isinstance(window, bool) or window < 0:
        raise ValueError(f"window must be an int >= 0, got {window!r}")
    if alignment.dim() == 2:
        alignment = alignment[None]
    if positions.dim() == 1:
        positions = positions[None]
    if alignment.dim() != 3 or positions.shape != alignment.shape[:2]:
        raise ValueError(f"alignment must be (B, T, S) and positions (B, T), got {tuple(alignment.shape)} "
                         f"and {tuple(positions.shape)}")
    columns = torch.arange(alignment.shape[-1])  # (S,)
    near = (columns - positions[..., None]).abs() <= window  # (B, T, 1) vs (S,) -> (B, T, S)
    return (alignment * near).sum(-1).mean().item()


# --------------------------------------------------------------------------------------------
# 2. What an alignment does not show: dependence measured by occlusion
# --------------------------------------------------------------------------------------------


@torch.no_grad()
def occlusion_dependence(model: torch.nn.Module, src: Tensor, tgt: Tensor, *, vocab_size: int | None = None) -> Tensor:
    """How much each output changes when one source token is replaced: dependence, measured.

    For each source position ``j`` the token there is replaced by the next content token
    (``FIRST_CONTENT_TOKEN .. V - 1``, cyclically), and the teacher-forced output distribution
    of every step ``i`` is compared with the original one by total-variation distance
    ``0.5 * sum_v |p_i(v) - p'_i(v)|``: 0 when output ``i`` ignores token ``j``, 1 when it
    changes completely. Unlike an attention weight, this is what the output *does* with the
    token (Jain & Wallace, 2019, compare attention with such measures). Explained in chapter 1;
    chapter 6 returns to reading attention maps.

    Args:
        model: A model called as ``model(src, tgt)`` that returns ``logits`` or
            ``(logits, ...)``, e.g. :class:`~helpers.rnn.Seq2SeqGRU`.
        src: Source tokens of one sequence.
        tgt: Its target tokens (teacher forcing).
        vocab_size: Vocabulary size (default ``model.vocab_size``).

    Returns:
        The dependence matrix, whose entry ``[i, j]`` is the change of output ``i`` when source
        token ``j`` is replaced.

    Shape:
        src ``(1, S)``, tgt ``(1, T)`` -> ``(T, S)``.
    """
    if not isinstance(src, Tensor) or src.dim() != 2 or src.shape[0] != 1:
        raise ValueError(f"src must be one sequence (1, S), got {getattr(src, 'shape', type(src))}")
    if not isinstance(tgt, Tensor) or tgt.dim() != 2 or tgt.shape[0] != 1:
        raise ValueError(f"tgt must be one sequence (1, T), got {getattr(tgt, 'shape', type(tgt))}")
    vocab_size = vocab_size if vocab_size is not None else getattr(model, "vocab_size", None)
    if not isinstance(vocab_size, int) or vocab_size <= FIRST_CONTENT_TOKEN + 1:
        raise ValueError(f"vocab_size must be an int > {FIRST_CONTENT_TOKEN + 1}, got {vocab_size!r}")
    length = src.shape[1]
    n_content = vocab_size - FIRST_CONTENT_TOKEN
    occluded = src.repeat(length, 1)  # (S, S): row j will have token j replaced
    rows = torch.arange(length)
    occluded[rows, rows] = (occluded[rows, rows] - FIRST_CONTENT_TOKEN + 1) % n_content + FIRST_CONTENT_TOKEN
    was_training = model.training
    model.eval()
    batch_src = torch.cat([src, occluded])  # (1 + S, S): the original first
    output = model(batch_src, tgt.expand(1 + length, -1))
    model.train(was_training)
    logits = output[0] if isinstance(output, (tuple, list)) else output  # (1 + S, T, V)
    probs = torch.softmax(logits.float(), dim=-1)  # (1 + S, T, V)
    change = 0.5 * (probs[1:] - probs[:1]).abs().sum(-1)  # (S, T): row j = source j replaced
    return change.T.contiguous()  # (T, S)


# --------------------------------------------------------------------------------------------
# 3. Path length: how fast a gradient decays with distance
# --------------------------------------------------------------------------------------------


def geometric_decay_rate(values: Tensor | Sequence[float], distances: Tensor | Sequence[float] | None = None) -> float:
    """The per-step factor ``r`` of a geometric fit ``values ~ c * r ** distance``.

    A least-squares line through ``(distance, log value)``; ``r = exp(slope)``. ``r < 1`` means
    the values shrink by that factor per step of distance (a GRU's gradient, chapter 1);
    ``r = 1`` means no decay. Non-positive values are left out of the fit.

    Args:
        values: Positive measurements, e.g. gradient norms by distance.
        distances: Their distances (default ``0, 1, 2, ...``).

    Returns:
        The fitted factor per unit of distance.

    Shape:
        values, distances: ``(n,)``.
    """
    y = torch.as_tensor(values, dtype=torch.float64).flatten()
    x = torch.arange(len(y), dtype=torch.float64) if distances is None else torch.as_tensor(distances, dtype=torch.float64).flatten()
    if x.shape != y.shape:
        raise ValueError(f"values and distances must have the same length, got {len(y)} and {len(x)}")
    keep = y > 0
    if keep.sum() < 2:
        raise ValueError(f"need at least two positive values to fit a rate, got {keep.sum().item()}")
    x, log_y = x[keep], y[keep].log()
    x_centred = x - x.mean()
    slope = (x_centred * (log_y - log_y.mean())).sum() / x_centred.pow(2).sum()
    return math.exp(slope.item())


# --------------------------------------------------------------------------------------------
# 4. Parallelism, counted: matrix products and the longest chain of them
# --------------------------------------------------------------------------------------------

_MATMUL_OPS = frozenset({"aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm", "aten.addbmm", "aten.mv",
                         "aten.addmv", "aten.dot"})


class _DependencyCounter(TorchDispatchMode):
    """Counts the ATen operations a computation runs and its chains of matrix products.

    Every tensor is given a depth: the largest number of matrix products on any path from the
    inputs to it. A matrix product's output has the depth of its deepest input plus one; any
    other operation passes on the depth of its deepest input (in-place operations included).
    """

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()
        self.depth = WeakIdKeyDictionary()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = str(func.overloadpacket)
        self.ops[name] += 1
        inputs = [t for t in _flat(args) + _flat(list(kwargs.values())) if isinstance(t, Tensor)]
        depth = max((self.depth.get(t, 0) for t in inputs), default=0) + (name in _MATMUL_OPS)
        out = func(*args, **kwargs)
        for t in _flat([out]):
            if isinstance(t, Tensor):
                self.depth[t] = max(depth, self.depth.get(t, 0))
        if name.endswith("_") and inputs:  # in-place: the first argument is the output
            self.depth[inputs[0]] = max(depth, self.depth.get(inputs[0], 0))
        return out


def _flat(items: Any) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(_flat(item))
        else:
            out.append(item)
    return out


@dataclass(frozen=True)
class OperationProfile:
    """What one forward computation ran.

    Attributes:
        ops: Number of ATen operations (every kernel call, views included).
        matmuls: Number of matrix products (``mm``, ``addmm``, ``bmm``, ...).
        matmul_depth: The longest chain of matrix products in which each needs the previous
            one's result: the products that must run one after another, however many
            processors there are.
        op_names: Count of each ATen operation.
    """

    ops: int
    matmuls: int
    matmul_depth: int
    op_names: dict[str, int]


@torch.no_grad()
def operation_profile(fn: Callable[..., Any], *args: Any) -> OperationProfile:
    """Run ``fn(*args)`` once and count its operations and its chain of matrix products.

    Counting happens at PyTorch's dispatcher (a ``TorchDispatchMode``), so the operations
    inside a fused module such as :class:`torch.nn.GRU` are seen one by one.

    Args:
        fn: The computation, e.g. a module.
        *args: Its inputs.

    Returns:
        An :class:`OperationProfile`.
    """
    counter = _DependencyCounter()
    with counter:
        out = fn(*args)
    outputs = [t for t in _flat([out]) if isinstance(t, Tensor)]
    depth = max((counter.depth.get(t, 0) for t in outputs), default=0)
    ops = dict(counter.ops)
    return OperationProfile(ops=sum(ops.values()), matmuls=sum(c for k, c in ops.items() if k in _MATMUL_OPS),
                            matmul_depth=int(depth), op_names=ops)


def operation_profiles(lengths: Sequence[int], dim: int = 32, *, batch_size: int = 1, seed: int = 0) -> list[dict[str, int]]:
    """Matrix products of a GRU over ``n`` steps and of one self-attention layer over ``n`` tokens.

    The GRU is :class:`torch.nn.GRU` (one layer, width ``dim``); the self-attention layer is
    :class:`~helpers.multihead.MultiHeadAttention` with one head (its readable path:
    projections, ``Q K^T``, softmax, weights times ``V``, output projection). For each length
    the table gives both models' number of matrix products and their longest dependent chain
    (:func:`operation_profile`). The GRU's chain grows with ``n``: step ``t`` needs the state of
    step ``t - 1``. Attention's does not: every token is computed by the same few products at
    once. Explained in chapter 1.

    Args:
        lengths: Sequence lengths n.
        dim: Model width d.
        batch_size: Batch size.
        seed: Seed of the weights and inputs.

    Returns:
        A list with one dict per length, with the keys ``seq_len``, ``gru_ops``, ``gru_matmuls``,
        ``gru_depth``, ``attention_ops``, ``attention_matmuls`` and ``attention_depth``.
    """
    lengths = _positive_ints("lengths", lengths)
    set_seed(seed)
    gru = nn.GRU(dim, dim, batch_first=True)
    attention = MultiHeadAttention(dim, num_heads=1)

    def self_attention(x: Tensor) -> Tensor:
        return attention(x, need_weights=True)[0]  # (B, n, d)

    rows = []
    with num_threads(1):
        for n in lengths:
            x = torch.randn(batch_size, n, dim)  # (B, n, d)
            rnn = operation_profile(lambda inputs: gru(inputs)[0], x)
            att = operation_profile(self_attention, x)
            rows.append({"seq_len": n, "gru_ops": rnn.ops, "gru_matmuls": rnn.matmuls, "gru_depth": rnn.matmul_depth,
                         "attention_ops": att.ops, "attention_matmuls": att.matmuls,
                         "attention_depth": att.matmul_depth})
    return rows
