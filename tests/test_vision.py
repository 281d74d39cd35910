"""Tests of helpers.vision: SE and CBAM against their paper formulas, and SE picking channels."""

import pytest
import torch

from helpers.train import num_threads, set_seed, train
from helpers.vision import CBAM, SqueezeExcitation, TinyCNN
from helpers.vision_tasks import channel_selection_images


@pytest.fixture(autouse=True)
def _one_thread():
    with num_threads(1):
        yield


def test_se_equals_squeeze_excite_scale_by_hand():
    set_seed(0)
    se = SqueezeExcitation(8, reduction=4)
    x = torch.randn(3, 8, 5, 6)
    y = se(x)
    assert se.fc1.out_features == 2 and y.shape == x.shape
    for b in range(3):
        z = torch.tensor([x[b, c].sum().item() / 30 for c in range(8)])  # global average, by hand
        s = torch.sigmoid(se.fc2.weight @ torch.relu(se.fc1.weight @ z + se.fc1.bias) + se.fc2.bias)
        torch.testing.assert_close(se.last_weights[b], s)
        for c in range(8):
            torch.testing.assert_close(y[b, c], x[b, c] * s[c])
    assert ((se.last_weights > 0) & (se.last_weights < 1)).all()
    assert se.last_weights.shape == (3, 8) and not se.last_weights.requires_grad


def test_se_commutes_with_any_permutation_of_pixels():
    set_seed(1)
    se = SqueezeExcitation(4, reduction=2)
    x = torch.randn(2, 4, 3, 3)
    perm = torch.randperm(9)
    shuffled = x.flatten(2)[:, :, perm].reshape(2, 4, 3, 3)
    torch.testing.assert_close(se(shuffled), se(x).flatten(2)[:, :, perm].reshape(2, 4, 3, 3))


def test_se_hidden_size_is_at_least_one():
    assert SqueezeExcitation(3, reduction=16).fc1.out_features == 1


def test_cbam_equals_channel_then_spatial_attention_by_hand():
    set_seed(2)
    cbam = CBAM(6, reduction=3, spatial_kernel=3)
    x = torch.randn(2, 6, 5, 5)
    y = cbam(x)
    mlp = cbam.mlp
    channel = torch.sigmoid(mlp(x.mean((2, 3))) + mlp(x.amax((2, 3))))  # (B, C)
    refined = x * channel[:, :, None, None]
    kernel = cbam.spatial_conv.weight[0]  # (2, 3, 3)
    mean_map = torch.nn.functional.pad(refined.mean(1), (1, 1, 1, 1))  # (B, 7, 7) zero padding
    max_map = torch.nn.functional.pad(refined.amax(1), (1, 1, 1, 1))
    spatial = torch.zeros(2, 5, 5)
    for b in range(2):
        for i in range(5):
            for j in range(5):
                spatial[b, i, j] = (kernel[0] * mean_map[b, i : i + 3, j : j + 3]).sum() + (
                    kernel[1] * max_map[b, i : i + 3, j : j + 3]
                ).sum()
    spatial = torch.sigmoid(spatial)
    torch.testing.assert_close(cbam.last_channel_weights, channel)
    torch.testing.assert_close(cbam.last_spatial_weights, spatial)
    torch.testing.assert_close(y, refined * spatial[:, None])
    for weights in (cbam.last_channel_weights, cbam.last_spatial_weights):
        assert ((weights > 0) & (weights < 1)).all()


@pytest.mark.parametrize("attention", [None, "se", "cbam"])
def test_tiny_cnn_output_shape_and_gradients(attention):
    set_seed(3)
    model = TinyCNN(3, 5, attention=attention, width=8)
    x = torch.randn(4, 3, 9, 9)
    logits = model(x)
    assert logits.shape == (4, 5)
    logits.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    if attention == "se":
        assert model.input_attention.last_weights.shape == (4, 3)
        assert model.feature_attention.last_weights.shape == (4, 8)
    if attention == "cbam":
        assert model.input_attention.last_spatial_weights.shape == (4, 9, 9)


def test_se_weights_informative_channels_above_decoy_channels_after_training():
    images, labels, informative = channel_selection_images(2048, 8, 2, 12, noise=1.5, seed=0)
    set_seed(0)
    model = TinyCNN(8, 2, attention="se", width=8, reduction=2)

    def make_batch(step):
        index = torch.randint(0, 2048, (64,), generator=torch.Generator().manual_seed(step))
        return images[index], labels[index]

    history = train(model, make_batch, steps=300, lr=1e-2)
    assert sum(history.accuracy[-20:]) / 20 > 0.9
    model.eval()
    with torch.no_grad():
        model(images[:512])
    weights = model.input_attention.last_weights.mean(0)  # (C,)
    is_informative = torch.zeros(8, dtype=torch.bool)
    is_informative[informative] = True
    # measured: informative 0.67-0.71, decoys 0.38-0.58
    assert weights[is_informative].min() > weights[~is_informative].max()
    assert weights[is_informative].mean() > weights[~is_informative].mean() + 0.1


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: SqueezeExcitation(4)(torch.randn(2, 3, 5, 5)), ValueError, r"\(B, 4, H, W\).*\(2, 3, 5, 5\)"),
        (lambda: SqueezeExcitation(4)(torch.randn(2, 4, 5)), ValueError, r"\(2, 4, 5\)"),
        (lambda: SqueezeExcitation(4, reduction=0), ValueError, "reduction"),
        (lambda: CBAM(4, spatial_kernel=4), ValueError, "spatial_kernel"),
        (lambda: CBAM(0), ValueError, "channels"),
        (lambda: CBAM(4)([1.0]), TypeError, "CBAM"),
        (lambda: TinyCNN(3, 2, attention="eca"), ValueError, "attention"),
        (lambda: TinyCNN(3, 2)(torch.randn(1, 2, 8, 8)), ValueError, "TinyCNN"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_problem(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_cbam_parts_can_be_switched_off_for_an_ablation():
    set_seed(4)
    x = torch.randn(2, 6, 5, 5)
    channel_only = CBAM(6, reduction=3, spatial_kernel=3, spatial=False)
    y = channel_only(x)
    gate = torch.sigmoid(channel_only.mlp(x.mean((2, 3))) + channel_only.mlp(x.amax((2, 3))))  # (B, C)
    torch.testing.assert_close(y, x * gate[:, :, None, None])
    assert channel_only.spatial_conv is None and channel_only.last_spatial_weights is None
    spatial_only = CBAM(6, reduction=3, spatial_kernel=3, channel=False)
    y = spatial_only(x)
    pooled = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], dim=1)  # (B, 2, H, W)
    torch.testing.assert_close(y, x * torch.sigmoid(spatial_only.spatial_conv(pooled)))
    assert spatial_only.mlp is None and spatial_only.last_channel_weights is None
    with pytest.raises(ValueError, match="channel part"):
        CBAM(6, channel=False, spatial=False)


def test_full_cbam_keeps_its_parameters_in_the_order_it_had():
    """The ablation switches must not change the full module: same parameters, same initial values."""
    set_seed(5)
    full = CBAM(8, reduction=4, spatial_kernel=5)
    assert [name for name, _ in full.named_parameters()] == [
        "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias", "spatial_conv.weight"]
    for attention, names in (("cbam-channel", {"mlp"}), ("cbam-spatial", {"spatial_conv"})):
        model = TinyCNN(3, 2, attention=attention, width=4, reduction=1, spatial_kernel=3)
        assert {n.split(".")[1] for n, _ in model.named_parameters() if n.startswith("input_attention")} == names
    with pytest.raises(ValueError, match="attention must be"):
        TinyCNN(3, 2, attention="cbam-both")
