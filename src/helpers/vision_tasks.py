"""Seeded synthetic image tasks: the data of chapter 5's channel and spatial attention.

Each task asks a small CNN to choose something in an image: channels (:func:`channel_selection_images`,
for SE), a location (:func:`spatial_object_images`, :func:`cued_object_images`, for CBAM's
spatial map). They are small enough to train on a 2-core CPU in seconds; every function takes a
keyword-only ``seed`` and is deterministic for it, without touching the global random state, like
the sequence tasks of :mod:`helpers.tasks`.

Shape legend:
    N: number of samples
    C: image channels
    H, W: image height and width (``size`` x ``size``)

Used in chapter 5 (vision: :mod:`helpers.experiments.vision_attention`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from .checks import check_int, check_positive_int
from .tasks import _generator

__all__ = [
    "channel_selection_images",
    "spatial_object_images",
    "cued_object_images",
]


def _class_patterns(num_classes: int, size: int) -> Tensor:
    """Fixed, zero-mean, unit-variance patterns, one per class: stripes at different angles."""
    coords = torch.arange(size, dtype=torch.float32)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")  # (H, W)
    patterns = []
    for c in range(num_classes):
        angle = torch.pi * c / num_classes
        freq = 2 * torch.pi / max(size / 2, 2.0)
        wave = torch.cos(freq * (xx * torch.cos(torch.tensor(angle)) + yy * torch.sin(torch.tensor(angle))))
        wave = wave - wave.mean()
        patterns.append(wave / wave.std().clamp_min(1e-6))
    return torch.stack(patterns)  # (num_classes, H, W)


def channel_selection_images(
    num_samples: int,
    channels: int,
    informative: int,
    size: int,
    *,
    num_classes: int = 2,
    noise: float = 0.5,
    seed: int,
) -> tuple[Tensor, Tensor, Tensor]:
    """Images where only some channels tell the class: a task for channel attention.

    Each class has a fixed stripe pattern (stripes at a class-specific angle). In every image the
    ``informative`` channels show the pattern of the image's own class; every other channel shows
    the pattern of an independently drawn random class, a decoy that agrees with the label only
    by chance. All channels get Gaussian noise of standard deviation ``noise``. A model that
    weights the informative channels up and the decoys down wins; squeeze-and-excitation
    (Hu et al., 2018) can learn exactly that. The informative channels are drawn from the seed.
    Explained in chapter 5.

    Args:
        num_samples: Number of images N.
        channels: Number of channels C.
        informative: How many channels carry the label (``1 .. channels``).
        size: Height and width of the images (``>= 4``).
        num_classes: Number of classes (``>= 2``).
        noise: Standard deviation of the added Gaussian noise (``>= 0``).
        seed: Seed of the sampler (data and the choice of informative channels).

    Returns:
        ``(images, labels, informative_channels)``, the last sorted ascending.

    Shape:
        images: ``(N, C, size, size)`` float32; labels: ``(N,)`` int64;
        informative_channels: ``(informative,)`` int64.
    """
    check_positive_int("num_samples", num_samples)
    check_positive_int("channels", channels)
    check_positive_int("informative", informative)
    check_int("size", size, 4)
    check_int("num_classes", num_classes, 2)
    if informative > channels:
        raise ValueError(f"informative ({informative}) must be <= channels ({channels})")
    if not noise >= 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    gen = _generator(seed)
    informative_channels = torch.randperm(channels, generator=gen)[:informative].sort().values
    labels = torch.randint(0, num_classes, (num_samples,), generator=gen)  # (N,)
    decoys = torch.randint(0, num_classes, (num_samples, channels), generator=gen)  # (N, C)
    shown = decoys.clone()
    shown[:, informative_channels] = labels[:, None]  # (N, C): the class each channel shows
    patterns = _class_patterns(num_classes, size)  # (K, H, W)
    images = patterns[shown]  # (N, C, H, W)
    images = images + noise * torch.randn(images.shape, generator=gen)
    return images, labels, informative_channels


def _shape_templates() -> Tensor:
    """Two 3x3 shapes: class 0 a plus, class 1 a cross (an x)."""
    plus = torch.tensor([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=torch.float32)
    cross = torch.tensor([[1, 0, 1], [0, 1, 0], [1, 0, 1]], dtype=torch.float32)
    return torch.stack([plus, cross])  # (2, 3, 3)


def spatial_object_images(
    num_samples: int, size: int, *, clutter: int = 6, noise: float = 0.1, seed: int
) -> tuple[Tensor, Tensor, Tensor]:
    """One small object at a random place in clutter: a task for spatial attention.

    Each single-channel image holds one 3x3 object, a plus (label 0) or an x (label 1), at a
    uniformly random position, plus ``clutter`` distractor strokes (random horizontal, vertical
    or diagonal 2-pixel segments) and Gaussian noise of standard deviation ``noise``. Strokes are
    drawn first and the object on top, so the object is always intact. The class is decided by a
    few pixels in one place, and the masks let one check whether a spatial attention map (CBAM,
    Woo et al., 2018) actually puts its weight there; a map that does not is a lesson too
    (a small CNN solves this task without it). Explained in chapter 5.

    Args:
        num_samples: Number of images N.
        size: Height and width (``>= 5``).
        clutter: Number of distractor strokes per image (``>= 0``).
        noise: Standard deviation of the Gaussian noise (``>= 0``).
        seed: Seed of the sampler.

    Returns:
        ``(images, labels, masks)``; ``masks[n]`` is True on the object's lit pixels.

    Shape:
        images: ``(N, 1, size, size)`` float32; labels: ``(N,)`` int64;
        masks: ``(N, size, size)`` bool.
    """
    check_positive_int("num_samples", num_samples)
    check_int("size", size, 5)
    if not isinstance(clutter, int) or isinstance(clutter, bool) or clutter < 0:
        raise ValueError(f"clutter must be an int >= 0, got {clutter!r}")
    if not noise >= 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    gen = _generator(seed)
    templates = _shape_templates()  # (2, 3, 3)
    labels = torch.randint(0, 2, (num_samples,), generator=gen)  # (N,)
    tops = torch.randint(0, size - 2, (num_samples, 2), generator=gen)  # (N, 2): row, col of the corner
    images = torch.zeros(num_samples, size, size)
    masks = torch.zeros(num_samples, size, size, dtype=torch.bool)
    directions = torch.tensor([[0, 1], [1, 0], [1, 1], [1, -1]])
    starts = torch.randint(1, size - 1, (num_samples, clutter, 2), generator=gen)  # (N, clutter, 2)
    kinds = torch.randint(0, 4, (num_samples, clutter), generator=gen)  # (N, clutter)
    for n in range(num_samples):
        for s in range(clutter):
            r, c = starts[n, s].tolist()
            dr, dc = directions[kinds[n, s]].tolist()
            images[n, r, c] = 1.0
            images[n, r + dr, c + dc] = 1.0
        r, c = tops[n].tolist()
        template = templates[labels[n]]
        images[n, r : r + 3, c : c + 3] = template
        masks[n, r : r + 3, c : c + 3] = template.bool()
    images = images + noise * torch.randn(images.shape, generator=gen)
    return images[:, None], labels, masks


def cued_object_images(
    num_samples: int, size: int = 16, *, offset: int = 5, noise: float = 0.1, seed: int
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Two objects, a plus and an x, and a marker beside one of them: the label is the marked one.

    A task where the object's *place* decides the answer, for spatial attention (chapter 5). In
    :func:`spatial_object_images` the class is the only shape in the image, so a model can detect
    "a plus somewhere" without locating it. Here every image holds both shapes (channel 0, at two
    random non-overlapping places) and channel 1 holds a marker, a vertical bar of 3 pixels,
    ``offset`` columns to the left of one object's left edge; the label is that object's shape
    (0 = plus, 1 = x). Without the marker both classes look alike. With ``offset = 5`` no 5x5
    window holds both the marker and a column of the object, so two 3x3 convolutions and a global
    average (:class:`helpers.vision.TinyCNN` without attention) cannot tie the marker to its
    object; a spatial attention map computed over a wider window can.

    Args:
        num_samples: Number of images N.
        size: Height and width (``>= offset + 9``).
        offset: Columns between the marker and the marked object's left edge (``>= 1``).
        noise: Standard deviation of the Gaussian noise on both channels (``>= 0``).
        seed: Seed of the sampler.

    Returns:
        ``(images, labels, target_masks, distractor_masks)``; the masks are True on the 3x3 box
        of the marked object and of the other one.

    Shape:
        images: ``(N, 2, size, size)`` float32; labels: ``(N,)`` int64; masks: ``(N, size, size)`` bool.
    """
    check_positive_int("num_samples", num_samples)
    check_positive_int("offset", offset)
    check_int("size", size, offset + 9)
    if not noise >= 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    gen = _generator(seed)
    templates = _shape_templates()  # (2, 3, 3)
    labels = torch.randint(0, 2, (num_samples,), generator=gen)  # (N,)
    images = torch.zeros(num_samples, 2, size, size)
    target_masks = torch.zeros(num_samples, size, size, dtype=torch.bool)
    distractor_masks = torch.zeros(num_samples, size, size, dtype=torch.bool)
    for n in range(num_samples):
        r = int(torch.randint(0, size - 2, (1,), generator=gen))
        c = int(torch.randint(offset, size - 2, (1,), generator=gen))
        while True:  # the other object: apart from the marked one and from the marker
            rd, cd = (int(v) for v in torch.randint(0, size - 2, (2,), generator=gen))
            apart = abs(rd - r) >= 4 or abs(cd - c) >= 4
            off_marker = abs(rd - r) >= 3 or not (cd <= c - offset <= cd + 2)
            if apart and off_marker:
                break
        images[n, 0, r : r + 3, c : c + 3] = templates[labels[n]]
        images[n, 0, rd : rd + 3, cd : cd + 3] = templates[1 - labels[n]]
        target_masks[n, r : r + 3, c : c + 3] = True
        distractor_masks[n, rd : rd + 3, cd : cd + 3] = True
        images[n, 1, r : r + 3, c - offset] = 1.0
    images = images + noise * torch.randn(images.shape, generator=gen)
    return images, labels, target_masks, distractor_masks
