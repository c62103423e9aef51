"""Degradations that turn a high-resolution patch into the network's low-resolution input.

`bicubic` is the one the bench (bench/upscale-quality.ts) evaluates on: an antialiased Keys cubic
(a = -0.5) reduction, which is what Pillow's BICUBIC resize computes. `mild` is the second model's
real-world mix: a slight Gaussian blur before the reduction, then a little sensor noise and JPEG.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter


@dataclass(frozen=True)
class MildDegradation:
    blur_sigma: tuple[float, float] = (0.2, 1.2)
    noise_sigma: tuple[float, float] = (0.0, 4.0)  # in 0-255 levels
    jpeg_quality: tuple[int, int] = (60, 95)
    blur_probability: float = 0.7
    noise_probability: float = 0.5
    jpeg_probability: float = 0.7


def bicubic_reduce(hr: Image.Image, scale: int) -> Image.Image:
    width, height = hr.size
    if width % scale or height % scale:
        raise ValueError(f"{width}x{height} is not a multiple of {scale}")
    return hr.resize((width // scale, height // scale), Image.Resampling.BICUBIC)


def mild_reduce(hr: Image.Image, scale: int, rng: np.random.Generator, mix: MildDegradation = MildDegradation()) -> Image.Image:
    image = hr
    if rng.random() < mix.blur_probability:
        image = image.filter(ImageFilter.GaussianBlur(float(rng.uniform(*mix.blur_sigma))))
    lr = bicubic_reduce(image, scale)
    if rng.random() < mix.noise_probability:
        pixels = np.asarray(lr, dtype=np.float32)
        pixels = pixels + rng.normal(0.0, rng.uniform(*mix.noise_sigma), pixels.shape).astype(np.float32)
        lr = Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8))
    if rng.random() < mix.jpeg_probability:
        buffer = io.BytesIO()
        lr.save(buffer, format="JPEG", quality=int(rng.integers(mix.jpeg_quality[0], mix.jpeg_quality[1] + 1)))
        buffer.seek(0)
        lr = Image.open(buffer).convert("RGB")
    return lr


def degrade(hr: Image.Image, scale: int, kind: str, rng: np.random.Generator) -> Image.Image:
    if kind == "bicubic":
        return bicubic_reduce(hr, scale)
    if kind == "mild":
        return mild_reduce(hr, scale, rng)
    raise ValueError(f"unknown degradation {kind!r} (bicubic or mild)")
