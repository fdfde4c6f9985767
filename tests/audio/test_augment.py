"""Pitch-shifted and time-stretched copies (gst_tts.audio.augment) change what they should, only that."""

from __future__ import annotations

from conftest import tone
import numpy as np
import pytest

from gst_tts.analysis.prosody import median_f0
from gst_tts.audio.augment import shift_and_stretch
from gst_tts.errors import GstTtsError

RATE = 22050


def test_pitch_shift_keeps_the_length_and_time_stretch_keeps_the_pitch():
    clip = tone(1.0, RATE, 150.0)
    shifted_up, shifted_down, slower, faster = shift_and_stretch(clip, RATE, semitones=(4.0, -3.0), speeds=(0.8, 1.25))
    assert [v.suffix for v in (shifted_up, shifted_down, slower, faster)] == [
        "pitch+4",
        "pitch-3",
        "speed0.8",
        "speed1.25",
    ]
    assert median_f0(shifted_up.audio, RATE).median_hz == pytest.approx(150.0 * 2 ** (4 / 12), rel=0.03)
    assert median_f0(shifted_down.audio, RATE).median_hz == pytest.approx(150.0 * 2 ** (-3 / 12), rel=0.03)
    assert len(shifted_up.audio) == len(clip) and (shifted_up.semitones, shifted_up.speed) == (4.0, 1.0)
    assert len(slower.audio) / RATE == pytest.approx(1.25, abs=0.02) and len(faster.audio) / RATE == pytest.approx(
        0.8, abs=0.02
    )
    assert median_f0(slower.audio, RATE).median_hz == pytest.approx(150.0, rel=0.03)
    assert (slower.semitones, slower.speed) == (0.0, 0.8)
    assert all(v.audio.dtype.name == "float32" for v in (shifted_up, slower))


@pytest.mark.parametrize("kwargs", [{"speeds": (0.0,)}, {"speeds": (-1.0,)}, {"semitones": (float("nan"),)}])
def test_bad_factors_are_refused(kwargs):
    with pytest.raises(GstTtsError):
        shift_and_stretch(tone(0.5, RATE), RATE, **kwargs)


def test_a_tempo_change_keeps_onsets_sharp():
    # Short tone bursts every 200 ms: after a 1.25x stretch nearly all energy stays within 15 ms of
    # where each burst moved to (librosa's default 93 ms window leaves about 60% there).
    rate = 22050
    t = np.arange(2 * rate) / rate
    burst = int(0.005 * rate)
    onsets = np.arange(0.1, 1.9, 0.2)
    clicks = np.zeros_like(t)
    for onset in onsets:
        start = int(onset * rate)
        clicks[start : start + burst] += np.sin(2 * np.pi * 1000 * t[:burst]) * np.hanning(burst)
    (faster,) = shift_and_stretch(clicks.astype(np.float32), rate, semitones=(), speeds=(1.25,))
    energy = faster.audio.astype(np.float64) ** 2
    near = np.zeros(energy.size, dtype=bool)
    for onset in onsets / 1.25:
        centre, half = int(onset * rate), int(0.015 * rate)
        near[max(0, centre - half) : centre + half] = True
    assert energy[near].sum() / energy.sum() > 0.95
