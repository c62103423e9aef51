"""PyTorch's output of the published weights on a crop of a photograph, for an equality check against
onnxruntime (test/training/published-weights.test.ts runs the original ONNX graphs on the same input).

    /usr/bin/python3 -m atelier_training.published_probe --photo ../data/test-photos/chelsea.png --out /tmp/probe

Writes, per variant, <variant>.input.f32 and <variant>.output.f32 (raw little-endian float32, NCHW)
and result.json with the graph paths and shapes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from PIL import Image

from .patches import to_tensor
from .published_weights import load_published, mirror_path

# Not square and not a multiple of 8, away from the photo's edges.
CROP = (100, 60, 148, 98)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--photo", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--variants", nargs="+", default=["C3", "N3"])
    args = parser.parse_args()
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    probe = to_tensor(Image.open(args.photo).crop(CROP)).unsqueeze(0)
    result = {}
    for variant in args.variants:
        graph = mirror_path(variant)
        with torch.no_grad():
            output = load_published(graph)(probe)
        probe.numpy().astype("<f4").tofile(args.out / f"{variant}.input.f32")
        output.numpy().astype("<f4").tofile(args.out / f"{variant}.output.f32")
        result[variant] = {
            "onnx": str(graph),
            "input": str(args.out / f"{variant}.input.f32"),
            "output": str(args.out / f"{variant}.output.f32"),
            "input_shape": list(probe.shape),
            "output_shape": list(output.shape),
        }
    (args.out / "result.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
