"""The weight average: its update rule, its warm-up, buffers, and that it never touches the model."""

import pytest
import torch
from torch import nn

from gst_tts.training.averaging import WeightAverage, average_decay


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))


def test_each_update_moves_the_average_by_one_minus_its_decay():
    model = _model()
    average = WeightAverage(model, decay=0.9)
    start = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    average.update(model)
    keep = average_decay(0.9, 1)
    assert keep == pytest.approx(2 / 11)
    for a, s in zip(average.module.parameters(), start):
        assert torch.allclose(a, keep * s + (1 - keep) * (s + 1.0))
    # The model is untouched, and nothing asks for gradients on the average.
    for p, s in zip(model.parameters(), start):
        assert torch.equal(p, s + 1.0)
    assert not any(p.requires_grad for p in average.module.parameters())


def test_the_decay_warms_up_then_holds():
    assert average_decay(0.998, 1) < average_decay(0.998, 10) < average_decay(0.998, 100) < 0.998
    assert average_decay(0.998, 10_000) == 0.998
    assert average_decay(0.0, 5) == 0.0  # decay 0: the average is the latest weights


def test_buffers_are_copied_not_averaged():
    model = _model()
    average = WeightAverage(model, decay=0.99)
    model.train()
    model(torch.randn(8, 3) * 5 + 2)
    average.update(model)
    for a, b in zip(average.module.buffers(), model.buffers()):
        assert torch.equal(a, b)


def test_a_restored_average_continues_exactly():
    model = _model()
    first = WeightAverage(model, decay=0.95)
    for _ in range(3):
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1.1)
        first.update(model)
    second = WeightAverage(_model(), decay=0.95)
    second.load(first.state_dict(), updates=first.updates)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.1)
    first.update(model)
    second.update(model)
    for a, b in zip(first.module.parameters(), second.module.parameters()):
        assert torch.equal(a, b)


@pytest.mark.parametrize("decay", [1.0, 1.5, -0.01])
def test_a_decay_outside_zero_to_one_is_refused(decay):
    with pytest.raises(ValueError, match="decay"):
        WeightAverage(_model(), decay=decay)
