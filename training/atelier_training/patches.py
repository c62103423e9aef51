"""Training pairs from the prepared high-resolution patches (prepare_data.py writes them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from PIL import Image

from .degrade import degrade


def to_tensor(image: Image.Image) -> torch.Tensor:
    """HWC uint8 RGB to CHW float32 in 0-1: the catalog's NCHW, RGB, 0-1 image format without the batch axis."""
    return torch.from_numpy(np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0).permute(2, 0, 1).contiguous()


def list_patches(folder: Path) -> list[Path]:
    patches = sorted(folder.glob("*.png"))
    if not patches:
        raise FileNotFoundError(f"no patches in {folder}: run python3 -m atelier_training.prepare_data first")
    return patches


class PairSampler:
    """Random crops with random flips and quarter turns, degraded on the fly, so one epoch of files
    yields fresh pairs each time; every draw comes from the run's seeded generator."""

    def __init__(self, patches: list[Path], scale: int, hr_size: int, degradation: str, rng: np.random.Generator) -> None:
        if hr_size % scale:
            raise ValueError(f"hr_size {hr_size} is not a multiple of scale {scale}")
        self.images = [Image.open(path).convert("RGB") for path in patches]
        small = [str(path) for path, image in zip(patches, self.images) if min(image.size) < hr_size]
        if small:
            raise ValueError(f"patches smaller than hr_size {hr_size}: {small[:3]}")
        self.scale = scale
        self.hr_size = hr_size
        self.degradation = degradation
        self.rng = rng

    def pair(self) -> tuple[torch.Tensor, torch.Tensor]:
        image = self.images[int(self.rng.integers(len(self.images)))]
        width, height = image.size
        size = self.hr_size
        left = int(self.rng.integers(width - size + 1))
        top = int(self.rng.integers(height - size + 1))
        hr = image.crop((left, top, left + size, top + size))
        if self.rng.random() < 0.5:
            hr = hr.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        turns = int(self.rng.integers(4))
        if turns:
            hr = hr.transpose([Image.Transpose.ROTATE_90, Image.Transpose.ROTATE_180, Image.Transpose.ROTATE_270][turns - 1])
        lr = degrade(hr, self.scale, self.degradation, self.rng)
        return to_tensor(lr), to_tensor(hr)

    def batch(self, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        pairs = [self.pair() for _ in range(size)]
        return torch.stack([lr for lr, _ in pairs]), torch.stack([hr for _, hr in pairs])
