"""ONNX export in the Stable Diffusion folder layout Atelier's diffusion pipeline runs.

  text_encoder/model.onnx   input_ids [batch, max_tokens] -> last_hidden_state [batch, max_tokens, width]
  unet/model.onnx           sample [batch, 3, h, w], timestep [batch], encoder_hidden_states -> out_sample
  vae_decoder/model.onnx    latent_sample [1, 3, h, w] -> sample [1, 3, h, w]: the identity, clamped,
                            since the model works on pixels
  vae_decoder/config.json   block_out_channels of length 1: one pixel per latent cell (diffusers'
                            vae_scale_factor = 2 ** (len - 1)), scaling_factor 1
  tokenizer/, scheduler/scheduler_config.json, unet/config.json, model_index.json

  /usr/bin/python3 -m atelier_training.t2i.export --model runs/t2i/model.pt --out export/atelier-emoji
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from torch import nn

from .diffusion import scheduler_config
from .model import ModelShape, TextToImage
from .tokenizer import Tokenizer

OPSET = 17


class PixelDecoder(nn.Module):
    def forward(self, latent_sample: torch.Tensor) -> torch.Tensor:
        return latent_sample.clamp(-1, 1)


def load_model(path: Path) -> tuple[TextToImage, Tokenizer, dict[str, object]]:
    saved = torch.load(path, map_location="cpu", weights_only=False)
    shape = ModelShape(**{**saved["shape"], "channels": tuple(saved["shape"]["channels"]), "attention_levels": tuple(saved["shape"]["attention_levels"])})
    model = TextToImage(shape)
    model.load_state_dict({key: value.float() for key, value in saved["weights"].items()})
    return model.eval(), Tokenizer.from_state(saved["tokenizer"]), saved


def export(model: TextToImage, tokenizer: Tokenizer, resolution: int, out: Path) -> dict[str, str]:
    model = model.eval().float().cpu()
    shape = model.shape
    for folder in ["text_encoder", "unet", "vae_decoder", "scheduler"]:
        (out / folder).mkdir(parents=True, exist_ok=True)
    ids = torch.tensor([tokenizer.encode("red apple")], dtype=torch.int32)
    with torch.no_grad():
        torch.onnx.export(
            model.text, (ids,), str(out / "text_encoder/model.onnx"), opset_version=OPSET,
            input_names=["input_ids"], output_names=["last_hidden_state"], dynamic_axes={"input_ids": {0: "batch"}, "last_hidden_state": {0: "batch"}},
        )
        states = model.text(ids.long())
        sample = torch.randn(1, 3, resolution, resolution)
        torch.onnx.export(
            model.unet, (sample, torch.tensor([500.0]), states), str(out / "unet/model.onnx"), opset_version=OPSET,
            input_names=["sample", "timestep", "encoder_hidden_states"], output_names=["out_sample"],
            dynamic_axes={"sample": {0: "batch", 2: "height", 3: "width"}, "timestep": {0: "batch"}, "encoder_hidden_states": {0: "batch"}, "out_sample": {0: "batch", 2: "height", 3: "width"}},
        )
        torch.onnx.export(
            PixelDecoder(), (sample,), str(out / "vae_decoder/model.onnx"), opset_version=OPSET,
            input_names=["latent_sample"], output_names=["sample"], dynamic_axes={"latent_sample": {2: "height", 3: "width"}, "sample": {2: "height", 3: "width"}},
        )
    tokenizer.save(out / "tokenizer")
    write_json(out / "scheduler/scheduler_config.json", scheduler_config())
    write_json(out / "vae_decoder/config.json", {"_class_name": "PixelSpace", "block_out_channels": [3], "scaling_factor": 1.0, "latent_channels": 3})
    write_json(out / "unet/config.json", {"sample_size": resolution, "in_channels": 3, "out_channels": 3, "block_out_channels": list(shape.channels), "cross_attention_dim": shape.text_width})
    write_json(out / "model_index.json", {"_class_name": "AtelierPixelDiffusionPipeline", "text_encoder": ["atelier", "TextEncoder"], "unet": ["atelier", "UNet"], "vae_decoder": ["atelier", "PixelDecoder"], "tokenizer": ["transformers", "CLIPTokenizer"], "scheduler": ["diffusers", "DDIMScheduler"]})
    return {name: str(out / f"{name}/model.onnx") for name in ["text_encoder", "unet", "vae_decoder"]}


def write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="model.pt written by train.py")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    model, tokenizer, saved = load_model(args.model)
    print(json.dumps(export(model, tokenizer, int(saved["resolution"]), args.out)))  # type: ignore[call-overload]


if __name__ == "__main__":
    main()
