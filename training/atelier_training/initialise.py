"""Starting weights for a fine-tune: a published ONNX graph or one of our checkpoints, possibly at
another scale.

Everything up to the last convolution (the body) does not depend on the scale, so it is copied as
is. The last convolution maps 64 features to 3·scale² sub-pixels; moving from scale s to a scale t
that divides s, each new sub-pixel covers (s/t)² old ones, so its weights and bias are their mean:
the new network starts as the old one followed by a (s/t)x(s/t) box reduction, a good image at once
rather than the noise a fresh head would give.
"""

from __future__ import annotations

from pathlib import Path

import torch

from .model import SRVGGCompact
from .published_weights import load_published


def source_state(path: Path) -> tuple[dict[str, torch.Tensor], int]:
    if path.suffix == ".onnx":
        model = load_published(path)
        return model.state_dict(), model.scale
    state = torch.load(path, map_location="cpu")
    return state["model"], int(state["config"]["scale"])


def reduced_head(weight: torch.Tensor, bias: torch.Tensor, source_scale: int, target_scale: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Head weights for target_scale from source_scale's, in PixelShuffle's (channel, row, column) order."""
    if source_scale % target_scale:
        raise ValueError(f"cannot derive an x{target_scale} head from an x{source_scale} one")
    factor = source_scale // target_scale
    features = weight.shape[1]
    # [3·s², F, 3, 3] -> [3, t, factor, t, factor, F, 3, 3]: sub-pixel (dy, dx) of x s is row dy = ty·factor + fy.
    w = weight.reshape(3, target_scale, factor, target_scale, factor, features, 3, 3).mean(dim=(2, 4))
    b = bias.reshape(3, target_scale, factor, target_scale, factor).mean(dim=(2, 4))
    return w.reshape(3 * target_scale * target_scale, features, 3, 3).contiguous(), b.reshape(-1).contiguous()


def initialise(model: SRVGGCompact, path: Path) -> None:
    """Loads `path`'s weights into `model`, deriving the head when the scales differ."""
    state, source_scale = source_state(path)
    head = f"body.{len(model.body) - 1}"
    if source_scale != model.scale:
        state = dict(state)
        state[f"{head}.weight"], state[f"{head}.bias"] = reduced_head(state[f"{head}.weight"], state[f"{head}.bias"], source_scale, model.scale)
    model.load_state_dict(state)


def freeze_body(model: SRVGGCompact) -> list[torch.nn.Parameter]:
    """Leaves only the last convolution trainable; returns its parameters."""
    head = model.body[len(model.body) - 1]
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    for parameter in head.parameters():
        parameter.requires_grad_(True)
    return list(head.parameters())
