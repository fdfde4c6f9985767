"""The decoder's two LSTM cells as a backend of its step: where the step's own speed tricks live.

:meth:`~gst_tts.model.decoder.Decoder.step` is written once, in the model's terms (attention cell,
attention, decoder cell, projections); how the two cells compute their gates is the backend's
business. The backends, each tested against the textbook form
(:func:`~gst_tts.model.decoder_reference.reference_step`, ``nn.LSTMCell`` calls as torchaudio
writes them; tests/model/test_decoder_reference.py):

* :meth:`MergedCells.for_training`: the float backend of training passes on every device. Each
  cell's input and recurrent weights sit side by side, so a step does one matrix product per cell;
  the prenet's share of the attention cell's gates is a map of its own, which teacher forcing
  applies to all steps at once outside the loop; the merged weights' gradients are formed once
  after the loop (:class:`~gst_tts.model.shared_weight.SharedStepWeight`).
* :meth:`MergedCells.for_inference`: the same function for passes with autograd off, the prenet's
  weight as a contiguous copy (a matrix product at batch 1 reads it ~1.5x faster on a CPU than the strided slice).
* :meth:`MergedCells.int8`: the inference backend's matrices quantized per output row, for CPU
  synthesis (:class:`~gst_tts.model.int8_weight.Int8StepWeight`, ~3x faster per step at paper sizes).

The CUDA training path uses the training backend; what makes it fast on a GPU is outside the cells
(the decoder LSTM run once over all steps in :meth:`Decoder.forward`, and CUDA graphs in
:mod:`gst_tts.model.graphed_decoder`).
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F

from gst_tts.model.int8_weight import Int8StepWeight
from gst_tts.model.shared_weight import SharedStepWeight

#: A map ``(..., in_features)`` → ``(..., out_features)``.
Affine = Callable[[torch.Tensor], torch.Tensor]
#: An LSTM cell's ``(hidden, cell)``, each ``(batch, units)``.
CellState = tuple[torch.Tensor, torch.Tensor]


class MergedCells:
    """The attention and decoder LSTM cells with their input and recurrent weights merged.

    Built with :meth:`for_training` or :meth:`for_inference` once per pass, or :meth:`int8` once
    for many passes (``Decoder.set_int8_inference``): it holds the weights as they were then.

    Args:
        prenet_gates: ``(..., prenet_dim)`` → ``(..., 4 * attention_rnn_dim)``: the prenet's share
            of the attention cell's gates, both its biases included.
        attention_recurrent: ``(batch, memory_dim + attention_rnn_dim)`` → ``(batch, 4 *
            attention_rnn_dim)``: the previous context and hidden state's share of those gates.
        decoder_gates: ``(batch, attention_rnn_dim + memory_dim + decoder_rnn_dim)`` → ``(batch, 4 *
            decoder_rnn_dim)``: the decoder cell's gates, biases included; None in a pass that runs
            the decoder LSTM outside the step loop (teacher forcing).
    """

    def __init__(self, prenet_gates: Affine, attention_recurrent: Affine, decoder_gates: Affine | None) -> None:
        self.prenet_gates = prenet_gates
        self.attention_recurrent = attention_recurrent
        self.decoder_gates = decoder_gates

    @classmethod
    def for_training(
        cls, attention_rnn: nn.LSTMCell, decoder_rnn: nn.LSTMCell, *, prenet_dim: int, decoder_cell: bool = True
    ) -> MergedCells:
        """The cells' current weights, differentiable (any device, any dtype).

        ``decoder_cell=False`` leaves the decoder cell out: teacher forcing runs that LSTM outside
        the step loop.
        """
        att = attention_rnn
        return cls(
            partial(F.linear, weight=att.weight_ih[:, :prenet_dim], bias=att.bias_ih + att.bias_hh),
            _merged_attention_recurrent(att, prenet_dim, SharedStepWeight),
            _merged_decoder_gates(decoder_rnn, SharedStepWeight) if decoder_cell else None,
        )

    @classmethod
    def for_inference(
        cls, attention_rnn: nn.LSTMCell, decoder_rnn: nn.LSTMCell, *, prenet_dim: int, decoder_cell: bool = True
    ) -> MergedCells:
        """:meth:`for_training`'s function for a pass with autograd off: the prenet's weight a contiguous copy."""
        att = attention_rnn
        return cls(
            _Biased(SharedStepWeight(att.weight_ih[:, :prenet_dim].contiguous()), att.bias_ih + att.bias_hh),
            _merged_attention_recurrent(att, prenet_dim, SharedStepWeight),
            _merged_decoder_gates(decoder_rnn, SharedStepWeight) if decoder_cell else None,
        )

    @classmethod
    def int8(cls, attention_rnn: nn.LSTMCell, decoder_rnn: nn.LSTMCell, *, prenet_dim: int) -> MergedCells:
        """:meth:`for_inference`'s matrices in int8 for float32 CPU inputs, biases in float32.

        A frozen copy: build it again after the weights change.

        Raises:
            RuntimeError: this PyTorch build has no quantized CPU engine.
        """
        att = attention_rnn
        with torch.no_grad():
            return cls(
                _Biased(Int8StepWeight(att.weight_ih[:, :prenet_dim]), (att.bias_ih + att.bias_hh).float().cpu()),
                _merged_attention_recurrent(att, prenet_dim, Int8StepWeight),
                _merged_decoder_gates(decoder_rnn, Int8StepWeight, bias_dtype=torch.float32),
            )

    def attention_cell(self, prenet_gates: torch.Tensor, context: torch.Tensor, state: CellState) -> CellState:
        """The attention LSTM cell on this step's ``prenet_gates`` (from :attr:`prenet_gates`) and the
        previous ``context (batch, memory_dim)``: its new ``(hidden, cell)``."""
        hidden, cell = state
        return lstm_update(prenet_gates + self.attention_recurrent(torch.cat([context, hidden], -1)), cell)

    def decoder_cell(self, query: torch.Tensor, context: torch.Tensor, state: CellState) -> CellState:
        """The decoder LSTM cell on the attention cell's output ``query`` and this step's
        ``context``: its new ``(hidden, cell)``."""
        if self.decoder_gates is None:
            raise RuntimeError("these cells were built without the decoder cell (decoder_cell=False)")
        hidden, cell = state
        return lstm_update(self.decoder_gates(torch.cat([query, context, hidden], -1)), cell)


def lstm_update(gates: torch.Tensor, cell: torch.Tensor) -> CellState:
    """LSTM cell nonlinearity on precomputed gates (PyTorch's i, f, g, o order): ``(hidden, cell)``."""
    i, f, g, o = gates.chunk(4, dim=1)
    cell = torch.sigmoid(f) * cell + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cell), cell


def _merged_attention_recurrent(attention_rnn: nn.LSTMCell, prenet_dim: int, weight_kind: type) -> Affine:
    """``[context, hidden]`` → the rest of the attention cell's gates (no bias: the prenet's map has both)."""
    att = attention_rnn
    return weight_kind(torch.cat([att.weight_ih[:, prenet_dim:], att.weight_hh], dim=1))


def _merged_decoder_gates(
    decoder_rnn: nn.LSTMCell, weight_kind: type, *, bias_dtype: torch.dtype | None = None
) -> Affine:
    weight = weight_kind(torch.cat([decoder_rnn.weight_ih, decoder_rnn.weight_hh], dim=1))
    bias = decoder_rnn.bias_ih + decoder_rnn.bias_hh
    if bias_dtype is not None:
        bias = bias.detach().to(bias_dtype).cpu()
    return _Biased(weight, bias)


class _Biased:
    """``x ↦ weight(x) + bias``: the bias added after the product (a class, so that a model holding
    it still pickles)."""

    def __init__(self, weight: Affine, bias: torch.Tensor) -> None:
        self.weight = weight
        self.bias = bias

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight(x) + self.bias
