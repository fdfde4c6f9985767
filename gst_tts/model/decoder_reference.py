"""The decoder's teacher-forced pass in its textbook form: the reference its fast paths are tested against.

One step is what Tacotron 2 (Shen et al. 2018) and torchaudio's ``Tacotron2`` decoder write: the
prenet frame and the previous context into the attention LSTM cell, its output into the attention,
the attention LSTM's output and the new context into the decoder LSTM cell, its output and the
context into the frame and stop projections. No merged weights, no work moved out of the loop,
no dropout (the reference is the function without its noise: compare with modules in eval mode).

The fast paths it checks (tests/model/test_decoder_reference.py):

* :meth:`Decoder.forward` (training, every device): the prenet and its share of the attention
  LSTM's gates for all steps at once, the merged recurrent weight with its gradient formed once
  (:class:`~gst_tts.model.shared_weight.SharedStepWeight`), and the decoder LSTM and the
  projections run once over all steps after the attention loop;
* :meth:`Decoder.infer_steps` through :meth:`Decoder.step` (synthesis), with int8 recurrent weights on
  the CPU when turned on (:meth:`Decoder.set_int8_inference`);
* :class:`~gst_tts.model.graphed_decoder.GraphedDecoder`: :meth:`Decoder.forward` as CUDA graphs.
"""

from __future__ import annotations

import torch

from gst_tts.model.decoder import Decoder, DecoderOutput

__all__ = ["reference_teacher_forcing"]


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
    att_h, att_c, dec_h, dec_c, _, attention_state, context = state
    frame = mel.new_zeros(batch, n_mels)
    mels, stops, alignments = [], [], []
    for s in range(frames // r):
        att_h, att_c = decoder.attention_rnn(torch.cat([decoder.prenet(frame), context], -1), (att_h, att_c))
        context, weights, attention_state = decoder.attention.step(att_h, attention_state, attention_memory)
        dec_h, dec_c = decoder.decoder_rnn(torch.cat([att_h, context], -1), (dec_h, dec_c))
        projection_in = torch.cat([dec_h, context], -1)
        mels.append(decoder.mel_projection(projection_in))
        stops.append(decoder.stop_projection(projection_in).squeeze(-1))
        alignments.append(weights)
        frame = mel[:, (s + 1) * r - 1]  # teacher forcing: the step's last target frame is the next input
    return DecoderOutput(torch.stack(mels, 1).view(batch, frames, n_mels), torch.stack(stops, 1), torch.stack(alignments, 1))
