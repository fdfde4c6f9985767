"""Pitch-shifted and time-stretched copies (gst_tts.audio.augment) change what they should, only that."""

from __future__ import annotations

from conftest import tone
import pytest

from gst_tts.analysis.prosody import median_f0
from gst_tts.audio.augment import shift_and_stretch
from gst_tts.errors import GstTtsError

RATE = 22050


def test_pitch_shift_keeps_the_length_and_time_stretch_keeps_the_pitch():
    clip = tone(1.0, RATE, 150.0)
    shifted_up, shifted_down, slower, faster = shift_and_stretch(clip, RATE, semitones=(4.0, -3.0), speeds=(0.8, 1.25))
    assert [v.suffix for v in (shifted_up, shifted_down, slower, faster)] == ["pitch+4", "pitch-3", "speed0.8", "speed1.25"]
    assert median_f0(shifted_up.audio, RATE).median_hz == pytest.approx(150.0 * 2 ** (4 / 12), rel=0.03)
    assert median_f0(shifted_down.audio, RATE).median_hz == pytest.approx(150.0 * 2 ** (-3 / 12), rel=0.03)
    assert len(shifted_up.audio) == len(clip) and (shifted_up.semitones, shifted_up.speed) == (4.0, 1.0)
    assert len(slower.audio) / RATE == pytest.approx(1.25, abs=0.02) and len(faster.audio) / RATE == pytest.approx(0.8, abs=0.02)
    assert median_f0(slower.audio, RATE).median_hz == pytest.approx(150.0, rel=0.03)
    assert (slower.semitones, slower.speed) == (0.0, 0.8)
    assert all(v.audio.dtype.name == "float32" for v in (shifted_up, slower))


@pytest.mark.parametrize("kwargs", [{"speeds": (0.0,)}, {"speeds": (-1.0,)}, {"semitones": (float("nan"),)}])
def test_bad_factors_are_refused(kwargs):
    with pytest.raises(GstTtsError):
        shift_and_stretch(tone(0.5, RATE), RATE, **kwargs)
