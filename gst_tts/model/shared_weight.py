"""A weight used by every step of a recurrence, with its gradient computed once after the loop.

Autograd gives a weight used at T steps T separate gradients: one small matrix product per step
(``grad_out_t.T @ x_t``, rank = batch size) that writes a full weight-sized tensor, plus T
weight-sized additions. For a 1024-unit LSTM that is about 25 MB written and summed per step and
dominates the backward pass on a CPU. :class:`SharedStepWeight` instead keeps each step's input and
output gradient and forms the weight gradient as one product of the stacked matrices
(``G.T @ X``) when autograd reaches the weight, which is after the last step's backward.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F


class SharedStepWeight:
    """Applies ``weight`` (``(out_features, in_features)``) at each step of one forward pass.

    Create one per pass and call it like ``F.linear(x, weight)``. With autograd off, or a weight that
    needs no gradient, it is exactly ``F.linear``. Not for double backward.

    Args:
        weight: the (differentiable) weight shared by all steps.
    """

    def __init__(self, weight: torch.Tensor) -> None:
        self.weight = weight
        self.inputs: list[torch.Tensor] = []
        self.grad_outputs: list[torch.Tensor | None] = []
        self._token: torch.Tensor | None = None
        self._detached = weight.detach()
        if torch.is_grad_enabled() and weight.requires_grad:
            # A scalar that every step depends on: autograd runs its backward (the weight
            # gradient) only once all steps' backwards have filled in their gradients.
            self._token = _CollectWeightGrad.apply(weight, self)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` ``(batch, in_features)`` → ``(batch, out_features)``."""
        if self._token is None:
            return F.linear(x, self.weight)
        index = len(self.inputs)
        self.inputs.append(x.detach())
        self.grad_outputs.append(None)
        return _StepLinear.apply(x, self._token, self._detached, self, index)


class _CollectWeightGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight: torch.Tensor, shared: SharedStepWeight) -> torch.Tensor:
        ctx.shared = shared
        return weight.new_zeros(())

    @staticmethod
    def backward(ctx, _grad_token: torch.Tensor) -> tuple[torch.Tensor | None, None]:
        shared: SharedStepWeight = ctx.shared
        ctx.shared = None
        weight = shared.weight
        pairs = [(g, x) for g, x in zip(shared.grad_outputs, shared.inputs) if g is not None]
        shared.inputs, shared.grad_outputs = [], []
        if not pairs:
            return None, None
        grad_out = torch.cat([g for g, _ in pairs])
        inputs = torch.cat([x for _, x in pairs]).to(grad_out.dtype)
        return (grad_out.t() @ inputs).to(weight.dtype), None


class _StepLinear(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx, x: torch.Tensor, _token: torch.Tensor, weight: torch.Tensor, shared: SharedStepWeight, index: int
    ) -> torch.Tensor:
        ctx.save_for_backward(weight)
        ctx.shared, ctx.index, ctx.x_dtype, ctx.token_dtype = shared, index, x.dtype, _token.dtype
        return F.linear(x, weight)

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None, None, None]:
        (weight,) = ctx.saved_tensors
        ctx.shared.grad_outputs[ctx.index] = grad_out
        grad_x = (grad_out @ weight.to(grad_out.dtype)).to(ctx.x_dtype)
        return grad_x, grad_out.new_zeros((), dtype=ctx.token_dtype), None, None, None
