"""Tests of helpers.experiments.recall (chapters 2 and 3): the recall model, its batches and its runs."""

import math

import pytest
import torch

from helpers.experiments import recall
from helpers.experiments.recall import RecallAttention, RecallConfig
from helpers.experiments.score_learning import EXTRA_SCORES, LEARNING_SCORES, SCORE_RECALL, score_config
from helpers.scores import neg_euclidean_scores, scaled_dot_scores
from helpers.train import TrainingHistory


def test_recall_model_shapes_and_the_score_functions_it_uses():
    torch.manual_seed(0)
    tokens = torch.randint(0, 10, (3, 9))
    for name in LEARNING_SCORES + EXTRA_SCORES:
        config = score_config(name, RecallConfig(num_pairs=4, num_keys=5, num_values=5, embed_dim=8, hidden_dim=4,
                                                 slots="tokens"))
        model = RecallAttention.from_config(config)
        logits, weights = model(tokens)
        assert logits.shape == (3, 5) and weights.shape == (3, 1, 1, 8)
        torch.testing.assert_close(weights.sum(-1), torch.ones(3, 1, 1))
    model = RecallAttention(5, 5, 8, score="dot")
    q, k = torch.randn(2, 1, 8), torch.randn(2, 5, 8)
    torch.testing.assert_close(model.scores(q, k) * model.log_scale.exp(), scaled_dot_scores(q, k))
    model = RecallAttention(5, 5, 8, score="neg_euclidean")
    torch.testing.assert_close(model.scores(q, k), neg_euclidean_scores(q, k))
    assert model.scale == 1.0
    with pytest.raises(ValueError, match="score must be one of"):
        RecallAttention(5, 5, 8, score="manhattan")


def test_recall_model_slot_t_returns_the_token_after_it():
    model = RecallAttention(3, 3, 4, slots="tokens")
    with torch.no_grad():
        model.q_proj.weight.zero_()  # uniform attention: the output is the mean of the values
        model.v_proj.weight.copy_(torch.eye(4))
    tokens = torch.tensor([[0, 1, 2, 3, 4]])
    x = model.embed(tokens)
    logits, weights = model(tokens)
    torch.testing.assert_close(weights, torch.full((1, 1, 1, 4), 0.25))
    torch.testing.assert_close(logits, model.readout(model.o_proj(x[:, 1:].mean(1))))


def test_recall_batches_ask_for_the_value_next_to_the_query_key():
    config = RecallConfig(num_pairs=4, num_keys=6, num_values=5, batch_size=32, data_seed=0)
    tokens, target = config.make_batch(3)
    assert tokens.shape == (32, 9) and target.shape == (32,)
    for row, value in zip(tokens.tolist(), target.tolist()):
        keys, values, query = row[0:8:2], row[1:8:2], row[8]
        assert values[keys.index(query)] - 6 == value
    assert 0 <= target.min() and target.max() < 5


def test_recall_model_with_hand_set_weights_solves_the_task():
    # keys embedded as one-hot, W_q = W_k = 10 I: the query's own key gets all the weight
    config = RecallConfig(num_pairs=4, num_keys=8, num_values=8, batch_size=64)
    model = RecallAttention(8, 8, 16, 1, scale=1.0)
    with torch.no_grad():
        model.embed.weight.copy_(torch.eye(16))
        model.q_proj.weight.copy_(10 * torch.eye(16))
        model.k_proj.weight.copy_(10 * torch.eye(16))
        model.v_proj.weight.copy_(torch.eye(16))
        model.o_proj.weight.copy_(torch.eye(16))
        model.readout.weight.copy_(torch.eye(16)[8:])  # value token 8 + j -> class j
        model.readout.bias.zero_()
        tokens, target = config.make_batch(0)
        logits, weights = model(tokens)
    assert weights.shape == (64, 1, 1, 4)
    keys, query = tokens[:, 0:-1:2], tokens[:, -1:]
    assert (weights[:, 0, 0].argmax(-1) == (keys == query).float().argmax(-1)).all()
    assert (logits.argmax(-1) == target).all()


def test_steps_to_accuracy_uses_a_moving_average():
    history = TrainingHistory(accuracy=[0.0] * 10 + [1.0] * 10)
    assert recall.steps_to_accuracy(history, 0.5, window=4) == 11  # window 10..13 averages 0.5 at step 11
    assert recall.steps_to_accuracy(history, 1.0, window=4) == 13
    assert recall.steps_to_accuracy(TrainingHistory(accuracy=[0.2] * 30), 0.9) is None
    assert recall.final_accuracy(history, last=5) == 1.0


def test_train_recall_is_deterministic_and_measures_held_out_accuracy():
    config = score_config("dot", SCORE_RECALL)
    config = RecallConfig(**{**config.__dict__, "steps": 6, "eval_every": 3, "num_test": 50})
    a = recall.train_recall(config)
    b = recall.train_recall(config)
    assert a.eval_steps == [2, 5] and a.test_accuracy == b.test_accuracy and a.history.loss == b.history.loss
    assert a.num_parameters == sum(p.numel() for p in RecallAttention.from_config(config).parameters())
    assert a.step_time > 0 and a.wall_time >= a.step_time


def test_plain_cosine_attention_cannot_put_more_than_its_bound_on_one_slot():
    # scores in [-1, 1] over S slots: at most e / (e + (S - 1) / e) of the weight on the best one
    torch.manual_seed(0)
    model = RecallAttention(32, 32, 16, score="cosine", slots="tokens")
    with torch.no_grad():
        model.k_proj.weight.copy_(model.q_proj.weight)  # make the query match its own key exactly
    tokens = torch.randint(0, 64, (20, 25))
    tokens[:, 0] = tokens[:, -1]
    _, weights = model(tokens)
    bound = 1 / (1 + 23 * math.exp(-2))
    assert weights.max() <= bound + 1e-6
    assert (weights[:, 0, 0].argmax(-1) == 0).all()  # the matching slot (score 1) wins every row ...
    assert weights[:, 0, 0, 0].max() < 0.5  # ... but can never take the weight a dot product could give it


# --- chapter 3's optional settings: early stop, the temperature's learning rate, the logits' spread ---


def test_scaled_scores_are_the_scores_forward_takes_the_softmax_of():
    torch.manual_seed(0)
    model = RecallAttention(16, 16, 8, num_heads=2, scale=0.3)
    tokens = torch.randint(0, 32, (5, 17))
    _, weights = model(tokens)
    torch.testing.assert_close(torch.softmax(model.scaled_scores(tokens), dim=-1), weights)


def test_stop_after_target_ends_a_run_that_many_steps_after_it_reaches_the_target():
    config = RecallConfig(num_pairs=2, num_keys=4, num_values=4, embed_dim=16, steps=400, lr=1e-2,
                          target=0.6, window=5, stop_after_target=7)
    run = recall.train_recall(config)
    assert run.steps_to_target is not None and len(run.history.accuracy) == run.steps_to_target + 8
    assert recall.train_recall(RecallConfig(**{**config.__dict__, "stop_after_target": None, "steps": 30})
                               ).history.step[-1] == 29


def test_scale_lr_factor_moves_the_temperature_that_many_times_further():
    base = RecallConfig(embed_dim=16, steps=5, learned_scale=True, scale=1.0)
    slow = recall.train_recall(base).scale_trajectory
    fast = recall.train_recall(RecallConfig(**{**base.__dict__, "scale_lr_factor": 10.0})).scale_trajectory
    assert math.log(fast[0]) == pytest.approx(10 * math.log(slow[0]), rel=1e-4)  # the first step: exactly 10 times
    with pytest.raises(ValueError, match="scale_lr_factor"):
        RecallConfig(scale_lr_factor=0.0)


def test_record_score_std_every_measures_the_spread_at_init_and_every_k_steps():
    run = recall.train_recall(RecallConfig(embed_dim=16, steps=9), record_score_std_every=4)
    assert run.score_std_steps == [0, 4, 8] and all(s > 0 for s in run.score_std)
    assert recall.train_recall(RecallConfig(embed_dim=16, steps=3)).score_std == []


def test_qk_dim_sets_the_size_of_queries_and_keys_and_keeps_the_width():
    config = RecallConfig(embed_dim=16, qk_dim=4, steps=2)
    model = RecallAttention.from_config(config)
    assert config.head_dim == 4 and config.initial_scale == pytest.approx(1 / 2)
    assert model.q_proj.weight.shape == model.k_proj.weight.shape == (4, 16)
    assert model.v_proj.weight.shape == (16, 16)
    tokens, _ = config.make_batch(0)
    logits, weights = model(tokens)
    assert logits.shape == (64, 16) and weights.shape == (64, 1, 1, 8)
    # qk_dim equal to the width is the model without it, weight for weight
    torch.manual_seed(3)
    plain = RecallAttention(16, 16, 16)
    torch.manual_seed(3)
    same = RecallAttention(16, 16, 16, qk_dim=16)
    assert all(torch.equal(a, b) for a, b in zip(plain.parameters(), same.parameters()))
    with pytest.raises(ValueError, match="qk_dim"):
        RecallConfig(qk_dim=0)


def test_qk_lr_factor_moves_w_q_and_w_k_that_many_times_further_and_nothing_else():
    base = RecallConfig(embed_dim=16, steps=1)
    torch.manual_seed(0)
    start = RecallAttention.from_config(base).state_dict()
    moved = {}
    for factor in (1.0, 5.0):
        seen = {}
        recall.train_recall(RecallConfig(**{**base.__dict__, "qk_lr_factor": factor}),
                            callback=lambda step, model, history: seen.update(
                                {k: v.detach().clone() for k, v in model.state_dict().items()}))
        moved[factor] = {k: seen[k] - start[k] for k in start}
    for name in ("q_proj.weight", "k_proj.weight"):  # the first step: exactly five times as far
        torch.testing.assert_close(moved[5.0][name], 5 * moved[1.0][name], rtol=1e-4, atol=1e-7)
    torch.testing.assert_close(moved[5.0]["v_proj.weight"], moved[1.0]["v_proj.weight"])
    with pytest.raises(ValueError, match="qk_lr_factor"):
        RecallConfig(qk_lr_factor=-1.0)
