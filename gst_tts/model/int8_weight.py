"""Int8 recurrent weights for CPU inference.

At batch 1 a decoder step is bound by reading its two merged LSTM weight matrices from memory
(about 90% of a step's multiply-adds at Tacotron 2 sizes). Stored as int8 with one scale per
output row they are a quarter of the bytes, and PyTorch's dynamic int8 kernel quantizes the
activations per call, so a step runs about 3x faster on a CPU.
"""

from __future__ import annotations

import warnings

import torch


class Int8StepWeight:
    """``weight`` ``(out_features, in_features)`` quantized per output row and prepacked.

    Call it like ``F.linear(x, weight)``; ``x`` is ``(batch, in_features)`` float32 on the CPU.
    A frozen copy: quantize again after the weight changes.

    Raises:
        RuntimeError: this PyTorch build has no quantized CPU engine.
    """

    def __init__(self, weight: torch.Tensor) -> None:
        if not has_quantized_engine():
            raise RuntimeError(
                "int8 inference needs a quantized CPU engine (fbgemm/x86/qnnpack); this PyTorch has none"
            )
        w = weight.detach().float().cpu().contiguous()
        scales = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-12).double()
        zero_points = torch.zeros(w.shape[0], dtype=torch.long)
        with warnings.catch_warnings():
            # PyTorch marks quantized tensors deprecated; its dynamic int8 kernel is still the
            # fastest CPU path (weight-only int8 matmul measured 3-50x slower here).
            warnings.simplefilter("ignore", UserWarning)
            quantized = torch.quantize_per_channel(w, scales, zero_points, 0, torch.qint8)
            self._packed = torch.ops.quantized.linear_prepack(quantized, None)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        # reduce_range=True: 7-bit activations avoid the int16 overflow of the x86 kernels.
        return torch.ops.quantized.linear_dynamic(x.float().contiguous(), self._packed, True)


def has_quantized_engine() -> bool:
    """Whether this PyTorch build can run :class:`Int8StepWeight` (a quantized CPU engine)."""
    return _quantized_engine() != "none"


def _quantized_engine() -> str:
    return torch.backends.quantized.engine
