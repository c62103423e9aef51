"""A text-to-image run's settings, read from configs/t2i-*.json (every field named, no hidden defaults)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from .model import ModelShape


@dataclass(frozen=True)
class T2IConfig:
    name: str
    resolution: int  # training side in pixels; the 64 px images are box-reduced to it
    channels: list[int]
    attention_levels: list[int]
    blocks_per_level: int
    heads: int
    text_width: int
    text_layers: int
    text_heads: int
    max_tokens: int
    merges: int  # BPE merges learned from the captions' words
    captions_per_image: int  # captions drawn and tokenized per image before training
    empty_caption_rate: float
    batch_size: int
    learning_rate: float
    warmup_steps: int
    ema_decay: float
    budget_seconds: float  # wall-clock training time of one invocation
    checkpoint_every_seconds: float
    log_every: int
    sample_steps: int  # DDIM steps of the sample sheets
    guidance: float
    data_limit: int | None  # images kept (held-out ones first), or null for all
    seed: int

    @staticmethod
    def load(path: Path, **overrides: object) -> "T2IConfig":
        raw = json.loads(path.read_text())
        raw.update({key: value for key, value in overrides.items() if value is not None})
        known = {field.name for field in fields(T2IConfig)}
        unknown = set(raw) - known
        missing = known - set(raw)
        if unknown or missing:
            raise ValueError(f"{path}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
        return T2IConfig(**raw)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def shape(self, vocab_size: int) -> ModelShape:
        return ModelShape(
            vocab_size=vocab_size,
            max_tokens=self.max_tokens,
            text_width=self.text_width,
            text_layers=self.text_layers,
            text_heads=self.text_heads,
            channels=tuple(self.channels),
            attention_levels=tuple(self.attention_levels),
            blocks_per_level=self.blocks_per_level,
            heads=self.heads,
        )
