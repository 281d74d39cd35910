"""Experiments of chapter 5.5: channel attention (SE) and spatial attention (CBAM) on small images.

- :func:`matched_width`: the width of a plain :class:`~helpers.vision.TinyCNN` whose parameter
  count is closest to that of an SE or CBAM one (a fair comparison adds no parameters).
- :func:`train_channel_selection`: TinyCNN with or without SE on
  :func:`helpers.vision_tasks.channel_selection_images`; accuracy and the SE weights of the input
  channels (informative against decoys).
- :func:`train_spatial`: TinyCNN with or without CBAM on the one-object task
  (:func:`helpers.vision_tasks.spatial_object_images`) or the marked-object task
  (:func:`helpers.vision_tasks.cued_object_images`); accuracy and where CBAM's spatial map puts its weight.
- :func:`map_overlap`, :func:`map_auc`: how much of a spatial map lies on a region, against that
  region's area, and how often the region's pixels outrank the others.

Shape legend: N images, C channels, H = W image size.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
from torch import Tensor

from helpers.train import num_threads, set_seed, train
from helpers.vision import TinyCNN
from helpers.vision_tasks import channel_selection_images, cued_object_images, spatial_object_images

from .. import seeding

__all__ = ["parameter_count", "matched_width", "ChannelRun", "train_channel_selection", "map_overlap", "map_auc",
           "SpatialRun", "train_spatial", "signal_at_init"]


def parameter_count(model: torch.nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def matched_width(in_channels: int, num_classes: int, attention: str, *, width: int = 16, reduction: int = 4,
                  spatial_kernel: int = 7) -> int:
    """Width of a plain TinyCNN with the parameter count closest to ``TinyCNN(attention, width)``."""
    target = parameter_count(TinyCNN(in_channels, num_classes, attention=attention, width=width, reduction=reduction,
                                     spatial_kernel=spatial_kernel))
    return min(range(width, 2 * width),
               key=lambda w: abs(parameter_count(TinyCNN(in_channels, num_classes, width=w)) - target))


def _fit(model: TinyCNN, images: Tensor, labels: Tensor, *, steps: int, batch_size: int, seed: int) -> float:
    """Train; return the mean training loss of the last 20 steps."""
    def make_batch(step: int) -> tuple[Tensor, Tensor]:
        start = (step * batch_size) % len(images)
        return images[start:start + batch_size], labels[start:start + batch_size]

    with num_threads(1):
        history = train(model, make_batch, steps=steps, lr=3e-3, seed=seed, accuracy_fn=None)
    model.eval()
    return sum(history.loss[-20:]) / len(history.loss[-20:])


@dataclass
class ChannelRun:
    """One TinyCNN on the channel-selection task."""

    attention: str | None
    seed: int
    parameters: int
    accuracy: float  # held-out
    input_weights: Tensor | None  # (C,) mean SE weight of each input channel on held-out images
    informative: Tensor  # (k,) indices of the informative channels
    conv_norms: Tensor  # (C,) norm of the first convolution's weights on each input channel
    weight_spread: float | None = None  # std of the input SE weights across held-out images, mean over channels


def train_channel_selection(attention: str | None, *, seed: int, channels: int = 16, informative: int = 2,
                            size: int = 8, noise: float = 3.0, steps: int = 150, batch_size: int = 64
                            ) -> ChannelRun:
    """Train TinyCNN (plain at a matched width, or with SE) to classify channel-selection images.

    Every channel shows a class pattern; only ``informative`` of them show the image's own
    class, the others a random class (decoys). The model must find which channels to trust.
    The held-out images are 1024 more images of the same draw (the same informative channels),
    none of them seen in training. Every class pattern has mean zero over the image, so SE's
    squeeze (a spatial mean) sees only the noise's mean: here SE can only learn a constant gate,
    and ``weight_spread`` (how much its weights vary from image to image) measures that.
    """
    set_seed(seed)
    width = 16 if attention else matched_width(channels, 2, "se")
    model = TinyCNN(channels, 2, attention=attention, width=width)
    images, labels, chosen = channel_selection_images(4096 + 1024, channels, informative, size, noise=noise,
                                                      seed=seed)
    images, labels, test_x, test_y = images[:4096], labels[:4096], images[4096:], labels[4096:]  # disjoint
    _fit(model, images, labels, steps=steps, batch_size=batch_size, seed=seed)
    with torch.no_grad():
        accuracy = (model(test_x).argmax(-1) == test_y).float().mean().item()
    gates = model.input_attention.last_weights if attention == "se" else None  # (N, C) on held-out images
    weights = gates.mean(dim=0) if gates is not None else None  # (C,)
    spread = gates.std(dim=0).mean().item() if gates is not None else None
    conv_norms = model.conv1.weight.detach().pow(2).sum(dim=(0, 2, 3)).sqrt()  # (width, C, 3, 3) -> (C,)
    return ChannelRun(attention, seed, parameter_count(model), accuracy, weights, chosen, conv_norms, spread)


def map_overlap(maps: Tensor, regions: Tensor) -> Tensor:
    """Share of each map's weight on its region, divided by the region's share of the area.

    1 means the map is no more on the region than anywhere else; ``H * W / area`` is the most.

    Shape: maps and regions ``(N, H, W)`` -> ``(N,)``.
    """
    maps = maps.float()
    area = regions.float().mean(dim=(1, 2))  # (N,)
    share = (maps * regions).sum(dim=(1, 2)) / maps.sum(dim=(1, 2))  # (N,)
    return share / area


def map_auc(maps: Tensor, regions: Tensor) -> Tensor:
    """Probability that a pixel of the region has a higher map value than a pixel outside it.

    Scale-free (a map with tiny but consistent differences scores as well as a contrasted one):
    0.5 is no preference, 1 the region is always above everything else.

    Shape: maps and regions ``(N, H, W)`` -> ``(N,)``.
    """
    flat, inside = maps.flatten(1).float(), regions.flatten(1)  # (N, H W)
    ranks = flat.argsort(dim=1).argsort(dim=1).float() + 1  # (N, H W): 1 = lowest
    n_in = inside.sum(1).float()
    n_out = inside.shape[1] - n_in
    rank_sum = (ranks * inside).sum(1)
    return (rank_sum - n_in * (n_in + 1) / 2) / (n_in * n_out)  # Mann-Whitney U / (n_in n_out)


@dataclass
class SpatialRun:
    """One TinyCNN on a spatial task."""

    task: str
    attention: str | None
    seed: int
    accuracy: float  # held-out
    target_auc: float | None  # map_auc of the input CBAM's spatial map with the object that decides
    distractor_auc: float | None  # the same with the other object (marked task) or the clutter (object task)
    target_wins: float | None  # share of images whose map is higher on the deciding object than on the other
    map_on_target: float | None  # mean map value on the deciding object
    map_on_other: float | None  # mean map value on the other object (marked task) or the clutter (object task)
    map_mean: float | None  # mean map value over the whole image
    feature_map_range: float | None  # mean (max - min) of the second CBAM's map, after the first convolution
    parameters: int
    example_map: Tensor | None  # (H, W) CBAM's spatial weights on the first held-out image
    example_image: Tensor  # (C, H, W)
    example_target: Tensor  # (H, W) bool
    final_loss: float | None = None  # mean training loss of the last 20 steps (ln 2 = 0.693: never left chance)


def _task(task: str, num: int, seed: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The images of ``task``; every model of a seed trains on the same ones, so they are made once."""
    return _task_cached(task, num, seed, seeding.seed_offset())


@functools.lru_cache(maxsize=8)
def _task_cached(task: str, num: int, seed: int, offset: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    if task == "object":
        images, labels, masks = spatial_object_images(num, 12, clutter=6, seed=seed)
        lit = images[:, 0] > 0.5  # every lit pixel: object and clutter
        return images, labels, masks, lit & ~masks
    if task == "marked":
        return cued_object_images(num, 16, seed=seed)
    raise ValueError(f"task must be 'object' or 'marked', got {task!r}")


def train_spatial(task: str, attention: str | None, *, seed: int, steps: int = 200, batch_size: int = 64,
                  spatial_kernel: int = 11, width: int = 8, first_kernel: int = 3) -> SpatialRun:
    """Train TinyCNN with or without CBAM on ``"object"`` (one shape in clutter) or ``"marked"``.

    ``attention`` is ``None`` (a plain TinyCNN of matched parameter count), ``"cbam"``, or one of
    CBAM's two parts alone, ``"cbam-channel"`` or ``"cbam-spatial"`` (the ablation; same width as
    ``"cbam"``, so slightly fewer parameters).

    The map measured is the spatial attention of the CBAM on the input (TinyCNN puts one on the
    input channels and one after the first convolution; only the first sees the marker and the
    shapes at pixel resolution, and it is the one that moves in training: the second stays
    within a few percent of 1). ``target_auc`` is :func:`map_auc` with the object that decides
    the label, ``target_wins`` the share of images whose mean map value is higher on that object
    than on the other one (the clutter, on the one-object task). ``first_kernel`` other than 3
    gives the first convolution that kernel size (odd, same padding): with 11 and no attention,
    the control whose receptive field (``first_kernel + 2``) is as wide as CBAM's 11 x 11 map.
    """
    if not isinstance(first_kernel, int) or first_kernel < 1 or first_kernel % 2 == 0:
        raise ValueError(f"first_kernel must be a positive odd int, got {first_kernel!r}")
    set_seed(seed)
    images, labels, target, other = _task(task, 4096, seed)
    channels = images.shape[1]
    width = width if attention else matched_width(channels, 2, "cbam", width=width, spatial_kernel=spatial_kernel)
    model = TinyCNN(channels, 2, attention=attention, width=width, spatial_kernel=spatial_kernel)
    if first_kernel != 3:  # (width, C, k, k): the wide first convolution of the receptive-field control
        model.conv1 = torch.nn.Conv2d(channels, width, first_kernel, padding=first_kernel // 2)
    final_loss = _fit(model, images, labels, steps=steps, batch_size=batch_size, seed=seed)
    test_x, test_y, test_target, test_other = _task(task, 512, 10_000 + seed)
    with torch.no_grad():
        accuracy = (model(test_x).argmax(-1) == test_y).float().mean().item()
    if attention not in ("cbam", "cbam-spatial"):  # no spatial map to measure
        return SpatialRun(task, attention, seed, accuracy, None, None, None, None, None, None, None,
                          parameter_count(model), None, test_x[0], test_target[0], final_loss)
    maps = model.input_attention.last_spatial_weights  # (N, H, W): the map that sees the input, marker included
    later = model.feature_attention.last_spatial_weights  # (N, H, W): the map after the first convolution
    on_target = (maps * test_target).sum((1, 2)) / test_target.sum((1, 2))  # (N,) mean map on the object
    on_other = (maps * test_other).sum((1, 2)) / test_other.sum((1, 2)).clamp_min(1)  # (N,)
    return SpatialRun(task, attention, seed, accuracy, map_auc(maps, test_target).mean().item(),
                      map_auc(maps, test_other).mean().item(), (on_target > on_other).float().mean().item(),
                      on_target.mean().item(), on_other.mean().item(), maps.mean().item(),
                      (later.amax(dim=(1, 2)) - later.amin(dim=(1, 2))).mean().item(), parameter_count(model),
                      maps[0], test_x[0], test_target[0], final_loss)


@torch.no_grad()
def signal_at_init(task: str, attention: str | None, *, seed: int, spatial_kernel: int = 11, width: int = 8
                   ) -> dict[str, float]:
    """How much of the signal the attention modules of an untrained TinyCNN pass on, on ``task``'s images.

    The model is the one :func:`train_spatial` starts from with the same ``seed`` (same width, same
    initial weights). CBAM multiplies its input by a channel gate and a spatial gate, both in ``(0, 1)``:
    at initialisation both sit near the sigmoid's middle, so each module shrinks what passes through.

    Returns:
        The standard deviation of the input, after the input attention, after the first convolution
        and ReLU, and after the feature attention (on 512 training images), and the two ratios
        ``input_pass`` (after / before the input attention) and ``feature_pass`` (the same for the
        feature attention).
    """
    set_seed(seed)
    images = _task(task, 4096, seed)[0][:512]
    channels = images.shape[1]
    width = width if attention else matched_width(channels, 2, "cbam", width=width, spatial_kernel=spatial_kernel)
    model = TinyCNN(channels, 2, attention=attention, width=width, spatial_kernel=spatial_kernel).eval()
    gated = model.input_attention(images)  # (N, C, H, W)
    features = torch.relu(model.conv1(gated))  # (N, width, H, W)
    refined = model.feature_attention(features)  # (N, width, H, W)
    out = {"input": images.std().item(), "after_input_attention": gated.std().item(),
           "after_conv1": features.std().item(), "after_feature_attention": refined.std().item()}
    out["input_pass"] = out["after_input_attention"] / out["input"]
    out["feature_pass"] = out["after_feature_attention"] / out["after_conv1"]
    return out
