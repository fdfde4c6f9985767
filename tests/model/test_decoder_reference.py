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
        n_mels=6,
        reduction_factor=reduction_factor,
        memory_dim=12,
        prenet_dim=8,
        prenet_dropout=5 * dropout,
        prenet_dropout_at_inference=False,
        attention_rnn_dim=16,
        decoder_rnn_dim=20,
        attention=attention,
        attention_location=True,
        attention_dim=8,
        location_filters=4,
        location_kernel_size=5,
        attention_dropout=dropout,
        decoder_dropout=dropout,
        decoder_dropout_recurrent=False,
    ).eval()


def _inputs(reduction_factor: int):
    g = torch.Generator().manual_seed(1)
    memory = torch.randn(3, 7, 12, generator=g)
    mask = torch.arange(7)[None, :] >= torch.tensor([7, 5, 3])[:, None]
    return memory, mask, torch.randn(3, 4 * reduction_factor, 6, generator=g)


@pytest.mark.parametrize(
    "reduction_factor,attention", [(1, "location_sensitive"), (3, "location_sensitive"), (2, "forward")]
)
def test_teacher_forced_pass_matches_the_textbook_steps(reduction_factor, attention) -> None:
    decoder = _decoder(reduction_factor, attention)
    memory, mask, mel = _inputs(reduction_factor)
    expected = reference_teacher_forcing(decoder, memory, mask, mel)
    for got in (
        decoder(memory, mask, mel),
        decoder(memory.requires_grad_(True), mask, mel),
    ):  # plain, and building a graph
        for name, a, b in zip(expected._fields, expected, got):
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6, msg=name)


def test_gradients_match_the_textbook_steps() -> None:
    decoder = _decoder(2, dropout=0.0).train()  # training mode (the graphs serve training passes only), no dropout
    grads = []
    for run in (
        lambda *x: reference_teacher_forcing(decoder, *x),
        decoder,
        GraphedDecoder(decoder, recorder=_EagerRecorder),
    ):
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


def _training_decoder(recurrent: bool) -> Decoder:
    torch.manual_seed(0)
    return Decoder(
        n_mels=6,
        reduction_factor=1,
        memory_dim=12,
        prenet_dim=8,
        prenet_dropout=0.0,
        prenet_dropout_at_inference=False,
        attention_rnn_dim=16,
        decoder_rnn_dim=20,
        attention="location_sensitive",
        attention_location=True,
        attention_dim=8,
        location_filters=4,
        location_kernel_size=5,
        attention_dropout=0.2,
        decoder_dropout=0.3,
        decoder_dropout_recurrent=recurrent,
    ).train()


def test_recurrent_decoder_dropout_feeds_each_dropped_output_back_as_the_state() -> None:
    memory, mask, mel = _inputs(1)
    recurrent, fused = _training_decoder(True), _training_decoder(False)
    torch.manual_seed(5)
    out = recurrent(memory, mask, mel)
    # The same pass by hand: masks drawn as forward draws them, each step's dropped decoder
    # output carried to the next step (Decoder.step keeps it in the state).
    torch.manual_seed(5)
    steps, batch = mel.shape[1], mel.shape[0]
    att_masks = torch.empty(steps, batch, 16).bernoulli_(0.8) / 0.8
    dec_masks = torch.empty(steps, batch, 20).bernoulli_(0.7) / 0.7
    attention_memory = recurrent.attention.prepare(memory, mask)
    cells = recurrent.training_cells()
    gates = cells.prenet_gates(recurrent.prenet(torch.cat([mel.new_zeros(batch, 1, 6), mel[:, :-1]], 1)))
    state = recurrent.initial_state(memory, attention_memory)
    frames = []
    for s in range(steps):
        frame, _, state = recurrent.step(gates[:, s], state, attention_memory, cells, (att_masks[s], dec_masks[s]))
        assert bool((state.decoder_hidden[dec_masks[s] == 0] == 0).all())  # the dropped units are the next step's zeros
        frames.append(frame)
    torch.testing.assert_close(out.mel, torch.stack(frames, 1), rtol=1e-5, atol=1e-6)
    out.mel.sum().backward()
    assert recurrent.decoder_rnn.weight_hh.grad is not None
    # The one-call LSTM drops only the outputs: with the same masks, another function in training ...
    torch.manual_seed(5)
    assert not torch.allclose(fused(memory, mask, mel).mel, out.mel, atol=1e-4)
    # ... and the same one without dropout.
    torch.testing.assert_close(recurrent.eval()(memory, mask, mel).mel, fused.eval()(memory, mask, mel).mel)
