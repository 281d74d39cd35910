"""Chapter 6.2 experiments: the lag task, the Post-/Pre-LN runs, saturation at init, the entropy monitor."""

import math

import pytest
import torch

from helpers.experiments import training_failures as tf
from helpers.figures import training_failures as fig


def test_lag_batches_target_is_the_token_lag_places_back():
    tokens, targets = tf.lag_batches(0, batch=4, length=10)(0)
    assert tokens.shape == targets.shape == (4, 10)
    assert torch.equal(targets[:, tf.LAG:], tokens[:, :-tf.LAG])


def test_a_diverging_run_stops_early_and_counts_as_failed():
    run = tf.train_lag_model(norm_first=False, lr=5.0, steps=30, num_layers=2, embed_dim=16)
    assert run.failed and run.final_loss == math.inf or run.final_loss > 0.9 * tf.CHANCE


def test_pre_ln_learns_the_lag_task_in_a_few_steps():
    run = tf.train_lag_model(norm_first=True, lr=1e-2, steps=60, num_layers=2, embed_dim=32)
    assert not run.failed and run.final_loss < 0.5


def test_init_layer_grad_norms_gives_one_norm_per_block():
    norms = tf.init_layer_grad_norms(True, num_layers=3)
    assert len(norms) == 3 and all(n > 0 for n in norms)


def test_init_saturation_grows_with_the_weight_scale():
    small, large = tf.init_saturation([0.02, 1.0], embed_dim=32, length=8)
    assert small.normalized_entropy > 0.99 > 0.2 > large.normalized_entropy
    assert large.saturated_fraction > small.saturated_fraction


def test_monitored_run_records_per_head_entropy_in_unit_range():
    run = tf.train_monitored("t", lr=1e-2, steps=12, probe_every=5)
    assert run.probe_step == [-1, 0, 5, 10, 11]
    assert all(e.shape == (2, 4) and 0 <= float(e.min()) and float(e.max()) <= 1 + 1e-5 for e in run.head_entropy)
    assert run.entropy_series("mean")[0] > 0.95  # N(0, 0.02)-ish init: near uniform before training


def test_uniform_scale_bug_keeps_entropy_at_one():
    run = tf.train_monitored("u", lr=1e-2, steps=5, scale=1e-4)
    assert min(run.entropy_series()) > 0.99


def test_figures_build_from_results():
    runs = [tf.train_lag_model(norm_first=nf, lr=1e-2, steps=3, num_layers=1, embed_dim=16) for nf in (False, True)]
    grid = {(False, 0, 1e-2): runs[:1], (True, 0, 1e-2): runs[1:]}
    assert len(fig.grid_figure(grid).data) == 1
    assert len(fig.loss_curves_figure({"a": runs}, title="t").data) == 2
    assert len(fig.layer_norms_figure([[1.0, 2.0]], [[1.0, 1.0]]).data) == 2
    mon = tf.train_monitored("m", lr=1e-2, steps=3)
    assert len(fig.entropy_figure({"m": [mon]}, low=0.05, high=0.95).data) == 1


def test_spiked_loss_multiplies_every_nth_call():
    base = lambda logits, targets: logits.sum()  # noqa: E731
    spiked = tf.spiked_loss(base, every=3, scale=10.0)
    values = [float(spiked(torch.ones(2), None)) for _ in range(7)]
    assert values == [20.0, 2.0, 2.0, 20.0, 2.0, 2.0, 20.0]
    for kwargs in (dict(every=0, scale=2.0), dict(every=2, scale=0.0)):
        try:
            tf.spiked_loss(base, **kwargs)
        except ValueError:
            continue
        raise AssertionError(f"no ValueError for {kwargs}")


def test_spiked_run_records_the_unspiked_loss_and_the_spiked_gradient():
    plain = tf.train_lag_model(norm_first=True, lr=1e-3, steps=4, num_layers=1, embed_dim=16)
    spiked = tf.train_lag_model(norm_first=True, lr=1e-3, steps=4, num_layers=1, embed_dim=16,
                                spike_every=2, spike_scale=100.0)
    assert spiked.loss[0] == pytest.approx(plain.loss[0], rel=1e-5)  # same model and batch at step 0
    assert spiked.grad_norm[0] == pytest.approx(100 * plain.grad_norm[0], rel=1e-4)


def test_sigma_reparam_monitor_lm_trains_and_starts_as_the_plain_model():
    torch.manual_seed(0)
    plain = tf.MonitorLM()
    torch.manual_seed(0)
    reparam = tf.MonitorLM(sigma_reparam=True)
    tokens, _ = tf.lag_batches(0)(0)
    torch.testing.assert_close(reparam(tokens)[0], plain(tokens)[0], rtol=1e-4, atol=1e-5)
    run = tf.train_monitored("s", lr=1e-2, steps=60, sigma_reparam=True)
    assert run.final_loss < 0.5


def test_xavier_init_gives_one_norm_per_block_and_rejects_an_unknown_init():
    norms = tf.init_layer_grad_norms(False, num_layers=3, init="xavier")
    assert len(norms) == 3 and all(n > 0 for n in norms)
    assert norms != tf.init_layer_grad_norms(False, num_layers=3)  # another initialisation, other gradients
    with pytest.raises(ValueError, match="init"):
        tf.init_layer_grad_norms(False, init="kaiming")


def test_init_scores_match_init_saturation_and_dead_rows_follow_the_scale():
    scores = tf.init_scores((0.02, 0.5))
    assert scores[0].shape == (8, 4, 32, 32)
    stats = tf.init_saturation((0.02, 0.5))
    assert stats[0] == tf.saturation_stats(scores[0])
    dead_small, alive_small = tf.dead_row_share(scores[0])
    dead_big, _ = tf.dead_row_share(scores[1])
    assert dead_small == 0 and dead_big > 0.2
    assert alive_small == pytest.approx(math.sqrt(31) / 32, rel=0.02)  # near-uniform rows of 32 keys


def test_dead_row_share_of_one_hot_and_uniform_rows():
    one_hot = torch.tensor([[100.0, 0.0, 0.0, 0.0]])  # softmax is one-hot to float precision
    uniform = torch.zeros(1, 4)
    assert tf.dead_row_share(one_hot) == (1.0, 0.0)
    dead, alive = tf.dead_row_share(uniform)
    assert dead == 0.0 and alive == pytest.approx(math.sqrt(3) / 4)


def test_adam_spike_steps_without_spikes_are_the_learning_rate_and_spikes_steer_the_steps():
    plain = tf.adam_spike_steps(steps=20, every=1000, scale=1.0)
    assert all(u == pytest.approx(1.0, rel=1e-5) for u in plain)  # a constant gradient: m_hat = v_hat = 1
    along = tf.adam_spike_steps(steps=30, every=10, scale=1000.0)
    against = tf.adam_spike_steps(steps=30, every=10, scale=1000.0, sign=-1.0)
    between = [u for step, u in enumerate(along) if step >= 10 and step % 10]
    assert 0.1 < min(between) < max(between) < 0.5  # smaller than usual, not 300 times smaller
    assert all(u < 0 for u in against)  # the first moment holds the spike's direction
