"""Prosody measures (gst_tts.analysis.prosody) on signals whose answers are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gst_tts.analysis.prosody import (
    articulation_rate,
    energy_db,
    fit,
    frame_levels_db,
    measure_prosody,
    median_f0,
    pause_frames,
    pearson_r,
    pitch_stats,
    slope,
    spearman_r,
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


def harmonic(freq: float, seconds: float = 1.0) -> np.ndarray:
    """A voice-like tone: ``freq`` and its first four overtones, falling in level."""
    return sum(sine(freq * k, seconds, 0.4 / k) for k in range(1, 6)).astype(np.float32)


def glide(start_hz: float, end_hz: float, seconds: float = 2.0) -> np.ndarray:
    """A tone whose frequency moves from ``start_hz`` to ``end_hz`` evenly in semitones."""
    t = np.arange(int(seconds * RATE)) / RATE
    freq = start_hz * (end_hz / start_hz) ** (t / seconds)
    return (0.5 * np.sin(2 * np.pi * np.cumsum(freq) / RATE)).astype(np.float32)


def test_log_f0_difference_of_harmonic_tones():
    low, high = pitch_stats(harmonic(120.0), RATE), pitch_stats(harmonic(240.0), RATE)
    assert math.log(high.median_hz) - math.log(low.median_hz) == pytest.approx(math.log(2.0), abs=0.02)
    assert low.median_hz == pytest.approx(120.0, rel=0.02) and low.voiced_share > 0.8
    assert low.range_semitones < 0.3  # a steady tone has (almost) no range


def test_f0_range_is_the_percentile_spread_in_semitones():
    # An even glide over 12 semitones: its 10th and 90th percentiles are 9.6 semitones apart.
    stats = pitch_stats(glide(110.0, 220.0), RATE)
    assert stats.range_semitones == pytest.approx(9.6, abs=0.6)
    assert stats.median_hz == pytest.approx(110.0 * 2**0.5, rel=0.03)
    wide = pitch_stats(glide(110.0, 220.0), RATE, percentiles=(0.0, 100.0))
    assert wide.range_semitones > stats.range_semitones
    # A fifth of the frames an octave down (a pyin halving, say) is left out of the range, not of the level.
    halved = np.concatenate([harmonic(200.0, 0.8), harmonic(100.0, 0.2)])
    assert pitch_stats(halved, RATE).range_semitones < 0.5
    assert pitch_stats(halved, RATE, max_excursion_st=None).range_semitones > 10.0
    assert pitch_stats(halved, RATE).median_hz == pytest.approx(200.0, rel=0.02)
    unvoiced = pitch_stats(np.zeros(0, np.float32), RATE)
    assert math.isnan(unvoiced.median_hz) and math.isnan(unvoiced.range_semitones) and unvoiced.voiced_share == 0.0


def test_articulation_rate_excludes_pauses_but_speaking_rate_does_not():
    speech = [-90.0] * 10 + [0.0] * 50 + [-90.0] * 10
    paused = [-90.0] * 10 + [0.0] * 25 + [-90.0] * 30 + [0.0] * 25 + [-90.0] * 10  # a 0.3 s pause inside
    # "Hi, there!" has 7 letters; 50 frames of speech of 10 ms are 0.5 s.
    assert articulation_rate("Hi, there!", log_mel_at(speech), 0.01) == pytest.approx(14.0)
    assert articulation_rate("Hi, there!", log_mel_at(paused), 0.01) == pytest.approx(14.0)
    assert speaking_rate("Hi, there!", log_mel_at(paused), 0.01) == pytest.approx(7 / 0.8)
    assert pause_frames(log_mel_at(paused), 0.01).sum() == 30
    assert not pause_frames(log_mel_at(paused), 0.01)[:35].any()  # leading silence is not a pause


def test_short_silent_gaps_count_as_speech():
    gapped = [0.0] * 20 + [-90.0] * 2 + [0.0] * 20  # a 20 ms gap: a closure, not a pause
    assert pause_frames(log_mel_at(gapped), 0.01).sum() == 0
    assert articulation_rate("abcd", log_mel_at(gapped), 0.01) == pytest.approx(4 / 0.42)
    assert pause_frames(log_mel_at(gapped), 0.01, min_pause_s=0.02).sum() == 2
    assert articulation_rate("abcd", log_mel_at(gapped), 0.01, min_pause_s=0.0) == pytest.approx(4 / 0.40)
    assert math.isnan(articulation_rate("...", log_mel_at(gapped), 0.01))


def test_correlations_and_slope_on_known_data():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert pearson_r(x, 2 * x + 1) == pytest.approx(1.0) and slope(x, 2 * x + 1) == pytest.approx(2.0)
    assert pearson_r(x, -x) == pytest.approx(-1.0) and slope(x, -0.5 * x) == pytest.approx(-0.5)
    cubic = x**3
    assert spearman_r(x, cubic) == pytest.approx(1.0) and pearson_r(x, cubic) < 0.99
    y = np.array([2.0, 1.0, 4.0, 3.0, 6.0])
    assert pearson_r(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert slope(x, y) == pytest.approx(np.polyfit(x, y, 1)[0])
    assert spearman_r([1, 2, 2, 3], [1, 3, 3, 4]) == pytest.approx(1.0)  # ties share their rank
    assert spearman_r([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


def test_fit_drops_nan_pairs_and_needs_spread():
    x = [1.0, 2.0, float("nan"), 4.0]
    y = [2.0, 4.0, 100.0, float("nan")]
    f = fit(x, y)
    assert f.n == 2 and f.r == pytest.approx(1.0) and f.slope == pytest.approx(2.0)
    flat = fit([1.0, 2.0, 3.0], [5.0, 5.0, 5.0])
    assert math.isnan(flat.r) and math.isnan(flat.spearman) and flat.slope == 0.0
    assert math.isnan(fit([1.0], [2.0]).r) and math.isnan(fit([1.0, 1.0], [2.0, 3.0]).slope)
    with pytest.raises(ValueError):
        pearson_r([1.0, 2.0], [1.0, 2.0, 3.0])


def test_highpass_keeps_hum_out_of_the_f0():
    # A second of 180 Hz voice, then a second of noise, over a 60 Hz hum (as in some VCTK clips):
    # unfiltered, pyin takes the hum for the F0 of most frames.
    noise = np.random.default_rng(0).normal(0, 0.05, RATE).astype(np.float32)
    clip = np.concatenate([harmonic(180.0), noise]) + sine(60.0, 2.0, 0.25)
    assert pitch_stats(clip, RATE, f0_range_hz=(60.0, 400.0)).median_hz == pytest.approx(60.0, rel=0.03)
    assert pitch_stats(clip, RATE, f0_range_hz=(60.0, 400.0), highpass_hz=70.0).median_hz == pytest.approx(
        180.0, rel=0.03
    )
    low = pitch_stats(harmonic(95.0), RATE, highpass_hz=70.0)  # a low voice keeps its F0
    assert low.median_hz == pytest.approx(95.0, rel=0.03) and low.voiced_share > 0.8
