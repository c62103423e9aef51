"""The noise schedule (DDPM's linear betas, epsilon prediction) and a deterministic DDIM sampler.

The exported `scheduler_config.json` states the same schedule, so Atelier's samplers (Euler,
DPM-Solver++) run the exported UNet on the schedule it was trained on.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

TRAIN_TIMESTEPS = 1000
BETA_START = 1e-4
BETA_END = 0.02


def alphas_cumprod(device: torch.device | str = "cpu") -> torch.Tensor:
    betas = torch.linspace(BETA_START, BETA_END, TRAIN_TIMESTEPS, dtype=torch.float64)
    return torch.cumprod(1 - betas, dim=0).float().to(device)


def scheduler_config() -> dict[str, object]:
    return {
        "_class_name": "DDIMScheduler",
        "num_train_timesteps": TRAIN_TIMESTEPS,
        "beta_start": BETA_START,
        "beta_end": BETA_END,
        "beta_schedule": "linear",
        "prediction_type": "epsilon",
        "timestep_spacing": "trailing",
        "steps_offset": 0,
    }


@torch.no_grad()
def ddim_sample(
    predict: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
    text: torch.Tensor,
    empty: torch.Tensor,
    noise: torch.Tensor,
    steps: int,
    guidance: float,
) -> torch.Tensor:
    """Images in [-1, 1] from `noise` (batch, 3, h, w); `text` and `empty` are the prompts' and the empty prompt's states."""
    cumulative = alphas_cumprod(noise.device)
    # Trailing spacing: the first step starts at the last training timestep (pure noise).
    timesteps = torch.linspace(TRAIN_TIMESTEPS, 0, steps + 1)[:-1].round().long() - 1
    x = noise
    batch = noise.shape[0]
    for index, t in enumerate(timesteps.tolist()):
        both = torch.cat([x, x]) if guidance > 1 else x
        states = torch.cat([empty.expand(batch, -1, -1), text]) if guidance > 1 else text
        eps = predict(both, torch.full((both.shape[0],), float(t), device=x.device), states)
        if guidance > 1:
            uncond, cond = eps.chunk(2)
            eps = uncond + guidance * (cond - uncond)
        alpha = cumulative[t]
        previous = cumulative[timesteps[index + 1]] if index + 1 < len(timesteps) else torch.tensor(1.0, device=x.device)
        x0 = ((x - (1 - alpha).sqrt() * eps) / alpha.sqrt()).clamp(-1, 1)
        # The noise the clamped image implies, so that the step stays on the line from x0 to x.
        eps = (x - alpha.sqrt() * x0) / (1 - alpha).sqrt()
        x = previous.sqrt() * x0 + (1 - previous).sqrt() * eps
    return x.clamp(-1, 1)
