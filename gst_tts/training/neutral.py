"""The neutral style a model has seen: the mean token weights of its training references.

Uniform token weights (the old neutral) are a point training never visits: every training step
has a reference, whose token weights are a softmax per head far from flat. :class:`NeutralStyleMeter`
averages the ``(n_heads, n_tokens)`` token weights of the references of the batches the model was
updated on, read from the training forward pass's own output (no extra pass, no random draw, no
effect on the weights), and the checkpoint stores the mean as ``neutral_style``
(:func:`gst_tts.checkpoints.acoustic.stored_neutral_style`). Since the style embedding is linear in
the token weights, the mean weights give the mean style embedding of those references.

The mean is that of the last complete epoch (one pass over the training set with nearly the
current weights, not the early steps whose tokens meant nothing yet); before the first epoch ends,
that of the epoch so far. Under DDP each rank counts its own share; rank 0's is saved.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

__all__ = ["NeutralStyleMeter"]


class NeutralStyleMeter:
    """Running mean of training references' token weights, per epoch.

    Args:
        n_heads, n_tokens: the model's style heads and tokens.
    """

    def __init__(self, *, n_heads: int, n_tokens: int) -> None:
        self.shape = (n_heads, n_tokens)
        # float64 sums: an epoch of thousands of items adds no visible rounding to the mean.
        self._sum = torch.zeros(self.shape, dtype=torch.float64)
        self._count = 0
        self._last: torch.Tensor | None = None  # the last complete epoch's mean

    def add(self, weights: torch.Tensor) -> None:
        """Count a batch's ``(batch, n_heads, n_tokens)`` token weights (any device, any float type).

        The sum stays on the weights' device until read, so a GPU step waits for nothing here.
        """
        batch_sum = weights.detach().to(torch.float64).sum(0)
        if self._sum.device != batch_sum.device:
            self._sum = self._sum.to(batch_sum.device)
        self._sum += batch_sum
        self._count += int(weights.shape[0])

    def end_epoch(self) -> None:
        """Close an epoch: its mean becomes the neutral style, and the next epoch counts afresh."""
        if self._count:
            self._last = (self._sum / self._count).float().cpu()
        self._sum = torch.zeros_like(self._sum)
        self._count = 0

    def mean(self) -> torch.Tensor | None:
        """``(n_heads, n_tokens)`` float32: the last complete epoch's mean, else this epoch's so far;
        ``None`` before any batch."""
        if self._last is not None:
            return self._last
        return (self._sum / self._count).float().cpu() if self._count else None

    def state_dict(self) -> dict[str, Any]:
        """The running sums, as a checkpoint stores them (tensors and numbers only)."""
        return {"sum": self._sum.cpu(), "count": self._count, "last": self._last}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self._sum = state["sum"].to(torch.float64).cpu().reshape(self.shape)
        self._count = int(state["count"])
        self._last = None if state.get("last") is None else state["last"].float().cpu().reshape(self.shape)
