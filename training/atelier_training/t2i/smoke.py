"""CPU smoke run of the text-to-image training (test/training/t2i-smoke.test.ts runs it in CI).

Renders a small emoji subset, trains configs/t2i-tiny.json for a few steps, stops, resumes from the
checkpoint for a few more, exports the ONNX folder, and writes a probe for the test to compare with
onnxruntime: captions with the ids this tokenizer gives them, a fixed UNet input, and PyTorch's
text states and noise prediction for it.

  /usr/bin/python3 -m atelier_training.t2i.smoke --out /tmp/t2i-smoke
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from .config import T2IConfig
from .emoji_data import build
from .export import load_model
from .train import Trainer

TRAINING_DIR = Path(__file__).resolve().parents[2]
PROBE_CAPTIONS = ["red apple", "Grinning Face", "a   BLUE car, with keywords!", "", "smiling sun 3 don't"]
FIRST_STEPS = 4
RESUMED_STEPS = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    out: Path = args.out
    data = out / "emoji.npz"
    build(data, limit=40)
    config = T2IConfig.load(TRAINING_DIR / "configs" / "t2i-tiny.json")
    run = out / "run"
    first = Trainer(config, data, run, torch.device("cpu"), resume=False).run(budget=600, max_steps=FIRST_STEPS, export_to=None)
    resumed = Trainer(config, data, run, torch.device("cpu"), resume=True).run(budget=600, max_steps=RESUMED_STEPS, export_to=run / "export")

    model, tokenizer, saved = load_model(run / "model.pt")
    resolution = int(saved["resolution"])  # type: ignore[call-overload]
    generator = torch.Generator().manual_seed(7)
    captions = PROBE_CAPTIONS + [str(name) for name in np.load(data)["names"][:10]]
    ids = torch.tensor([tokenizer.encode(text) for text in captions[:2]], dtype=torch.int32)
    sample = torch.randn((2, 3, resolution, resolution), generator=generator)
    timestep = torch.tensor([999.0, 321.0])
    with torch.no_grad():
        states = model.text(ids.long())
        prediction = model.unet(sample, timestep, states)
    probe = {
        "captions": captions,
        "ids": [tokenizer.encode(text) for text in captions],
        "sample": sample.flatten().tolist(),
        "sample_dims": list(sample.shape),
        "timestep": timestep.tolist(),
        "states": states.flatten().tolist(),
        "states_dims": list(states.shape),
        "prediction": prediction.flatten().tolist(),
    }
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    result = {
        "first": first,
        "resumed": resumed,
        "log": log,
        "export": str(run / "export"),
        "resolution": resolution,
        "probe": probe,
    }
    (out / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
