"""PSNR on luma of a checkpoint against bicubic enlargement, on held-out photographs.

    python3 -m atelier_training.evaluate --checkpoint runs/x4-bicubic/final.pt --photos ../data/test-photos

Same protocol as bench/upscale-quality.ts: a 256 px centre crop (rounded down to a multiple of the
scale) is reduced with bicubic and enlarged back; PSNR on BT.601 luma with a scale-wide border shaved.
The default photos are the bench's own (python3-skimage's), which prepare_data.py keeps out of training.
This is the quick check during training; the figures that count come from bench/upscale-bench.ts on
the exported ONNX graph through the service's pipeline.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from .degrade import bicubic_reduce
from .export_onnx import load_model
from .patches import to_tensor

LUMA = np.array([0.299, 0.587, 0.114])
CROP = 256


def centre_crop(image: Image.Image, scale: int) -> Image.Image:
    width, height = image.size
    size = min(CROP, width, height)
    size -= size % scale
    left, top = (width - size) // 2, (height - size) // 2
    return image.crop((left, top, left + size, top + size))


def psnr_y(reference: np.ndarray, test: np.ndarray, border: int) -> float:
    a = (reference.astype(np.float64) @ LUMA)[border:-border, border:-border]
    b = (test.astype(np.float64) @ LUMA)[border:-border, border:-border]
    mse = float(np.mean((a - b) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255**2 / mse)


def upscale(model: torch.nn.Module, lr: Image.Image) -> np.ndarray:
    with torch.no_grad():
        out = model(to_tensor(lr).unsqueeze(0))[0]
    return np.rint(out.clamp(0, 1).permute(1, 2, 0).numpy() * 255).astype(np.uint8)


def evaluate(model: torch.nn.Module, scale: int, photos: list[Path]) -> list[tuple[str, float, float]]:
    rows = []
    for photo in photos:
        hr = centre_crop(Image.open(photo).convert("RGB"), scale)
        lr = bicubic_reduce(hr, scale)
        reference = np.asarray(hr)
        bicubic = np.asarray(lr.resize(hr.size, Image.Resampling.BICUBIC))
        rows.append((photo.name, psnr_y(reference, bicubic, scale), psnr_y(reference, upscale(model, lr), scale)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--photos", type=Path, default=Path("../data/test-photos"))
    args = parser.parse_args()
    model, config = load_model(args.checkpoint)
    photos = sorted(p for p in args.photos.iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg"})
    rows = evaluate(model, config.scale, photos)
    print(f"| photo | bicubic dB | {config.name} dB | gain |")
    print("|---|---|---|---|")
    for name, base, ours in rows:
        print(f"| {name} | {base:.2f} | {ours:.2f} | {ours - base:+.2f} |")
    mean_base = sum(r[1] for r in rows) / len(rows)
    mean_ours = sum(r[2] for r in rows) / len(rows)
    print(f"| mean | {mean_base:.2f} | {mean_ours:.2f} | {mean_ours - mean_base:+.2f} |")


if __name__ == "__main__":
    main()
