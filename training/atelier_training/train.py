"""Train one SRVGG compact upscaler with L1 loss.

    python3 -m atelier_training.train --config configs/x4-bicubic.json --patches cache/patches --out runs/x4-bicubic

The run directory gets config.json, log.jsonl (step, loss, learning rate, wall and CPU seconds),
checkpoint-<step>.pt every checkpoint_every steps and final.pt. --resume continues from a checkpoint
(the data stream restarts from a generator seeded with the seed and the step, so a resumed run is
reproducible too).

Fine-tuning: --init starts from a published SRVGGNetCompact ONNX graph or one of our checkpoints
(initialise.py; a different scale gets a head derived from the source's), --freeze-body trains only
the last convolution, and --eval-photos logs the held-out PSNR gain over bicubic at every checkpoint
(evaluate.py's protocol) and keeps the best one as best.pt.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from .config import TrainConfig
from .evaluate import evaluate, list_photos, mean_gains
from .initialise import freeze_body, initialise
from .model import SRVGGCompact, parameter_count
from .patches import PairSampler, list_patches
from .seeding import seed_everything


class PairStream(IterableDataset):
    def __init__(self, patches: list[Path], config: TrainConfig, start_step: int) -> None:
        self.patches = patches
        self.config = config
        self.start_step = start_step

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        worker = get_worker_info()
        worker_id = worker.id if worker else 0
        # Each loader worker draws from its own generator, fixed by (seed, worker, step resumed at).
        rng = np.random.default_rng([self.config.seed, worker_id, self.start_step])
        sampler = PairSampler(self.patches, self.config.scale, self.config.hr_size, self.config.degradation, rng)
        while True:
            yield sampler.pair()


def build_model(config: TrainConfig) -> SRVGGCompact:
    return SRVGGCompact(scale=config.scale, features=config.features, convs=config.convs)


def train(
    config: TrainConfig,
    patches_dir: Path,
    out: Path,
    workers: int,
    device: str,
    resume: Path | None,
    init: Path | None = None,
    body_frozen: bool = False,
    eval_photos: Path | None = None,
) -> list[float]:
    seed_everything(config.seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config.to_json(), indent=2) + "\n")
    model = build_model(config)
    if init and not resume:
        initialise(model, init)
    model = model.to(device)
    trainable = freeze_body(model) if body_frozen else list(model.parameters())
    optimizer = torch.optim.Adam(trainable, lr=config.learning_rate, betas=(0.9, 0.99))
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=config.lr_milestones, gamma=0.5)
    step = 0
    if resume:
        state = torch.load(resume, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        step = int(state["step"])
    loader = DataLoader(
        PairStream(list_patches(patches_dir), config, step),
        batch_size=config.batch_size,
        num_workers=workers,
        pin_memory=device.startswith("cuda"),
    )
    loss_fn = nn.L1Loss()
    losses: list[float] = []
    photos = list_photos(eval_photos) if eval_photos else []
    best = -float("inf")
    print(f"{config.name}: {parameter_count(model)} parameters, x{config.scale} {config.degradation}, from step {step} to {config.steps} on {device}", flush=True)
    started = time.monotonic()
    cpu_started = time.process_time()
    with (out / "log.jsonl").open("a") as log:

        def write(record: dict[str, object]) -> None:
            record.update(seconds=round(time.monotonic() - started, 1), cpu_seconds=round(time.process_time() - cpu_started, 1))
            log.write(json.dumps(record) + "\n")
            log.flush()
            print(json.dumps(record), flush=True)

        if photos and step == 0:
            write({"step": 0, **held_out(model, config.scale, photos, device)})

        for lr, hr in loader:
            if step >= config.steps:
                break
            lr, hr = lr.to(device, non_blocking=True), hr.to(device, non_blocking=True)
            loss = loss_fn(model(lr), hr)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            step += 1
            losses.append(loss.item())
            if step % config.log_every == 0 or step == config.steps:
                window = losses[-config.log_every :]
                write({"step": step, "loss": sum(window) / len(window), "lr": schedule.get_last_lr()[0]})
            if step % config.checkpoint_every == 0:
                save(out / f"checkpoint-{step}.pt", model, optimizer, schedule, step, config)
                if photos:
                    scores = held_out(model, config.scale, photos, device)
                    write({"step": step, **scores})
                    if scores["held_out_gain_rgb"] > best:
                        best = scores["held_out_gain_rgb"]
                        save(out / "best.pt", model, optimizer, schedule, step, config)
    save(out / "final.pt", model, optimizer, schedule, step, config)
    return losses


def held_out(model: nn.Module, scale: int, photos: list[Path], device: str) -> dict[str, float]:
    """Mean PSNR gain over bicubic on the held-out photographs, measured on a CPU copy of the weights."""
    probe = model if device == "cpu" else copy.deepcopy(model).to("cpu")
    was_training = probe.training
    probe.eval()
    gains = mean_gains(evaluate(probe, scale, photos))
    probe.train(was_training)
    return {f"held_out_{key}": value for key, value in gains.items()}


def save(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer, schedule: object, step: int, config: TrainConfig) -> None:
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "schedule": schedule.state_dict(), "step": step, "config": config.to_json()},  # type: ignore[attr-defined]
        path,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--patches", type=Path, default=Path("cache/patches"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=8, help="data loader processes (0: in the training process)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--resume", type=Path)
    parser.add_argument("--steps", type=int, help="override the config's step count")
    parser.add_argument("--seed", type=int, help="override the config's seed")
    parser.add_argument("--init", type=Path, help="start from a published SRVGGNetCompact .onnx or one of our .pt checkpoints (ignored with --resume)")
    parser.add_argument("--freeze-body", action="store_true", help="train only the last convolution (a new head on a trained body)")
    parser.add_argument("--eval-photos", type=Path, help="held-out photographs: log the PSNR gain over bicubic at every checkpoint, keep best.pt")
    parser.add_argument("--threads", type=int, help="PyTorch's intra-op threads (default: PyTorch's own)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    config = TrainConfig.load(args.config, steps=args.steps, seed=args.seed)
    train(config, args.patches, args.out, args.workers, args.device, args.resume, args.init, args.freeze_body, args.eval_photos)


if __name__ == "__main__":
    main()
