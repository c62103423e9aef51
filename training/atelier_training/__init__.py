"""Training, export and evaluation of Atelier's own upscalers (see training/README.md)."""
