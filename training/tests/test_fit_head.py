"""The closed-form head fit (fit_head.py) solves the right least-squares problem: on pairs that a
network with a known head produced, it recovers that head, and its ridge pulls towards the prior."""

from __future__ import annotations

import copy

import torch

from atelier_training.fit_head import NormalEquations
from atelier_training.model import SRVGGCompact


class TeacherPairs:
    """Low-resolution noise and the teacher network's output for it, in PairSampler's batch shape."""

    def __init__(self, teacher: SRVGGCompact, size: int) -> None:
        self.teacher = teacher
        self.size = size
        self.generator = torch.Generator().manual_seed(5)

    def batch(self, count: int) -> tuple[torch.Tensor, torch.Tensor]:
        lr = torch.rand(count, 3, self.size, self.size, generator=self.generator)
        with torch.no_grad():
            return lr, self.teacher(lr)


def test_recovers_the_head_that_made_the_pairs_and_the_ridge_pulls_to_the_prior() -> None:
    torch.manual_seed(11)
    teacher = SRVGGCompact(scale=2, features=6, convs=1).eval()
    student = copy.deepcopy(teacher)
    head = student.body[len(student.body) - 1]
    with torch.no_grad():
        head.weight.zero_()
        head.bias.zero_()
    sums = NormalEquations(student)
    sums.add(TeacherPairs(teacher, size=16), crops=12, batch=4, margin=2)
    prior = sums.current_head()
    assert sums.samples == 12 * 12 * 12
    sums.set_head(sums.solve(1e-9, prior))
    target = teacher.body[len(teacher.body) - 1]
    assert torch.allclose(head.weight, target.weight, atol=1e-3)
    assert torch.allclose(head.bias, target.bias, atol=1e-3)
    # A huge ridge keeps the prior (here the zero head).
    assert abs(sums.solve(1e9, prior)).max() < 1e-3
