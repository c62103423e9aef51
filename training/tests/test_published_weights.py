"""The published SRVGG compact graphs load into SRVGGCompact, and a head derived for another scale
starts as the source network followed by a box reduction.

Needs the model mirror (ATELIER_MODEL_MIRROR): a missing mirror is an error, never a skip. The
numerical equality with onnxruntime is checked in test/training/published-weights.test.ts.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from atelier_training.initialise import initialise
from atelier_training.model import SRVGGCompact, parameter_count
from atelier_training.published_weights import load_published, mirror_path, onnx_state_dict


def test_every_tensor_of_the_graph_lands_in_the_model() -> None:
    path = mirror_path("C3")
    state, scale = onnx_state_dict(path)
    model = load_published(path)
    assert scale == 4
    assert (model.scale, parameter_count(model)) == (4, 621_424)
    assert set(state) == set(model.state_dict())
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key].reshape(value.shape)), key
    # PReLU slopes are learnt per channel, so a wrong mapping would not leave them all equal.
    assert model.body[1].weight.std() > 0


def test_an_x2_head_from_the_x4_network_is_its_output_box_reduced() -> None:
    path = mirror_path("N3")
    x4 = load_published(path)
    x2 = SRVGGCompact(scale=2)
    initialise(x2, path)
    image = torch.rand(1, 3, 12, 10, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        residual4 = x4(image) - F.interpolate(image, scale_factor=4, mode="nearest")
        residual2 = x2(image) - F.interpolate(image, scale_factor=2, mode="nearest")
    assert torch.allclose(residual2, F.avg_pool2d(residual4, 2), atol=1e-5)
