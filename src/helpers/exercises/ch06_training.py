"""Checkers for the exercises of chapter 6, sections 1–2 (``notebooks/06-training-lab.ipynb``).

Each checker that takes a function runs it under :func:`helpers.exercises.guard.package_disabled`,
so an answer that calls the package's own implementation of the thing practised fails by name;
the reference is computed outside that block. The messages name the typical mistakes.

- :func:`check_head_entropy`: attention entropy per head from scores and a padding mask (bits
  instead of nats, a padded key counted, ``0 log 0``...).
- :func:`train_broken_heads`, :func:`check_broken_heads`: a model trained with one collapsed and
  one dead head, and the reader's search for them in its entropy monitor.
- :func:`buggy_pre_ln_block`, :func:`check_pre_ln_fix`: the LayerNorm bug hunt.
- :func:`check_post_ln_fix`: the reader's fix for a Post-LN run that fails, the explanation of
  which change did it, and the prediction made before.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch06_training`` (this
module's part of the checkers' catalogue, :mod:`helpers.exercises.messages`).

Shape legend:
    B batch, H heads, L queries, S keys, D model width, N layers.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from helpers.blocks import TransformerBlock
from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch06_training import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.messages import LANGUAGES, phrase, text
from helpers.exercises.reader import allclose, as_tensor, call_without_package, checker
from helpers.experiments import training_failures as tf
from helpers.train import TrainingHistory, num_threads, set_seed, train

__all__ = ["check_head_entropy", "BrokenHeadsRun", "train_broken_heads", "check_broken_heads", "buggy_pre_ln_block",
           "check_pre_ln_fix", "FAILING_SETTINGS", "check_post_ln_fix"]


_SEPARATOR = {"en": "; ", "zh": "；"}
"""How the clauses of a message made of several parts are joined, per language."""
_LIST_SEPARATOR = {"en": ", ", "zh": "，"}
_AND = {"en": " and ", "zh": "和"}


def _joined(parts: Sequence[tuple[str, dict[str, Any]]], separator: dict[str, str]) -> dict[str, str]:
    """Several messages ``(key, fields)`` joined into one phrase, in every language."""
    return {language: separator[language].join(text(key, language, **fields) for key, fields in parts)
            for language in LANGUAGES}


def _entropy(weights: Tensor) -> Tensor:
    """Entropy in nats of each row, mean over the queries: ``(B, H, L, S) -> (B, H)``."""
    return -torch.special.xlogy(weights, weights).sum(-1).mean(-1)


@checker
def check_head_entropy(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(scores, key_mask) -> (B, H)``: the entropy of each head's attention, in nats.

    The weights are the softmax of ``scores`` over the real keys only (``key_mask`` is
    ``True`` for a real token); the entropy ``-sum p log p`` of each query's row is averaged over
    the queries. The reference is :func:`helpers.diagnostics.attention_entropy` of the masked
    softmax; ``attention_entropy``, ``saturation_stats`` and ``helpers.attention.masked_softmax``
    are disabled while ``fn`` runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.

    Shape:
        scores ``(B, H, L, S)``, key_mask ``(B, S)`` bool -> ``(B, H)``.
    """
    from helpers import attention, diagnostics

    disabled = (diagnostics.attention_entropy, diagnostics.saturation_stats, attention.masked_softmax)
    gen = torch.Generator().manual_seed(61)
    for batch, heads, length, keys, lengths in ((2, 3, 6, 7, (5, 3)), (3, 2, 4, 5, (5, 2, 4))):
        scores = 2 * torch.randn(batch, heads, length, keys, generator=gen)  # (B, H, L, S)
        mask = torch.arange(keys)[None, :] < torch.tensor(lengths)[:, None]  # (B, S), True = real token
        allowed = mask[:, None, None, :]  # (B, 1, 1, S)
        right = diagnostics.attention_entropy(torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1))
        result = call_without_package(fn, scores.clone(), mask.clone(), disabled=disabled,
                                      language=language)
        out = as_tensor(result, phrase("ch06_training.what.entropy"), language)
        out = out.detach()
        if allclose(out, right):
            continue
        if out.shape == (batch, heads, length):
            return CheckResult.of(False, "ch06_training.entropy.per_query", language, shape=tuple(out.shape))
        if out.shape != right.shape:
            return CheckResult.of(False, "ch06_training.entropy.shape", language, expected=tuple(right.shape),
                                  got=tuple(out.shape))
        if torch.isnan(out).any():
            return CheckResult.of(False, "ch06_training.entropy.nan", language)
        no_mask = _entropy(torch.softmax(scores, dim=-1))
        if allclose(out, no_mask) or allclose(out, no_mask / math.log(2)):
            return CheckResult.of(False, "ch06_training.entropy.no_mask", language)
        if allclose(out, right / math.log(2)):
            return CheckResult.of(False, "ch06_training.entropy.bits", language)
        if allclose(out, -right):
            return CheckResult.of(False, "ch06_training.entropy.sign", language)
        after = torch.softmax(scores, dim=-1) * allowed  # zeroed after the softmax, not renormalised
        if allclose(out, _entropy(after)) or allclose(out, _entropy(after) / math.log(2)):
            return CheckResult.of(False, "ch06_training.entropy.after_softmax", language)
        inverted = torch.softmax(scores.masked_fill(allowed, float("-inf")), dim=-1)
        if allclose(out, _entropy(inverted)):
            return CheckResult.of(False, "ch06_training.entropy.inverted", language)
        real = mask.sum(-1).float()  # (B,)
        if allclose(out, right / math.log(keys)) or allclose(out, right / real.log()[:, None]):
            return CheckResult.of(False, "ch06_training.entropy.normalised", language)
        if allclose(out, right * length):
            return CheckResult.of(False, "ch06_training.entropy.summed", language)
        if allclose(out, right / keys) or allclose(out, -torch.special.xlogy(
                torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1),
                torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1)).mean(-1).mean(-1)):
            return CheckResult.of(False, "ch06_training.entropy.mean_over_keys", language)
        return CheckResult.of(False, "ch06_training.entropy.differs", language, diff=(out - right).abs().max().item())
    return CheckResult.of(True, "ch06_training.entropy.passed", language)


# ------------------------------------------------------------------ exercise 2: broken heads


@dataclass
class BrokenHeadsRun:
    """A :class:`~helpers.experiments.training_failures.MonitorLM` trained with two heads broken on purpose.

    Attributes:
        seed: The seed of the model, the batches and the choice of the broken heads.
        model: The trained model.
        probe_tokens: The fixed batch on which the entropy is measured, ``(32, 16)``.
        loss: The training loss per step.
        probe_step: The step of each probe (``-1``: before training).
        head_entropy: Per probe, the normalised entropy of each layer and head, ``(N, H)`` in
            ``[0, 1]`` (each causal row divided by ``log`` of the number of keys it sees).
    """

    seed: int
    model: tf.MonitorLM
    probe_tokens: Tensor
    loss: list[float]
    probe_step: list[int]
    head_entropy: list[Tensor]
    _collapsed: tuple[int, int] = field(repr=False)
    _dead: tuple[int, int] = field(repr=False)

    @property
    def num_layers(self) -> int:
        return int(self.head_entropy[0].shape[0])

    @property
    def num_heads(self) -> int:
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


@functools.lru_cache(maxsize=8)
def train_broken_heads(seed: int = 0, *, steps: int = 100, lr: float = 1e-2) -> BrokenHeadsRun:
    """Train a 2-layer, 4-head :class:`~helpers.experiments.training_failures.MonitorLM` on the lag
    task with one collapsed and one dead head, chosen at random from ``seed``.

    - The *collapsed* head has its ``W^Q`` and ``W^K`` rows drawn with standard deviation 1
      (section 3 of the chapter: far too large), so its softmax is one-hot before training; it is
      left free to train, and the saturated softmax passes too little gradient to undo it.
    - The *dead* head has its ``W^Q`` rows and bias zeroed and frozen (as a pruning or
      weight-loading bug might leave them), so every score is 0 and its attention is uniform.

    The entropy of every head is probed every 10 steps on a fixed batch
    (:func:`helpers.experiments.training_failures.train_monitored`'s probe). Results are cached.

    Returns:
        A :class:`BrokenHeadsRun`.
    """
    set_seed(seed)
    model = tf.MonitorLM()
    layers, heads = len(model.attns), model.attns[0].num_heads
    e = model.attns[0].head_dim
    order = torch.randperm(layers * heads, generator=torch.Generator().manual_seed(7_000 + seed)).tolist()
    collapsed, dead = divmod(order[0], heads), divmod(order[1], heads)
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
    return BrokenHeadsRun(seed, model, probe_tokens, history.loss, probe_step, head_entropy, collapsed, dead)


def _as_head(value: Any, run: BrokenHeadsRun) -> tuple[int, int] | None:
    try:
        layer, head = (int(v) for v in value)
    except (TypeError, ValueError):
        return None
    if not (0 <= layer < run.num_layers and 0 <= head < run.num_heads):
        return None
    return layer, head


def _judge_heads(answer: Any, run: BrokenHeadsRun, language: str | None = None) -> CheckResult | None:
    """``None`` if ``answer`` names the run's collapsed and dead heads, else what is wrong."""
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return CheckResult.of(False, "ch06_training.heads.form", language, last_layer=run.num_layers - 1,
                              last_head=run.num_heads - 1, got=repr(answer))
    collapsed, dead = _as_head(answer[0], run), _as_head(answer[1], run)
    if collapsed is None or dead is None:
        return CheckResult.of(False, "ch06_training.heads.form", language, last_layer=run.num_layers - 1,
                              last_head=run.num_heads - 1, got=repr(answer))
    if (collapsed, dead) == (run._collapsed, run._dead):
        return None
    table = run.entropy_table()  # (P, N, H)
    if (collapsed, dead) == (run._dead, run._collapsed):
        return CheckResult.of(False, "ch06_training.heads.swapped", language, seed=run.seed)

    def verdict(key: str, head: tuple[int, int]) -> CheckResult:
        series = table[:, head[0], head[1]]
        history = phrase("ch06_training.heads.history", start=float(series[0]), end=float(series[-1]))
        return CheckResult.of(False, f"ch06_training.heads.{key}", language, seed=run.seed, head=head,
                              history=history)

    if collapsed != run._collapsed:
        if collapsed == run._dead:
            return verdict("dead_not_collapsed", collapsed)
        start, end = table[0, collapsed[0], collapsed[1]], table[-1, collapsed[0], collapsed[1]]
        if start > 0.5 and end < 0.3:
            return verdict("specialised", collapsed)
        return verdict("not_collapsed", collapsed)
    if dead == run._collapsed:
        return verdict("collapsed_not_dead", dead)
    return verdict("not_dead", dead)


@checker
def check_broken_heads(fn: Callable[[BrokenHeadsRun], Any], run: BrokenHeadsRun, *,
                       language: str | None = None) -> CheckResult:
    """Check ``fn(run) -> (collapsed, dead)``, each a ``(layer, head)`` pair, on ``run`` and on a
    second run with another seed (other heads are broken there, so the answer must be computed).

    The messages name the typical confusions: a head that specialised during training taken for a
    collapsed one (both end with a low entropy), the two heads swapped, a head whose entropy moved
    taken for the dead one.

    Args:
        fn: The reader's function.
        run: The run from :func:`train_broken_heads`.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    if not isinstance(run, BrokenHeadsRun):
        return CheckResult.of(False, "ch06_training.heads.not_a_run", language, type=type(run).__name__)
    runs = [run, train_broken_heads(run.seed + 1)]
    for each in runs:
        result = call_without_package(fn, each, disabled=(train_broken_heads,), language=language)
        verdict = _judge_heads(result, each, language)
        if verdict is not None:
            return verdict
    table = run.entropy_table()
    c, d = run._collapsed, run._dead
    return CheckResult.of(True, "ch06_training.heads.passed", language, seed=run.seed, collapsed=c,
                          collapsed_start=float(table[0, c[0], c[1]]), dead=d,
                          dead_min=float(table[:, d[0], d[1]].min()), other_seed=runs[1].seed)


# ------------------------------------------------------------------ exercise 3: LayerNorm bug hunt


def buggy_pre_ln_block(block: TransformerBlock, x: Tensor) -> Tensor:
    """A Pre-LN Transformer block, says its comment, with ``block``'s sub-layers and one bug (lab exercise 3).

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


@checker
def check_pre_ln_fix(fn: Callable[[TransformerBlock, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(block, x)``: a Pre-LN block, ``x + Attn(LN1(x))`` then ``x + FFN(LN2(x))``, built
    from ``block``'s sub-layers (``self_attn_norm``, ``self_attn``, ``ffn_norm``, ``ffn``).

    Compared with :class:`helpers.blocks.TransformerBlock` (``norm_first=True``), whose ``forward``
    is disabled while ``fn`` runs. The message says what a misplaced LayerNorm does.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    torch.manual_seed(63)
    block = TransformerBlock(16, 2, norm_first=True).eval()
    with torch.no_grad():
        for norm in (block.self_attn_norm, block.ffn_norm):  # gains and biases that are not 1 and 0
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.normal_(0.0, 0.3)
    x = 3 * torch.randn(2, 5, 16) + 0.5  # (B, L, D), far from unit scale, so a misplaced norm shows
    with torch.no_grad():
        right = block(x).hidden
        result = call_without_package(fn, block, x.clone(), disabled=(TransformerBlock.forward,),
                                      language=language)
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


# ------------------------------------------------------------------ exercise 4: rescue Post-LN

FAILING_SETTINGS: dict[str, Any] = {"norm_first": False, "lr": 3e-2, "warmup_steps": 0, "clip_grad_norm": None,
                                    "steps": 80}
"""The Post-LN run of the chapter's grid that fails in every seed (6 blocks, lr 0.03, no warm-up)."""

_KNOBS = {  # setting -> a pattern an explanation must contain (English or Chinese); its name: "...fix.knob_<setting>"
    "norm_first": r"pre[- ]?(ln|norm|layer[- ]?norm)|norm_first|前置(层)?归一化",
    "lr": r"learning[- ]rate|\blr\b|step size|学习率|步长",
    "warmup_steps": r"warm[- ]?up|预热",
    "clip_grad_norm": r"clip|裁剪",
    "steps": r"\bsteps\b|longer|iterations|步数|更久|更长|迭代",
}


def _is_sentence(explanation: str) -> bool:
    """At least three words, or (Chinese, written without spaces) at least six Chinese characters."""
    return len(explanation.split()) >= 3 or len(re.findall(r"[\u4e00-\u9fff]", explanation)) >= 6


def _settings(run: tf.RunResult) -> dict[str, Any]:
    steps = FAILING_SETTINGS["steps"] if run.stopped_early else len(run.loss)  # a stopped run hides its length
    return {"norm_first": run.norm_first, "lr": run.lr, "warmup_steps": run.warmup_steps,
            "clip_grad_norm": run.clip_grad_norm, "steps": steps}


def _changes(run: tf.RunResult) -> dict[str, Any]:
    settings = _settings(run)
    changed = {}
    for name, old in FAILING_SETTINGS.items():
        new = settings[name]
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


def _describe(changes: dict[str, Any]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in changes.items())


@checker
def check_post_ln_fix(fn: Callable[[int], tf.RunResult], explanation: Any, predicted_warmup_alone_rescues: Any,
                      seeds: tuple[int, ...] = (0, 1), *, language: str | None = None) -> CheckResult:
    """Check the reader's rescue of the failing Post-LN run (:data:`FAILING_SETTINGS`).

    ``fn(seed)`` must return the :class:`~helpers.experiments.training_failures.RunResult` of
    ``train_lag_model`` with the reader's change; it must train (not ``failed``: final loss below
    90 % of chance) in every seed of ``seeds`` (at least 2). ``explanation`` must name each setting
    that differs from the failing run. With several changes, each one is also run alone, and the
    message says which of them does it. ``predicted_warmup_alone_rescues`` (written before any
    run) is compared with a measured run of the failing setting plus a 30-step warm-up.

    The explanation may be written in English or in Chinese.

    Args:
        fn: The reader's function.
        explanation: The reader's sentence: which change made the run train, and why.
        predicted_warmup_alone_rescues: The reader's prediction, made before running anything.
        seeds: The seeds the fix must train in.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict.
    """
    if not isinstance(predicted_warmup_alone_rescues, bool):
        return CheckResult.of(False, "ch06_training.fix.no_prediction", language,
                              got=repr(predicted_warmup_alone_rescues))
    if not isinstance(explanation, str) or not _is_sentence(explanation):
        return CheckResult.of(False, "ch06_training.fix.no_explanation", language)
    if len(seeds) < 2:
        return CheckResult.of(False, "ch06_training.fix.one_seed", language)
    runs = []
    for seed in seeds:
        with num_threads(1):
            result = call_without_package(fn, seed, disabled=(), language=language)
        if not isinstance(result, tf.RunResult):
            return CheckResult.of(False, "ch06_training.fix.not_a_run", language, type=type(result).__name__)
        if result.seed != seed:
            return CheckResult.of(False, "ch06_training.fix.wrong_seed", language, asked=seed, got=result.seed)
        runs.append(result)
    changes = _changes(runs[0])
    if any(_changes(r) != changes for r in runs[1:]):
        return CheckResult.of(False, "ch06_training.fix.inconsistent", language)
    if not changes:
        return CheckResult.of(False, "ch06_training.fix.unchanged", language)
    losses = _joined([("ch06_training.fix.seed_loss", {"seed": r.seed, "loss": r.final_loss}) for r in runs],
                     _LIST_SEPARATOR)
    failed = [r for r in runs if r.failed]
    if failed:
        hint = phrase("ch06_training.fix.no_hint")
        if set(changes) == {"clip_grad_norm"}:
            hint = phrase("ch06_training.fix.hint_clip")
        elif set(changes) == {"warmup_steps"}:
            hint = phrase("ch06_training.fix.hint_warmup", steps=changes["warmup_steps"])
        elif set(changes) == {"norm_first"}:
            hint = phrase("ch06_training.fix.hint_pre_ln")
        elif "lr" in changes and changes["lr"] <= 1e-3:
            hint = phrase("ch06_training.fix.hint_low_lr", lr=changes["lr"])
        elif "lr" in changes and changes["lr"] > FAILING_SETTINGS["lr"]:
            hint = phrase("ch06_training.fix.hint_high_lr")
        return CheckResult.of(False, "ch06_training.fix.still_failing", language, changes=_describe(changes),
                              failed=len(failed), n=len(runs), losses=losses, threshold=0.9 * tf.CHANCE, hint=hint)
    lowered = explanation.lower()
    missing = [name for name in changes if not re.search(_KNOBS[name], lowered)]
    if missing:
        return CheckResult.of(False, "ch06_training.fix.unnamed", language, losses=losses,
                              missing=_joined([(f"ch06_training.fix.knob_{name}", {}) for name in missing], _AND),
                              changes=_describe(changes))
    alone = phrase("ch06_training.fix.no_hint")
    if len(changes) > 1:
        parts = []
        for name, value in changes.items():
            trained = sum(not _run(seed, ((name, value),)).failed for seed in seeds)
            parts.append(("ch06_training.fix.alone_part", {"setting": f"{name}={value!r}", "trained": trained,
                                                           "n": len(seeds)}))
        alone = phrase("ch06_training.fix.alone", parts=_joined(parts, _SEPARATOR))
    warm = [_run(seed, (("warmup_steps", 30),)) for seed in seeds]
    rescued = sum(not r.failed for r in warm)
    fact = rescued == len(seeds)
    verdict = phrase("ch06_training.fix.prediction_right" if fact == predicted_warmup_alone_rescues
                      else "ch06_training.fix.prediction_wrong")
    return CheckResult.of(True, "ch06_training.fix.passed", language, changes=_describe(changes), losses=losses,
                          chance=tf.CHANCE, alone=alone, rescued=rescued, n=len(seeds), verdict=verdict)
