"""Tempo from the reference (gst_tts.inference.tempo): the gain, the retiming, whose tempo a style
asks for, and a synthesis retimed to its reference's (a tiny random-weight model)."""

from __future__ import annotations

import math

from conftest import seconds_for_steps, write_tiny_checkpoint
import numpy as np
import pytest
import soundfile as sf

from gst_tts.analysis.prosody import articulation_rate
from gst_tts.analysis.speech_rate import LETTERS_PER_NUCLEUS
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.style import Style
from gst_tts.inference.style_spec import TempoTarget, style_tempo
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.inference.tempo import GAIN_LIMITS, retimed, tempo_gain, with_tempo

FRAME_S = 256 / 22050
DECODING = DecodingConfig(max_seconds=seconds_for_steps(24))


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


def test_an_output_is_retimed_to_the_targets_letter_rate():
    rng = np.random.default_rng(0)
    log_mel = np.full((200, 8), -11.0, np.float32)
    log_mel[20:180] = rng.normal(0.0, 0.5, (160, 8))  # 160 frames of speech between silences
    text = "a" * 28
    before = articulation_rate(text, log_mel, FRAME_S)
    out, gain = with_tempo(log_mel, text, TempoTarget(1.25 * before, 1.0), frame_seconds=FRAME_S)
    assert gain == pytest.approx(1.25) and len(out) == 160
    assert articulation_rate(text, out, FRAME_S) == pytest.approx(1.25 * before, rel=0.03)
    half, gain = with_tempo(log_mel, text, TempoTarget(1.25 * before, 0.5), frame_seconds=FRAME_S)
    assert gain == pytest.approx(math.sqrt(1.25))
    assert with_tempo(log_mel, text, None, frame_seconds=FRAME_S) == (log_mel, 1.0)


def test_whose_tempo_a_style_asks_for():
    read = {"slow.wav": 9.0, "fast.wav": 16.0, "music.wav": None}.get
    assert style_tempo(Style(reference="slow.wav"), read) == (pytest.approx(9.0), 1.0)
    assert style_tempo(Style(reference="fast.wav", strength=0.5), read) == (pytest.approx(16.0), 0.5)
    # A mix: its references' geometric mean by their shares, over those read.
    target = style_tempo(Style(mix={"slow.wav": 1.0, "fast.wav": 1.0}), read)
    assert target.letters_per_s == pytest.approx(12.0) and target.strength == 1.0
    assert style_tempo(Style(mix={"fast.wav": 1.0, "music.wav": 3.0}), read) == (pytest.approx(16.0), 1.0)
    for style in (None, Style(), Style(weights={1: 1.0}), Style(dials={1: 0.5}), Style(reference="music.wav")):
        assert style_tempo(style, read) is None  # the tempo as decoded


# ---------------------------------------------------------------- in synthesis


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    return Synthesizer.from_checkpoint(write_tiny_checkpoint(tmp_path_factory.mktemp("tempo") / "tiny.pt"), device="cpu")


def swelling_voice(path, per_second: float, seconds: float = 3.0, rate: int = 22050):
    """A voice swelling ``per_second`` times a second (syllables at that rate), written to ``path``."""
    t = np.arange(int(seconds * rate)) / rate
    voice = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 16))
    sf.write(path, (0.2 * voice * (0.05 + 0.95 * (0.5 - 0.5 * np.cos(2 * np.pi * per_second * t)))).astype(np.float32), rate)
    return path


def test_a_references_tempo_is_read_off_its_syllables(synth, tmp_path):
    for per_second in (3.0, 5.0):
        read = synth.reference_tempo(swelling_voice(tmp_path / f"{per_second}.wav", per_second))
        assert read == pytest.approx(per_second * LETTERS_PER_NUCLEUS, rel=0.1)


def test_outputs_are_retimed_to_their_references_tempo_by_strength(synth, tmp_path, monkeypatch):
    slow, fast = tmp_path / "slow.wav", tmp_path / "fast.wav"
    for path in (slow, fast):
        swelling_voice(path, 4.0)
    text = "Hello there, my friend."
    as_decoded = synth.synthesize(text, reference=slow, transfer_tempo=False, decoding=DECODING, seed=0, vocode=False)
    decoded_rate = articulation_rate(as_decoded.cleaned_text, as_decoded.mel, FRAME_S)
    reads = []
    rates = {slow: 0.8 * decoded_rate, fast: 1.6 * decoded_rate}
    monkeypatch.setattr(synth, "reference_tempo", lambda ref: reads.append(ref) or rates[ref])

    results = synth.synthesize([text, text, text], styles=[Style(reference=slow), Style(reference=fast),
                                                           Style(reference=fast, strength=0.5)],
                               decoding=DECODING, seed=0, vocode=False)
    assert sorted(map(str, reads)) == [str(fast), str(slow)]  # each reference read once
    for result, wanted in zip(results, (0.8, 1.6, math.sqrt(1.6))):
        assert articulation_rate(result.cleaned_text, result.mel, FRAME_S) == pytest.approx(wanted * decoded_rate, rel=0.05)
        assert result.alignment.shape == as_decoded.alignment.shape  # the decoder's own steps
    # Token styles, and transfer switched off, keep the tempo as decoded.
    off = synth.synthesize(text, reference=fast, transfer_tempo=False, decoding=DECODING, seed=0, vocode=False)
    np.testing.assert_array_equal(off.mel, as_decoded.mel)
    tokens = synth.synthesize(text, style_weights={0: 1.0}, decoding=DECODING, seed=0, vocode=False)
    assert tokens.n_frames == as_decoded.n_frames
    # A caller that read the references itself passes the targets.
    given = synth.synthesize(text, style_weights={0: 1.0}, tempo_targets=[TempoTarget(1.6 * decoded_rate, 1.0)],
                             decoding=DECODING, seed=0, vocode=False)
    assert given.n_frames < 0.7 * as_decoded.n_frames
