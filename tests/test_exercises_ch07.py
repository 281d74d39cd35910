"""Chapter 7's exercise checkers: accept the reference solutions and honest answers in other styles, name each
typical mistake, refuse answers that delegate to the package, a sink share measured without a prediction recorded
before it, and a cache formula that holds only for fixed inputs. The model the checkers run is a tiny random Llama
here (they accept any helpers.llama.LlamaForCausalLM); the lab runs them on SmolLM2-135M."""

from __future__ import annotations

import pytest
import torch

from exercise_routes import delegating_routes
from helpers import seeding
from helpers.exercises import ch07, predictions
from helpers.experiments import llm_heads
from helpers.llama import LlamaConfig, LlamaForCausalLM

TINY = LlamaConfig(vocab_size=20000, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=8, max_position_embeddings=256)


@pytest.fixture(scope="module")
def model() -> LlamaForCausalLM:
    seeding.manual_seed(0)
    return LlamaForCausalLM(TINY).eval()


class CharacterTokenizer:
    """A stand-in for SmolLM2's tokenizer: one id a character."""

    class Encoded:
        def __init__(self, ids: list[int]) -> None:
            self.input_ids = ids

    def __call__(self, text: str) -> CharacterTokenizer.Encoded:
        return self.Encoded([ord(c) % TINY.vocab_size for c in text])


def induction(weights, n):
    t = torch.arange(n, 2 * n)
    return weights[..., t, t - n + 1].mean(dim=(1, 3))


def induction_loops(weights, n):
    layers, batch, heads = weights.shape[:3]
    out = torch.zeros(layers, heads)
    for layer in range(layers):
        for head in range(heads):
            total = 0.0
            for b in range(batch):
                for t in range(n, 2 * n):
                    total += weights[layer, b, head, t, t - n + 1]
            out[layer, head] = total / (batch * n)
    return out


def share(weights, skip):
    return weights[..., skip:, 0].mean(dim=(1, 2, 3))


def cache_bytes(config, context, batch, dtype):
    per_token = 2 * config.num_hidden_layers * config.num_key_value_heads * config.head_dim
    return per_token * context * batch * dtype.itemsize


# --- exercise 1: induction scores --------------------------------------------------------------------

def test_induction_accepts_the_solution_and_loops(model):
    result = ch07.check_induction_scores(induction, model)
    assert result.passed and "top heads" in result.message
    assert ch07.check_induction_scores(induction_loops, model).passed


@pytest.mark.parametrize("answer, words", [
    (lambda w, n: w[..., torch.arange(n, 2 * n), torch.arange(0, n)].mean(dim=(1, 3)), "duplicate-token"),
    (lambda w, n: w[..., torch.arange(1, 2 * n), torch.arange(0, 2 * n - 1)].mean(dim=(1, 3)), "previous-token"),
    (lambda w, n: w[..., torch.arange(n, 2 * n - 1), torch.arange(1, n)].mean(dim=(1, 3)), "last query"),
    (lambda w, n: induction(w, n) * n * w.shape[1], "summed over the queries and the sequences"),
    (lambda w, n: induction(w, n).T, "(H, N)"),
    (lambda w, n: w[..., torch.arange(n, 2 * n), torch.arange(1, n + 1)].mean(-1), "(N, B, H)"),
    (lambda w, n: induction(w, n) + 0.01, "right shape, wrong numbers"),
])
def test_induction_names_each_mistake(model, answer, words):
    result = ch07.check_induction_scores(answer, model)
    assert not result.passed and words in result.message, result.message


@pytest.mark.parametrize("route, answer", delegating_routes(
    llm_heads.scores_from_weights, lambda f, w, n: torch.stack([f(layer, n)[1] for layer in w])).items())
def test_induction_refuses_the_packages_scores_by_any_route(model, route, answer):
    result = ch07.check_induction_scores(answer, model)
    assert not result.passed and "scores_from_weights" in result.message, (route, result.message)


def test_induction_refuses_a_stub_and_a_non_model():
    def induction_scores(weights, n):
        raise NotImplementedError

    assert "stub" in ch07.check_induction_scores(induction_scores, LlamaForCausalLM(TINY)).message
    assert "load_smollm2()[0]" in ch07.check_induction_scores(induction, "a model").message


def test_induction_speaks_chinese(model):
    result = ch07.check_induction_scores(lambda w, n: induction(w, n).T, model, language="zh")
    assert "(N, H)" in result.message and "每层一行" in result.message


# --- exercise 2: the sink share, predicted -------------------------------------------------------------

@pytest.fixture
def fresh_prediction():
    predictions._forget(ch07.SINK_SHARE)
    yield
    predictions._forget(ch07.SINK_SHARE)


def test_sink_share_refuses_to_measure_without_a_prediction(model, fresh_prediction):
    result = ch07.check_sink_share(share, model, CharacterTokenizer())
    assert not result.passed and "predict(" in result.message
    ch07.predict(ch07.SINK_SHARE, 1.5)
    assert "between 0 and 1" in ch07.check_sink_share(share, model, CharacterTokenizer()).message


def test_sink_share_accepts_the_solution_and_compares_the_prediction(model, fresh_prediction):
    ch07.predict(ch07.SINK_SHARE, 0.3)
    result = ch07.check_sink_share(share, model, CharacterTokenizer())
    assert result.passed and "you predicted 0.30" in result.message
    assert result.key in ("ch07.sink.passed_close", "ch07.sink.passed_far")
    ch07.predict(ch07.SINK_SHARE, 0.3)  # after the result was shown: late
    late = ch07.check_sink_share(share, model, CharacterTokenizer())
    assert late.passed and "does not count" in late.message


@pytest.mark.parametrize("answer, words", [
    (lambda w, s: share(w, 0), "every query"),
    (lambda w, s: w[..., 0, :].mean(dim=(1, 2, 3)), "row 0"),
    (lambda w, s: w[..., s:, -1].mean(dim=(1, 2, 3)), "last key"),
    (lambda w, s: w[..., s:, 0].mean(dim=(1, 3)), "keeps the heads"),
    (lambda w, s: share(w, s) * 2, "right shape, wrong numbers"),
])
def test_sink_share_names_each_mistake_and_shows_nothing(model, fresh_prediction, answer, words):
    ch07.predict(ch07.SINK_SHARE, 0.3)
    result = ch07.check_sink_share(answer, model, CharacterTokenizer())
    assert not result.passed and words in result.message, result.message
    assert not predictions.recorded(ch07.SINK_SHARE).late  # a wrong function reveals nothing


# --- exercise 3: the cache for a context -----------------------------------------------------------------

def test_cache_size_accepts_the_solution_and_checks_the_measured_cache(model):
    result = ch07.check_cache_size(cache_bytes, model)
    assert result.passed and "as your formula says" in result.message
    per_token = 2 * TINY.num_hidden_layers * TINY.num_key_value_heads * TINY.head_dim * 4
    assert f"{per_token / 1024:.0f} KiB a token" in result.message


@pytest.mark.parametrize("answer, words", [
    (lambda c, n, b, d: cache_bytes(c, n, b, d) / 2, "keys or values"),
    (lambda c, n, b, d: cache_bytes(c, n, b, d) / c.num_hidden_layers, "one layer"),
    (lambda c, n, b, d: cache_bytes(c, n, b, d) * c.num_attention_heads / c.num_key_value_heads, "query heads"),
    (lambda c, n, b, d: cache_bytes(c, n, b, d) / d.itemsize, "elements"),
    (lambda c, n, b, d: cache_bytes(c, n, b, d) / d.itemsize * 4, "4 bytes"),
    (lambda c, n, b, d: cache_bytes(c, n, b, d) / b, "batch"),
    (lambda c, n, b, d: cache_bytes(c, n, b, d) * 8, "bits"),
    (lambda c, n, b, d: "many", "a number of bytes"),
    (lambda c, n, b, d: 94371840, "expected"),
])
def test_cache_size_names_each_mistake(model, answer, words):
    result = ch07.check_cache_size(answer, model)
    assert not result.passed and words in result.message, result.message


def test_cache_size_refuses_the_packages_formula(model):
    from helpers.experiments.llm_cache import bytes_per_token

    result = ch07.check_cache_size(lambda c, n, b, d: bytes_per_token(c, d) * n * b, model)
    assert not result.passed and "bytes_per_token" in result.message


def test_every_message_has_chinese():
    assert all(set(templates) == {"en", "zh"} for templates in ch07.MESSAGES.values())
