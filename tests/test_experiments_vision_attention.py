"""Tests of helpers.experiments.vision_attention and helpers.vision_tasks.cued_object_images (chapter 5.4)."""

import torch

from helpers.experiments import vision_attention as va
from helpers.vision import TinyCNN
from helpers.vision_tasks import cued_object_images


def test_matched_width_brings_the_parameter_counts_within_five_percent():
    for channels, attention in ((16, "se"), (2, "cbam")):
        with_attention = va.parameter_count(TinyCNN(channels, 2, attention=attention))
        plain = va.parameter_count(TinyCNN(channels, 2, width=va.matched_width(channels, 2, attention)))
        assert abs(plain - with_attention) / with_attention < 0.05


def test_map_overlap_and_auc_on_known_maps():
    regions = torch.zeros(1, 4, 4, dtype=torch.bool)
    regions[0, :2, :2] = True
    peaked = regions.float() + 0.01
    assert va.map_overlap(peaked, regions).item() > 3.5 and va.map_auc(peaked, regions).item() == 1.0
    assert abs(va.map_overlap(torch.ones(1, 4, 4), regions).item() - 1.0) < 1e-6
    assert abs(va.map_auc(1 - regions.float(), regions).item()) < 1e-6


def test_cued_object_images_hold_both_shapes_and_a_marker_left_of_the_target():
    images, labels, target, other = cued_object_images(50, 16, noise=0.0, seed=0)
    assert images.shape == (50, 2, 16, 16) and (target.sum((1, 2)) == 9).all() and not (target & other).any()
    for n in range(50):
        rows, cols = target[n].nonzero(as_tuple=True)
        marker_rows, marker_cols = images[n, 1].nonzero(as_tuple=True)
        assert (marker_cols == cols.min() - 5).all() and set(marker_rows.tolist()) == set(rows.tolist())
        shape = images[n, 0][target[n]]
        plus = torch.tensor([0, 1, 0, 1, 1, 1, 0, 1, 0], dtype=torch.float32)
        assert torch.equal(shape, plus) == (labels[n] == 0)  # the marked shape is the label


def test_channel_and_spatial_runs_report_what_the_chapter_reads():
    run = va.train_channel_selection("se", seed=0, steps=20)
    assert run.input_weights.shape == (16,) and run.conv_norms.shape == (16,) and len(run.informative) == 2
    spatial = va.train_spatial("marked", "cbam", seed=0, steps=5)
    assert spatial.example_map.shape == (16, 16) and 0 <= spatial.target_auc <= 1 and 0 <= spatial.target_wins <= 1


def test_se_gate_spread_is_the_std_over_images_and_plain_runs_have_none():
    run = va.train_channel_selection("se", seed=0, steps=10)
    assert run.weight_spread is not None and 0 <= run.weight_spread < 0.5
    assert va.train_channel_selection(None, seed=0, steps=2).weight_spread is None


def test_zero_mean_class_patterns_give_se_nothing_to_squeeze():
    from helpers.vision_tasks import channel_selection_images
    images, _, _ = channel_selection_images(64, 4, 1, 8, noise=0.0, seed=0)
    assert images.mean(dim=(2, 3)).abs().max() < 1e-6  # without noise every channel's spatial mean is 0


def test_wide_first_convolution_control_has_the_asked_kernel():
    run = va.train_spatial("marked", None, seed=0, steps=2, first_kernel=11)
    narrow = va.train_spatial("marked", None, seed=0, steps=2)
    width = va.matched_width(2, 2, "cbam", width=8, spatial_kernel=11)  # the plain network's width
    assert run.parameters - narrow.parameters == (11 * 11 - 3 * 3) * 2 * width  # 2 input channels
    try:
        va.train_spatial("marked", None, seed=0, steps=1, first_kernel=4)
    except ValueError as exc:
        assert "first_kernel" in str(exc)
    else:
        raise AssertionError("an even kernel must raise")


def test_cbam_gates_shrink_the_signal_at_initialisation_and_plain_networks_do_not():
    gated = va.signal_at_init("marked", "cbam", seed=0)
    plain = va.signal_at_init("marked", None, seed=0)
    assert 0 < gated["input_pass"] < 1 and 0 < gated["feature_pass"] < 1
    assert plain["input_pass"] == plain["feature_pass"] == 1.0
    one_gate = va.signal_at_init("marked", "cbam-spatial", seed=0)  # one sigmoid near its middle: about half
    assert 0.3 < one_gate["input_pass"] < 0.7


def test_spatial_runs_report_their_final_training_loss_and_ablations_train():
    run = va.train_spatial("object", "cbam-spatial", seed=0, steps=3)
    assert run.final_loss is not None and run.final_loss > 0 and run.example_map is not None
    channel = va.train_spatial("object", "cbam-channel", seed=0, steps=3)
    assert channel.example_map is None and channel.parameters < run.parameters + 1000
