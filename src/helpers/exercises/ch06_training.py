"""Checkers for the exercises of chapter 6, sections 1–2 (``notebooks/06-training-lab.ipynb``).

Each checker that takes a function runs it under :func:`helpers.exercises.reader.call_watched`,
which watches every call the answer makes: an answer that reaches the package's own implementation
of the thing practised (or a third-party equivalent, such as ``torch.distributions``) fails by
name, whatever route it takes; the reference is computed outside the watch. Inputs are drawn fresh
at each call (:func:`helpers.exercises.reader.fresh_generator`), so no table of answers passes, and
experiments are run by the checker itself. The messages name the typical mistakes.

- :func:`check_head_entropy`: attention entropy per head from scores and a padding mask (bits
  instead of nats, a padded key counted, ``0 log 0``...).
- :func:`check_rollout`: attention rollout (Abnar & Zuidema, 2020) from the weights of each layer
  (the residual identity left out, rows not renormalised, the layers multiplied in the wrong order...).
- :func:`train_broken_heads`, :func:`check_broken_heads`: a model trained with one collapsed and
  one dead head, and the reader's search for them in its entropy monitor (checked on a fresh run
  whose broken heads are drawn at random when the checker runs).
- :func:`buggy_pre_ln_block`, :func:`check_pre_ln_fix`: the LayerNorm bug hunt.
- :func:`check_post_ln_fix`: the reader's settings that rescue a Post-LN run that fails (trained by
  the checker), the mechanism that explains it (a choice among :data:`MECHANISMS`), and the
  prediction recorded before (:func:`helpers.exercises.predictions.predict`).

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch06_training`` (this
module's part of the checkers' catalogue, :mod:`helpers.exercises.messages`).

Shape legend:
    B batch, H heads, L queries, S keys, D model width, N layers.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from helpers.blocks import TransformerBlock
from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch06_training import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.guard import ATTENTION, DISTRIBUTIONS
from helpers.exercises.messages import LANGUAGES, phrase, text
from helpers.exercises.predictions import predict, recorded, reveal
from helpers.exercises.reader import Rejected, allclose, as_tensor, call_watched, checker, fresh_generator, fresh_int
from helpers.experiments import training_failures as tf
from helpers.multihead import MultiHeadAttention
from helpers.train import TrainingHistory, num_threads, set_seed, train

from .. import seeding

__all__ = ["check_head_entropy", "check_rollout", "BrokenHeadsRun", "train_broken_heads", "check_broken_heads",
           "buggy_pre_ln_block", "check_pre_ln_fix", "FAILING_SETTINGS", "SETTING_RANGES", "MECHANISMS",
           "WARMUP_PREDICTION", "predict", "check_post_ln_fix"]


_SEPARATOR = {"en": "; ", "zh": "；"}
"""How the clauses of a message made of several parts are joined, per language."""
_LIST_SEPARATOR = {"en": ", ", "zh": "，"}


def _joined(parts: Sequence[tuple[str, dict[str, Any]]], separator: dict[str, str]) -> dict[str, str]:
    """Several messages ``(key, fields)`` joined into one phrase, in every language."""
    return {language: separator[language].join(text(key, language, **fields) for key, fields in parts)
            for language in LANGUAGES}


def _entropy(weights: Tensor) -> Tensor:
    """Entropy in nats of each row, mean over the queries: ``(B, H, L, S) -> (B, H)``."""
    return -torch.special.xlogy(weights, weights).sum(-1).mean(-1)


# ------------------------------------------------------------------ exercise 1: entropy per head


def _entropy_case(gen: torch.Generator, hard: bool) -> tuple[Tensor, Tensor]:
    """Fresh scores ``(B, H, L, S)`` and a padding mask ``(B, S)``: every sequence has >= 1 real key.

    When ``hard``, scores reach +-1000: the first sequence has a single real key, scored -1000 (its
    entropy is exactly 0; a padding score of -1000 instead of -inf would tie with it), and in every
    other sequence one real key scores +1000 in about half the rows (at least one), so that the other
    real keys of those rows get weight exactly 0 (``0 log 0``)."""
    batch, heads, length = fresh_int(2, 4, gen), fresh_int(1, 4, gen), fresh_int(2, 6, gen)
    keys = fresh_int(4, 9, gen)
    lengths = torch.randint(2, keys, (batch,), generator=gen)  # at least one padded key per sequence
    if hard:
        lengths[0] = 1
    mask = torch.arange(keys)[None, :] < lengths[:, None]  # (B, S), True = real token
    mask = mask[:, torch.randperm(keys, generator=gen)]  # padding anywhere, not only at the end
    scores = 2 * torch.randn(batch, heads, length, keys, generator=gen)  # (B, H, L, S)
    if hard:
        big = torch.rand(batch, heads, length, keys, generator=gen) < 0.3
        scores = torch.where(big, 1000 * torch.randn(batch, heads, length, keys, generator=gen).sign(), scores)
        real = mask.float().argmax(-1)  # (B,): the first real key of each sequence
        scores[0, :, :, real[0]] = -1000.0
        for b in range(1, batch):
            rows = torch.rand(heads, length, generator=gen) < 0.5  # (H, L)
            rows[0, 0] = True
            scores[b, :, :, real[b]] = torch.where(rows, 1000.0, scores[b, :, :, real[b]])
    return scores, mask


@checker
def check_head_entropy(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(scores, key_mask) -> (B, H)``: the entropy of each head's attention, in nats.

    The weights are the softmax of ``scores`` over the real keys only (``key_mask`` is
    ``True`` for a real token); the entropy ``-sum p log p`` of each query's row is averaged over
    the queries. The reference is :func:`helpers.diagnostics.attention_entropy` of the masked
    softmax. The inputs are drawn fresh at each call: first moderate scores, then scores of
    +-1000 (real keys of weight exactly 0) with a sequence of one real key, then scores in float16
    (the softmax belongs in float32). Every function of the
    package and ``torch.distributions`` (``Categorical(...).entropy()``) are forbidden while ``fn`` runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.

    Shape:
        scores ``(B, H, L, S)``, key_mask ``(B, S)`` bool -> ``(B, H)``.
    """
    from helpers import diagnostics

    gen = fresh_generator()
    for case in ("moderate", "hard", "float16"):
        hard = case == "hard"
        scores, mask = _entropy_case(gen, hard)
        if case == "float16":
            scores = scores.half()
        batch, heads, length, keys = scores.shape
        allowed = mask[:, None, None, :]  # (B, 1, 1, S)
        weights = torch.softmax(scores.float().masked_fill(~allowed, float("-inf")), dim=-1)  # (B, H, L, S)
        right = diagnostics.attention_entropy(weights)
        result = call_watched(fn, scores.clone(), mask.clone(), forbidden=DISTRIBUTIONS, language=language)
        out = as_tensor(result, phrase("ch06_training.what.entropy"), language).detach()
        if allclose(out, right):
            continue
        if case == "float16" and out.shape == right.shape and not torch.isnan(out).any():
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.float16", language,
                                          diff=(out.double() - right.double()).abs().max().item()))
        if out.shape == (batch, heads, length):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.per_query", language, shape=tuple(out.shape)))
        if out.shape != right.shape:
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.shape", language,
                                          expected=tuple(right.shape), got=tuple(out.shape)))
        if torch.isnan(out).any():
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.nan_hard" if hard else
                                          "ch06_training.entropy.nan", language))
        if hard:
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.hard", language,
                                          diff=(out - right).abs().max().item()))
        no_mask = _entropy(torch.softmax(scores, dim=-1))
        if allclose(out, no_mask) or allclose(out, no_mask / math.log(2)):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.no_mask", language))
        if allclose(out, right / math.log(2)):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.bits", language))
        if allclose(out, -right):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.sign", language))
        after = torch.softmax(scores, dim=-1) * allowed  # zeroed after the softmax, not renormalised
        if allclose(out, _entropy(after)) or allclose(out, _entropy(after) / math.log(2)):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.after_softmax", language))
        inverted = torch.softmax(scores.masked_fill(allowed, float("-inf")), dim=-1)
        if allclose(out, _entropy(inverted)):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.inverted", language))
        real = mask.sum(-1).float()  # (B,)
        if allclose(out, right / math.log(keys)) or allclose(out, right / real.log()[:, None]):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.normalised", language))
        if allclose(out, right * length):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.summed", language))
        if allclose(out, right / keys) or allclose(out, -torch.special.xlogy(weights, weights).mean(-1).mean(-1)):
            raise Rejected(CheckResult.of(False, "ch06_training.entropy.mean_over_keys", language))
        raise Rejected(CheckResult.of(False, "ch06_training.entropy.differs", language,
                                      diff=(out.double() - right.double()).abs().max().item()))
    return CheckResult.of(True, "ch06_training.entropy.passed", language)


# ------------------------------------------------------------------ exercise 3: attention rollout


def _fuse(layer: Tensor, how: str = "mean") -> Tensor:
    return layer.mean(1) if how == "mean" else layer.amax(1)  # (B, H, L, L) -> (B, L, L)


def _rollout_variant(layers: Sequence[Tensor], *, fusion: str = "mean", residual: str = "half",
                     renormalise: bool = True, order: str = "right", keep: str = "all") -> Tensor:
    """Rollout as written, or with one of the typical mistakes (for the messages)."""
    length = layers[0].shape[-1]
    eye = torch.eye(length, dtype=torch.float64)
    if keep == "last":
        layers = layers[-1:]
    elif keep == "first":
        layers = layers[:1]
    result = None
    for layer in layers:
        fused = _fuse(layer.double(), fusion)  # (B, L, L)
        if residual == "half":
            fused = 0.5 * fused + 0.5 * eye
        elif residual == "full":
            fused = fused + eye
        if renormalise:
            fused = fused / fused.sum(-1, keepdim=True)
        if result is None:
            result = fused
        else:
            result = fused @ result if order == "right" else result @ fused  # (B, L, L) x (B, L, L)
    if result is None:
        raise ValueError("weights: no layer to roll out")
    return result


def _rollout_case(gen: torch.Generator) -> list[Tensor]:
    """Fresh weights of N layers, ``(B, H, L, L)`` each: softmax rows, some causal layers, and one query
    row per case left fully masked (all zeros in every head, as a masked softmax returns it)."""
    layers, batch = fresh_int(2, 4, gen), fresh_int(1, 3, gen)
    heads, length = fresh_int(2, 4, gen), fresh_int(3, 7, gen)  # 2 heads at least: the fusion shows
    weights = []
    for _ in range(layers):
        scores = 1.5 * torch.randn(batch, heads, length, length, generator=gen)  # (B, H, L, L)
        if bool(torch.rand((), generator=gen) < 0.5):
            causal = torch.ones(length, length, dtype=torch.bool).tril()
            scores = scores.masked_fill(~causal, float("-inf"))
        weights.append(torch.softmax(scores, dim=-1))
    layer, query = fresh_int(0, layers - 1, gen), fresh_int(0, length - 1, gen)
    weights[layer][0, :, query] = 0.0  # a fully masked query row: no key to attend to
    return weights


@checker
def check_rollout(fn: Callable[[list[Tensor]], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(attentions) -> (B, L, L)``: attention rollout (Abnar & Zuidema, 2020).

    ``attentions`` is a list of the weights of each layer, first layer first, ``(B, H, L, L)``
    each. Per layer: the mean over the heads, the residual connection as ``0.5 A + 0.5 I``, each
    row renormalised to sum to 1; then the product through the layers, first layer innermost,
    ``R = A'_N ... A'_1``. The reference is :func:`helpers.diagnostics.attention_rollout`; the
    inputs are drawn fresh (2 to 4 layers, causal or not, one fully masked query row of zeros),
    and every function of the package is forbidden while ``fn`` runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.

    Shape:
        attentions: N tensors ``(B, H, L, L)`` -> ``(B, L, L)``.
    """
    from helpers import diagnostics

    gen = fresh_generator()
    for _ in range(2):
        layers = _rollout_case(gen)
        right = diagnostics.attention_rollout(layers)
        result = call_watched(fn, [w.clone() for w in layers], language=language)
        out = as_tensor(result, phrase("ch06_training.what.rollout"), language).detach()
        if out.shape == right.shape and torch.allclose(out.double(), right.double(), rtol=1e-4, atol=1e-5):
            continue
        batch, heads, length = layers[0].shape[:3]
        if out.shape == (batch, heads, length, length):
            raise Rejected(CheckResult.of(False, "ch06_training.rollout.per_head", language, shape=tuple(out.shape)))
        if out.shape != right.shape:
            raise Rejected(CheckResult.of(False, "ch06_training.rollout.shape", language,
                                          expected=tuple(right.shape), got=tuple(out.shape)))
        if not torch.isfinite(out).all():
            raise Rejected(CheckResult.of(False, "ch06_training.rollout.nan", language))
        variants = (  # (message, keyword arguments of _rollout_variant), the first that matches names the mistake
            ("no_residual", {"residual": "none", "renormalise": False}),
            ("not_renormalised", {"renormalise": False}),
            ("full_identity", {"residual": "full", "renormalise": False}),
            ("wrong_order", {"order": "left"}),
            ("last_only", {"keep": "last"}),
            ("first_only", {"keep": "first"}),
            ("max_fusion", {"fusion": "max"}),
        )
        for key, kwargs in variants:
            if torch.allclose(out.double(), _rollout_variant(layers, **kwargs), rtol=1e-4, atol=1e-5):
                raise Rejected(CheckResult.of(False, f"ch06_training.rollout.{key}", language))
        if torch.allclose(out.double().transpose(-2, -1), right.double(), rtol=1e-4, atol=1e-5):
            raise Rejected(CheckResult.of(False, "ch06_training.rollout.transposed", language))
        raise Rejected(CheckResult.of(False, "ch06_training.rollout.differs", language,
                                      diff=(out.double() - right.double()).abs().max().item()))
    return CheckResult.of(True, "ch06_training.rollout.passed", language)


# ------------------------------------------------------------------ exercise 2: broken heads


@dataclass
class BrokenHeadsRun:
    """A :class:`~helpers.experiments.training_failures.MonitorLM` trained with two heads broken on purpose.

    Which heads are broken is not stored: it is what the reader reads from the monitor.

    Attributes:
        seed: The seed of the model and the batches.
        model: The trained model (``None`` in the copies :func:`check_broken_heads` hands the reader's
            function: the exercise reads the monitor, not the weights).
        probe_tokens: The fixed batch on which the entropy is measured, ``(32, 16)``.
        loss: The training loss per step.
        probe_step: The step of each probe (``-1``: before training).
        head_entropy: Per probe, the normalised entropy of each layer and head, ``(N, H)`` in
            ``[0, 1]`` (each causal row divided by ``log`` of the number of keys it sees).
    """

    seed: int
    model: tf.MonitorLM | None
    probe_tokens: Tensor
    loss: list[float]
    probe_step: list[int]
    head_entropy: list[Tensor]

    @property
    def num_layers(self) -> int:
        """``N``, the number of layers."""
        return int(self.head_entropy[0].shape[0])

    @property
    def num_heads(self) -> int:
        """``H``, the number of heads per layer."""
        return int(self.head_entropy[0].shape[1])

    def entropy_table(self) -> Tensor:
        """All probes stacked: ``(P, N, H)``."""
        return torch.stack(self.head_entropy)


def _zero_rows_hook(rows: slice) -> Callable[[Tensor], Tensor]:
    def hook(grad: Tensor) -> Tensor:
        grad = grad.clone()
        grad[rows] = 0  # these rows stay frozen
        return grad

    return hook


_LAYERS, _HEADS = 2, 4  # MonitorLM's defaults


def _default_broken(seed: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The heads :func:`train_broken_heads` breaks for ``seed`` when it is not told which."""
    order = torch.randperm(_LAYERS * _HEADS, generator=seeding.generator(7_000 + seed)).tolist()
    return divmod(order[0], _HEADS), divmod(order[1], _HEADS)


@functools.lru_cache(maxsize=8)
def _train_broken(seed: int, collapsed: tuple[int, int], dead: tuple[int, int], steps: int,
                  lr: float) -> BrokenHeadsRun:
    set_seed(seed)
    model = tf.MonitorLM(num_layers=_LAYERS, num_heads=_HEADS)
    e = model.attns[0].head_dim
    with torch.no_grad():
        attn = model.attns[collapsed[0]]
        rows = slice(collapsed[1] * e, (collapsed[1] + 1) * e)
        for proj in (attn.q_proj, attn.k_proj):
            proj.weight[rows].normal_(0.0, 1.0)
        attn = model.attns[dead[0]]
        rows = slice(dead[1] * e, (dead[1] + 1) * e)
        attn.q_proj.weight[rows] = 0.0
        attn.q_proj.bias[rows] = 0.0
        attn.q_proj.weight.register_hook(_zero_rows_hook(rows))
        attn.q_proj.bias.register_hook(_zero_rows_hook(rows))
    probe_tokens, _ = tf.lag_batches(seed + 999, batch=32)(0)
    probe_step, head_entropy = [-1], [tf._probe_entropy(model, probe_tokens)]

    def probe(step: int, _model: torch.nn.Module, history: TrainingHistory) -> bool:
        if step % 10 == 0 or step == steps - 1:
            probe_step.append(step)
            head_entropy.append(tf._probe_entropy(model, probe_tokens))
        return not math.isfinite(history.loss[-1])

    with num_threads(1):
        history = train(model, tf.lag_batches(seed), steps=steps, lr=lr, seed=seed, loss_fn=tf.lag_loss(),
                        accuracy_fn=None, callback=probe)
    model.eval()
    return BrokenHeadsRun(seed, model, probe_tokens, history.loss, probe_step, head_entropy)


def _as_pair(value: Any, name: str) -> tuple[int, int]:
    try:
        layer, head = (int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a (layer, head) pair, got {value!r}") from None
    if not (0 <= layer < _LAYERS and 0 <= head < _HEADS):
        raise ValueError(f"{name} must have layer in 0..{_LAYERS - 1} and head in 0..{_HEADS - 1}, got {value!r}")
    return layer, head


def train_broken_heads(seed: int = 0, *, steps: int = 100, lr: float = 1e-2,
                       broken: tuple[tuple[int, int], tuple[int, int]] | None = None) -> BrokenHeadsRun:
    """Train a 2-layer, 4-head :class:`~helpers.experiments.training_failures.MonitorLM` on the lag
    task with one collapsed and one dead head.

    - The *collapsed* head has its ``W^Q`` and ``W^K`` rows drawn with standard deviation 1
      (section 3 of the chapter: far too large), so its softmax is one-hot before training; it is
      left free to train, and the saturated softmax passes too little gradient to undo it.
    - The *dead* head has its ``W^Q`` rows and bias zeroed and frozen (as a pruning or
      weight-loading bug might leave them), so every score is 0 and its attention is uniform.

    The entropy of every head is probed every 10 steps on a fixed batch
    (:func:`helpers.experiments.training_failures.train_monitored`'s probe). Results are cached.
    Explained in chapter 6, section 2.

    Args:
        seed: The seed of the model and the batches (and of the broken heads when ``broken`` is ``None``).
        steps: Training steps.
        lr: The learning rate.
        broken: ``(collapsed, dead)``, each a ``(layer, head)`` pair; ``None``: chosen from ``seed``.

    Returns:
        A :class:`BrokenHeadsRun` (which heads are broken is not in it).

    Raises:
        ValueError: ``broken`` names a head outside the model, or the same head twice.
    """
    if broken is None:
        collapsed, dead = _default_broken(seed)
    else:
        if not isinstance(broken, (tuple, list)) or len(broken) != 2:
            raise ValueError(f"broken must be (collapsed, dead), two (layer, head) pairs, got {broken!r}")
        collapsed, dead = _as_pair(broken[0], "broken[0] (collapsed)"), _as_pair(broken[1], "broken[1] (dead)")
        if collapsed == dead:
            raise ValueError(f"broken names the same head twice: {collapsed}")
    return _train_broken(seed, collapsed, dead, steps, lr)


def _head_of(value: Any) -> tuple[int, int] | None:
    try:
        layer, head = (int(v) for v in value)
    except (TypeError, ValueError):
        return None
    if not (0 <= layer < _LAYERS and 0 <= head < _HEADS):
        return None
    return layer, head


def _judge_heads(answer: Any, run: BrokenHeadsRun, truth: tuple[tuple[int, int], tuple[int, int]], fresh: bool,
                 language: str | None = None) -> CheckResult | None:
    """``None`` if ``answer`` names ``truth``'s collapsed and dead heads, else what is wrong."""
    form = CheckResult.of(False, "ch06_training.heads.form", language, last_layer=_LAYERS - 1,
                          last_head=_HEADS - 1, got=repr(answer))
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return form
    collapsed, dead = _head_of(answer[0]), _head_of(answer[1])
    if collapsed is None or dead is None:
        return form
    true_collapsed, true_dead = truth
    if (collapsed, dead) == truth:
        return None
    which = phrase("ch06_training.heads.fresh_run" if fresh else "ch06_training.heads.lab_run", seed=run.seed)
    table = run.entropy_table()  # (P, N, H)
    if (collapsed, dead) == (true_dead, true_collapsed):
        return CheckResult.of(False, "ch06_training.heads.swapped", language, run=which)

    def verdict(key: str, head: tuple[int, int]) -> CheckResult:
        series = table[:, head[0], head[1]]
        history = phrase("ch06_training.heads.history", start=float(series[0]), end=float(series[-1]))
        return CheckResult.of(False, f"ch06_training.heads.{key}", language, run=which, head=head, history=history)

    if collapsed != true_collapsed:
        if collapsed == true_dead:
            return verdict("dead_not_collapsed", collapsed)
        start, end = table[0, collapsed[0], collapsed[1]], table[-1, collapsed[0], collapsed[1]]
        if start > 0.5 and end < 0.3:
            return verdict("specialised", collapsed)
        return verdict("not_collapsed", collapsed)
    if dead == true_collapsed:
        return verdict("collapsed_not_dead", dead)
    return verdict("not_dead", dead)


@dataclass(frozen=True)
class _Unreadable:
    """The reader's function read what the run it got does not hold (``key``: ``private`` or ``no_model``)."""

    key: str
    name: str


def _monitor_only(run: BrokenHeadsRun) -> BrokenHeadsRun:
    """A copy of ``run`` with the monitor's record and no model (the reader's function may change it freely)."""
    return dataclasses.replace(run, model=None, probe_tokens=run.probe_tokens.clone(), loss=list(run.loss),
                               probe_step=list(run.probe_step), head_entropy=[e.clone() for e in run.head_entropy])


@checker
def check_broken_heads(fn: Callable[[BrokenHeadsRun], Any], run: BrokenHeadsRun, *,
                       language: str | None = None) -> CheckResult:
    """Check ``fn(run) -> (collapsed, dead)``, each a ``(layer, head)`` pair, on ``run`` (the lab's,
    from :func:`train_broken_heads` with its default heads) and then on a fresh run: a seed and two
    broken heads drawn at random when the checker runs, which the answer cannot know in advance.

    Each run is handed over as a copy with the monitor's record only (``model`` is ``None``);
    which heads are broken is known to the checker because it broke them, and is stored nowhere
    the answer could read. Every function of the package is forbidden while ``fn`` runs, except
    the run's own :meth:`BrokenHeadsRun.entropy_table`. The messages name the typical
    confusions: a head that specialised during training taken for a collapsed one (both end with a
    low entropy), the two heads swapped, a head whose entropy moved taken for the dead one.

    Args:
        fn: The reader's function.
        run: The run from :func:`train_broken_heads` (default heads).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    if not isinstance(run, BrokenHeadsRun):
        return CheckResult.of(False, "ch06_training.heads.not_a_run", language, type=type(run).__name__)
    truth = _default_broken(run.seed)
    lab = _train_broken(run.seed, *truth, 100, 1e-2)  # the checker's own record of the lab's run, not the reader's
    if not callable(fn):
        return CheckResult.of(False, "reader.not_callable", language, type=type(fn).__name__)

    def answer(copy: BrokenHeadsRun) -> Any:
        try:
            return fn(copy)
        except AttributeError as error:  # what the copy does not have: private state, or the model
            name = getattr(error, "name", None)
            if isinstance(name, str) and name.startswith("_"):
                return _Unreadable("private", name)
            if getattr(error, "obj", False) is None:
                return _Unreadable("no_model", str(name))
            raise

    gen = fresh_generator()
    seed = fresh_int(1_000, 10**6, gen)
    while True:  # other heads than the lab's run, so that no answer typed for it passes
        order = torch.randperm(_LAYERS * _HEADS, generator=gen).tolist()
        fresh_truth = (divmod(order[0], _HEADS), divmod(order[1], _HEADS))
        if fresh_truth[0] != truth[0] and fresh_truth[1] != truth[1]:
            break
    for each, heads, fresh in ((lab, truth, False), (None, fresh_truth, True)):
        if each is None:
            each = _train_broken(seed, *fresh_truth, 100, 1e-2)
        result = call_watched(answer, _monitor_only(each), allowed=(BrokenHeadsRun.entropy_table,),
                              passthrough=(answer,), language=language)
        if isinstance(result, _Unreadable):
            return CheckResult.of(False, f"ch06_training.heads.{result.key}", language, name=result.name)
        verdict = _judge_heads(result, each, heads, fresh, language)
        if verdict is not None:
            return verdict
    table = lab.entropy_table()
    c, d = truth
    return CheckResult.of(True, "ch06_training.heads.passed", language, seed=lab.seed, collapsed=c,
                          collapsed_start=float(table[0, c[0], c[1]]), dead=d,
                          dead_min=float(table[:, d[0], d[1]].min()), other_seed=seed)


# ------------------------------------------------------------------ exercise 4: LayerNorm bug hunt


def buggy_pre_ln_block(block: TransformerBlock, x: Tensor) -> Tensor:
    """A Pre-LN Transformer block, says its comment, with ``block``'s sub-layers and one bug (lab exercise 4).

    Args:
        block: The block whose sub-layers it uses.
        x: The block's input.

    Returns:
        The block's output.

    Shape:
        x ``(B, L, D)`` -> ``(B, L, D)``.
    """
    # Pre-LN: normalise first, then the sub-layer, then the residual connection
    x = block.self_attn_norm(x)
    x = x + block.self_attn(x)[0]  # (B, L, D)
    x = block.ffn_norm(x)
    x = x + block.ffn(x)  # (B, L, D)
    return x


_MODES = ("pre", "overwrite", "post", "none")


def _block_variant(block: TransformerBlock, x: Tensor, attn_mode: str, ffn_mode: str, swap: bool = False) -> Tensor:
    norms = (block.ffn_norm, block.self_attn_norm) if swap else (block.self_attn_norm, block.ffn_norm)
    branches = (lambda h: block.self_attn(h)[0], block.ffn)
    for mode, norm, branch in zip((attn_mode, ffn_mode), norms, branches):
        if mode == "pre":
            x = x + branch(norm(x))
        elif mode == "overwrite":
            x = norm(x)
            x = x + branch(x)
        elif mode == "post":
            x = norm(x + branch(x))
        else:
            x = x + branch(x)
    return x


def _misplaced(attn_mode: str, ffn_mode: str, language: str | None) -> CheckResult:
    """What a block whose sub-layers normalise as ``attn_mode`` and ``ffn_mode`` does wrong (not both ``"pre"``)."""
    if attn_mode == ffn_mode:
        return CheckResult.of(False, "ch06_training.pre.both", language,
                              what=phrase(f"ch06_training.pre.mode_{attn_mode}"))
    wrong = {name: phrase(f"ch06_training.pre.mode_{mode}") for name, mode in
             (("attention", attn_mode), ("ffn", ffn_mode)) if mode != "pre"}
    key = "each" if len(wrong) == 2 else next(iter(wrong))
    return CheckResult.of(False, f"ch06_training.pre.{key}", language, **wrong)


def _fresh_block(gen: torch.Generator) -> tuple[TransformerBlock, Tensor]:
    """A Pre-LN block of a fresh width, with LayerNorm gains and biases that are not 1 and 0, and an
    input far from unit scale (so that a misplaced norm shows); the global RNG is left as it was."""
    width = (8, 12, 16, 24)[fresh_int(0, 3, gen)]
    heads = (2, 4)[fresh_int(0, 1, gen)]
    with torch.random.fork_rng():
        seeding.manual_seed(fresh_int(0, 2**31 - 1, gen))
        block = TransformerBlock(width, heads, norm_first=True).eval()
    with torch.no_grad():
        for norm in (block.self_attn_norm, block.ffn_norm):
            norm.weight.copy_(0.5 + torch.rand(width, generator=gen))
            norm.bias.copy_(0.3 * torch.randn(width, generator=gen))
    x = 3 * torch.randn(fresh_int(1, 3, gen), fresh_int(3, 7, gen), width, generator=gen) + 0.5  # (B, L, D)
    return block, x


@checker
def check_pre_ln_fix(fn: Callable[[TransformerBlock, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(block, x)``: a Pre-LN block, ``x + Attn(LN1(x))`` then ``x + FFN(LN2(x))``, built
    from ``block``'s sub-layers (``self_attn_norm``, ``self_attn``, ``ffn_norm``, ``ffn``).

    Compared with :class:`helpers.blocks.TransformerBlock` (``norm_first=True``) on a block and an
    input drawn fresh at each call. While ``fn`` runs every function of the package is forbidden
    (the block's own ``forward`` included) except :class:`helpers.multihead.MultiHeadAttention`,
    the attention sub-layer the answer calls, and :func:`buggy_pre_ln_block` (which is wrong: passing
    it back gets its diagnosis); so are PyTorch's own blocks and attention (:data:`~helpers.exercises.guard.ATTENTION`:
    ``nn.TransformerEncoderLayer(norm_first=True)`` holding the block's weights is the same block, not the fix).
    The message says what a misplaced LayerNorm does.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    block, x = _fresh_block(fresh_generator())
    with torch.no_grad():
        right = block(x).hidden
        result = call_watched(fn, block, x.clone(), forbidden=ATTENTION,
                              allowed=(MultiHeadAttention, buggy_pre_ln_block), language=language)
        out = as_tensor(result, phrase("ch06_training.what.block"), language)
        if out.shape != right.shape:
            return CheckResult.of(False, "ch06_training.pre.shape", language, expected=tuple(right.shape),
                                  got=tuple(out.shape))
        if torch.allclose(out.double(), right.double(), rtol=1e-4, atol=1e-5):
            return CheckResult.of(True, "ch06_training.pre.passed", language)
        for swap in (False, True):
            for attn_mode in _MODES:
                for ffn_mode in _MODES:
                    if not torch.allclose(out, _block_variant(block, x, attn_mode, ffn_mode, swap), rtol=1e-4,
                                          atol=1e-5):
                        continue
                    if swap:
                        return CheckResult.of(False, "ch06_training.pre.swapped", language)
                    return _misplaced(attn_mode, ffn_mode, language)
        return CheckResult.of(False, "ch06_training.pre.differs", language, diff=(out - right).abs().max().item())


# ------------------------------------------------------------------ exercise 5: rescue Post-LN

FAILING_SETTINGS: dict[str, Any] = {"norm_first": False, "lr": 3e-2, "warmup_steps": 0, "clip_grad_norm": None,
                                    "steps": 80}
"""The Post-LN run of the chapter's grid that fails in every seed (6 blocks, lr 0.03, no warm-up)."""

SETTING_RANGES: dict[str, str] = {
    "norm_first": "True or False",
    "lr": "0.0001 to 0.1",
    "warmup_steps": "0 to steps - 1",
    "clip_grad_norm": "None or above 0",
    "steps": "80 to 160",
}
"""What :func:`check_post_ln_fix` accepts for each setting — the failing run's 80 steps at least (more
steps alone is not a fix), 160 at most (the lab's time budget)."""

MECHANISMS: dict[str, str] = {"a": "lr", "b": "clip_grad_norm", "c": "warmup_steps", "d": "norm_first", "e": "steps"}
"""The choices of the lab's exercise 5 (each stated there) — the setting whose effect each one explains."""

_SOUND = frozenset({"a", "c", "d"})
"""The choices whose mechanism is right (``b`` and ``e`` state mechanisms the chapter refutes)."""

WARMUP_PREDICTION = "ch06.warmup_alone"
"""The key of exercise 5's prediction — does a 30-step warm-up alone rescue the failing run in every seed?"""

_WARMUP_ALONE = (("warmup_steps", 30),)


def _valid(name: str, value: Any, steps: int) -> bool:
    if name == "norm_first":
        return isinstance(value, bool)
    if name == "clip_grad_norm":
        return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    if name == "lr":
        return 1e-4 <= value <= 0.1
    if name == "steps":
        return isinstance(value, int) and 80 <= value <= 160
    return isinstance(value, int) and 0 <= value < steps  # warmup_steps


def _changes(settings: Mapping[str, Any]) -> dict[str, Any]:
    changed = {}
    for name, old in FAILING_SETTINGS.items():
        new = settings.get(name, old)
        same = (new is None and old is None) or (
            new is not None and old is not None and math.isclose(float(new), float(old), rel_tol=1e-9))
        if not same:
            changed[name] = new
    return changed


@functools.lru_cache(maxsize=32)
def _run(seed: int, changes: tuple[tuple[str, Any], ...]) -> tf.RunResult:
    settings = {**FAILING_SETTINGS, **dict(changes)}
    with num_threads(1):
        return tf.train_lag_model(seed=seed, **settings)


def _describe(changes: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in changes.items())


def _trains(seed: int, changes: Mapping[str, Any]) -> bool:
    return not _run(seed, tuple(changes.items())).failed


@checker
def check_post_ln_fix(settings: Any, mechanism: Any, seeds: Sequence[int] = (0, 1), *,
                      language: str | None = None) -> CheckResult:
    """Check the reader's rescue of the failing Post-LN run (:data:`FAILING_SETTINGS`).

    ``settings`` is a dict of the settings of ``train_lag_model`` (those of :data:`FAILING_SETTINGS`,
    within :data:`SETTING_RANGES`; a setting left out keeps its failing value). The checker trains
    them itself, seeded, in every seed of ``seeds`` (at least 2): a run result made elsewhere is
    not evidence. Each run must train (not ``failed``: final loss below 90 % of chance).
    ``mechanism`` is the reader's choice among the lab's stated mechanisms (:data:`MECHANISMS`);
    it must be sound and name a setting the fix changed; with several changes each one is also
    run alone, and the chosen one must be one that trains alone when another does. The prediction
    recorded before with ``predict(WARMUP_PREDICTION, True or False)`` is then compared with a run
    of the failing setting plus a 30-step warm-up, which the checker runs and reveals
    (:mod:`helpers.exercises.predictions`); without a prediction nothing is run.

    Args:
        settings: The reader's settings, e.g. ``{**FAILING_SETTINGS, "lr": 1e-2}``.
        mechanism: The letter of the reader's choice (``"a"`` ... ``"e"``).
        seeds: The seeds the fix must train in (at least 2, distinct).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    prediction = recorded(WARMUP_PREDICTION)
    if prediction is None:
        return CheckResult.of(False, "ch06_training.fix.no_prediction", language, key=WARMUP_PREDICTION)
    if not isinstance(prediction.value, bool):
        return CheckResult.of(False, "ch06_training.fix.prediction_not_bool", language, got=repr(prediction.value))
    if isinstance(settings, tf.RunResult):
        return CheckResult.of(False, "ch06_training.fix.result_not_settings", language)
    if not isinstance(settings, Mapping):
        return CheckResult.of(False, "ch06_training.fix.not_settings", language, type=type(settings).__name__)
    unknown = [str(name) for name in settings if name not in FAILING_SETTINGS]
    if unknown:
        return CheckResult.of(False, "ch06_training.fix.unknown_setting", language, names=", ".join(unknown),
                              known=", ".join(FAILING_SETTINGS))
    steps = settings.get("steps", FAILING_SETTINGS["steps"])
    steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else FAILING_SETTINGS["steps"]
    for name in FAILING_SETTINGS:
        if name in settings and not _valid(name, settings[name], steps):
            return CheckResult.of(False, "ch06_training.fix.bad_setting", language, name=name,
                                  got=repr(settings[name]),
                                  allowed=phrase(f"ch06_training.fix.range_{name}"))
    choice = mechanism.strip().lower() if isinstance(mechanism, str) else None
    if choice not in MECHANISMS:
        return CheckResult.of(False, "ch06_training.fix.no_mechanism", language, got=repr(mechanism),
                              letters=", ".join(MECHANISMS))
    if (isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or len(set(seeds)) < 2
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)):
        return CheckResult.of(False, "ch06_training.fix.one_seed", language)
    seeds = tuple(seeds)
    changes = _changes(settings)
    if not changes:
        return CheckResult.of(False, "ch06_training.fix.unchanged", language)
    runs = [_run(seed, tuple(changes.items())) for seed in seeds]
    losses = _joined([("ch06_training.fix.seed_loss", {"seed": r.seed, "loss": r.final_loss}) for r in runs],
                     _LIST_SEPARATOR)
    failed = [r for r in runs if r.failed]
    if failed:
        hint = phrase("ch06_training.fix.no_hint")
        if set(changes) == {"clip_grad_norm"}:
            hint = phrase("ch06_training.fix.hint_clip")
        elif set(changes) == {"warmup_steps"}:
            hint = phrase("ch06_training.fix.hint_warmup", steps=changes["warmup_steps"])
            if changes["warmup_steps"] == 30:
                reveal(WARMUP_PREDICTION)  # this message shows the predicted result
        elif set(changes) == {"norm_first"}:
            hint = phrase("ch06_training.fix.hint_pre_ln")
        elif set(changes) == {"steps"}:
            hint = phrase("ch06_training.fix.hint_steps")
        elif "lr" in changes and changes["lr"] <= 1e-3:
            hint = phrase("ch06_training.fix.hint_low_lr", lr=changes["lr"])
        elif "lr" in changes and changes["lr"] > FAILING_SETTINGS["lr"]:
            hint = phrase("ch06_training.fix.hint_high_lr")
        return CheckResult.of(False, "ch06_training.fix.still_failing", language, changes=_describe(changes),
                              failed=len(failed), n=len(runs), losses=losses, threshold=0.9 * tf.CHANCE, hint=hint)
    if choice not in _SOUND:
        return CheckResult.of(False, f"ch06_training.fix.wrong_{choice}", language, losses=losses)
    credited = MECHANISMS[choice]
    if credited not in changes:
        return CheckResult.of(False, "ch06_training.fix.mechanism_unchanged", language, choice=choice,
                              setting=credited, changes=_describe(changes))
    alone = phrase("ch06_training.fix.no_hint")
    if len(changes) > 1:
        trained = {name: sum(_trains(seed, {name: value}) for seed in seeds) for name, value in changes.items()}
        if changes.get("warmup_steps") == 30:
            reveal(WARMUP_PREDICTION)  # the message shows the 30-step warm-up alone
        parts = [("ch06_training.fix.alone_part", {"setting": f"{name}={value!r}", "trained": trained[name],
                                                   "n": len(seeds)}) for name, value in changes.items()]
        measured = _joined(parts, _SEPARATOR)
        if trained[credited] < len(seeds) and any(count == len(seeds) for count in trained.values()):
            return CheckResult.of(False, "ch06_training.fix.mechanism_not_alone", language, choice=choice,
                                  setting=credited, parts=measured)
        together = all(count < len(seeds) for count in trained.values())
        alone = phrase("ch06_training.fix.together" if together else "ch06_training.fix.alone", parts=measured)
    warm = [_run(seed, _WARMUP_ALONE) for seed in seeds]
    rescued = sum(not r.failed for r in warm)
    reveal(WARMUP_PREDICTION)
    fact = rescued == len(seeds)
    if prediction.late:
        verdict = phrase("ch06_training.fix.prediction_late")
    elif fact == prediction.value:
        verdict = phrase("ch06_training.fix.prediction_right", predicted=prediction.value)
    else:
        verdict = phrase("ch06_training.fix.prediction_wrong", predicted=prediction.value)
    return CheckResult.of(True, "ch06_training.fix.passed", language, changes=_describe(changes), losses=losses,
                          chance=tf.CHANCE, mechanism=phrase(f"ch06_training.fix.right_{choice}"), alone=alone,
                          rescued=rescued, n=len(seeds), verdict=verdict)
