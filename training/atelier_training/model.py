"""SRVGG "compact" network (the SRVGGNetCompact design of Real-ESRGAN, Wang et al. 2021).

A plain stack of 3x3 convolutions with PReLU at low resolution, one pixel shuffle at the end, and the
network's output added to a nearest-neighbour enlargement of the input: the body only learns the
residual detail, so even an untrained network starts from a sensible image and the graph stays a
handful of operators onnxruntime runs fast on CPU.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class SRVGGCompact(nn.Module):
    def __init__(self, scale: int, features: int = 64, convs: int = 16, channels: int = 3) -> None:
        super().__init__()
        if scale < 1:
            raise ValueError(f"scale must be positive, got {scale}")
        self.scale = scale
        layers: list[nn.Module] = [nn.Conv2d(channels, features, 3, padding=1), nn.PReLU(features)]
        for _ in range(convs):
            layers += [nn.Conv2d(features, features, 3, padding=1), nn.PReLU(features)]
        layers.append(nn.Conv2d(features, channels * scale * scale, 3, padding=1))
        self.body = nn.Sequential(*layers)
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        residual = self.shuffle(self.body(x))
        # Nearest-neighbour base, as in SRVGGNetCompact: exact pixel replication exports to a single
        # Resize (nearest) node whose output the body corrects.
        base = F.interpolate(x, scale_factor=self.scale, mode="nearest")
        return residual + base


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
