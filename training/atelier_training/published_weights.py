"""The published SRVGG compact weights (4xLSDIRCompact C3 / N3 / R3) loaded into SRVGGCompact.

The ONNX graphs are SRVGGNetCompact exported from PyTorch: their convolution initializers keep the
PyTorch names (`body.<i>.weight`, `body.<i>.bias`), the same indices as SRVGGCompact's `body`
Sequential, while each PReLU's slope is an anonymous initializer feeding a PRelu node. So the
convolutions are matched by name and the slopes by walking the graph's PRelu nodes in order. Nothing
is guessed: a missing, extra or misshapen tensor raises.

The weights are Philip Hofmann's (4xLSDIRCompact series 3, CC BY 4.0); a network fine-tuned from them
is a derivative and keeps that attribution (see training/README.md and the catalog entry).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from .model import SRVGGCompact

MIRROR_FOLDER = "superres-lsdir-compact-x4"
VARIANTS = {"C3": "4xLSDIRCompactC3_fp32.onnx", "N3": "4xLSDIRCompactN3_fp32.onnx", "R3": "4xLSDIRCompactR3_fp32.onnx"}


def mirror_path(variant: str, mirror: str | None = None) -> Path:
    """The variant's ONNX file in the model mirror (ATELIER_MODEL_MIRROR, as the service's tests use)."""
    root = mirror or os.environ.get("ATELIER_MODEL_MIRROR")
    if not root:
        raise FileNotFoundError("ATELIER_MODEL_MIRROR is not set: it names the folder that holds superres-lsdir-compact-x4/")
    path = Path(root) / MIRROR_FOLDER / VARIANTS[variant]
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the model mirror")
    return path


def onnx_state_dict(path: Path) -> tuple[dict[str, torch.Tensor], int]:
    """SRVGGCompact's state dict and the scale read from an SRVGGNetCompact ONNX graph."""
    import onnx  # Debian's python3-onnx; only this loader needs it
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    initializers = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    state: dict[str, torch.Tensor] = {}
    prelu_index = 0
    for node in graph.node:
        if node.op_type == "Conv":
            weight_name, bias_name = node.input[1], node.input[2]
            if not weight_name.startswith("body.") or not weight_name.endswith(".weight"):
                raise ValueError(f"{path}: unexpected convolution weight name {weight_name!r}")
            state[weight_name] = torch.from_numpy(np.array(initializers[weight_name]))
            state[bias_name] = torch.from_numpy(np.array(initializers[bias_name]))
        elif node.op_type == "PRelu":
            # The PReLU follows the convolution at body.<2k>; it sits at body.<2k+1>.
            slope = np.array(initializers[node.input[1]]).reshape(-1)
            state[f"body.{2 * prelu_index + 1}.weight"] = torch.from_numpy(slope)
            prelu_index += 1
        elif node.op_type == "DepthToSpace":
            scale = next(attr.i for attr in node.attribute if attr.name == "blocksize")
    return state, scale


def load_published(path: Path) -> SRVGGCompact:
    """An SRVGGCompact with the graph's weights; the architecture (features, convolutions) is read off them."""
    state, scale = onnx_state_dict(path)
    features = state["body.0.weight"].shape[0]
    convs = sum(1 for key in state if key.endswith(".weight") and state[key].dim() == 4) - 2
    model = SRVGGCompact(scale=scale, features=features, convs=convs)
    expected = model.state_dict()
    if set(expected) != set(state):
        raise ValueError(f"{path}: tensors differ: missing {sorted(set(expected) - set(state))}, extra {sorted(set(state) - set(expected))}")
    for key, value in expected.items():
        if value.shape != state[key].shape:
            raise ValueError(f"{path}: {key} is {tuple(state[key].shape)}, expected {tuple(value.shape)}")
    model.load_state_dict(state)
    return model.eval()
