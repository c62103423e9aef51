"""Trains the text-to-image model for a fixed wall-clock budget, then exports it.

As it goes, the output folder holds (each file replaced whole, so a run cut off at any moment leaves
a usable model):
  checkpoint.pt      weights, EMA weights, optimiser, step, elapsed time, random states (--resume)
  model.pt           the EMA weights in float16 with the tokenizer and shape: small; export.py reads it
  log.jsonl          training loss every `log_every` steps; held-out figures at every checkpoint
  samples.png        DDIM samples of held-out captions (top rows) and training names (bottom rows)
then at the end export/ (export.py) and summary.json, which is also printed.

The held-out figures: the denoising loss (EMA weights) of the held-out emoji captioned with their
short names, which training never shows, beside the same with the empty caption, at fixed noise and
timesteps; the text helps where the first is below the second.

  /usr/bin/python3 -m atelier_training.t2i.train --config configs/t2i-64.json --out runs/t2i-64
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch.nn import functional as F

from ..seeding import seed_everything
from .captions import all_texts, caption, words_of
from .config import T2IConfig
from .diffusion import TRAIN_TIMESTEPS, alphas_cumprod, ddim_sample
from .emoji_data import DEFAULT_OUT as DEFAULT_DATA
from .export import export
from .model import TextToImage
from .tokenizer import Tokenizer, train_merges

SHEET_CAPTIONS = 8


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load_images(data: dict[str, np.ndarray], resolution: int, limit: int | None) -> tuple[torch.Tensor, np.ndarray]:
    images = data["images"][:limit] if limit else data["images"]
    pixels = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 127.5 - 1
    if pixels.shape[-1] != resolution:
        pixels = F.interpolate(pixels, size=(resolution, resolution), mode="area")
    return pixels, np.arange(len(images))


def save_atomic(value: object, path: Path) -> None:
    partial = path.with_suffix(path.suffix + ".partial")
    torch.save(value, partial)
    os.replace(partial, path)


def sheet(images: torch.Tensor, columns: int) -> Image.Image:
    pixels = ((images.clamp(-1, 1) + 1) * 127.5).round().byte().permute(0, 2, 3, 1).cpu().numpy()
    rows = (len(pixels) + columns - 1) // columns
    side = pixels.shape[1]
    canvas = np.full((rows * side, columns * side, 3), 255, np.uint8)
    for index, image in enumerate(pixels):
        canvas[(index // columns) * side : (index // columns + 1) * side, (index % columns) * side : (index % columns + 1) * side] = image
    return Image.fromarray(canvas)


class Trainer:
    def __init__(self, config: T2IConfig, data_path: Path, out: Path, device: torch.device, resume: bool):
        self.config = config
        self.out = out
        self.device = device
        out.mkdir(parents=True, exist_ok=True)
        rng = seed_everything(config.seed)
        data = dict(np.load(data_path))
        limit = config.data_limit
        self.emoji = words_of({key: value[:limit] if limit else value for key, value in data.items()})
        self.images, _ = load_images(data, config.resolution, limit)
        self.images = self.images.to(device)
        self.heldout = [index for index, entry in enumerate(self.emoji) if entry.heldout]
        checkpoint_path = out / "checkpoint.pt"
        checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=False) if resume and checkpoint_path.exists() else None
        if checkpoint:
            self.tokenizer = Tokenizer.from_state(checkpoint["tokenizer"])
        else:
            self.tokenizer = Tokenizer(train_merges(all_texts(self.emoji), config.merges), config.max_tokens)
        self.model = TextToImage(config.shape(self.tokenizer.vocab_size)).to(device)
        self.ema = TextToImage(config.shape(self.tokenizer.vocab_size)).to(device).eval()
        self.ema.load_state_dict(self.model.state_dict())
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config.learning_rate, weight_decay=0.01)
        self.step = 0
        self.elapsed = 0.0
        self.cpu_before = 0.0
        self.cpu_start = cpu_seconds()
        if checkpoint:
            self.model.load_state_dict(checkpoint["model"])
            self.ema.load_state_dict(checkpoint["ema"])
            self.optimizer.load_state_dict(checkpoint["optimizer"])
            self.step = checkpoint["step"]
            self.elapsed = checkpoint["elapsed"]
            self.cpu_before = checkpoint["cpu_seconds"]
            rng = np.random.default_rng(np.random.SeedSequence([config.seed, self.step]))
            torch.manual_seed(config.seed + self.step)
        # Captions are drawn and tokenized up front: a training step then only indexes tensors.
        pool = [[caption(entry, rng, 0.0) for _ in range(config.captions_per_image)] for entry in self.emoji]
        self.caption_ids = torch.tensor([[self.tokenizer.encode(text) for text in texts] for texts in pool], dtype=torch.long, device=device)
        self.empty_ids = torch.tensor([self.tokenizer.encode("")], dtype=torch.long, device=device)
        self.cumulative = alphas_cumprod(device)
        self.eval_batch = self.fixed_eval_batch()
        self.log = (out / "log.jsonl").open("a")
        self.stop = False

    def fixed_eval_batch(self) -> dict[str, torch.Tensor]:
        generator = torch.Generator().manual_seed(self.config.seed + 1)
        index = torch.tensor(self.heldout, dtype=torch.long).repeat_interleave(4)
        images = self.images[index.to(self.device)]
        names = torch.tensor([self.tokenizer.encode(self.emoji[i].name) for i in index.tolist()], dtype=torch.long)
        timesteps = torch.linspace(50, TRAIN_TIMESTEPS - 50, len(index)).round().long()
        noise = torch.randn(images.shape, generator=generator)
        return {"images": images, "ids": names.to(self.device), "timesteps": timesteps.to(self.device), "noise": noise.to(self.device)}

    def noisy(self, images: torch.Tensor, timesteps: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        alpha = self.cumulative[timesteps][:, None, None, None]
        return alpha.sqrt() * images + (1 - alpha).sqrt() * noise

    def autocast(self):  # type: ignore[no-untyped-def]
        return torch.autocast("cuda", dtype=torch.bfloat16) if self.device.type == "cuda" else torch.autocast("cpu", enabled=False)

    def train_step(self) -> float:
        config = self.config
        batch = torch.randint(0, len(self.images), (config.batch_size,), device=self.device)
        which = torch.randint(0, config.captions_per_image, (config.batch_size,), device=self.device)
        ids = self.caption_ids[batch, which]
        empty = torch.rand(config.batch_size, device=self.device) < config.empty_caption_rate
        ids = torch.where(empty[:, None], self.empty_ids.expand_as(ids), ids)
        images = self.images[batch]
        timesteps = torch.randint(0, TRAIN_TIMESTEPS, (config.batch_size,), device=self.device)
        noise = torch.randn_like(images)
        with self.autocast():
            predicted = self.model(self.noisy(images, timesteps, noise), timesteps.float(), ids)
            loss = F.mse_loss(predicted.float(), noise)
        learning_rate = config.learning_rate * min(1.0, (self.step + 1) / config.warmup_steps)
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        with torch.no_grad():
            decay = min(config.ema_decay, (1 + self.step) / (10 + self.step))
            for average, current in zip(self.ema.parameters(), self.model.parameters()):
                average.lerp_(current, 1 - decay)
        self.step += 1
        return float(loss)

    @torch.no_grad()
    def heldout_figures(self) -> dict[str, float]:
        batch = self.eval_batch
        noisy = self.noisy(batch["images"], batch["timesteps"], batch["noise"])
        figures = {}
        for label, ids in [("heldout_loss", batch["ids"]), ("heldout_loss_empty_caption", self.empty_ids.expand_as(batch["ids"]))]:
            losses = []
            for start in range(0, len(noisy), 64):
                part = slice(start, start + 64)
                with self.autocast():
                    predicted = self.ema(noisy[part], batch["timesteps"][part].float(), ids[part])
                losses.append(F.mse_loss(predicted.float(), batch["noise"][part], reduction="sum"))
            figures[label] = float(sum(losses) / batch["noise"].numel())
        return figures

    @torch.no_grad()
    def samples(self) -> Image.Image:
        config = self.config
        trained = [index for index, entry in enumerate(self.emoji) if not entry.heldout][:: max(1, len(self.emoji) // SHEET_CAPTIONS)][:SHEET_CAPTIONS]
        texts = [self.emoji[i].name for i in self.heldout[:SHEET_CAPTIONS]] + [self.emoji[i].name for i in trained]
        ids = torch.tensor([self.tokenizer.encode(text) for text in texts], dtype=torch.long, device=self.device)
        generator = torch.Generator().manual_seed(config.seed + 2)
        noise = torch.randn((len(texts), 3, config.resolution, config.resolution), generator=generator).to(self.device)
        with self.autocast():
            states = self.ema.text(ids)
            empty = self.ema.text(self.empty_ids)
            images = ddim_sample(lambda x, t, s: self.ema.unet(x, t, s).float(), states, empty, noise, config.sample_steps, config.guidance)
        return sheet(torch.cat([images, self.images[torch.tensor(self.heldout[:SHEET_CAPTIONS] + trained, device=self.device)]]), SHEET_CAPTIONS)

    def small_model(self) -> dict[str, object]:
        return {
            "weights": {key: value.half().cpu() for key, value in self.ema.state_dict().items()},
            "shape": {**self.ema.shape.__dict__, "channels": list(self.ema.shape.channels), "attention_levels": list(self.ema.shape.attention_levels)},
            "tokenizer": self.tokenizer.to_state(),
            "resolution": self.config.resolution,
            "config": self.config.to_json(),
            "step": self.step,
        }

    def checkpoint(self, session_start: float) -> dict[str, object]:
        elapsed = self.elapsed + time.monotonic() - session_start
        state = {
            "model": self.model.state_dict(), "ema": self.ema.state_dict(), "optimizer": self.optimizer.state_dict(),
            "step": self.step, "elapsed": elapsed, "cpu_seconds": self.cpu_before + cpu_seconds() - self.cpu_start, "tokenizer": self.tokenizer.to_state(),
            "config": self.config.to_json(), "python_random": random.getstate(),
        }
        save_atomic(state, self.out / "checkpoint.pt")
        save_atomic(self.small_model(), self.out / "model.pt")
        figures = self.heldout_figures()
        self.samples().save(self.out / "samples.png")
        record = {"step": self.step, "wall_seconds": round(elapsed, 1), "cpu_seconds": round(self.cpu_before + cpu_seconds() - self.cpu_start, 1), **{k: round(v, 5) for k, v in figures.items()}}
        self.write(record)
        return record

    def write(self, record: dict[str, object]) -> None:
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()
        print(json.dumps(record), flush=True)

    def run(self, budget: float, max_steps: int | None, export_to: Path | None) -> dict[str, object]:
        config = self.config
        start = time.monotonic()
        last_checkpoint = start
        losses: list[float] = []
        for signal_number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signal_number, lambda *_: setattr(self, "stop", True))
        while not self.stop and time.monotonic() - start < budget and (max_steps is None or self.step < max_steps):
            self.model.train()
            losses.append(self.train_step())
            if self.step % config.log_every == 0:
                self.write({"step": self.step, "loss": round(sum(losses) / len(losses), 5), "wall_seconds": round(self.elapsed + time.monotonic() - start, 1)})
                losses = []
            if time.monotonic() - last_checkpoint >= config.checkpoint_every_seconds:
                self.checkpoint(start)
                last_checkpoint = time.monotonic()
        final = self.checkpoint(start)
        parameters = {part: sum(p.numel() for p in getattr(self.ema, part).parameters()) for part in ("text", "unet")}
        summary: dict[str, object] = {
            "name": config.name, "device": str(self.device), "steps": self.step, "images": len(self.images), "heldout": len(self.heldout),
            "vocabulary": self.tokenizer.vocab_size, "parameters": parameters, "stopped_by": "signal" if self.stop else "budget or steps", **final,
        }
        if export_to is not None:
            files = export(self.ema, self.tokenizer, config.resolution, export_to)
            summary["export"] = {name: {"path": path, "bytes": Path(path).stat().st_size} for name, path in files.items()}
        (self.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        print(json.dumps(summary), flush=True)
        return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--budget-seconds", type=float, help="overrides the config's wall-clock budget for this invocation")
    parser.add_argument("--max-steps", type=int, help="stop after this many steps in all (smoke runs)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt when it exists")
    parser.add_argument("--no-export", action="store_true")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    config = T2IConfig.load(args.config)
    budget = args.budget_seconds if args.budget_seconds is not None else config.budget_seconds
    trainer = Trainer(config, args.data, args.out, torch.device(args.device), args.resume)
    trainer.run(budget, args.max_steps, None if args.no_export else args.out / "export")


if __name__ == "__main__":
    main()
