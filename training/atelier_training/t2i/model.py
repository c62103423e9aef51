"""The text encoder and the pixel-space UNet with cross-attention.

TextEncoder: token and position embeddings, a few pre-norm transformer layers, a final norm; its
output is the `last_hidden_state` the UNet attends to. UNet: a DDPM-style UNet on RGB pixels in
[-1, 1] that predicts the noise (epsilon); residual blocks take the timestep embedding, and at the
coarser levels a block is followed by self-attention and cross-attention on the text states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class ModelShape:
    vocab_size: int
    max_tokens: int
    text_width: int
    text_layers: int
    text_heads: int
    channels: tuple[int, ...]  # per level, finest first; each further level halves the resolution
    attention_levels: tuple[int, ...]  # levels (0 = finest) whose blocks attend
    blocks_per_level: int
    heads: int


class Attention(nn.Module):
    """Multi-head attention in plain operations (PyTorch's fused kernels do not export to ONNX)."""

    def __init__(self, width: int, heads: int, context_width: int | None = None):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(context_width or width, width)
        self.value = nn.Linear(context_width or width, width)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, n, width = x.shape
        split = lambda t: t.reshape(b, -1, self.heads, width // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.query(x)), split(self.key(context)), split(self.value(context))
        weights = torch.softmax(q @ k.transpose(-1, -2) * (width // self.heads) ** -0.5, dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(b, n, width))


class TransformerLayer(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attention = Attention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        normed = self.norm1(x)
        x = x + self.attention(normed, normed)
        return x + self.mlp(self.norm2(x))


class TextEncoder(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        self.token = nn.Embedding(shape.vocab_size, shape.text_width)
        self.position = nn.Parameter(torch.zeros(shape.max_tokens, shape.text_width))
        nn.init.normal_(self.position, std=0.02)
        self.layers = nn.Sequential(*[TransformerLayer(shape.text_width, shape.text_heads) for _ in range(shape.text_layers)])
        self.norm = nn.LayerNorm(shape.text_width)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.token(input_ids.long()) + self.position[: input_ids.shape[1]]
        return self.norm(self.layers(x))


def timestep_embedding(timestep: torch.Tensor, width: int) -> torch.Tensor:
    half = width // 2
    frequencies = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=timestep.device) / half)
    angles = timestep.float()[:, None] * frequencies[None]
    return torch.cat([torch.cos(angles), torch.sin(angles)], dim=1)


def norm(channels: int) -> nn.GroupNorm:
    return nn.GroupNorm(8, channels)


class ResBlock(nn.Module):
    def __init__(self, inputs: int, outputs: int, time_width: int):
        super().__init__()
        self.norm1 = norm(inputs)
        self.conv1 = nn.Conv2d(inputs, outputs, 3, padding=1)
        self.time = nn.Linear(time_width, outputs)
        self.norm2 = norm(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, padding=1)
        nn.init.zeros_(self.conv2.weight)
        nn.init.zeros_(self.conv2.bias)
        self.skip = nn.Conv2d(inputs, outputs, 1) if inputs != outputs else nn.Identity()

    def forward(self, x: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time(time)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class AttentionBlock(nn.Module):
    """Self-attention over the pixels (at the coarsest level only, where it is cheap), then
    cross-attention from the pixels to the text states."""

    def __init__(self, channels: int, text_width: int, heads: int, self_attends: bool):
        super().__init__()
        self.self_attends = self_attends
        if self_attends:
            self.norm_self = norm(channels)
            self.self_attention = Attention(channels, heads)
        self.norm_cross = nn.LayerNorm(channels)
        self.cross_attention = Attention(channels, heads, text_width)

    def forward(self, x: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        tokens = x.flatten(2).transpose(1, 2)
        if self.self_attends:
            normed = self.norm_self(x).flatten(2).transpose(1, 2)
            tokens = tokens + self.self_attention(normed, normed)
        query = self.norm_cross(tokens)
        tokens = tokens + self.cross_attention(query, text)
        return tokens.transpose(1, 2).reshape(b, c, h, w)


class UNet(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        widths = shape.channels
        time_width = 4 * widths[0]
        self.time_width = widths[0]
        self.time = nn.Sequential(nn.Linear(widths[0], time_width), nn.SiLU(), nn.Linear(time_width, time_width))
        self.stem = nn.Conv2d(3, widths[0], 3, padding=1)
        self.down = nn.ModuleList()
        skips = [widths[0]]
        current = widths[0]
        for level, width in enumerate(widths):
            for _ in range(shape.blocks_per_level):
                attends = level in shape.attention_levels
                self.down.append(nn.ModuleList([ResBlock(current, width, time_width), AttentionBlock(width, shape.text_width, shape.heads, level == len(widths) - 1) if attends else nn.Identity()]))
                current = width
                skips.append(current)
            if level < len(widths) - 1:
                self.down.append(nn.ModuleList([nn.Conv2d(current, current, 3, stride=2, padding=1)]))
                skips.append(current)
        self.middle = nn.ModuleList([ResBlock(current, current, time_width), AttentionBlock(current, shape.text_width, shape.heads, True), ResBlock(current, current, time_width)])
        self.up = nn.ModuleList()
        for level in reversed(range(len(widths))):
            width = widths[level]
            for _ in range(shape.blocks_per_level + 1):
                attends = level in shape.attention_levels
                self.up.append(nn.ModuleList([ResBlock(current + skips.pop(), width, time_width), AttentionBlock(width, shape.text_width, shape.heads, level == len(widths) - 1) if attends else nn.Identity()]))
                current = width
            if level > 0:
                self.up.append(nn.ModuleList([nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(current, current, 3, padding=1)]))
        self.out_norm = norm(current)
        self.out = nn.Conv2d(current, 3, 3, padding=1)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        if timestep.dim() == 0:
            timestep = timestep[None]
        timestep = timestep.expand(sample.shape[0])
        time = self.time(timestep_embedding(timestep, self.time_width))
        x = self.stem(sample)
        skips = [x]
        for parts in self.down:
            if len(parts) == 1:
                x = parts[0](x)
            else:
                x = parts[0](x, time)
                if isinstance(parts[1], AttentionBlock):
                    x = parts[1](x, encoder_hidden_states)
            skips.append(x)
        x = self.middle[0](x, time)
        x = self.middle[1](x, encoder_hidden_states)
        x = self.middle[2](x, time)
        for parts in self.up:
            if isinstance(parts[0], nn.Upsample):
                x = parts[1](parts[0](x))
            else:
                x = parts[0](torch.cat([x, skips.pop()], dim=1), time)
                if isinstance(parts[1], AttentionBlock):
                    x = parts[1](x, encoder_hidden_states)
        return self.out(F.silu(self.out_norm(x)))


class TextToImage(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        self.shape = shape
        self.text = TextEncoder(shape)
        self.unet = UNet(shape)

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
        return self.unet(sample, timestep, self.text(input_ids))
