"""Export a trained checkpoint to ONNX in the catalog's upscale signature.

    python3 -m atelier_training.export_onnx --checkpoint runs/x4-bicubic/final.pt --out export/atelier-compact-x4.onnx

Input `input` [batch_size, 3, height, width], output `output` [batch_size, 3, scale*height, scale*width]:
float32, NCHW, RGB, 0-1, as models/catalog/entries/upscale-models.ts describes lsdir-compact-x4. The
spatial axes are dynamic, so the service's tiler may feed any tile size.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from .config import TrainConfig
from .model import SRVGGCompact


def load_model(checkpoint: Path) -> tuple[SRVGGCompact, TrainConfig]:
    state = torch.load(checkpoint, map_location="cpu")
    config = TrainConfig(**state["config"])
    model = SRVGGCompact(scale=config.scale, features=config.features, convs=config.convs)
    model.load_state_dict(state["model"])
    return model.eval(), config


def export(model: SRVGGCompact, out: Path, opset: int = 17) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    example = torch.rand(1, 3, 32, 48)
    with torch.no_grad():
        torch.onnx.export(
            model,
            example,
            str(out),
            input_names=["input"],
            output_names=["output"],
            dynamic_axes={"input": {0: "batch_size", 2: "height", 3: "width"}, "output": {0: "batch_size", 2: "out_height", 3: "out_width"}},
            opset_version=opset,
            do_constant_folding=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    model, config = load_model(args.checkpoint)
    export(model, args.out)
    print(f"{config.name}: x{config.scale} exported to {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
