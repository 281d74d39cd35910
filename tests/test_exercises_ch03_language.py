"""Chapter 3's checkers in both languages: English verdicts as written, Chinese on request, same numbers.

The checkers try named seeded cases first, so the English verdicts below are fixed; predictions are recorded as a
reader records them."""

import math

import pytest
import torch

from helpers.exercises import ch03
from helpers.exercises.messages import CATALOGUE
from helpers.exercises.predictions import _forget as forget
from helpers.exercises.predictions import predict


@pytest.fixture(autouse=True)
def _no_predictions():
    forget()
    yield
    forget()


def _without_output_projection(x, layer):
    batch, length, d_model = x.shape
    heads = layer.num_heads
    q, k, v = (p(x).view(batch, length, heads, -1).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return (weights @ v).transpose(1, 2).reshape(batch, length, d_model)


def _predicted(key, value, check):
    forget()
    predict(key, value)
    return check()


# (checker call, the English message the checker gives)
ENGLISH = [
    (lambda language: _predicted(ch03.VARIANCE_KEY, 16.0, lambda: ch03.check_predicted_variance(language=language)),
     "your prediction was wrong: 16 = d_k σ² counts σ² once; but both q_i and k_i have variance σ², so each "
     "product q_i k_i has variance E[q_i²] E[k_i²] = σ⁴. Now that you have predicted: the checker measured 3.98 on "
     "20,000 pairs, and d_k σ⁴ = 4."),
    (lambda language: ch03.check_predicted_variance(language=language),
     "first record your prediction, before the result is shown: predict('ch03.variance', value) with your number in "
     "place of value, then run the checker again. Nothing is shown until then."),
    (lambda language: ch03.check_attention_scale(lambda d, h, k: 1 / math.sqrt(d // k), language=language),
     "for embed_dim=96, num_heads=8, num_kv_heads=2: you divide by √(embed_dim/num_kv_heads) = √48: key/value "
     "heads are shared between query heads, but each dot product still has head_dim = 12 terms."),
    (lambda language: _predicted(ch03.ROW_SPREAD_KEY, "smaller", lambda: ch03.check_row_spread(
        lambda q, k: (q.unsqueeze(1) * k).sum(-1).var().item(), language=language)),
     "for d_k = 64: 204 is the variance across all (query, key) pairs, every score of the batch pooled. The softmax "
     "sees one query against its own keys: take the variance over the keys of each row (dim=-1), then average over "
     "the queries."),
    (lambda language: ch03.check_softmax_jacobian(lambda z: None, language=language),
     "your function returned a NoneType; return the Jacobian as a tensor (..., S, S) (did you forget `return`?)"),
    (lambda language: ch03.check_lr_prediction(lambda s, l: [], None, language=language),
     "first record your prediction, before the result is shown: predict('ch03.learning_rates', value) with a dict "
     "{'scaled': n, 'no scale': m} (how many learning rates each head can use) in place of value, then run the "
     "checker again. Nothing is shown until then."),
    (lambda language: _predicted(ch03.ENTROPY_KEY, -1.0, lambda: ch03.check_entropy_prediction(language=language)),
     "an entropy is never negative: H(p) = -Σ p log p with 0 ≤ p ≤ 1. Check the sign."),
    (lambda language: ch03.check_multihead_fix(_without_output_projection, language=language),
     "with embed_dim=24, num_heads=4: the output projection is missing: return layer.o_proj(out)."),
]


@pytest.mark.parametrize(("call", "english"), ENGLISH)
def test_english_verdicts_are_the_ones_written(call, english):
    assert call("en").message == english


@pytest.mark.parametrize(("call", "english"), ENGLISH)
def test_chinese_verdicts_keep_the_numbers_and_say_it_in_chinese(call, english):
    chinese = call("zh")
    assert chinese.key is not None and chinese.passed == call("en").passed
    assert any("\u4e00" <= ch <= "\u9fff" for ch in chinese.message), chinese.message
    numbers = {token.strip(".,:;") for token in english.replace("(", " ").replace(")", " ").split()}
    numbers = {token for token in numbers if token.replace(".", "", 1).isdigit()}
    assert all(number in chinese.message for number in numbers), (numbers, chinese.message)
    assert chinese.in_language("en").message == english  # a stored verdict renders back in English


def test_every_chapter_3_message_has_chinese():
    keys = [key for key in CATALOGUE if key.startswith("ch03.")]
    assert len(keys) >= 90
    assert [key for key in keys if "zh" not in CATALOGUE[key]] == []
