"""SharedStepWeight must give exactly the gradients of a plain per-step F.linear."""

from __future__ import annotations

import torch
from torch.nn import functional as F

from gst_tts.model.shared_weight import SharedStepWeight


def _recurrence(weight: torch.Tensor, inputs: torch.Tensor, shared: bool, skip_last: bool = False) -> torch.Tensor:
    apply = SharedStepWeight(weight) if shared else (lambda x: F.linear(x, weight))
    hidden = inputs.new_zeros(inputs.shape[1], weight.shape[0])
    outputs = []
    for x in inputs.unbind(0):
        hidden = torch.tanh(apply(torch.cat([x, hidden], -1)))
        outputs.append(hidden)
    if skip_last:  # the last step's output feeds nothing: its backward never runs
        outputs = outputs[:-1]
    return torch.stack(outputs).pow(2).sum()


def test_gradients_match_plain_autograd() -> None:
    torch.manual_seed(0)
    inputs = torch.randn(7, 3, 5, requires_grad=True)
    base = torch.randn(6, 11, requires_grad=True)
    for skip_last in (False, True):
        grads = []
        for shared in (False, True):
            weight = base * 0.5  # a non-leaf weight, as the decoder's merged matrices are
            loss = _recurrence(weight, inputs, shared, skip_last)
            grads.append(torch.autograd.grad(loss, (base, inputs)))
        for plain, deferred in zip(*grads):
            torch.testing.assert_close(deferred, plain, rtol=1e-5, atol=1e-6)


def test_plain_linear_without_autograd() -> None:
    weight = torch.randn(4, 3)
    x = torch.randn(2, 3)
    with torch.no_grad():
        out = SharedStepWeight(weight.requires_grad_())(x)
    assert torch.equal(out, F.linear(x, weight))
    assert not out.requires_grad


def test_runs_under_bf16_autocast() -> None:
    torch.manual_seed(0)
    inputs = torch.randn(4, 2, 3)
    weight = torch.randn(5, 8, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = _recurrence(weight, inputs, shared=True)
    loss.float().backward()
    reference = weight.detach().clone().requires_grad_()
    _recurrence(reference, inputs, shared=False).backward()
    assert weight.grad.dtype == torch.float32
    torch.testing.assert_close(weight.grad, reference.grad, rtol=0.1, atol=0.1)
