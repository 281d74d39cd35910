"""Chapter 7's experiments on the real decoder (helpers.experiments.llm_*), checked on a tiny random Llama against
what each stands for: the one-pass StreamingLLM logits against token-by-token decoding through SinkKVCache (and
the plain and sliding-window passes), the head scores against weights built by hand, the scores' spread against
the model's own attention weights, the cache's bytes against the caches; and, marked slow, the one-pass losses
on SmolLM2-135M itself."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from helpers import seeding
from helpers.experiments import llm_cache, llm_context, llm_heads, llm_scores, llm_streaming, llm_text
from helpers.kv_cache import RollingKVCache
from helpers.llama import LlamaConfig, LlamaForCausalLM
from helpers.streaming import SinkKVCache

TINY = LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=8, rope_theta=100.0, rms_norm_eps=1e-5,
                   max_position_embeddings=256)


@pytest.fixture(scope="module")
def tiny() -> LlamaForCausalLM:
    seeding.manual_seed(0)
    model = LlamaForCausalLM(TINY).eval()
    with torch.no_grad():  # larger weights than the default initialisation, so that positions and windows show
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.3, generator=seeding.generator(1))
    return model


def tokens(batch: int, length: int, seed: int = 2) -> torch.Tensor:
    return torch.randint(0, TINY.vocab_size, (batch, length), generator=seeding.generator(seed))


@pytest.mark.parametrize("num_sinks, window", [(2, 6), (1, 5), (4, 4), (3, 9)])
def test_one_pass_cache_logits_are_token_by_token_sink_decoding(tiny, num_sinks, window):
    ids = tokens(2, 30)
    with torch.no_grad():
        decoded = tiny(ids, caches=tiny.new_caches(lambda: SinkKVCache(num_sinks, window)))
    ours = llm_streaming.cache_logits(tiny, ids, num_sinks, window)
    torch.testing.assert_close(ours, decoded, rtol=0, atol=1e-4)
    assert (ours - tiny(ids)).abs().max() > 0.1  # the cache is felt: it is not the full pass


def test_one_pass_window_only_is_the_rolling_cache_and_no_window_the_plain_pass(tiny):
    ids = tokens(2, 25)
    with torch.no_grad():
        rolling = tiny(ids, caches=tiny.new_caches(lambda: RollingKVCache(7)))
        plain = tiny(ids)
    torch.testing.assert_close(llm_streaming.cache_logits(tiny, ids, 0, 7), rolling, rtol=0, atol=1e-4)
    torch.testing.assert_close(llm_streaming.cache_logits(tiny, ids), plain, rtol=0, atol=1e-4)


def test_the_sinks_are_met_at_their_distance_in_the_cache_not_in_the_text():
    mask = llm_streaming.cache_mask(10, 2, 3)
    assert mask[9].nonzero().flatten().tolist() == [0, 1, 7, 8, 9]
    assert mask[3].nonzero().flatten().tolist() == [0, 1, 2, 3]
    assert llm_streaming.sink_query_positions(10, 2, 3).tolist() == [0, 1, 2, 3, 4, 4, 4, 4, 4, 4]
    assert torch.equal(llm_streaming.cache_mask(5, 0, None), torch.ones(5, 5, dtype=torch.bool).tril())


def test_cache_losses_score_the_tokens_after_start(tiny):
    ids = tokens(2, 40)
    losses = llm_streaming.cache_losses(tiny, ids, 8, sinks=(0, 2), start=20)
    assert [loss.name for loss in losses] == ["full", "window 8", "2 sinks + 6"]
    nll = llm_streaming.token_nll(tiny(ids), ids)
    torch.testing.assert_close(losses[0].nll, nll[:, 20:].mean(-1))
    assert losses[0].per_token.shape == (2, 39)
    assert [loss.name for loss in llm_streaming.cache_losses(tiny, ids, 8, sinks=(1,), start=20, full=False)] == [
        "1 sink + 7"]
    with pytest.raises(ValueError, match="start"):
        llm_streaming.cache_losses(tiny, ids, 8, start=39)


def test_token_nll_is_the_cross_entropy_of_the_next_token():
    logits = torch.randn(2, 5, 11, generator=seeding.generator(3))
    ids = torch.randint(0, 11, (2, 5), generator=seeding.generator(4))
    expected = torch.stack([F.cross_entropy(logits[b, :-1], ids[b, 1:], reduction="none") for b in range(2)])
    torch.testing.assert_close(llm_streaming.token_nll(logits, ids), expected)


def test_head_scores_read_previous_token_and_induction_patterns_built_by_hand():
    n = 5
    weights = torch.zeros(1, 3, 2 * n, 2 * n)
    for t in range(2 * n):
        weights[0, 0, t, max(t - 1, 0)] = 1.0  # a previous-token head
        weights[0, 1, t, t - n + 1 if t >= n else 0] = 1.0  # an induction head (the first copy: on the first token)
        weights[0, 2, t, 0] = 1.0  # a sink head
    previous, induction, first = llm_heads.scores_from_weights(weights, n)
    torch.testing.assert_close(previous, torch.tensor([1.0, 1 / (2 * n - 1), 1 / (2 * n - 1)]))
    torch.testing.assert_close(induction, torch.tensor([0.0, 1.0, 0.0]))
    torch.testing.assert_close(first, torch.tensor([0.0, 0.0, 1.0]))
    assert llm_heads.top_heads(torch.tensor([[0.1, 0.9], [0.5, 0.2]]), 2) == [(0, 1), (1, 0)]


def test_head_scores_and_the_ablation_on_a_tiny_model(tiny):
    ids = llm_text.repeated_random_tokens(2, 6, seed=5, low=0, high=TINY.vocab_size)
    assert torch.equal(ids[:, :6], ids[:, 6:])
    scores = llm_heads.head_scores(tiny, ids)
    assert scores.induction.shape == scores.previous.shape == (TINY.num_hidden_layers, TINY.num_attention_heads)
    with pytest.raises(ValueError, match="twice"):
        llm_heads.head_scores(tiny, tokens(1, 12))
    result = llm_heads.ablation(tiny, ids, scores.induction, count=2, random_sets=2, seed=3)
    assert len(result.removed) == 2 and all(len(s) == 2 and not set(s) & set(result.removed)
                                           for s in result.random_sets)
    mask = torch.ones(TINY.num_hidden_layers, TINY.num_attention_heads)
    for layer, head in result.removed:
        mask[layer, head] = 0
    logits = tiny(ids, head_mask=mask)
    expected = F.cross_entropy(logits[:, 6:-1].flatten(0, 1), ids[:, 7:].flatten(), reduction="none").view(2, -1)
    torch.testing.assert_close(result.without_induction, expected.mean(-1))
    torch.testing.assert_close(llm_heads.second_repeat_loss(tiny, ids), result.full)


def test_the_layers_queries_and_keys_give_the_models_own_attention_weights(tiny):
    ids = tokens(2, 12)
    out = tiny.run(ids, need_weights=True, output_hidden_states=True)
    for layer in range(TINY.num_hidden_layers):
        q, k = llm_scores.layer_queries_keys(tiny, layer, out.hidden_states[layer])
        k = k.repeat_interleave(TINY.num_attention_heads // TINY.num_key_value_heads, dim=1)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(TINY.head_dim)).masked_fill(
            ~torch.ones(12, 12, dtype=torch.bool).tril(), float("-inf"))
        torch.testing.assert_close(scores.softmax(-1), out.attentions[layer], rtol=0, atol=1e-5)
    spread = llm_scores.score_spread(tiny, out.hidden_states)
    assert spread.std.shape == (TINY.num_hidden_layers, TINY.num_attention_heads)
    assert spread.k_std.shape == (TINY.num_hidden_layers, TINY.num_key_value_heads)
    share = llm_scores.first_token_share(out.attentions, skip=2)
    torch.testing.assert_close(share[1], out.attentions[1][:, :, 2:, 0].mean(dim=(0, 2)))


def test_the_cache_holds_the_bytes_the_configuration_gives(tiny):
    caches = tiny.new_caches()
    with torch.no_grad():
        tiny(tokens(3, 10), caches=caches)
    assert llm_cache.measured_bytes_per_token(caches) == llm_cache.bytes_per_token(TINY) == 2 * 3 * 2 * 8 * 4
    assert llm_cache.bytes_per_token(TINY, torch.bfloat16, num_kv_heads=4) == 2 * 3 * 4 * 8 * 2
    timing = llm_cache.decode_times(tiny, tokens(1, 5), 3, repeats=1)
    assert timing.same_tokens and timing.speed_up > 0


def test_a_future_token_moves_no_earlier_logit(tiny):
    before, after = llm_context.future_change(tiny, tokens(1, 12), 7, 0 if tokens(1, 12)[0, 7] else 1)
    assert before == 0.0 and after > 0


def test_prose_keeps_paragraphs_and_drops_code_math_and_glued_numbers():
    page = ("---\nfront: matter\n---\n# Title\n\nA sentence of plain prose that is long enough to be kept here. "
            "A glued {glue:text}`x:.2f` sentence goes. Math $x$ goes too. See {doc}`the chapter <../x>` now.\n\n"
            "```{code-cell} ipython3\nprint('code')\n```\n\n| a | table |\n\n- a bullet point with enough words in it "
            "to be kept as prose\n")
    text = llm_text.prose(page)
    assert text.split("\n\n") == [
        "A sentence of plain prose that is long enough to be kept here. See the chapter now.",
        "a bullet point with enough words in it to be kept as prose"]


def test_text_windows_do_not_overlap_and_move_with_the_seed_offset(monkeypatch):
    ids = torch.arange(1000)
    windows = llm_text.text_windows(ids, 50, 4, seed=1)
    assert windows.shape == (4, 50) and len(set(windows.flatten().tolist())) == 200
    assert torch.equal(windows[:, 1:] - windows[:, :-1], torch.ones(4, 49, dtype=torch.long))
    monkeypatch.setenv("HELPERS_SEED_OFFSET", "1000")
    assert not torch.equal(llm_text.text_windows(ids, 50, 4, seed=1), windows)
    with pytest.raises(ValueError, match="too few"):
        llm_text.text_windows(ids, 300, 4, seed=1)


def test_package_prose_is_the_package_docstrings():
    text = llm_text.package_prose()
    assert "helpers: the package behind the book" in text and "Shape legend" not in text
    assert len(text.split()) > 2000


@pytest.mark.slow
def test_one_pass_cache_logits_are_sink_decoding_on_smollm2():
    from helpers.pretrained import load_smollm2

    model, tokenizer = load_smollm2()
    ids = tokenizer(llm_text.package_prose()[:2000], return_tensors="pt").input_ids[:, :40]
    with torch.no_grad():
        decoded = model(ids, caches=model.new_caches(lambda: SinkKVCache(2, 8)))
    ours = llm_streaming.cache_logits(model, ids, 2, 8)
    torch.testing.assert_close(ours, decoded, rtol=0, atol=2e-3)  # the tolerance of tests/test_pretrained.py
    assert (ours[:, 10:] - model(ids)[:, 10:]).abs().max() > 1.0
