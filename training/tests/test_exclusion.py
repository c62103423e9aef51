"""The evaluation photographs stay out of training: same bytes, or the same picture re-encoded or resized."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from atelier_training.prepare_data import EvaluationPhotos


def photo(path: Path, seed: int, size: tuple[int, int] = (240, 160)) -> Path:
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (8, 12, 3), dtype=np.uint8)
    Image.fromarray(coarse).resize(size, Image.Resampling.BICUBIC).save(path)
    return path


def test_refuses_copies_and_keeps_other_pictures(tmp_path: Path) -> None:
    evaluation = EvaluationPhotos([photo(tmp_path / "held-out.png", seed=1)])
    original = Image.open(tmp_path / "held-out.png")
    original.save(tmp_path / "copy.png")
    original.convert("RGB").save(tmp_path / "reencoded.jpg", quality=80)
    original.resize((120, 80), Image.Resampling.LANCZOS).save(tmp_path / "smaller.png")
    assert evaluation.match(tmp_path / "copy.png") == "identical bytes"
    assert evaluation.match(tmp_path / "reencoded.jpg") == "same picture as held-out.png"
    assert evaluation.match(tmp_path / "smaller.png") == "same picture as held-out.png"
    assert evaluation.match(photo(tmp_path / "other.png", seed=2)) is None
