"""Chapter 3's checkers in both languages: English verdicts exactly as before the catalogue, Chinese on request."""

import math

import pytest

from helpers.exercises import ch03
from helpers.exercises.messages import CATALOGUE


def _probe():
    return ch03._probe_sweep()


# (checker call, the English message the checker gave before its messages moved to the catalogue)
BEFORE = [
    (lambda language: ch03.check_predicted_variance(16.0, language=language),
     "16 = d_k σ² counts σ² once; but both q_i and k_i have variance σ², so each product q_i k_i has variance "
     "E[q_i²] E[k_i²] = σ⁴."),
    (lambda language: ch03.check_attention_scale(lambda d, h, k: 1 / math.sqrt(d // k), language=language),
     "for embed_dim=256, num_heads=16, num_kv_heads=4: you divide by √(embed_dim/num_kv_heads) = √64: key/value "
     "heads are shared between query heads, but each dot product still has head_dim = 16 terms."),
    (lambda language: ch03.check_row_spread(lambda d, s: 3.0 * d, language=language),
     "for d_k = 32: 96 ≈ 3 d_k is the variance across independent (query, key) pairs. The softmax sees one query "
     "against its own keys: fix q, draw many keys, take the variance over the keys, then average over queries."),
    (lambda language: ch03.check_softmax_jacobian(lambda z: None, language=language),
     "your function returned a NoneType; return the Jacobian as a tensor (..., S, S) (did you forget `return`?)"),
    (lambda language: ch03.check_lr_prediction(lambda s, l: [], _probe(), None, language=language),
     "first write your prediction, before the runs: a dict {'scaled': n, 'no scale': m} with how many of the 3 "
     "learning rates each head can use (0 to 3); got None"),
    (lambda language: ch03.check_entropy_prediction(-1.0, language=language),
     "an entropy is never negative: H(p) = -Σ p log p with 0 ≤ p ≤ 1. Check the sign."),
]


@pytest.mark.parametrize(("call", "english"), BEFORE)
def test_english_verdicts_are_the_ones_written_before_the_catalogue(call, english):
    assert call("en").message == english


@pytest.mark.parametrize(("call", "english"), BEFORE)
def test_chinese_verdicts_keep_the_numbers_and_say_it_in_chinese(call, english):
    chinese = call("zh")
    assert chinese.key is not None and chinese.passed == call("en").passed
    assert any("\u4e00" <= ch <= "\u9fff" for ch in chinese.message), chinese.message
    numbers = {token for token in english.replace("(", " ").replace(")", " ").split() if token.isdigit()}
    assert all(number in chinese.message for number in numbers), (numbers, chinese.message)
    assert chinese.in_language("en").message == english  # a stored verdict renders back in English


def test_every_chapter_3_message_has_chinese():
    keys = [key for key in CATALOGUE if key.startswith("ch03.")]
    assert len(keys) >= 60
    assert [key for key in keys if "zh" not in CATALOGUE[key]] == []
