"""Intonation width at the spectral vocoder (``gst_tts.audio.vocoders.intonation``): the spread of a
pitch track, its stretch about the voiced median toward a target (by a strength, within limits),
and the reconstruction restoring harmonics at the stretched track, so the audio's F0 spread follows."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.pitch import yin_f0
from gst_tts.audio.vocoders.intonation import (
    GAIN_LIMITS,
    MAX_EXCURSION_ST,
    MIN_VOICED_FRAMES,
    f0_range_st,
    range_gain,
    spread_st,
    with_f0_range,
)
from gst_tts.audio.vocoders.reconstruction import spectral_audio

CFG = AudioConfig()


def track(hz: np.ndarray, voiced: np.ndarray | None = None) -> np.ndarray:
    """A pitch head's ``(frames, 2)`` output: log F0 and a voicing logit (+8 voiced, -8 not)."""
    voiced = np.ones(len(hz), dtype=bool) if voiced is None else voiced
    return np.stack([np.log(hz), np.where(voiced, 8.0, -8.0)], -1).astype(np.float32)


def semitones(a: float, b: float) -> float:
    return 12.0 * math.log2(b / a)


def test_the_spread_is_the_10_to_90_percentile_of_voiced_frames_in_semitones():
    hz = 100.0 * 2.0 ** (np.linspace(0.0, 1.0, 101))  # one octave, evenly in log F0
    assert f0_range_st(track(hz)) == pytest.approx(0.8 * 12.0, abs=1e-3)
    # Unvoiced frames do not count, whatever F0 they carry.
    wild = np.concatenate([hz, np.full(50, 2000.0)])
    assert f0_range_st(track(wild, np.arange(151) < 101)) == pytest.approx(0.8 * 12.0, abs=1e-3)
    assert f0_range_st(track(hz[: MIN_VOICED_FRAMES - 1])) is None


@pytest.mark.parametrize("target, strength", [(12.0, 1.0), (5.0, 1.0), (12.0, 0.5), (12.0, 0.0)])
def test_the_stretch_reaches_the_target_by_the_strength_about_the_median(target, strength):
    rng = np.random.default_rng(0)
    hz = 150.0 * 2.0 ** (rng.uniform(-0.3, 0.3, 200))  # about 6 st wide; stretched, within 10 st of the median
    voiced = rng.random(200) > 0.3
    before = track(hz, voiced)
    current = f0_range_st(before)
    after = with_f0_range(before, target, strength)
    expected = current * (target / current) ** strength
    assert f0_range_st(after) == pytest.approx(expected, rel=1e-4)
    np.testing.assert_array_equal(after[:, 1], before[:, 1])  # voicing untouched
    assert np.median(after[voiced, 0]) == pytest.approx(np.median(before[voiced, 0]), abs=1e-5)
    assert f0_range_st(before) == current  # the input is not changed


def test_the_gain_is_limited_and_a_flat_or_short_track_is_left_alone():
    assert range_gain(1.0, 100.0) == GAIN_LIMITS[1]
    assert range_gain(10.0, 0.0) == GAIN_LIMITS[0]
    assert range_gain(0.0, 2.0) == GAIN_LIMITS[1]  # a flat track: bounded, not a division by zero
    short = track(np.array([100.0, 200.0] * 4))
    np.testing.assert_array_equal(with_f0_range(short, 12.0), short)


def test_the_reconstruction_restores_harmonics_at_the_stretched_track():
    # A magnitude without harmonic ripple (what an over-smooth mel gives): the audio's F0 is the
    # track's. A slow glide of 4 semitones, asked for 8.
    frames = 240
    hz = 150.0 * 2.0 ** (2.0 / 12.0 * np.sin(np.linspace(0.0, 2.0 * np.pi, frames)))
    bins = CFG.n_fft // 2 + 1
    tilt = -3.0 - 3.0 * np.arange(bins) / bins
    log_mag = np.repeat(tilt[None], frames, 0).astype(np.float32)
    settings = dict(sample_rate=CFG.sample_rate, n_fft=CFG.n_fft, hop_length=CFG.hop_length, win_length=CFG.win_length)
    pitch = track(hz)
    wanted = 2.0 * f0_range_st(pitch)

    def audio_spread(**kwargs) -> float:
        audio = spectral_audio(log_mag, pitch, **settings, **kwargs)
        f0, voiced = yin_f0(torch.from_numpy(audio.astype(np.float64)), CFG)
        f0 = f0[voiced].numpy()[10:-10]
        low, high = np.percentile(f0, (10, 90))
        return semitones(low, high)

    as_read, stretched = audio_spread(), audio_spread(f0_range_st=wanted)
    assert as_read == pytest.approx(f0_range_st(pitch), rel=0.15)
    assert stretched == pytest.approx(wanted, rel=0.15)
    assert audio_spread(f0_range_st=wanted, f0_range_strength=0.0) == pytest.approx(as_read, rel=0.05)


def test_a_running_median_removes_single_frame_octave_jumps_from_the_spread():
    log_f0 = np.log(150.0 * 2.0 ** (np.linspace(-0.25, 0.25, 60)))  # half an octave
    jumped = log_f0.copy()
    jumped[::6] += math.log(2.0)  # one frame in six an octave up: a tracker's errors
    clean = spread_st(log_f0)
    raw_low, raw_high = np.percentile(12.0 * jumped / math.log(2.0), (10.0, 90.0))
    assert raw_high - raw_low > clean + 1.0  # what the percentiles alone would read
    assert spread_st(jumped, median_frames=5) == pytest.approx(clean, abs=0.3)


def test_runs_of_octave_errors_longer_than_the_median_are_left_out_of_the_spread():
    log_f0 = np.log(200.0 * 2.0 ** (np.linspace(-0.2, 0.2, 80)))
    halved = log_f0.copy()
    halved[20:32] -= math.log(2.0)  # twelve frames an octave down: more than a 5-frame median removes
    clean = spread_st(log_f0, median_frames=5)
    assert spread_st(halved, median_frames=5) == pytest.approx(
        spread_st(np.delete(log_f0, range(20, 32)), median_frames=5), abs=0.3
    )
    assert spread_st(halved, median_frames=5) < clean + 0.5
    # A wide but true melody (nine semitones either side) keeps its spread.
    wide = np.log(200.0 * 2.0 ** (np.linspace(-0.75, 0.75, 80)))
    assert spread_st(wide) == pytest.approx(0.8 * 18.0, abs=0.3)


def test_a_track_with_too_few_frames_near_its_median_has_no_spread():
    # Two voices two octaves apart, ten frames each: the median falls between them, every frame
    # lies more than ten semitones from it, and nothing is left to measure.
    split = np.log(np.array([100.0] * 10 + [400.0] * 10))
    assert spread_st(split) is None
    assert spread_st(split, median_frames=5) is None
    assert spread_st(np.full(20, np.nan)) is None
    np.testing.assert_array_equal(with_f0_range(track(np.exp(split)), 6.0), track(np.exp(split)))


def test_octave_errors_keep_their_f0_when_the_track_is_stretched():
    hz = 200.0 * 2.0 ** (np.linspace(-0.2, 0.2, 60))
    hz[10:14] /= 2.0  # four frames an octave down: a pitch head's errors
    before = track(hz)
    after = with_f0_range(before, 2.0 * f0_range_st(before))
    errors = np.zeros(60, dtype=bool)
    errors[10:14] = True
    np.testing.assert_array_equal(after[errors, 0], before[errors, 0])
    centre = np.median(before[:, 0])
    assert np.abs(after[~errors, 0] - centre).max() > 1.9 * np.abs(before[~errors, 0] - centre).max()
    assert (np.abs(12.0 * (before[errors, 0] - centre) / math.log(2.0)) > MAX_EXCURSION_ST).all()
