"""One place that makes a run reproducible from its seed."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int) -> np.random.Generator:
    random.seed(seed)
    torch.manual_seed(seed)
    # Deterministic kernels where PyTorch has them; warn rather than fail where it has none (CUDA upsampling).
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    return np.random.default_rng(seed)
