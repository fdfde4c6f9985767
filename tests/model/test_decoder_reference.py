"""Every fast path of the decoder against its textbook form (gst_tts/model/decoder_reference.py)."""

import pytest
import torch

from gst_tts.model.decoder import Decoder
from gst_tts.model.decoder_reference import reference_teacher_forcing
from gst_tts.model.graphed_decoder import GraphedDecoder, _EagerRecorder


def _decoder(reduction_factor: int, attention: str = "location_sensitive", dropout: float = 0.1) -> Decoder:
    """In eval mode: no dropout anywhere, so every path computes one function."""
    torch.manual_seed(0)
    return Decoder(
        n_mels=6, reduction_factor=reduction_factor, memory_dim=12, prenet_dim=8, prenet_dropout=5 * dropout,
        prenet_dropout_at_inference=False, attention_rnn_dim=16, decoder_rnn_dim=20, attention=attention,
        attention_location=True, attention_dim=8, location_filters=4, location_kernel_size=5, attention_dropout=dropout,
        decoder_dropout=dropout,
    ).eval()


def _inputs(reduction_factor: int):
    g = torch.Generator().manual_seed(1)
    memory = torch.randn(3, 7, 12, generator=g)
    mask = torch.arange(7)[None, :] >= torch.tensor([7, 5, 3])[:, None]
    return memory, mask, torch.randn(3, 4 * reduction_factor, 6, generator=g)


@pytest.mark.parametrize("reduction_factor,attention", [(1, "location_sensitive"), (3, "location_sensitive"), (2, "forward")])
def test_teacher_forced_pass_matches_the_textbook_steps(reduction_factor, attention) -> None:
    decoder = _decoder(reduction_factor, attention)
    memory, mask, mel = _inputs(reduction_factor)
    expected = reference_teacher_forcing(decoder, memory, mask, mel)
    for got in (decoder(memory, mask, mel), decoder(memory.requires_grad_(True), mask, mel)):  # plain, and building a graph
        for name, a, b in zip(expected._fields, expected, got):
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6, msg=name)


def test_gradients_match_the_textbook_steps() -> None:
    decoder = _decoder(2, dropout=0.0).train()  # training mode (the graphs serve training passes only), no dropout
    grads = []
    for run in (lambda *x: reference_teacher_forcing(decoder, *x), decoder, GraphedDecoder(decoder, recorder=_EagerRecorder)):
        decoder.zero_grad(set_to_none=True)
        memory, mask, mel = _inputs(2)
        out = run(memory.requires_grad_(True), mask, mel)
        (out.mel.square().sum() + out.stop_logits.sum() + out.alignments[..., 0].sum()).backward()
        grads.append([memory.grad] + [p.grad for p in decoder.parameters()])
    for fast in grads[1:]:
        for a, b in zip(grads[0], fast):
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("int8", [False, True])
def test_inference_steps_match_the_textbook_steps(int8) -> None:
    """Decoder.step (synthesis) fed the targets is the textbook step; int8 weights stay close."""
    decoder = _decoder(1)
    decoder.set_int8_inference(int8)
    memory, mask, mel = _inputs(1)
    expected = reference_teacher_forcing(decoder, memory, mask, mel)
    with torch.no_grad():
        attention_memory = decoder.attention.prepare(memory, mask)
        weights = decoder._pass_weights(memory)
        state = decoder.initial_state(memory, attention_memory)
        frame, frames = mel.new_zeros(3, 6), []
        for s in range(mel.shape[1]):
            out, _, state = decoder.step(decoder.prenet_gates(decoder.prenet(frame)), state, attention_memory, weights)
            frames.append(out)
            frame = mel[:, s]
    tolerance = dict(rtol=0.05, atol=0.02) if int8 else dict(rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(torch.stack(frames, 1), expected.mel, **tolerance)
