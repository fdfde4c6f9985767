"""Every fast path of the decoder against its textbook form (gst_tts/model/decoder_reference.py)."""

import pytest
import torch

from gst_tts.model.decoder import Decoder, DecoderState
from gst_tts.model.decoder_reference import reference_step, reference_teacher_forcing
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


def _states(decoder: Decoder, memory: torch.Tensor, attention_memory) -> DecoderState:
    """A state from a few textbook steps on random frames: every field away from its initial zeros."""
    g = torch.Generator().manual_seed(2)
    state = decoder.initial_state(memory, attention_memory)
    for _ in range(3):
        _, _, state = reference_step(decoder, decoder.prenet(torch.randn(3, 6, generator=g)), state, attention_memory)
    return state


@pytest.mark.parametrize("backend", ["training", "inference", "int8"])
@pytest.mark.parametrize("attention", ["location_sensitive", "dynamic_convolution"])
def test_each_cells_backend_steps_like_the_textbook_step(backend, attention) -> None:
    """Decoder.step on each cells backend, from the same state and frame, is the textbook step
    (int8: within its quantization error)."""
    decoder = _decoder(2, attention)
    memory, mask, _ = _inputs(2)
    attention_memory = decoder.attention.prepare(memory, mask)
    state = _states(decoder, memory, attention_memory)
    prenet_out = decoder.prenet(torch.randn(3, 6, generator=torch.Generator().manual_seed(3)))
    expected = reference_step(decoder, prenet_out, state, attention_memory)
    if backend == "training":
        cells = decoder.training_cells()
        got = decoder.step(cells.prenet_gates(prenet_out), state, attention_memory, cells)
    else:
        decoder.set_int8_inference(backend == "int8")
        with torch.no_grad():
            cells = decoder.pass_cells(memory)
            got = decoder.step(cells.prenet_gates(prenet_out), state, attention_memory, cells)
    tolerance = dict(rtol=0.05, atol=0.02) if backend == "int8" else dict(rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got[0], expected[0], **tolerance)
    torch.testing.assert_close(got[1], expected[1], **tolerance)
    for name, a, b in zip(DecoderState._fields, expected[2], got[2]):
        if name != "attention_state":
            torch.testing.assert_close(b, a, **tolerance, msg=name)


@pytest.mark.parametrize("int8", [False, True])
def test_inference_steps_match_the_textbook_steps(int8) -> None:
    """Decoder.step (synthesis) fed the targets is the textbook step; int8 weights stay close."""
    decoder = _decoder(1)
    decoder.set_int8_inference(int8)
    memory, mask, mel = _inputs(1)
    expected = reference_teacher_forcing(decoder, memory, mask, mel)
    with torch.no_grad():
        attention_memory = decoder.attention.prepare(memory, mask)
        cells = decoder.pass_cells(memory)
        state = decoder.initial_state(memory, attention_memory)
        frame, frames = mel.new_zeros(3, 6), []
        for s in range(mel.shape[1]):
            out, _, state = decoder.step(cells.prenet_gates(decoder.prenet(frame)), state, attention_memory, cells)
            frames.append(out)
            frame = mel[:, s]
    tolerance = dict(rtol=0.05, atol=0.02) if int8 else dict(rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(torch.stack(frames, 1), expected.mel, **tolerance)
