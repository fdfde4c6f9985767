"""Prosody measures (gst_tts.analysis.prosody) on signals whose answers are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gst_tts.analysis.prosody import (
    energy_db,
    frame_levels_db,
    measure_prosody,
    median_f0,
    speaking_rate,
    speech_frames,
)

RATE = 22050


def sine(freq: float, seconds: float = 1.0, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def log_mel_at(levels_db: list[float], n_mels: int = 8) -> np.ndarray:
    """A ``(frames, n_mels)`` natural-log magnitude mel whose frame levels are ``levels_db``."""
    log_magnitude = np.asarray(levels_db) / 20.0 * math.log(10.0)  # dB of power = 20·log10(magnitude)
    return np.repeat(log_magnitude[:, None], n_mels, axis=1)


@pytest.mark.parametrize("freq", [120.0, 200.0, 310.0])
def test_f0_of_a_tone(freq):
    pitch = median_f0(sine(freq), RATE)
    assert pitch.median_hz == pytest.approx(freq, rel=0.02)
    assert pitch.voiced_share > 0.8


def test_f0_range_limits_what_is_found():
    # A 500 Hz tone lies outside a 70-400 Hz search range: nothing there is the tone's F0.
    pitch = median_f0(sine(500.0), RATE, f0_range_hz=(70.0, 400.0))
    assert not pitch.median_hz == pytest.approx(500.0, rel=0.02)


def test_voiced_share_counts_the_tone_not_the_silence_or_noise():
    half = median_f0(np.concatenate([sine(200.0, 0.5), np.zeros(RATE // 2, np.float32)]), RATE)
    assert 0.4 < half.voiced_share < 0.6 and half.median_hz == pytest.approx(200.0, rel=0.02)
    noise = np.random.default_rng(0).normal(0, 0.1, RATE).astype(np.float32)
    assert median_f0(noise, RATE).voiced_share < 0.4
    empty = median_f0(np.zeros(0, np.float32), RATE)
    assert math.isnan(empty.median_hz) and empty.voiced_share == 0.0


def test_frame_levels_in_db():
    np.testing.assert_allclose(frame_levels_db(log_mel_at([0.0, -20.0, 6.0])), [0.0, -20.0, 6.0], atol=1e-9)


def test_speaking_rate_counts_letters_over_the_speech_between_silences():
    levels = [-90.0] * 10 + [0.0] * 50 + [-90.0] * 20  # 50 frames of speech inside silence
    mel = log_mel_at(levels)
    assert speech_frames(mel).tolist() == list(range(10, 60))
    # "Hi, there!" has 7 letters; 50 frames of 10 ms are 0.5 s.
    assert speaking_rate("Hi, there!", mel, frame_seconds=0.01) == pytest.approx(14.0)
    # A quiet stretch inside the speech (a pause) still counts as speaking time.
    levels[30:35] = [-90.0] * 5
    assert speaking_rate("Hi, there!", log_mel_at(levels), frame_seconds=0.01) == pytest.approx(14.0)


def test_energy_is_the_mean_level_of_the_non_silent_frames():
    mel = log_mel_at([-90.0] * 5 + [0.0] * 10 + [-6.0] * 10 + [-90.0] * 5)
    assert energy_db(mel) == pytest.approx(-3.0)
    assert energy_db(mel, silence_db=3.0) == pytest.approx(0.0)  # -6 dB frames are "silence" at 3 dB


def test_measure_prosody_combines_the_measures():
    mel = log_mel_at([-90.0] * 4 + [-10.0] * 40 + [-90.0] * 4)
    p = measure_prosody(sine(200.0), RATE, mel, hop_length=256, text="abcd")
    assert p.f0_hz == pytest.approx(200.0, rel=0.02) and p.voiced_share > 0.8
    assert p.rate_letters_per_s == pytest.approx(4 / (40 * 256 / RATE))
    assert p.energy_db == pytest.approx(-10.0)
    unvocoded = measure_prosody(np.zeros(0, np.float32), RATE, mel, hop_length=256, text="abcd")
    assert math.isnan(unvocoded.f0_hz) and unvocoded.energy_db == pytest.approx(-10.0)
