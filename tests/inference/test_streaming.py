"""Streaming synthesis (gst_tts.inference.streaming, ``Synthesizer.stream``) on a tiny random-weight
checkpoint: the joined stream against one-shot synthesis, chunks before decoding ends, bad input.

The random model never stops on its token, so decoding is bounded by ``max_seconds``.
"""

from __future__ import annotations

from conftest import seconds_for_steps, write_tiny_checkpoint
import numpy as np
import pytest
import torch

from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator
from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder
from gst_tts.audio.vocoders.spectral import MagnitudeEstimator, SpectralVocoder
from gst_tts.errors import GstTtsError, TextError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.stream_windows import VocoderWindows
from gst_tts.inference.streaming import HIFIGAN_STREAM_TOLERANCE
from gst_tts.inference.style import Style
from gst_tts.inference.synthesizer import Synthesizer

STEPS = 32
DECODING = DecodingConfig(max_seconds=seconds_for_steps(STEPS))
TEXT = "Streaming speech, one chunk at a time."


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Synthesizer:
    path = write_tiny_checkpoint(tmp_path_factory.mktemp("stream") / "tiny.pt")
    return Synthesizer.from_checkpoint(path, device="cpu")


@pytest.fixture(scope="module")
def hifigan() -> HiFiGANVocoder:
    """A small random HiFi-GAN (hop 256, the published residual blocks): deterministic, so its
    streamed samples can be compared with its one-shot ones. Torch's default initialisation, not
    the published small one, so that far frames weigh enough for a short context to show."""
    torch.manual_seed(0)
    generator = HiFiGANGenerator(
        upsample_rates=(8, 8, 4), upsample_kernel_sizes=(16, 16, 8), upsample_initial_channel=32
    )
    for module in generator.modules():
        if isinstance(module, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)):
            module.reset_parameters()
    return HiFiGANVocoder(generator, sample_rate=22050)


@pytest.fixture
def with_vocoder(synth):
    """Swap the synthesizer's vocoder for a test; the Griffin-Lim one is put back after it."""
    before = synth.vocoder

    def use(vocoder):
        synth.vocoder = vocoder
        return synth

    yield use
    synth.vocoder = before


def test_streamed_postnet_mel_is_the_one_shot_mel_with_dropout_on(synth):
    blocks = list(synth.stream(TEXT, seed=7, decoding=DECODING, vocode=False))
    one_shot = synth.synthesize(TEXT, seed=7, decoding=DECODING, vocode=False)
    assert synth.model.decoder.prenet.dropout_at_inference  # the seed, not a switched-off dropout, makes them equal
    assert len(blocks) > 3  # windows, not one block at the end
    joined = np.concatenate(blocks)
    assert joined.shape == one_shot.mel.shape == (STEPS * synth.model.reduction_factor, 80)
    np.testing.assert_allclose(joined, one_shot.mel, rtol=0, atol=1e-5)
    other_seed = np.concatenate(list(synth.stream(TEXT, seed=8, decoding=DECODING, vocode=False)))
    assert np.abs(other_seed - one_shot.mel).max() > 1e-2  # the comparison can fail: dropout does change the mel


def test_hifigan_stream_equals_one_shot_audio_and_its_reach_is_needed(synth, hifigan, with_vocoder):
    synth = with_vocoder(hifigan)
    one_shot = synth.synthesize(TEXT, seed=3, decoding=DECODING).audio
    chunks = list(synth.stream(TEXT, seed=3, decoding=DECODING, chunk_frames=10))
    joined = np.concatenate(chunks)
    assert joined.shape == one_shot.shape
    assert np.abs(joined - one_shot).max() <= HIFIGAN_STREAM_TOLERANCE
    assert [len(c) for c in chunks[:-1]] == [3 * 256] + [10 * 256] * (len(chunks) - 2)  # a short first one
    # A short context (2 frames): the kept samples are no longer the whole mel's, so the test can fail.
    mel = synth.synthesize(TEXT, seed=3, decoding=DECODING, vocode=False).mel
    windows = VocoderWindows(hifigan, hop_length=256, chunk_frames=10, context=2, crossfade=0)
    pieces = windows.push(mel[:-20], final=False)
    assert len(pieces) > 1  # frames for several chunks in one push: all of them come out
    pieces += windows.push(mel[-20:], final=True)
    short = np.concatenate(pieces)
    assert short.shape == one_shot.shape and np.abs(short - one_shot).max() > 10 * HIFIGAN_STREAM_TOLERANCE


def test_first_chunk_comes_before_decoding_ends(synth):
    steps = []
    handle = synth.model.decoder.stop_projection.register_forward_hook(lambda *_: steps.append(1))
    try:
        stream = synth.stream(TEXT, seed=1, decoding=DECODING, chunk_frames=12)
        first = next(stream)
        steps_at_first = len(steps)
        rest = list(stream)
    finally:
        handle.remove()
    assert first.dtype == np.float32 and first.size == 4 * 256
    # 4 frames, the vocoder's 8 and the postnet's 4 of context (2 convolutions of kernel 5), 2 a step;
    # the postnet runs once 8 frames are ready: 20 frames, 10 of the 40 steps.
    assert len(steps) == STEPS and steps_at_first == 10
    assert len(rest) >= 3


def _spectral(audio_config) -> SpectralVocoder:
    torch.manual_seed(0)
    estimator = MagnitudeEstimator(
        channels=16, kernel_size=3, dilations=(1, 2)
    )  # untrained: the pseudo-inverse's magnitude
    return SpectralVocoder(estimator, audio_config=audio_config, n_iter=4)


@pytest.mark.parametrize("kind", ["griffin-lim", "spectral"])
def test_phase_building_vocoders_stream_the_one_shot_length_and_level_and_leave_the_callers_rng(
    synth, with_vocoder, kind
):
    if kind == "spectral":
        synth = with_vocoder(_spectral(synth.audio_config))
    one_shot = synth.synthesize(TEXT, seed=2, decoding=DECODING).audio
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    stream = synth.stream(TEXT, seed=2, decoding=DECODING)
    chunks = [next(stream)]
    drawn = torch.rand(3)  # between chunks the caller's RNG is its own
    chunks += list(stream)
    assert torch.equal(drawn, expected)
    joined = np.concatenate(chunks)
    assert len(chunks) >= 3 and joined.shape == one_shot.shape and np.isfinite(joined).all()
    if kind == "griffin-lim":  # scaled by the loudest window so far: the one-shot peak at most
        assert 0.5 < np.abs(joined).max() <= GriffinLimVocoder.output_peak + 1e-6
    else:
        assert np.abs(joined).max() == pytest.approx(np.abs(one_shot).max(), rel=0.2)

    # Same spectrum, another phase: the frame energies agree (in dB) where the samples need not.
    def level(audio):
        return 10 * np.log10(np.square(audio[: len(audio) // 256 * 256].reshape(-1, 256)).mean(1) + 1e-8)

    assert np.median(np.abs(level(joined) - level(one_shot))) < 2.0


def test_split_text_streams_its_chunks_in_order_with_the_pause(synth, hifigan, with_vocoder, monkeypatch):
    synth = with_vocoder(hifigan)
    # Off, so the one-shot batch of chunks draws no masks the chunk-by-chunk stream would draw otherwise.
    monkeypatch.setattr(synth.model.decoder.prenet, "dropout_at_inference", False)
    text = "The first sentence is here. And the second one follows it."
    options = dict(decoding=DECODING, max_chunk_chars=30, pause_s=0.1)
    one_shot = synth.synthesize(text, **options)
    assert len(one_shot.chunks) == 2
    chunks = list(synth.stream(text, **options))
    pause = int(round(0.1 * 22050))
    assert any(c.size == pause and not c.any() for c in chunks)
    joined = np.concatenate(chunks)
    assert joined.shape == one_shot.audio.shape
    assert np.abs(joined - one_shot.audio).max() <= HIFIGAN_STREAM_TOLERANCE


@pytest.mark.parametrize(
    "call, error, message",
    [
        (dict(text=""), TextError, "empty"),
        (dict(text="?!"), TextError, "nothing to speak"),
        (dict(text=["two", "texts"]), TextError, "one text"),
        (dict(text="ok", chunk_frames=0), GstTtsError, "chunk_frames"),
        (dict(text="ok", pause_s=-1), GstTtsError, "pause_s"),
        (dict(text="ok", seed=2**70), GstTtsError, "seed"),
        (dict(text="ok", style=Style(weights={99: 1.0})), GstTtsError, "99"),
        (dict(text="ok", style={"weights": {0: 1.0}}), GstTtsError, "Style"),
    ],
)
def test_bad_input_is_refused_when_the_stream_is_made(synth, call, error, message):
    steps = []
    handle = synth.model.decoder.stop_projection.register_forward_hook(lambda *_: steps.append(1))
    try:
        with pytest.raises(error, match=message):
            synth.stream(**call)  # no iteration: refused before any chunk, as synthesize refuses it
    finally:
        handle.remove()
    assert steps == []
