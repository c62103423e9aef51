"""Fit the last convolution (the head) of an SRVGG compact network in closed form, body fixed.

    python3 -m atelier_training.fit_head --init runs/x4-bicubic-finetune/best.pt --scale 4 --out runs/x4-head/fitted.pt
    python3 -m atelier_training.fit_head --init runs/x4-head/fitted.pt --scale 2 --out runs/x2-head/fitted.pt

With the body fixed, the network's output is linear in the head's weights: every output sub-pixel is
a 3x3 convolution of the body's 64 features plus a bias, added to the nearest-neighbour enlargement.
So the head that minimises the squared error (what PSNR measures) on a set of training pairs is the
solution of one linear least-squares problem, accumulated as normal equations over forward passes
only: no backward pass, no learning rate, no epochs. That makes it the cheapest way to adapt a
network to a degradation (bicubic here) on a CPU, and the way to give the body a head for another
scale (x2 from the x4 body; initialise.py's derived head is the starting point it is compared with).

Pairs come from the prepared patches through PairSampler (random crops, flips, quarter turns,
degraded on the fly), seeded. Features near a crop's edge see the zero padding, unlike most of a tile
at inference, so a margin of `margin` low-resolution pixels is left out of the fit. The solve is
pulled towards the starting head by a ridge term (relative to the mean diagonal of the normal
equations): with few crops the data alone would overfit them, while the published head already
generalises. Several ridges are solved from the same sums; with --eval-photos the one with the best
held-out RGB gain is kept, or the starting head when none beats it (those photos are the tuning set,
never the reporting one).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from .config import TrainConfig
from .evaluate import evaluate, list_photos, mean_gains
from .initialise import initialise, source_state
from .model import SRVGGCompact
from .patches import PairSampler, list_patches
from .seeding import seed_everything


def head_inputs(model: SRVGGCompact, lr: torch.Tensor, margin: int) -> torch.Tensor:
    """The head's input at each interior low-resolution pixel: 3x3 neighbourhoods of the features, and 1."""
    features = model.body[:-1](lr)
    columns = F.unfold(features, kernel_size=3, padding=1)  # [B, 64*9, h*w], ordered as the weight's (C, ky, kx)
    b, k, _ = columns.shape
    h, w = lr.shape[2:]
    columns = columns.reshape(b, k, h, w)[:, :, margin : h - margin, margin : w - margin]
    columns = columns.permute(0, 2, 3, 1).reshape(-1, k)
    return torch.cat([columns, torch.ones(columns.shape[0], 1)], dim=1)


def head_targets(model: SRVGGCompact, lr: torch.Tensor, hr: torch.Tensor, margin: int) -> torch.Tensor:
    """What the head must output there: the high-resolution residual over the nearest-neighbour base, as sub-pixel channels."""
    residual = hr - F.interpolate(lr, scale_factor=model.scale, mode="nearest")
    channels = F.pixel_unshuffle(residual, model.scale)  # inverse of the network's PixelShuffle
    h, w = lr.shape[2:]
    channels = channels[:, :, margin : h - margin, margin : w - margin]
    return channels.permute(0, 2, 3, 1).reshape(-1, channels.shape[1])


class NormalEquations:
    """Sums X^T X and X^T Y of the head's least-squares problem over training pairs."""

    def __init__(self, model: SRVGGCompact) -> None:
        self.model = model
        self.head = model.body[len(model.body) - 1]
        k = self.head.weight.shape[1] * 9 + 1
        self.gram = np.zeros((k, k))
        self.cross = np.zeros((k, self.head.weight.shape[0]))
        self.samples = 0

    def add(self, sampler: PairSampler, crops: int, batch: int, margin: int) -> None:
        self.model.eval()
        with torch.no_grad():
            for start in range(0, crops, batch):
                lr, hr = sampler.batch(min(batch, crops - start))
                x = head_inputs(self.model, lr, margin).double()
                y = head_targets(self.model, lr, hr, margin).double()
                self.gram += (x.T @ x).numpy()
                self.cross += (x.T @ y).numpy()
                self.samples += x.shape[0]

    def current_head(self) -> np.ndarray:
        weight = self.head.weight.detach().reshape(self.head.weight.shape[0], -1).T.double().numpy()
        return np.concatenate([weight, self.head.bias.detach().double().numpy()[None]], axis=0)  # [k, outputs]

    def solve(self, ridge: float, prior: np.ndarray) -> np.ndarray:
        """argmin |XW - Y|^2 + r |W - prior|^2, with r = ridge times the mean of X^T X's diagonal."""
        k = self.gram.shape[0]
        strength = ridge * np.trace(self.gram) / k
        return np.linalg.solve(self.gram + strength * np.eye(k), self.cross + strength * prior)

    def set_head(self, solution: np.ndarray) -> None:
        with torch.no_grad():
            self.head.weight.copy_(torch.from_numpy(solution[:-1].T.copy()).float().reshape(self.head.weight.shape))
            self.head.bias.copy_(torch.from_numpy(solution[-1].copy()).float())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", type=Path, required=True, help="the body's source: a published .onnx or one of our .pt checkpoints")
    parser.add_argument("--scale", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="checkpoint to write (export_onnx.py and evaluate.py read it)")
    parser.add_argument("--name", help="the network's name in the checkpoint (default atelier-compact-x<scale>)")
    parser.add_argument("--patches", type=Path, default=Path("cache/patches"))
    parser.add_argument("--crops", type=int, default=96)
    parser.add_argument("--hr-size", type=int, default=192)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--margin", type=int, default=6, help="low-resolution pixels left out along each crop edge")
    parser.add_argument("--ridges", type=float, nargs="+", default=[1e-4, 1e-3, 1e-2, 1e-1], help="ridge strengths to try (the first is kept without --eval-photos)")
    parser.add_argument("--degradation", default="bicubic")
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--eval-photos", type=Path, help="held-out photographs: print the PSNR gain over bicubic before and after")
    parser.add_argument("--threads", type=int)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = seed_everything(args.seed)
    _, source_scale = source_state(args.init)
    model = SRVGGCompact(scale=args.scale)
    initialise(model, args.init)
    photos = list_photos(args.eval_photos) if args.eval_photos else []
    log: dict[str, object] = {"init": str(args.init), "source_scale": source_scale, "scale": args.scale, "crops": args.crops, "hr_size": args.hr_size, "seed": args.seed}
    if photos:
        log["before"] = mean_gains(evaluate(model.eval(), args.scale, photos))
        print(json.dumps({"before": log["before"]}), flush=True)
    started, cpu_started = time.monotonic(), time.process_time()
    sampler = PairSampler(list_patches(args.patches), args.scale, args.hr_size, args.degradation, rng)
    sums = NormalEquations(model)
    sums.add(sampler, args.crops, args.batch, args.margin)
    prior = sums.current_head()
    best: tuple[float, np.ndarray] | None = None
    tried = {}
    for ridge in args.ridges:
        solution = sums.solve(ridge, prior)
        if not photos:
            best = (ridge, solution)
            break
        sums.set_head(solution)
        tried[str(ridge)] = mean_gains(evaluate(model.eval(), args.scale, photos))
        print(json.dumps({"ridge": ridge, **tried[str(ridge)]}), flush=True)
        if best is None or tried[str(ridge)]["gain_rgb"] > tried[str(best[0])]["gain_rgb"]:
            best = (ridge, solution)
    assert best is not None
    if photos and tried[str(best[0])]["gain_rgb"] <= log["before"]["gain_rgb"]:  # type: ignore[index]
        best = (float("inf"), prior)
        tried["inf"] = log["before"]  # type: ignore[assignment]
    sums.set_head(best[1])
    log.update(samples=sums.samples, ridge=best[0], tried=tried)
    log.update(seconds=round(time.monotonic() - started, 1), cpu_seconds=round(time.process_time() - cpu_started, 1))
    if photos:
        log["after"] = tried[str(best[0])]
    print(json.dumps(log), flush=True)
    config = TrainConfig(
        name=args.name or f"atelier-compact-x{args.scale}",
        scale=args.scale,
        degradation=args.degradation,
        features=model.body[0].out_channels,
        convs=(len(model.body) - 3) // 2,
        hr_size=args.hr_size,
        batch_size=args.batch,
        steps=0,
        learning_rate=0.0,
        lr_milestones=[],
        seed=args.seed,
        checkpoint_every=0,
        log_every=0,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "step": 0, "config": config.to_json(), "fit_head": log}, args.out)
    with (args.out.parent / "fit_head.jsonl").open("a") as handle:
        handle.write(json.dumps(log) + "\n")


if __name__ == "__main__":
    main()
