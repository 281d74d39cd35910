"""The information bottleneck of chapter 1: accuracy against source length, with and without attention.

:func:`bottleneck_sweep` trains GRU encoder-decoders (:class:`~helpers.rnn.Seq2SeqGRU`) with and
without additive attention side by side on one task, and scores them against the length of the
source: without attention the whole source must pass through a fixed-size state (Cho et al.,
2014; Sutskever et al., 2014), with attention the decoder reads every encoder state (Bahdanau et
al., 2015). It also records the learning curves at the longest length and the alignment of a
watched example during training (the chapter's replay slider); :class:`BottleneckResult` holds
it all. The other measurements of the chapter are in :mod:`helpers.experiments.alignments`,
:mod:`helpers.experiments.gradient_paths` and :mod:`helpers.experiments.parallelism`.

Shape legend::

    B     batch size
    S     source length
    T     target length (= S for the copy, reverse and sort tasks)

Seeded and deterministic: the same arguments give the same numbers (the training times apart),
whether the models train one after another or in ``workers`` processes side by side.
Explained in chapter 1.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from torch import Tensor, nn

from ..checks import check_positive_int, check_positive_ints
from ..rnn import Seq2SeqGRU
from ..train import TrainingHistory, num_threads, set_seed
from .seq2seq_training import AlignmentRecorder, evaluate_seq2seq, seq2seq_task, train_seq2seq

__all__ = [
    "MODEL_LABELS",
    "BottleneckResult",
    "bottleneck_sweep",
    "bottleneck_sweeps",
]

MODEL_LABELS: dict[bool, str] = {False: "GRU, no attention", True: "GRU + attention"}
"""Curve names of the two models, keyed by ``attention``."""


@dataclass
class BottleneckResult:
    """What :func:`bottleneck_sweep` measured.

    Every model is trained once per seed; the accessors average over the seeds unless given
    one, and :meth:`accuracy_range` gives the spread (lowest and highest seed).

    Attributes:
        rows: One dict per (hidden size, attention, seed, evaluation length), in that loop
            order, with keys ``attention``, ``hidden_size``, ``seed``, ``seq_len``,
            ``token_accuracy``, ``sequence_accuracy``, ``train_seconds``.
        curve_length: The source length of the learning curves.
        curves: ``(attention, hidden_size)`` -> ``{"step": [...], "token_accuracy": [...],
            "sequence_accuracy": [...]}``: accuracy at ``curve_length`` during training (the
            step counts optimisation steps done; step 0 is the untrained model), mean over seeds.
        curves_by_seed: ``(attention, hidden_size, seed)`` -> the same curve for one seed.
        length_curves: ``(attention, hidden_size)`` -> ``{length: token accuracies}``: the learning curve at
            every length of ``curve_lengths`` (``curve_length`` included), mean over seeds, at the steps of
            ``curves``.
        length_curves_by_seed: ``(attention, hidden_size, seed)`` -> the same for one seed.
        histories: ``(attention, hidden_size)`` -> the training history of the first seed.
        models: ``(attention, hidden_size)`` -> the trained model of the first seed.
        models_by_seed: ``(attention, hidden_size, seed)`` -> every trained model.
        watch_src: The watched source sequence ``(1, S)`` (None if nothing was watched).
        watch_tgt: Its target ``(1, T)``.
        watch_hidden: Hidden size of the attention model whose alignment was recorded (first seed).
        replay_steps: Optimisation steps done at each captured alignment.
        replay_alignments: The captured alignments, each ``(T, S)``.
        replay_losses: The training loss of the batch at each captured step (``nan`` at step 0).
    """

    rows: list[dict[str, Any]]
    curve_length: int
    curves: dict[tuple[bool, int], dict[str, list[float]]]
    histories: dict[tuple[bool, int], TrainingHistory]
    models: dict[tuple[bool, int], Seq2SeqGRU]
    curves_by_seed: dict[tuple[bool, int, int], dict[str, list[float]]] = field(default_factory=dict)
    models_by_seed: dict[tuple[bool, int, int], Seq2SeqGRU] = field(default_factory=dict)
    length_curves: dict[tuple[bool, int], dict[int, list[float]]] = field(default_factory=dict)
    length_curves_by_seed: dict[tuple[bool, int, int], dict[int, list[float]]] = field(default_factory=dict)
    watch_src: Tensor | None = None
    watch_tgt: Tensor | None = None
    watch_hidden: int | None = None
    replay_steps: list[int] = field(default_factory=list)
    replay_alignments: list[Tensor] = field(default_factory=list)
    replay_losses: list[float] = field(default_factory=list)

    @property
    def hidden_sizes(self) -> list[int]:
        """The hidden sizes, in the order they were trained."""
        return list(dict.fromkeys(int(r["hidden_size"]) for r in self.rows))

    @property
    def seeds(self) -> list[int]:
        """The seeds, in the order they were trained."""
        return list(dict.fromkeys(int(r.get("seed", 0)) for r in self.rows))

    @property
    def lengths(self) -> list[int]:
        """The evaluation lengths, ascending."""
        return sorted({int(r["seq_len"]) for r in self.rows})

    def _by_seed(self, attention: bool, hidden_size: int, metric: str) -> dict[int, list[float]]:
        if metric not in ("token_accuracy", "sequence_accuracy"):
            raise ValueError(f"metric must be 'token_accuracy' or 'sequence_accuracy', got {metric!r}")
        table: dict[int, dict[int, float]] = {}
        for r in self.rows:
            if r["attention"] == attention and r["hidden_size"] == hidden_size:
                table.setdefault(int(r.get("seed", 0)), {})[int(r["seq_len"])] = float(r[metric])
        if not table:
            raise KeyError(f"no model with attention={attention}, hidden_size={hidden_size}; "
                           f"hidden sizes: {self.hidden_sizes}")
        return {seed: [by_length[n] for n in self.lengths] for seed, by_length in table.items()}

    def accuracy(self, attention: bool, hidden_size: int, metric: str = "token_accuracy",
                 seed: int | None = None) -> list[float]:
        """One model's accuracy at each evaluation length (ascending lengths): the mean over
        seeds, or one seed's."""
        runs = self._by_seed(attention, hidden_size, metric)
        if seed is not None:
            if seed not in runs:
                raise KeyError(f"no seed {seed}; seeds: {sorted(runs)}")
            return runs[seed]
        return [sum(values) / len(values) for values in zip(*runs.values())]

    def accuracy_range(self, attention: bool, hidden_size: int,
                       metric: str = "token_accuracy") -> tuple[list[float], list[float]]:
        """The spread over seeds: the lowest and the highest seed's accuracy at each length."""
        runs = list(self._by_seed(attention, hidden_size, metric).values())
        return [min(v) for v in zip(*runs)], [max(v) for v in zip(*runs)]

    def by_hidden_size(self, metric: str = "token_accuracy") -> dict[str, dict[str, list[float]]]:
        """``{"16": {label: accuracies}, ...}``, keyed by hidden size: the curves of :func:`helpers.viz.line_sweep`
        (means over seeds)."""
        return {str(h): {MODEL_LABELS[a]: self.accuracy(a, h, metric) for a in (False, True)}
                for h in self.hidden_sizes}

    def train_seconds(self, attention: bool, hidden_size: int) -> float:
        """Wall time of one model's training, in seconds (mean over seeds)."""
        times = {int(r.get("seed", 0)): float(r["train_seconds"]) for r in self.rows
                 if r["attention"] == attention and r["hidden_size"] == hidden_size}
        return sum(times.values()) / len(times)


def _train_one(job: dict[str, Any]) -> dict[str, Any]:
    """Train and score one model of the sweep (one hidden size, attention or not, one seed).

    A module-level function so that :func:`bottleneck_sweep` can run it in worker processes.
    """
    hidden_size, attention, seed, task = job["hidden_size"], job["attention"], job["seed"], job["task"]
    steps, curve_every, curve_length = job["steps"], job["curve_every"], job["curve_length"]
    test_seed = seed + 10_007  # test data disjoint in seed from the training data
    with num_threads(1):
        set_seed(seed)
        model = Seq2SeqGRU(job["vocab_size"], job["embed_dim"], hidden_size, attention=attention)
        curve: dict[str, list[float]] = {"step": [], "token_accuracy": [], "sequence_accuracy": []}
        by_length: dict[int, list[float]] = {n: [] for n in job["curve_lengths"]}

        def measure_curve(done: int) -> None:
            curve["step"].append(done)
            for length in by_length:
                metrics = evaluate_seq2seq(model, length, task=task, num_samples=job["curve_samples"],
                                           seed=test_seed + 1)
                by_length[length].append(metrics["token_accuracy"])
                if length == curve_length:
                    curve["token_accuracy"].append(metrics["token_accuracy"])
                    curve["sequence_accuracy"].append(metrics["sequence_accuracy"])

        recorder = None
        if job["watch"]:
            recorder = AlignmentRecorder(job["watch_src"], job["watch_tgt"], every=job["watch_every"])
            recorder(0, model, TrainingHistory())  # the untrained alignment, as "step 0"

        def callback(step: int, model: nn.Module, history: TrainingHistory) -> None:
            done = step + 1  # optimisation steps done after this one
            if done % curve_every == 0 or done == steps:
                measure_curve(done)
            if recorder is not None:
                recorder(done, model, history)  # snapshots when done % watch_every == 0

        measure_curve(0)
        start = time.perf_counter()
        history = train_seq2seq(model, task=task, lengths=job["train_lengths"], steps=steps,
                                batch_size=job["batch_size"], lr=job["lr"], seed=seed, callback=callback)
        seconds = time.perf_counter() - start
        rows = []
        for seq_len in job["eval_lengths"]:
            metrics = evaluate_seq2seq(model, seq_len, task=task, num_samples=job["num_eval"], seed=test_seed)
            rows.append({"attention": attention, "hidden_size": hidden_size, "seed": seed, "seq_len": seq_len,
                         **metrics, "train_seconds": seconds})
    out: dict[str, Any] = {"rows": rows, "curve": curve, "by_length": by_length, "history": history, "model": model}
    if recorder is not None:
        out["replay_steps"] = list(recorder.steps)
        out["replay_alignments"] = [a[0] for a in recorder.alignments]  # (T, S) each
        out["replay_losses"] = [math.nan if s == 0 else history.loss[s - 1] for s in recorder.steps]
    return out


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
    seeds: Sequence[int] | None = None,
    attention: Sequence[bool] = (False, True),
    curve_length: int | None = None,
    curve_lengths: Sequence[int] | None = None,
    curve_every: int = 100,
    curve_samples: int = 128,
    watch_length: int | None = None,
    watch_hidden: int | None = None,
    watch_every: int = 50,
    workers: int = 1,
) -> BottleneckResult:
    """Train GRU encoder-decoders with and without attention; score them against length.

    Besides accuracy against length, it records what the chapter needs: the evaluation lengths
    may differ from the training lengths, each model's accuracy at ``curve_length`` (and at every length of
    ``curve_lengths``) is measured during training (is the model still learning there?), and the alignment of one
    watched example is captured every
    ``watch_every`` steps while the attention model of size ``watch_hidden`` (first seed) trains (the replay
    slider). For each hidden size, each of ``attention`` and each seed: seed, build a
    :class:`~helpers.rnn.Seq2SeqGRU`, train it with
    :func:`~helpers.experiments.seq2seq_training.train_seq2seq` (teacher forcing) on lengths drawn uniformly from
    ``train_lengths``, then decode greedily at every evaluation length
    (:func:`~helpers.experiments.seq2seq_training.evaluate_seq2seq`). The learning rate follows
    ``train_seq2seq``'s default schedule (a cosine decay to 0 over ``steps``).
    Each model trains single-threaded; ``workers > 1`` trains that many models side by side in
    separate processes (the numbers are the same: every model is seeded on its own).
    :func:`bottleneck_sweeps` runs several sweeps in one pool of processes.

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
        seed: The seed when ``seeds`` is not given.
        seeds: Seeds to train every model with (initialisation and training data); test data
            use ``seed + 10_007``. Default ``[seed]``.
        attention: Which models to train: ``(False, True)`` (default) for both.
        curve_length: Length of the learning curves (default: the longest evaluation length).
        curve_lengths: Further lengths at which to measure the learning curves (token accuracy only;
            :attr:`BottleneckResult.length_curves`).
        curve_every: Period of the learning-curve evaluations, in steps.
        curve_samples: Test sequences per learning-curve point.
        watch_length: Length of the watched example (``None``: no replay).
        watch_hidden: Hidden size of the watched attention model (default: the last one).
        watch_every: Capture period in steps.
        workers: Processes training models side by side (1: all in this process).

    Returns:
        A :class:`BottleneckResult`.
    """
    check_positive_int("workers", workers)
    result, jobs, seed_list = _plan(
        train_lengths, hidden_sizes, steps=steps, eval_lengths=eval_lengths, task=task, vocab_size=vocab_size,
        embed_dim=embed_dim, batch_size=batch_size, lr=lr, num_eval=num_eval, seed=seed, seeds=seeds,
        attention=attention, curve_length=curve_length, curve_lengths=curve_lengths, curve_every=curve_every,
        curve_samples=curve_samples, watch_length=watch_length, watch_hidden=watch_hidden, watch_every=watch_every)
    _collect(result, jobs, _run(jobs, workers, in_process=not isinstance(task, str)), seed_list)
    return result


def bottleneck_sweeps(*sweeps: dict[str, Any], workers: int = 1) -> list[BottleneckResult]:
    """Several :func:`bottleneck_sweep` calls whose models train in one pool of processes.

    The same results as calling :func:`bottleneck_sweep` once per sweep, but the models of all the
    sweeps share the ``workers`` processes, the longest trainings first, so that no process waits
    for another sweep to finish (chapter 1 trains 12 models of 300 steps and 3 of 1,200).

    Args:
        *sweeps: The keyword arguments of each :func:`bottleneck_sweep` call (``workers`` left out).
        workers: Processes training models side by side.

    Returns:
        One :class:`BottleneckResult` per sweep, in order.
    """
    check_positive_int("workers", workers)
    planned = []
    for kwargs in sweeps:
        if "workers" in kwargs:
            raise ValueError("give workers to bottleneck_sweeps, not to each sweep")
        kwargs = dict(kwargs)
        planned.append(_plan(kwargs.pop("train_lengths"), kwargs.pop("hidden_sizes"), **kwargs))
    jobs = [job for _, sweep_jobs, _ in planned for job in sweep_jobs]
    in_process = any(not isinstance(job["task"], str) for job in jobs)
    outputs = iter(_run(jobs, workers, in_process=in_process))
    results = []
    for result, sweep_jobs, seed_list in planned:
        _collect(result, sweep_jobs, [next(outputs) for _ in sweep_jobs], seed_list)
        results.append(result)
    return results


def _plan(
    train_lengths: Sequence[int], hidden_sizes: Sequence[int], *, steps: int,
    eval_lengths: Sequence[int] | None = None, task: str = "reverse", vocab_size: int = 12, embed_dim: int = 16,
    batch_size: int = 32, lr: float = 1e-2, num_eval: int = 256, seed: int = 0, seeds: Sequence[int] | None = None,
    attention: Sequence[bool] = (False, True), curve_length: int | None = None,
    curve_lengths: Sequence[int] | None = None, curve_every: int = 100, curve_samples: int = 128,
    watch_length: int | None = None, watch_hidden: int | None = None, watch_every: int = 50,
) -> tuple[BottleneckResult, list[dict[str, Any]], list[int]]:
    """Checks a sweep's arguments; returns its empty result, its training jobs and its seeds."""
    train_lengths = check_positive_ints("train_lengths", train_lengths)
    hidden_sizes = check_positive_ints("hidden_sizes", hidden_sizes)
    eval_lengths = train_lengths if eval_lengths is None else check_positive_ints("eval_lengths", eval_lengths)
    seed_list = [seed] if seeds is None else [int(s) for s in seeds]
    if not seed_list or len(set(seed_list)) != len(seed_list):
        raise ValueError(f"seeds must be distinct and at least one, got {seeds!r}")
    attention_list = list(attention)
    if not attention_list or not all(isinstance(a, bool) for a in attention_list):
        raise ValueError(f"attention must hold True and/or False, got {attention!r}")
    make_task = seq2seq_task(task)
    check_positive_int("steps", steps)
    for name, value in (("curve_every", curve_every), ("watch_every", watch_every), ("curve_samples", curve_samples)):
        check_positive_int(name, value)
    curve_length = max(eval_lengths) if curve_length is None else curve_length
    extra = [] if curve_lengths is None else check_positive_ints("curve_lengths", curve_lengths)
    all_curve_lengths = sorted({curve_length, *extra})
    watch_hidden = hidden_sizes[-1] if watch_hidden is None else watch_hidden
    if watch_length is not None and (watch_hidden not in hidden_sizes or True not in attention_list):
        raise ValueError(f"watch_hidden ({watch_hidden}) must be one of hidden_sizes {hidden_sizes}, "
                         "with an attention model")

    result = BottleneckResult(rows=[], curve_length=curve_length, curves={}, histories={}, models={})
    if watch_length is not None:
        src, tgt = make_task(1, watch_length, vocab_size, seed=seed_list[0] + 20_011)  # (1, S), (1, T)
        result.watch_src, result.watch_tgt, result.watch_hidden = src, tgt, watch_hidden

    jobs = []
    for hidden_size in hidden_sizes:
        for use_attention in attention_list:
            for run_seed in seed_list:
                watch = (watch_length is not None and use_attention and hidden_size == watch_hidden
                         and run_seed == seed_list[0])
                jobs.append(dict(
                    hidden_size=hidden_size, attention=use_attention, seed=run_seed, task=task, steps=steps,
                    train_lengths=train_lengths, eval_lengths=eval_lengths, vocab_size=vocab_size,
                    embed_dim=embed_dim, batch_size=batch_size, lr=lr, num_eval=num_eval,
                    curve_length=curve_length, curve_lengths=all_curve_lengths, curve_every=curve_every,
                    curve_samples=curve_samples,
                    watch=watch, watch_src=result.watch_src, watch_tgt=result.watch_tgt, watch_every=watch_every,
                ))
    return result, jobs, seed_list


def _run(jobs: list[dict[str, Any]], workers: int, *, in_process: bool = False) -> list[dict[str, Any]]:
    """Trains every job, in this process or in ``workers`` processes (the longest first); outputs in job order."""
    if workers == 1 or len(jobs) == 1 or in_process:
        return [_train_one(job) for job in jobs]
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i]["steps"])  # the longest first: no process idles at the end
    outputs: list[dict[str, Any]] = [{} for _ in jobs]
    # fresh interpreters ("spawn"): safe with PyTorch's thread pools, whatever ran before
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        for i, out in zip(order, pool.map(_train_one, [jobs[i] for i in order])):
            outputs[i] = out
    return outputs


def _collect(result: BottleneckResult, jobs: list[dict[str, Any]], outputs: list[dict[str, Any]],
             seed_list: list[int]) -> None:
    """Fills ``result`` with the outputs of its jobs."""
    for job, out in zip(jobs, outputs):
        key = (job["attention"], job["hidden_size"])
        result.rows.extend(out["rows"])
        result.curves_by_seed[(*key, job["seed"])] = out["curve"]
        result.length_curves_by_seed[(*key, job["seed"])] = out["by_length"]
        result.models_by_seed[(*key, job["seed"])] = out["model"]
        if job["seed"] == seed_list[0]:
            result.histories[key] = out["history"]
            result.models[key] = out["model"]
        if job["watch"]:
            result.replay_steps = out["replay_steps"]
            result.replay_alignments = out["replay_alignments"]
            result.replay_losses = out["replay_losses"]
    for key in result.models:
        runs = [result.curves_by_seed[(*key, s)] for s in seed_list]
        result.curves[key] = {"step": runs[0]["step"]} | {
            metric: [sum(values) / len(values) for values in zip(*(run[metric] for run in runs))]
            for metric in ("token_accuracy", "sequence_accuracy")}
        by_length = [result.length_curves_by_seed[(*key, s)] for s in seed_list]
        result.length_curves[key] = {n: [sum(values) / len(values) for values in zip(*(run[n] for run in by_length))]
                                     for n in by_length[0]}
