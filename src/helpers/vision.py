"""Attention in vision: which channels (squeeze-and-excitation) and where (CBAM).

Attention need not be over tokens. A convolutional network's feature map has channels (what
was detected) and positions (where). Squeeze-and-excitation (Hu et al., 2018) scores every
channel from its global average and rescales it: attention over channels, with a sigmoid
instead of a softmax, so channels do not compete for a fixed budget. CBAM (Woo et al., 2018)
adds a spatial map: a score for every position, from a convolution over the channel-wise
mean and max. Both modules keep the last weights they applied, so a chapter can draw them.

Shape legend:
    B: batch size
    C: channels
    H, W: height and width of the feature map
    K: number of classes

Explained in chapter 5.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["SqueezeExcitation", "CBAM", "TinyCNN"]


def _check_feature_map(x: object, channels: int, module: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{module} expects a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 4 or x.shape[1] != channels:
        raise ValueError(f"{module} expects x of shape (B, {channels}, H, W), got {tuple(x.shape)}")


def _check_channels(channels: int, reduction: int) -> int:
    if not isinstance(channels, int) or channels < 1:
        raise ValueError(f"channels must be a positive int, got {channels!r}")
    if not isinstance(reduction, int) or reduction < 1:
        raise ValueError(f"reduction must be a positive int, got {reduction!r}")
    return max(1, channels // reduction)


class SqueezeExcitation(nn.Module):
    """Squeeze-and-excitation: rescale each channel by a weight in (0, 1) computed from all channels.

    Hu, Shen & Sun (2018), "Squeeze-and-Excitation Networks". Squeeze: the global average of
    each channel, ``z = mean_{h,w} x`` ``(B, C)``. Excite: a bottleneck MLP and a sigmoid,
    ``s = sigmoid(W_2 relu(W_1 z))`` with ``W_1: C -> C / r`` and ``W_2: C / r -> C``. Scale:
    ``y = s * x`` channel by channel. Explained in chapter 5.

    Args:
        channels: Number of channels C.
        reduction: Bottleneck ratio r; the hidden size is ``max(1, C // r)``.

    Attributes:
        last_weights: The weights ``s`` of the last forward pass (detached), ``(B, C)``.

    Shape:
        x ``(B, C, H, W)`` -> ``(B, C, H, W)``.
    """

    def __init__(self, channels: int, reduction: int = 16) -> None:
        super().__init__()
        hidden = _check_channels(channels, reduction)
        self.channels = channels
        self.fc1 = nn.Linear(channels, hidden)  # W_1
        self.fc2 = nn.Linear(hidden, channels)  # W_2
        self.last_weights: Tensor | None = None

    def forward(self, x: Tensor) -> Tensor:
        _check_feature_map(x, self.channels, "SqueezeExcitation")
        squeezed = x.mean(dim=(2, 3))  # (B, C, H, W) -> (B, C)
        weights = torch.sigmoid(self.fc2(torch.relu(self.fc1(squeezed))))  # (B, C) -> (B, C/r) -> (B, C)
        self.last_weights = weights.detach()
        return x * weights[:, :, None, None]  # (B, C, H, W) * (B, C, 1, 1)


class CBAM(nn.Module):
    """Convolutional block attention: channel attention, then spatial attention.

    Woo, Park, Lee & Kweon (2018), "CBAM: Convolutional Block Attention Module". Channel
    attention: a shared MLP on both the average- and the max-pooled channel descriptors,
    ``M_c = sigmoid(MLP(avgpool x) + MLP(maxpool x))`` ``(B, C)``, and ``x' = M_c * x``. Spatial
    attention: pool ``x'`` over channels by mean and by max, stack the two maps, convolve with a
    ``k x k`` kernel, ``M_s = sigmoid(conv([mean_c x'; max_c x']))`` ``(B, 1, H, W)``, and
    ``y = M_s * x'``. (The paper's formula; its reference code adds batch norm after the
    convolution, left out here.) Explained in chapter 5.

    Args:
        channels: Number of channels C.
        reduction: Bottleneck ratio of the shared MLP; hidden size ``max(1, C // reduction)``.
        spatial_kernel: Odd size k of the spatial convolution (7 in the paper).
        channel: Apply the channel part (``False``: ``M_c = 1``, for an ablation).
        spatial: Apply the spatial part (``False``: ``M_s = 1``, for an ablation).

    Attributes:
        last_channel_weights: ``M_c`` of the last forward pass (detached), ``(B, C)``.
        last_spatial_weights: ``M_s`` of the last forward pass (detached), ``(B, H, W)``.

    Shape:
        x ``(B, C, H, W)`` -> ``(B, C, H, W)``.
    """

    def __init__(self, channels: int, reduction: int = 16, spatial_kernel: int = 7, *, channel: bool = True,
                 spatial: bool = True) -> None:
        super().__init__()
        hidden = _check_channels(channels, reduction)
        if not isinstance(spatial_kernel, int) or spatial_kernel < 1 or spatial_kernel % 2 == 0:
            raise ValueError(f"spatial_kernel must be an odd positive int, got {spatial_kernel!r}")
        if not (channel or spatial):
            raise ValueError("CBAM needs its channel part, its spatial part or both (channel=spatial=False)")
        self.channels = channels
        self.use_channel, self.use_spatial = bool(channel), bool(spatial)
        self.mlp = (nn.Sequential(nn.Linear(channels, hidden), nn.ReLU(), nn.Linear(hidden, channels))
                    if channel else None)
        self.spatial_conv = (nn.Conv2d(2, 1, spatial_kernel, padding=spatial_kernel // 2, bias=False)
                             if spatial else None)
        self.last_channel_weights: Tensor | None = None
        self.last_spatial_weights: Tensor | None = None

    def forward(self, x: Tensor) -> Tensor:
        _check_feature_map(x, self.channels, "CBAM")
        if self.mlp is not None:
            avg, peak = x.mean(dim=(2, 3)), x.amax(dim=(2, 3))  # (B, C, H, W) -> (B, C) twice
            channel_weights = torch.sigmoid(self.mlp(avg) + self.mlp(peak))  # (B, C)
            x = x * channel_weights[:, :, None, None]  # (B, C, H, W) * (B, C, 1, 1)
            self.last_channel_weights = channel_weights.detach()
        if self.spatial_conv is None:
            return x
        pooled = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], dim=1)  # (B, 2, H, W)
        spatial_weights = torch.sigmoid(self.spatial_conv(pooled))  # (B, 2, H, W) -> (B, 1, H, W)
        self.last_spatial_weights = spatial_weights[:, 0].detach()
        return x * spatial_weights  # (B, C, H, W) * (B, 1, H, W)


class TinyCNN(nn.Module):
    """A two-convolution classifier with optional SE or CBAM attention.

    ``x -> attention over the input channels -> conv 3x3 -> ReLU -> attention over the features
    -> conv 3x3 -> ReLU -> global average pool -> linear``. The first attention module acts on
    the input channels themselves, so its weights say directly which input channel the model
    relies on (the channel-selection experiment of chapter 5); the second sits where SE and
    CBAM usually sit, after a convolution. With ``attention=None`` both are identities.
    Explained in chapter 5.

    Args:
        in_channels: Input channels.
        num_classes: Number of classes K.
        attention: ``None``, ``"se"`` or ``"cbam"``; ``"cbam-channel"`` and ``"cbam-spatial"`` keep only
            one of CBAM's two parts (the ablation of chapter 5.5).
        width: Channels of the convolutions.
        reduction: Bottleneck ratio of the attention modules.
        spatial_kernel: Kernel size of CBAM's spatial attention.

    Shape:
        x ``(B, in_channels, H, W)`` -> logits ``(B, K)``.
    """

    def __init__(
        self,
        in_channels: int,
        num_classes: int,
        *,
        attention: str | None = None,
        width: int = 16,
        reduction: int = 4,
        spatial_kernel: int = 7,
    ) -> None:
        super().__init__()
        if attention not in (None, "se", "cbam", "cbam-channel", "cbam-spatial"):
            raise ValueError("attention must be None, 'se', 'cbam', 'cbam-channel' or 'cbam-spatial', "
                             f"got {attention!r}")
        for name, value in (("in_channels", in_channels), ("num_classes", num_classes), ("width", width)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")

        def make(channels: int) -> nn.Module:
            if attention == "se":
                return SqueezeExcitation(channels, reduction)
            if attention is not None and attention.startswith("cbam"):
                return CBAM(channels, reduction, spatial_kernel, channel=attention != "cbam-spatial",
                            spatial=attention != "cbam-channel")
            return nn.Identity()

        self.in_channels = in_channels
        self.input_attention = make(in_channels)
        self.conv1 = nn.Conv2d(in_channels, width, 3, padding=1)
        self.feature_attention = make(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)
        self.head = nn.Linear(width, num_classes)

    def forward(self, x: Tensor) -> Tensor:
        _check_feature_map(x, self.in_channels, "TinyCNN")
        x = self.input_attention(x)  # (B, C_in, H, W)
        x = torch.relu(self.conv1(x))  # (B, width, H, W)
        x = self.feature_attention(x)  # (B, width, H, W)
        x = torch.relu(self.conv2(x))  # (B, width, H, W)
        return self.head(x.mean(dim=(2, 3)))  # (B, width) -> (B, K)
