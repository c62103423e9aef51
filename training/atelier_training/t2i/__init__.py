"""Atelier's own small text-to-image model: emoji data, tokenizer, pixel-space diffusion, export, check."""
