"""CPU smoke test of the whole path: patches, a few training steps, ONNX export (test/training/ runs it).

    /usr/bin/python3 -m atelier_training.smoke --out /tmp/smoke

Trains a narrow SRVGG compact at x2 and x4 for a few dozen steps on generated patches (or on
prepared ones with --patches), exports each to ONNX, and writes result.json with the losses, the
graph paths, and a probe: a fixed input and PyTorch's output for it as raw float32 files, so the
caller can check that onnxruntime runs the exported graph to the same numbers.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFilter

from .config import TrainConfig
from .export_onnx import export
from .train import build_model, train

PROBE_SIZE = (1, 3, 20, 28)  # not square and not a multiple of 8, to exercise the dynamic axes


def generated_patches(folder: Path, count: int, size: int, seed: int) -> None:
    """Photograph-like stand-ins: smooth colour fields with sharp shapes and lines, lightly blurred."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        y, x = np.mgrid[0:size, 0:size] / size
        base = np.stack([127 + 100 * np.sin(rng.uniform(1, 6) * x + rng.uniform(1, 6) * y + rng.uniform(0, 6)) for _ in range(3)], axis=-1)
        image = Image.fromarray(base.clip(0, 255).astype(np.uint8))
        draw = ImageDraw.Draw(image)
        for _ in range(12):
            box = sorted(rng.integers(0, size, 2).tolist()), sorted(rng.integers(0, size, 2).tolist())
            colour = tuple(int(c) for c in rng.integers(0, 256, 3))
            if rng.random() < 0.5:
                draw.ellipse((box[0][0], box[1][0], box[0][1], box[1][1]), fill=colour)
            else:
                draw.line((box[0][0], box[1][0], box[0][1], box[1][1]), fill=colour, width=int(rng.integers(1, 4)))
        image.filter(ImageFilter.GaussianBlur(0.6)).save(folder / f"generated_{index:03d}.png")


def smoke_config(scale: int, steps: int, seed: int) -> TrainConfig:
    return TrainConfig(
        name=f"smoke-x{scale}",
        scale=scale,
        degradation="bicubic",
        features=16,
        convs=4,
        hr_size=12 * scale,
        batch_size=8,
        steps=steps,
        learning_rate=2e-3,
        lr_milestones=[steps],
        seed=seed,
        checkpoint_every=steps,
        log_every=steps,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--patches", type=Path, help="prepared patches (default: 8 generated 64 px ones)")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(2)
    patches = args.patches or args.out / "patches"
    if not args.patches:
        generated_patches(patches, count=8, size=64, seed=args.seed)
    result: dict[str, object] = {"torch": torch.__version__, "scales": {}}
    for scale in (2, 4):
        started = time.monotonic()
        config = smoke_config(scale, args.steps, args.seed)
        losses = train(config, patches, args.out / f"x{scale}", workers=0, device="cpu", resume=None)
        model = build_model(config)
        model.load_state_dict(torch.load(args.out / f"x{scale}" / "final.pt")["model"])
        model.eval()
        onnx_path = args.out / f"smoke-x{scale}.onnx"
        export(model, onnx_path)
        probe = torch.rand(PROBE_SIZE, generator=torch.Generator().manual_seed(args.seed))
        with torch.no_grad():
            expected = model(probe)
        probe.numpy().astype("<f4").tofile(args.out / f"probe-x{scale}.input.f32")
        expected.numpy().astype("<f4").tofile(args.out / f"probe-x{scale}.output.f32")
        window = max(1, len(losses) // 6)
        result["scales"][str(scale)] = {  # type: ignore[index]
            "onnx": str(onnx_path),
            "steps": len(losses),
            "first_loss": sum(losses[:window]) / window,
            "last_loss": sum(losses[-window:]) / window,
            "probe_input": str(args.out / f"probe-x{scale}.input.f32"),
            "probe_output": str(args.out / f"probe-x{scale}.output.f32"),
            "probe_shape": list(PROBE_SIZE),
            "seconds": round(time.monotonic() - started, 2),
        }
    (args.out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
