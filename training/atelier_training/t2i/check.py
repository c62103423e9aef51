"""The check of a trained text-to-image model against the real emoji, random emoji and the doodles.

A small CNN classifier is trained on the same emoji images (every image, its class being its emoji
with skin tones merged; shifted and noised so that it does not only recognise exact pixels). Then,
for two prompt sets, the share of images whose top-5 classes include the prompt's emoji:

  heldout  the 50 held-out short names x 4 seeds (captions training never showed)
  shared   the doodle model's class names that are also an emoji's short name x 4 seeds (its own ground)

for: the model's samples (DDIM, classifier-free guidance), the real emoji (the upper bound), a random
other emoji (the floor), and the doodle generator (scripts/doodle-samples.ts; a prompt it refuses
counts as a miss). The model passes when it beats the doodles on both sets. A contact sheet of 64
prompts (the held-out ones first) is written beside the figures.

  npx tsx scripts/doodle-samples.ts training/runs/check-prompts.json training/cache/t2i/doodles.json   # from the root, after --write-prompts
  /usr/bin/python3 -m atelier_training.t2i.check --model runs/t2i-64/model.pt --doodles cache/t2i/doodles.json --out runs/t2i-64/check
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw
from torch import nn
from torch.nn import functional as F

from .diffusion import ddim_sample
from .emoji_data import DEFAULT_OUT as DEFAULT_DATA
from .emoji_data import HELDOUT
from .export import load_model

SEEDS = [0, 1, 2, 3]
# The doodle model's class list, read where the prompts are written (the doodles file carries them on).
DOODLE_LABELS = Path("/work/shared/models/cvae-quickdraw/manifest.json")
TOP = 5


class Classifier(nn.Module):
    def __init__(self, classes: int):
        super().__init__()
        layers: list[nn.Module] = []
        width = 3
        for out in (32, 64, 128):
            layers += [nn.Conv2d(width, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU(), nn.MaxPool2d(2)]
            width = out
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(2, 3)))


def to_tensor(images: np.ndarray, resolution: int) -> torch.Tensor:
    pixels = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 127.5 - 1
    return F.interpolate(pixels, size=(resolution, resolution), mode="area") if pixels.shape[-1] != resolution else pixels


def augment(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A shift of up to 1/16 of the side (white fill) and some noise: generated pictures are neither centred nor clean."""
    side = x.shape[-1]
    limit = max(1, side // 16)
    padded = F.pad(x, (limit, limit, limit, limit), value=1.0)
    dx, dy = torch.randint(0, 2 * limit + 1, (2,), generator=generator, device=x.device).tolist()
    shifted = padded[:, :, dy : dy + side, dx : dx + side]
    return shifted + torch.randn(shifted.shape, generator=generator, device=x.device) * 0.1 * torch.rand((len(x), 1, 1, 1), generator=generator, device=x.device)


def train_classifier(pixels: torch.Tensor, classes: torch.Tensor, seconds: float, seed: int) -> tuple[Classifier, dict[str, float]]:
    generator = torch.Generator(device=pixels.device).manual_seed(seed)
    torch.manual_seed(seed)
    model = Classifier(int(classes.max()) + 1).to(pixels.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    start = time.monotonic()
    steps = 0
    while time.monotonic() - start < seconds:
        batch = torch.randint(0, len(pixels), (128,), generator=generator, device=pixels.device)
        loss = F.cross_entropy(model(augment(pixels[batch], generator)), classes[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
    return model.eval(), {"steps": steps, "seconds": round(time.monotonic() - start, 1), "last_loss": round(float(loss), 4)}


@torch.no_grad()
def top_hits(classifier: Classifier, images: torch.Tensor, targets: list[int]) -> list[bool]:
    logits = torch.cat([classifier(images[i : i + 256]) for i in range(0, len(images), 256)])
    top = logits.topk(TOP, dim=1).indices
    return [target in row for target, row in zip(targets, top.tolist())]


@torch.no_grad()
def generate(path: Path, prompts: list[str], steps: int, guidance: float, device: torch.device) -> torch.Tensor:
    model, tokenizer, saved = load_model(path)
    model.to(device)
    resolution = int(saved["resolution"])  # type: ignore[call-overload]
    images = []
    for seed in SEEDS:
        noise = torch.randn((len(prompts), 3, resolution, resolution), generator=torch.Generator().manual_seed(seed)).to(device)
        ids = torch.tensor([tokenizer.encode(text) for text in prompts], dtype=torch.long, device=device)
        empty = model.text(torch.tensor([tokenizer.encode("")], dtype=torch.long, device=device))
        images.append(ddim_sample(model.unet, model.text(ids), empty, noise, steps, guidance))
    # Prompt-major order: prompt 0 seeds 0..3, prompt 1 ..., as the doodles come.
    return torch.stack(images, dim=1).flatten(0, 1)


def shared_prompts(names: np.ndarray, classes: np.ndarray, labels: list[str]) -> list[tuple[str, int]]:
    by_name = {str(name).lower(): int(cls) for name, cls in zip(names, classes)}
    return [(label.replace("_", " "), by_name[label.replace("_", " ")]) for label in labels if label.replace("_", " ") in by_name]


def doodle_images(path: Path, prompts: list[str], resolution: int) -> tuple[torch.Tensor, list[bool]]:
    drawn = {(item["prompt"], item["seed"]): item for item in json.loads(path.read_text())["images"]}
    size = json.loads(path.read_text())["size"]
    images, present = [], []
    for prompt in prompts:
        for seed in SEEDS:
            item = drawn[(prompt, seed)]
            pixels = np.frombuffer(base64.b64decode(item["pixels"]), np.uint8) if item["pixels"] else np.full(size * size, 255, np.uint8)
            # The doodles are drawn in grey (one channel).
            images.append(np.repeat(pixels.reshape(size, size, -1), 3 // (pixels.size // (size * size)), axis=2))
            present.append(item["pixels"] is not None)
    return to_tensor(np.stack(images), resolution), present


def contact_sheet(images: torch.Tensor, captions: list[str], path: Path) -> None:
    cell = 96
    pixels = ((images.clamp(-1, 1) + 1) * 127.5).round().byte().permute(0, 2, 3, 1).numpy()
    sheet = Image.new("RGB", (8 * cell, 8 * (cell + 14)), "white")
    draw = ImageDraw.Draw(sheet)
    for index, (image, text) in enumerate(zip(pixels, captions)):
        x, y = (index % 8) * cell, (index // 8) * (cell + 14)
        sheet.paste(Image.fromarray(image).resize((cell - 8, cell - 8), Image.Resampling.NEAREST), (x + 4, y + 2))
        draw.text((x + 3, y + cell - 6), text[:16], fill="black")
    sheet.save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="model.pt written by train.py")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--doodles", type=Path, help="doodle-samples.ts output for the prompts --write-prompts wrote")
    parser.add_argument("--write-prompts", type=Path, help="write the prompts the doodle generator must draw, and stop")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--resolution", type=int, help="classifier resolution when no model is given")
    parser.add_argument("--classifier-seconds", type=float, default=300)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--guidance", type=float, default=3.0)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    data = dict(np.load(args.data))
    heldout = json.loads(HELDOUT.read_text())
    if args.doodles:
        # --write-prompts lists the held-out captions first, then the shared ones, each once per seed.
        drawn = [item["prompt"] for item in json.loads(args.doodles.read_text())["images"]]
        labels = drawn[len(heldout) * len(SEEDS) :: len(SEEDS)]
    else:
        labels = json.loads(DOODLE_LABELS.read_text())["labels"]
    shared = shared_prompts(data["names"], data["classes"], labels)
    sets = {"heldout": [(row["caption"], int(row["class"])) for row in heldout], "shared": shared}
    if args.write_prompts:
        prompts = [prompt for rows in sets.values() for prompt, _ in rows]
        args.write_prompts.write_text(json.dumps({"prompts": prompts, "seeds": SEEDS, "size": 64}) + "\n")
        return
    resolution = int(torch.load(args.model, map_location="cpu", weights_only=False)["resolution"]) if args.model else args.resolution
    args.out.mkdir(parents=True, exist_ok=True)
    pixels = to_tensor(data["images"], resolution).to(device)
    classes = torch.from_numpy(data["classes"]).long().to(device)
    classifier_path = args.out / f"classifier-{resolution}.pt"
    if classifier_path.exists():
        classifier = Classifier(int(classes.max()) + 1)
        classifier.load_state_dict(torch.load(classifier_path, map_location=device))
        classifier.to(device).eval()
        training = json.loads((args.out / "classifier.json").read_text())
    else:
        classifier, training = train_classifier(pixels, classes, args.classifier_seconds, seed=5)
        torch.save(classifier.state_dict(), classifier_path)
        (args.out / "classifier.json").write_text(json.dumps(training) + "\n")
    class_rows = {int(cls): index for index, cls in enumerate(data["classes"].tolist())}
    rng = np.random.default_rng(9)
    figures: dict[str, object] = {"classifier": training, "top": TOP, "seeds": len(SEEDS), "resolution": resolution}
    sheet_images, sheet_captions = [], []
    for name, rows in sets.items():
        targets = [cls for _, cls in rows for _ in SEEDS]
        real = pixels[[class_rows[cls] for cls in targets]]
        class_list = data["classes"].tolist()
        others = [int(rng.choice([i for i, other in enumerate(class_list) if other != cls])) for cls in targets]
        row: dict[str, object] = {"prompts": len(rows), "real": float(np.mean(top_hits(classifier, real, targets))), "random": float(np.mean(top_hits(classifier, pixels[others], targets)))}
        if args.model:
            generated = generate(args.model, [prompt for prompt, _ in rows], args.steps, args.guidance, device)
            row["model"] = float(np.mean(top_hits(classifier, generated, targets)))
            sheet_images.append(generated[:: len(SEEDS)].cpu())
            sheet_captions += [prompt for prompt, _ in rows]
        if args.doodles:
            doodles, present = doodle_images(args.doodles, [prompt for prompt, _ in rows], resolution)
            doodles = doodles.to(device)
            hits = top_hits(classifier, doodles, targets)
            row["doodles"] = float(np.mean([hit and drawn for hit, drawn in zip(hits, present)]))
            row["doodles_drawn"] = float(np.mean(present))
        figures[name] = row
    if args.model and args.doodles:
        figures["passes"] = all(figures[name]["model"] > figures[name]["doodles"] for name in sets)  # type: ignore[index]
    if sheet_images:
        contact_sheet(torch.cat(sheet_images)[:64], sheet_captions[:64], args.out / "contact-sheet.png")
    (args.out / "check.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
