"""The decoder's step in its textbook form: the reference its backends and fast paths are tested against.

One step is what Tacotron 2 (Shen et al. 2018) and torchaudio's ``Tacotron2`` decoder write: the
prenet frame and the previous context into the attention LSTM cell, its output into the attention,
the attention LSTM's output and the new context into the decoder LSTM cell, its output and the
context into the frame and stop projections. No merged weights, no work moved out of the loop,
no dropout (the reference is the function without its noise: compare with modules in eval mode).

What it checks (tests/model/test_decoder_reference.py):

* the cells backends of :meth:`Decoder.step` (:mod:`gst_tts.model.decoder_cells`: merged float
  weights for training and for inference, int8 for CPU inference), step by step from the same states;
* :meth:`Decoder.forward` (training, every device): the prenet and its share of the attention
  LSTM's gates for all steps at once, and the decoder LSTM and the projections run once over all
  steps after the attention loop; its outputs and every gradient;
* :meth:`Decoder.step` on the inference backends (float and int8) in a loop fed the targets;
* :class:`~gst_tts.model.graphed_decoder.GraphedDecoder`: :meth:`Decoder.forward` as CUDA graphs.
"""

from __future__ import annotations

from typing import Any

import torch

from gst_tts.model.decoder import Decoder, DecoderOutput, DecoderState

__all__ = ["reference_step", "reference_teacher_forcing"]


def reference_step(
    decoder: Decoder, prenet_out: torch.Tensor, state: DecoderState, attention_memory: Any
) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
    """What :meth:`Decoder.step` computes without dropout masks, in textbook form.

    Args:
        decoder: the decoder whose modules to run.
        prenet_out: ``(batch, prenet_dim)``, the previous frame through the prenet.
        state: the previous :class:`DecoderState`.
        attention_memory: from ``decoder.attention.prepare``.

    Returns:
        ``frames (batch, r * n_mels)``, ``stop_logit (batch,)`` and the new state.
    """
    att_h, att_c = decoder.attention_rnn(
        torch.cat([prenet_out, state.context], -1), (state.attention_hidden, state.attention_cell)
    )
    context, weights, attention_state = decoder.attention.step(att_h, state.attention_state, attention_memory)
    dec_h, dec_c = decoder.decoder_rnn(torch.cat([att_h, context], -1), (state.decoder_hidden, state.decoder_cell))
    projection_in = torch.cat([dec_h, context], -1)
    new_state = DecoderState(att_h, att_c, dec_h, dec_c, weights, attention_state, context)
    return decoder.mel_projection(projection_in), decoder.stop_projection(projection_in).squeeze(-1), new_state


def reference_teacher_forcing(
    decoder: Decoder, memory: torch.Tensor, padding_mask: torch.Tensor | None, mel: torch.Tensor
) -> DecoderOutput:
    """What :meth:`Decoder.forward` computes with its dropout off, one textbook step at a time.

    Args:
        decoder: the decoder whose modules to run (its prenet dropout follows its mode: use eval).
        memory: ``(batch, symbols, memory_dim)``.
        padding_mask: ``(batch, symbols)``, True at padding, or None.
        mel: ``(batch, frames, n_mels)`` targets, frames a multiple of the reduction factor.
    """
    batch, frames, n_mels = mel.shape
    r = decoder.reduction_factor
    attention_memory = decoder.attention.prepare(memory, padding_mask)
    state = decoder.initial_state(memory, attention_memory)
    frame = mel.new_zeros(batch, n_mels)
    mels, stops, alignments = [], [], []
    for s in range(frames // r):
        frames_out, stop, state = reference_step(decoder, decoder.prenet(frame), state, attention_memory)
        mels.append(frames_out)
        stops.append(stop)
        alignments.append(state.attention_weights)
        frame = mel[:, (s + 1) * r - 1]  # teacher forcing: the step's last target frame is the next input
    return DecoderOutput(
        torch.stack(mels, 1).view(batch, frames, n_mels), torch.stack(stops, 1), torch.stack(alignments, 1)
    )
