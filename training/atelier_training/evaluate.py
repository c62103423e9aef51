"""PSNR (luma and RGB) of a checkpoint against bicubic enlargement, on held-out photographs.

    python3 -m atelier_training.evaluate --checkpoint runs/x4-bicubic/final.pt --photos ../data/test-photos

Same protocol as bench/upscale-quality.ts: a 256 px centre crop (rounded down to a multiple of the
scale) is reduced with bicubic and enlarged back; PSNR on BT.601 luma and on RGB, a scale-wide border shaved.
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
from .published_weights import load_published

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


def psnr_rgb(reference: np.ndarray, test: np.ndarray, border: int) -> float:
    a = reference.astype(np.float64)[border:-border, border:-border]
    b = test.astype(np.float64)[border:-border, border:-border]
    mse = float(np.mean((a - b) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255**2 / mse)


def upscale(model: torch.nn.Module, lr: Image.Image) -> np.ndarray:
    with torch.no_grad():
        out = model(to_tensor(lr).unsqueeze(0))[0]
    return np.rint(out.clamp(0, 1).permute(1, 2, 0).numpy() * 255).astype(np.uint8)


def list_photos(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg"})


def evaluate(model: torch.nn.Module, scale: int, photos: list[Path]) -> list[tuple[str, float, float, float, float]]:
    """Per photo: bicubic and model PSNR on luma, then bicubic and model PSNR on RGB."""
    rows = []
    for photo in photos:
        hr = centre_crop(Image.open(photo).convert("RGB"), scale)
        lr = bicubic_reduce(hr, scale)
        reference = np.asarray(hr)
        bicubic = np.asarray(lr.resize(hr.size, Image.Resampling.BICUBIC))
        ours = upscale(model, lr)
        rows.append((photo.name, psnr_y(reference, bicubic, scale), psnr_y(reference, ours, scale), psnr_rgb(reference, bicubic, scale), psnr_rgb(reference, ours, scale)))
    return rows


def mean_gains(rows: list[tuple[str, float, float, float, float]]) -> dict[str, float]:
    """Mean PSNR gain over bicubic (luma and RGB) and the worst photo's RGB gain."""
    return {
        "gain_y": round(sum(r[2] - r[1] for r in rows) / len(rows), 4),
        "gain_rgb": round(sum(r[4] - r[3] for r in rows) / len(rows), 4),
        "worst_gain_rgb": round(min(r[4] - r[3] for r in rows), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", type=Path)
    source.add_argument("--onnx", type=Path, help="a published SRVGGNetCompact graph (published_weights.py) instead of a checkpoint")
    parser.add_argument("--photos", type=Path, default=Path("../data/test-photos"))
    args = parser.parse_args()
    if args.onnx:
        model, name = load_published(args.onnx), args.onnx.stem
    else:
        model, config = load_model(args.checkpoint)
        name = config.name
    rows = evaluate(model, model.scale, list_photos(args.photos))
    print(f"| photo | bicubic Y dB | {name} Y dB | gain Y | bicubic RGB dB | {name} RGB dB | gain RGB |")
    print("|---|---|---|---|---|---|---|")
    for name, base_y, ours_y, base_rgb, ours_rgb in rows:
        print(f"| {name} | {base_y:.2f} | {ours_y:.2f} | {ours_y - base_y:+.2f} | {base_rgb:.2f} | {ours_rgb:.2f} | {ours_rgb - base_rgb:+.2f} |")
    gains = mean_gains(rows)
    print(f"| mean gain | | | {gains['gain_y']:+.2f} | | | {gains['gain_rgb']:+.2f} |")


if __name__ == "__main__":
    main()
