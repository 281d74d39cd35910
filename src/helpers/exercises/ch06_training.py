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

Shape legend:
    B batch, H heads, L queries, S keys, D model width, N layers.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from helpers.blocks import TransformerBlock
from helpers.exercises import CheckResult
from helpers.exercises.reader import allclose, as_tensor, call_without_package
from helpers.experiments import training_failures as tf
from helpers.train import TrainingHistory, num_threads, set_seed, train

__all__ = ["check_head_entropy", "BrokenHeadsRun", "train_broken_heads", "check_broken_heads", "buggy_pre_ln_block",
           "check_pre_ln_fix", "FAILING_SETTINGS", "check_post_ln_fix"]




def _entropy(weights: Tensor) -> Tensor:
    """Entropy in nats of each row, mean over the queries: ``(B, H, L, S) -> (B, H)``."""
    return -torch.special.xlogy(weights, weights).sum(-1).mean(-1)


def check_head_entropy(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(scores, key_padding_mask) -> (B, H)``: the entropy of each head's attention, in nats.

    The weights are the softmax of ``scores`` over the real keys only (``key_padding_mask`` is
    ``True`` for a real token); the entropy ``-sum p log p`` of each query's row is averaged over
    the queries. The reference is :func:`helpers.diagnostics.attention_entropy` of the masked
    softmax; ``attention_entropy``, ``saturation_stats`` and ``helpers.attention.masked_softmax``
    are disabled while ``fn`` runs.

    Shape:
        scores ``(B, H, L, S)``, key_padding_mask ``(B, S)`` bool -> ``(B, H)``.
    """
    from helpers import attention, diagnostics

    disabled = (diagnostics.attention_entropy, diagnostics.saturation_stats, attention.masked_softmax)
    gen = torch.Generator().manual_seed(61)
    for batch, heads, length, keys, lengths in ((2, 3, 6, 7, (5, 3)), (3, 2, 4, 5, (5, 2, 4))):
        scores = 2 * torch.randn(batch, heads, length, keys, generator=gen)  # (B, H, L, S)
        mask = torch.arange(keys)[None, :] < torch.tensor(lengths)[:, None]  # (B, S), True = real token
        allowed = mask[:, None, None, :]  # (B, 1, 1, S)
        right = diagnostics.attention_entropy(torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1))
        result, failure = call_without_package(fn, scores.clone(), mask.clone(), disabled=disabled)
        if failure is not None:
            return failure
        out, failure = as_tensor(result, "entropy per head, shape (B, H)")
        if failure is not None:
            return failure
        out = out.detach()
        if allclose(out, right):
            continue
        if out.shape == (batch, heads, length):
            return CheckResult(False, f"shape {tuple(out.shape)} is one entropy per query (B, H, L): average over the "
                                      "queries (dim=-1 of the row entropies) to get one number per head")
        if out.shape != right.shape:
            return CheckResult(False, f"expected shape (B, H) = {tuple(right.shape)}, got {tuple(out.shape)}")
        if torch.isnan(out).any():
            return CheckResult(False, "NaN in your result: a padded key has weight 0, and 0 * log(0) = 0 * -inf = nan "
                                      "in floating point. The entropy's convention is 0 log 0 = 0: use "
                                      "torch.special.xlogy(p, p), or keep only the entries where p > 0")
        no_mask = _entropy(torch.softmax(scores, dim=-1))
        if allclose(out, no_mask) or allclose(out, no_mask / math.log(2)):
            return CheckResult(False, "the padding mask is missing: the softmax gave weight to the padded keys, so "
                                      "each padded key counted as a possible target and the entropy came out too "
                                      "high. Set the padded keys' scores to -inf before the softmax")
        if allclose(out, right / math.log(2)):
            return CheckResult(False, "these are bits (log base 2), not nats: the package and the chapter use the "
                                      "natural log, so a uniform row over n keys has entropy ln n. Use torch.log")
        if allclose(out, -right):
            return CheckResult(False, "the sign is wrong: H(p) = -sum p log p, which is >= 0 (log p <= 0)")
        after = torch.softmax(scores, dim=-1) * allowed  # zeroed after the softmax, not renormalised
        if allclose(out, _entropy(after)) or allclose(out, _entropy(after) / math.log(2)):
            return CheckResult(False, "you zeroed the padded keys' weights after the softmax: the real keys' weights "
                                      "no longer sum to 1, so this is not a distribution. Mask the scores with -inf "
                                      "before the softmax")
        inverted = torch.softmax(scores.masked_fill(allowed, float("-inf")), dim=-1)
        if allclose(out, _entropy(inverted)):
            return CheckResult(False, "the mask is inverted: key_padding_mask is True for a real token (the book's and "
                                      "PyTorch's bool-mask convention: True = may attend), so mask where it is False")
        real = mask.sum(-1).float()  # (B,)
        if allclose(out, right / math.log(keys)) or allclose(out, right / real.log()[:, None]):
            return CheckResult(False, "you normalised the entropy (divided by log of the number of keys); the exercise "
                                      "asks for the entropy itself, in nats")
        if allclose(out, right * length):
            return CheckResult(False, "you summed the row entropies over the queries; average them (mean over dim=-1)")
        if allclose(out, right / keys) or allclose(out, -torch.special.xlogy(
                torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1),
                torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1)).mean(-1).mean(-1)):
            return CheckResult(False, "you averaged -p log p over the keys; the entropy is the *sum* over the keys "
                                      "(dim=-1), then the mean over the queries")
        return CheckResult(False, f"the entropies differ from the reference (max |diff| "
                                  f"{(out - right).abs().max().item():.3g} nats): softmax over the real keys, then "
                                  "-sum p ln p over the keys, then the mean over the queries")
    return CheckResult(True, "your entropies match helpers.diagnostics.attention_entropy of the masked softmax, in "
                             "nats, with padded keys excluded.")


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


def _judge_heads(answer: Any, run: BrokenHeadsRun) -> CheckResult | None:
    """``None`` if ``answer`` names the run's collapsed and dead heads, else what is wrong."""
    shape = (f"return (collapsed, dead), each a (layer, head) pair with layer in 0..{run.num_layers - 1} and head "
             f"in 0..{run.num_heads - 1}")
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return CheckResult(False, f"{shape}; got {answer!r}")
    collapsed, dead = _as_head(answer[0], run), _as_head(answer[1], run)
    if collapsed is None or dead is None:
        return CheckResult(False, f"{shape}; got {answer!r}")
    if (collapsed, dead) == (run._collapsed, run._dead):
        return None
    table = run.entropy_table()  # (P, N, H)
    seed = f"(seed {run.seed}) "
    if (collapsed, dead) == (run._dead, run._collapsed):
        return CheckResult(False, seed + "you swapped them: the collapsed head is the one with entropy near 0 (one-hot "
                                         "attention), the dead one has entropy 1 (uniform attention)")

    def history(head: tuple[int, int]) -> str:
        series = table[:, head[0], head[1]]
        return f"{series[0]:.2f} before training, {series[-1]:.2f} at the end"

    if collapsed != run._collapsed:
        if collapsed == run._dead:
            return CheckResult(False, seed + f"head {collapsed} is uniform (entropy {history(collapsed)}): that is "
                                             "the dead one, not the collapsed one")
        start, end = table[0, collapsed[0], collapsed[1]], table[-1, collapsed[0], collapsed[1]]
        if start > 0.5 and end < 0.3:
            return CheckResult(False, seed + f"head {collapsed} learnt the task ({history(collapsed)}): it became "
                                             "sharp *as the loss fell*, which is a head specialising (here: looking "
                                             "two places back), not a collapse. A low entropy at the end is not a "
                                             "failure; the collapsed head was one-hot before anything was learnt: "
                                             "look at the first probe")
        return CheckResult(False, seed + f"head {collapsed} is not collapsed (entropy {history(collapsed)}): the "
                                         "collapsed head's entropy is near 0 from the first probe on")
    if dead == run._collapsed:
        return CheckResult(False, seed + f"head {dead} is one-hot (entropy {history(dead)}): that is the collapsed "
                                         "one, not the dead one")
    return CheckResult(False, seed + f"head {dead} is not dead: its entropy changed during training ({history(dead)}). "
                                     "The dead head's entropy is 1.00 at every probe: uniform attention, its queries "
                                     "carry nothing, and it never moves")


def check_broken_heads(fn: Callable[[BrokenHeadsRun], Any], run: BrokenHeadsRun) -> CheckResult:
    """Check ``fn(run) -> (collapsed, dead)``, each a ``(layer, head)`` pair, on ``run`` and on a
    second run with another seed (other heads are broken there, so the answer must be computed).

    The messages name the typical confusions: a head that specialised during training taken for a
    collapsed one (both end with a low entropy), the two heads swapped, a head whose entropy moved
    taken for the dead one.
    """
    if not isinstance(run, BrokenHeadsRun):
        return CheckResult(False, f"pass the run from train_broken_heads as the second argument, got "
                                  f"{type(run).__name__}")
    runs = [run, train_broken_heads(run.seed + 1)]
    for each in runs:
        result, failure = call_without_package(fn, each, disabled=(train_broken_heads,))
        if failure is not None:
            return failure
        verdict = _judge_heads(result, each)
        if verdict is not None:
            return verdict
    table = run.entropy_table()
    c, d = run._collapsed, run._dead
    return CheckResult(True, f"in seed {run.seed} head {c} is collapsed (normalised entropy "
                             f"{table[0, c[0], c[1]]:.2f} before training: one-hot before anything was learnt) and "
                             f"head {d} is dead (entropy {table[:, d[0], d[1]].min():.2f} at every probe: uniform "
                             f"attention); found in seed {runs[1].seed} too.")


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


_WHAT = {
    "overwrite": "normalises the residual stream itself (x = norm(x), then x = x + F(x)): the skip connection "
                 "carries LN(x) instead of x. The block forgets the scale of what reaches it (f(c·x) = f(x)), and the "
                 "identity path from the output back to the input now passes through this LayerNorm, as in Post-LN: "
                 "in a deep stack every early block's gradient goes through every later norm, the weakness Pre-LN "
                 "exists to remove, while the code still looks like Pre-LN",
    "post": "normalises after the residual sum, LN(x + F(x)): that is Post-LN, the original Transformer's placement, "
            "not the Pre-LN the block claims",
    "none": "does not normalise the sub-layer's input at all (x + F(x))",
}


def check_pre_ln_fix(fn: Callable[[TransformerBlock, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(block, x)``: a Pre-LN block, ``x + Attn(LN1(x))`` then ``x + FFN(LN2(x))``, built
    from ``block``'s sub-layers (``self_attn_norm``, ``self_attn``, ``ffn_norm``, ``ffn``).

    Compared with :class:`helpers.blocks.TransformerBlock` (``norm_first=True``), whose ``forward``
    is disabled while ``fn`` runs. The message says what a misplaced LayerNorm does.
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
        result, failure = call_without_package(fn, block, x.clone(), disabled=(TransformerBlock.forward,))
        if failure is not None:
            return failure
        out, failure = as_tensor(result, "block output, shape (B, L, D)")
        if failure is not None:
            return failure
        if out.shape != right.shape:
            return CheckResult(False, f"expected shape (B, L, D) = {tuple(right.shape)}, got {tuple(out.shape)}")
        if torch.allclose(out.double(), right.double(), rtol=1e-4, atol=1e-5):
            return CheckResult(True, "x + Attn(LN(x)), then x + FFN(LN(x)): the residual stream is never normalised, "
                                     "so the block keeps an identity path from its output to its input.")
        for swap in (False, True):
            for attn_mode in _MODES:
                for ffn_mode in _MODES:
                    if not torch.allclose(out, _block_variant(block, x, attn_mode, ffn_mode, swap), rtol=1e-4,
                                          atol=1e-5):
                        continue
                    if swap:
                        return CheckResult(False, "the two norms are swapped: self_attn_norm belongs to the attention "
                                                  "sub-layer and ffn_norm to the FFN; each has its own gain and bias")
                    if attn_mode == ffn_mode:
                        wrong = [f"both sub-layers (attention and feed-forward): each {_WHAT[attn_mode]}"]
                    else:
                        wrong = [f"the {name} sub-layer {_WHAT[mode]}" for name, mode in
                                 (("attention", attn_mode), ("feed-forward", ffn_mode)) if mode != "pre"]
                    return CheckResult(False, "; and ".join(wrong) + ". Pre-LN is x = x + F(LN(x))")
        return CheckResult(False, f"the output differs from a Pre-LN block with these weights (max |diff| "
                                  f"{(out - right).abs().max().item():.3g}): x = x + self_attn(self_attn_norm(x))[0], "
                                  "then x = x + ffn(ffn_norm(x))")


# ------------------------------------------------------------------ exercise 4: rescue Post-LN

FAILING_SETTINGS: dict[str, Any] = {"norm_first": False, "lr": 3e-2, "warmup_steps": 0, "clip_grad_norm": None,
                                    "steps": 80}
"""The Post-LN run of the chapter's grid that fails in every seed (6 blocks, lr 0.03, no warm-up)."""

_KNOBS = {  # setting -> (pattern an explanation must contain, the name in a message)
    "norm_first": (r"pre[- ]?(ln|norm|layer[- ]?norm)|norm_first", "Pre-LN (norm_first)"),
    "lr": (r"learning[- ]rate|\blr\b|step size", "the learning rate"),
    "warmup_steps": (r"warm[- ]?up", "the warm-up"),
    "clip_grad_norm": (r"clip", "gradient clipping"),
    "steps": (r"\bsteps\b|longer|iterations", "the number of steps"),
}


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


def check_post_ln_fix(fn: Callable[[int], tf.RunResult], explanation: Any, predicted_warmup_alone_rescues: Any,
                      seeds: tuple[int, ...] = (0, 1)) -> CheckResult:
    """Check the reader's rescue of the failing Post-LN run (:data:`FAILING_SETTINGS`).

    ``fn(seed)`` must return the :class:`~helpers.experiments.training_failures.RunResult` of
    ``train_lag_model`` with the reader's change; it must train (not ``failed``: final loss below
    90 % of chance) in every seed of ``seeds`` (at least 2). ``explanation`` must name each setting
    that differs from the failing run. With several changes, each one is also run alone, and the
    message says which of them does it. ``predicted_warmup_alone_rescues`` (written before any
    run) is compared with a measured run of the failing setting plus a 30-step warm-up.
    """
    if not isinstance(predicted_warmup_alone_rescues, bool):
        return CheckResult(False, "first write your prediction: predicted_warmup_alone_rescues must be True or False, "
                                  f"got {predicted_warmup_alone_rescues!r}")
    if not isinstance(explanation, str) or len(explanation.split()) < 3:
        return CheckResult(False, "write your explanation as a sentence: which change made the run train, and why")
    if len(seeds) < 2:
        return CheckResult(False, "a fix is checked over at least 2 seeds: one seed can train by luck")
    runs = []
    for seed in seeds:
        with num_threads(1):
            result, failure = call_without_package(fn, seed, disabled=())
        if failure is not None:
            return failure
        if not isinstance(result, tf.RunResult):
            return CheckResult(False, f"return the RunResult of tf.train_lag_model(...), got {type(result).__name__}")
        if result.seed != seed:
            return CheckResult(False, f"asked for seed {seed}, your function returned a run with seed {result.seed}: "
                                      "pass the seed on to train_lag_model")
        runs.append(result)
    changes = _changes(runs[0])
    if any(_changes(r) != changes for r in runs[1:]):
        return CheckResult(False, "your function changes different settings for different seeds; make one fix and "
                                  "apply it to every seed")
    if not changes:
        return CheckResult(False, "your runs have the failing run's settings (Post-LN, lr 0.03, no warm-up, no "
                                  "clipping, 80 steps): change one of them")
    losses = ", ".join(f"seed {r.seed}: {r.final_loss:.2f}" for r in runs)
    failed = [r for r in runs if r.failed]
    if failed:
        hint = ""
        if set(changes) == {"clip_grad_norm"}:
            hint = (" Clipping alone does not rescue it: Adam divides each step by the gradient's running size, so "
                    "scaling the gradient down hardly changes the step (section 2).")
        elif set(changes) == {"warmup_steps"}:
            hint = (f" A warm-up of {changes['warmup_steps']} steps alone is not enough here (section 1's grid): the "
                    "full learning rate is still too high for Post-LN once it is reached.")
        elif set(changes) == {"norm_first"}:
            hint = " Pre-LN alone at lr 0.03 still fails in some seeds (section 1's grid): add a warm-up."
        elif "lr" in changes and changes["lr"] <= 1e-3:
            hint = f" With lr {changes['lr']:g} the model moves too little to learn the task in 80 steps."
        elif "lr" in changes and changes["lr"] > FAILING_SETTINGS["lr"]:
            hint = " A higher learning rate makes it worse, not better."
        return CheckResult(False, f"with {_describe(changes)}, {len(failed)} of {len(runs)} seeds still fail (final "
                                  f"loss {losses}; failing means above {0.9 * tf.CHANCE:.2f}, 90 % of chance).{hint}")
    text = explanation.lower()
    missing = [_KNOBS[name][1] for name in changes if not re.search(_KNOBS[name][0], text)]
    if missing:
        return CheckResult(False, f"the run trains ({losses}), but your explanation does not name "
                                  f"{' and '.join(missing)}, which you changed ({_describe(changes)}): say which "
                                  "change did it")
    alone = ""
    if len(changes) > 1:
        parts = []
        for name, value in changes.items():
            trained = sum(not _run(seed, ((name, value),)).failed for seed in seeds)
            parts.append(f"{name}={value!r} alone trains {trained} of {len(seeds)} seeds")
        alone = " You changed several things; measured one at a time: " + "; ".join(parts) + "."
    warm = [_run(seed, (("warmup_steps", 30),)) for seed in seeds]
    rescued = sum(not r.failed for r in warm)
    fact = rescued == len(seeds)
    verdict = ("your prediction was right" if fact == predicted_warmup_alone_rescues else "your prediction was wrong")
    return CheckResult(True, f"with {_describe(changes)} every seed trains (final loss {losses}; chance "
                             f"{tf.CHANCE:.2f}).{alone} A 30-step warm-up alone rescues {rescued} of {len(seeds)} "
                             f"seeds: {verdict}.")
