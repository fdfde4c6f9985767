"""Tempo from the reference (gst_tts.inference.tempo): the gain, the retiming, whose tempo a style
asks for, and a synthesis retimed to its reference's (a tiny random-weight model)."""

from __future__ import annotations

import logging
import math

from conftest import seconds_for_steps, write_tiny_checkpoint
import numpy as np
import pytest
import soundfile as sf

from gst_tts.analysis.prosody import articulation_rate
from gst_tts.analysis.speech_rate import LETTERS_PER_NUCLEUS
from gst_tts.errors import GstTtsError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.results import DecodedChunk
from gst_tts.inference.style import Style
from gst_tts.inference.style_spec import ResolvedStyle, TempoTarget, style_tempo
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.inference.tempo import GAIN_LIMITS, retime_text, retimed, tempo_gain, text_rate

FRAME_S = 256 / 22050
# The random model never stops on its token: it decodes to this bound, so its own rate is slow and a
# reference can only speed it up (a slower tempo is held to the bound).
DECODING = DecodingConfig(max_seconds=seconds_for_steps(96))


def test_the_gain_follows_the_ratio_by_strength_within_its_limits():
    assert tempo_gain(15.0, 10.0) == pytest.approx(1.5)
    assert tempo_gain(15.0, 10.0, 0.5) == pytest.approx(math.sqrt(1.5))
    assert tempo_gain(15.0, 10.0, 0.0) == 1.0
    assert tempo_gain(100.0, 10.0) == GAIN_LIMITS[1] and tempo_gain(1.0, 10.0) == GAIN_LIMITS[0]
    for target, current in [(math.nan, 10.0), (10.0, 0.0), (-1.0, 10.0), (10.0, math.inf)]:
        assert tempo_gain(target, current) == 1.0


def test_retiming_stretches_time_and_keeps_the_shape():
    ramp = np.stack([np.linspace(0.0, 1.0, 100), np.linspace(5.0, -5.0, 100)], axis=1).astype(np.float32)
    faster, slower = retimed(ramp, 2.0), retimed(ramp, 0.8)
    assert faster.shape == (50, 2) and slower.shape == (125, 2) and faster.dtype == np.float32
    for out in (faster, slower):  # a ramp stays a ramp from near one end to near the other
        assert np.all(np.diff(out[:, 0]) > 0) and np.all(np.diff(out[:, 1]) < 0)
        assert out[0, 0] < 0.02 and out[-1, 0] > 0.98
    assert retimed(ramp, 1.0) is ramp


def chunk(text: str, speech_frames: int, rng: np.random.Generator) -> DecodedChunk:
    """A decoded chunk: ``speech_frames`` of speech between 20 silent frames on each side."""
    log_mel = np.full((speech_frames + 40, 8), -11.0, np.float32)
    log_mel[20:-20] = rng.normal(0.0, 0.5, (speech_frames, 8))
    return DecodedChunk(
        text, [1] * (len(text) + 1), log_mel, np.eye(4, dtype=np.float32), np.zeros(4, np.float32), True
    )


def test_a_split_text_is_retimed_by_one_factor_to_the_targets_letter_rate():
    rng = np.random.default_rng(0)
    parts = [chunk("a" * 28, 160, rng), chunk("b" * 4, 60, rng)]  # a short chunk alone would read slow
    rate = text_rate(parts, FRAME_S)
    assert rate == pytest.approx(32 / ((160 + 60) * FRAME_S))
    out = retime_text(parts, TempoTarget(1.25 * rate, 1.0), frame_seconds=FRAME_S, max_frames=[1000, 1000])
    assert [len(p.log_mel) for p in out] == [160, 80] and [p.decoded_frames for p in out] == [200, 100]
    assert [p.tempo_gain for p in out] == [pytest.approx(1.25)] * 2
    assert text_rate(out, FRAME_S) == pytest.approx(1.25 * rate, rel=0.03)
    half = retime_text(parts, TempoTarget(1.25 * rate, 0.5), frame_seconds=FRAME_S, max_frames=[1000, 1000])
    assert half[0].tempo_gain == pytest.approx(math.sqrt(1.25), rel=0.01)
    assert retime_text(parts, None, frame_seconds=FRAME_S, max_frames=[1000, 1000]) == parts


def test_a_slower_tempo_never_stretches_a_chunk_past_its_bound():
    rng = np.random.default_rng(1)
    parts = [chunk("a" * 28, 160, rng), chunk("b" * 28, 160, rng)]
    out = retime_text(
        parts, TempoTarget(0.6 * text_rate(parts, FRAME_S), 1.0), frame_seconds=FRAME_S, max_frames=[300, 220]
    )
    assert [len(p.log_mel) for p in out] == [300, 220]  # 200 / 0.6 = 333 frames asked for, each bound kept


def test_whose_tempo_a_style_asks_for():
    reads = []
    rates = {"slow.wav": 9.0, "fast.wav": 16.0, "music.wav": None, "broken.wav": math.inf, "unused.wav": 99.0}

    def read(ref):
        reads.append(ref)
        return rates[ref]

    assert style_tempo(Style(reference="slow.wav"), read) == (pytest.approx(9.0), 1.0)
    assert style_tempo(Style(reference="fast.wav", strength=0.5), read) == (pytest.approx(16.0), 0.5)
    # A mix: its references' geometric mean by their shares, over those read; a share of 0 is not read.
    target = style_tempo(Style(mix={"slow.wav": 1.0, "fast.wav": 1.0, "unused.wav": 0.0}), read)
    assert target.letters_per_s == pytest.approx(12.0) and target.strength == 1.0 and "unused.wav" not in reads
    assert style_tempo(Style(mix={"fast.wav": 1.0, "music.wav": 3.0, "broken.wav": 1.0}), read) == (
        pytest.approx(16.0),
        1.0,
    )
    reads.clear()
    for style in (
        None,
        Style(),
        Style(weights={1: 1.0}),
        Style(dials={1: 0.5}),
        Style(reference="music.wav"),
        Style(reference="slow.wav", strength=0.0),
    ):
        assert style_tempo(style, read) is None  # the tempo as decoded
    assert reads == ["music.wav"]  # strength 0 reads nothing


# ---------------------------------------------------------------- in synthesis


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    return Synthesizer.from_checkpoint(
        write_tiny_checkpoint(tmp_path_factory.mktemp("tempo") / "tiny.pt"), device="cpu"
    )


def swelling_voice(path, per_second: float, seconds: float = 3.0, rate: int = 22050):
    """A voice swelling ``per_second`` times a second (syllables at that rate), written to ``path``."""
    t = np.arange(int(seconds * rate)) / rate
    voice = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 16))
    sf.write(
        path, (0.2 * voice * (0.05 + 0.95 * (0.5 - 0.5 * np.cos(2 * np.pi * per_second * t)))).astype(np.float32), rate
    )
    return path


def test_a_references_tempo_is_read_off_its_syllables(synth, tmp_path):
    for per_second in (3.0, 5.0):
        read = synth.reference_tempo(swelling_voice(tmp_path / f"{per_second}.wav", per_second))
        assert read == pytest.approx(per_second * LETTERS_PER_NUCLEUS, rel=0.1)


def test_outputs_are_retimed_to_their_references_tempo_by_strength(synth, tmp_path, monkeypatch):
    slow, fast = swelling_voice(tmp_path / "slow.wav", 3.0), swelling_voice(tmp_path / "fast.wav", 6.0)
    text = "Hello there, my friend."
    as_decoded = {
        ref: synth.synthesize(text, reference=ref, transfer_tempo=False, decoding=DECODING, seed=0, vocode=False)
        for ref in (slow, fast)
    }
    decoded_rate = articulation_rate(as_decoded[slow].cleaned_text, as_decoded[slow].mel, FRAME_S)
    reads = []
    rates = {slow: 1.25 * decoded_rate, fast: 1.6 * decoded_rate}
    read = synth.styles.read_reference
    monkeypatch.setattr(
        synth.styles,
        "read_reference",
        lambda ref, **asked: reads.append(ref) or read(ref)._replace(letters_per_s=rates[ref]),
    )

    results = synth.synthesize(
        [text, text, text],
        styles=[Style(reference=slow), Style(reference=fast), Style(reference=fast, strength=0.5)],
        transfer_tempo=True,
        decoding=DECODING,
        seed=0,
        vocode=False,
    )
    assert sorted(map(str, reads)) == [str(fast), str(slow)]  # each reference read once
    for result, ref, wanted in zip(results, (slow, fast, fast), (1.25, 1.6, math.sqrt(1.6))):
        decoded = (
            as_decoded[ref]
            if ref == slow
            else synth.synthesize(
                text,
                reference=ref,
                style_strength=0.5 if wanted < 1.6 else None,
                transfer_tempo=False,
                decoding=DECODING,
                seed=0,
                vocode=False,
            )
        )
        rate = articulation_rate(decoded.cleaned_text, decoded.mel, FRAME_S)
        assert articulation_rate(result.cleaned_text, result.mel, FRAME_S) == pytest.approx(
            float(np.clip(wanted * decoded_rate / rate, *GAIN_LIMITS)) * rate, rel=0.05
        )
        assert result.alignment.shape == decoded.alignment.shape  # the decoder's own steps
        assert result.chunks[0].decoded_frames == decoded.n_frames
        assert result.chunks[0].tempo_gain == pytest.approx(decoded.n_frames / result.n_frames)
    # A caller that read the references itself passes a resolved style with its target, checked.
    weights = synth.styles.resolve(Style(weights={0: 1.0}))

    def given(target, **kwargs):
        return synth.synthesize(
            text, styles=[ResolvedStyle(weights, None, target)], decoding=DECODING, seed=0, vocode=False, **kwargs
        )

    plain = synth.synthesize(text, style_weights={0: 1.0}, decoding=DECODING, seed=0, vocode=False)
    faster = given(TempoTarget(1.6 * decoded_rate, 1.0))
    assert faster.n_frames < 0.8 * plain.n_frames and plain.chunks[0].tempo_gain == 1.0
    assert given(None).n_frames == plain.n_frames
    slower = given(TempoTarget(0.5 * decoded_rate, 1.0))
    assert slower.n_frames == plain.n_frames  # held to the decoding bound it already reached
    for bad, message in [
        (TempoTarget(math.nan, 1.0), "letters_per_s"),
        (TempoTarget(10.0, -1.0), "style strength"),
        ((10.0, 1.0), "TempoTarget"),
    ]:
        with pytest.raises(GstTtsError, match=message):
            given(bad)
    # The per-text targets of earlier releases still work, with a deprecation warning.
    with pytest.warns(DeprecationWarning, match="tempo_targets is deprecated"):
        old = synth.synthesize(
            text,
            style_weights={0: 1.0},
            tempo_targets=[TempoTarget(1.6 * decoded_rate, 1.0)],
            decoding=DECODING,
            seed=0,
            vocode=False,
        )
    np.testing.assert_array_equal(old.mel, faster.mel)
    with pytest.raises(GstTtsError, match="one target"), pytest.warns(DeprecationWarning):
        synth.synthesize(text, tempo_targets=[None, None], decoding=DECODING, seed=0, vocode=False)


def test_an_unreadable_references_tempo_is_the_models_with_a_warning(synth, tmp_path, caplog):
    t = np.arange(2 * 22050) / 22050
    steady = tmp_path / "steady.wav"
    sf.write(steady, (0.3 * np.sin(2 * np.pi * 200.0 * t)).astype(np.float32), 22050)
    with caplog.at_level(logging.WARNING):
        out = synth.synthesize(
            "Hi there.", reference=steady, transfer_tempo=True, decoding=DECODING, seed=0, vocode=False
        )
    assert f"tempo of {steady} could not be read" in caplog.text and out.chunks[0].tempo_gain == 1.0


def test_a_stream_is_the_one_shot_output_at_the_models_tempo(synth, tmp_path):
    fast = swelling_voice(tmp_path / "fast.wav", 6.0)
    text = "Hello there, my friend."
    streamed = np.concatenate(
        list(synth.stream(text, style=Style(reference=fast), decoding=DECODING, seed=0, vocode=False))
    )
    own = synth.synthesize(
        text, reference=fast, decoding=DECODING, seed=0, vocode=False
    )  # the model's tempo by default
    retimed_out = synth.synthesize(text, reference=fast, transfer_tempo=True, decoding=DECODING, seed=0, vocode=False)
    np.testing.assert_allclose(streamed, own.mel, atol=1e-5)
    assert own.chunks[0].tempo_gain == 1.0
    assert retimed_out.n_frames != own.n_frames  # asked for, one-shot synthesis did retime it


def test_a_retimed_results_plot_draws_the_mel_at_the_decoders_tempo(synth, tmp_path):
    fast = swelling_voice(tmp_path / "fast.wav", 6.0)
    result = synth.synthesize(
        "Hello there, my friend.", reference=fast, transfer_tempo=True, decoding=DECODING, seed=0, vocode=False
    )
    assert result.chunks[0].tempo_gain != 1.0
    figure = result.figure(title="t")
    image = next(
        ax.images[0] for ax in figure.axes if ax.images and ax.images[0].get_array().shape[0] == synth.model.n_mels
    )
    assert image.get_array().shape[1] == result.chunks[0].decoded_frames
    assert any("decoder's tempo" in ax.get_title() for ax in figure.axes)
