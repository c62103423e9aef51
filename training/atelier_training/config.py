"""A training run's settings, read from a JSON file in configs/ (every field named, no hidden defaults)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class TrainConfig:
    name: str
    scale: int
    degradation: str  # "bicubic" or "mild" (degrade.py)
    features: int
    convs: int
    hr_size: int  # high-resolution crop side, a multiple of scale
    batch_size: int
    steps: int
    learning_rate: float
    lr_milestones: list[int]  # steps at which the learning rate halves
    seed: int
    checkpoint_every: int
    log_every: int

    @staticmethod
    def load(path: Path, **overrides: object) -> "TrainConfig":
        raw = json.loads(path.read_text())
        raw.update({key: value for key, value in overrides.items() if value is not None})
        known = {field.name for field in fields(TrainConfig)}
        unknown = set(raw) - known
        missing = known - set(raw)
        if unknown or missing:
            raise ValueError(f"{path}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
        return TrainConfig(**raw)

    def to_json(self) -> dict[str, object]:
        return asdict(self)
