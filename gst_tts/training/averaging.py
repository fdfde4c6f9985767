"""An exponential moving average of the weights being trained (``trainer.weight_average_decay``).

Late in a run the weights move back and forth along the loss's valleys; the average of the recent
ones usually sits lower than any of them (Polyak averaging). With it on, validation and every
checkpoint's ``model`` (what synthesis, export and ``select-checkpoint`` read) are the average;
the weights being trained travel beside it as ``training_model``, for resuming
(:mod:`gst_tts.checkpoints.acoustic`). On a demo of 2,500 steps it did not steady the rate
response (docs/results/2026-11-28-weight-average.md), so it is off by default.

After update ``n`` (1, 2, ...) the average is ``a = d_n a + (1 - d_n) w`` with
``d_n = min(decay, (1 + n) / (10 + n))``: early on, when ``decay`` would keep the average near the
random start for thousands of updates, the smaller ``d_n`` lets it follow the weights (the
schedule of TensorFlow's ``ExponentialMovingAverage`` with ``num_updates``). Buffers (BatchNorm's
running statistics, themselves averages) are copied, not averaged.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

import torch
from torch import nn

__all__ = ["WeightAverage", "average_decay"]


def average_decay(decay: float, updates: int) -> float:
    """The factor that update number ``updates`` (1, 2, ...) keeps of the old average."""
    return min(decay, (1.0 + updates) / (10.0 + updates))


class WeightAverage:
    """An exponential moving average of ``model``'s parameters, held in a copy of the model.

    Args:
        model: the module being trained; copied once here (its weights start the average).
        decay: the share of the average each update keeps, in [0, 1); its horizon is about
            ``1 / (1 - decay)`` updates (0.998: 500).

    Raises:
        ValueError: a decay outside [0, 1).
    """

    def __init__(self, model: nn.Module, *, decay: float) -> None:
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"the weight average's decay must be in [0, 1), got {decay!r}")
        self.decay = float(decay)
        self.module = copy.deepcopy(model).eval()
        self.module.requires_grad_(False)
        self.updates = 0

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        """Moves the average toward ``model``'s current weights (call after each optimizer update)."""
        self.updates += 1
        keep = average_decay(self.decay, self.updates)
        averaged = list(self.module.parameters())
        current = [p.detach() for p in model.parameters()]
        torch._foreach_lerp_(averaged, current, 1.0 - keep)
        for mine, theirs in zip(self.module.buffers(), model.buffers()):
            mine.copy_(theirs)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The averaged model's ``state_dict()`` (a checkpoint's ``model``)."""
        return self.module.state_dict()

    def load(self, model_state: Mapping[str, Any], updates: int) -> None:
        """Restores the average from a checkpoint's ``model`` after ``updates`` updates (its step)."""
        self.module.load_state_dict(model_state)
        self.updates = int(updates)
