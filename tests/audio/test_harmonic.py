"""Harmonic restoration (``gst_tts.audio.vocoders.harmonic``, numpy): a blurred voiced magnitude gets peaks
at the harmonics with each band's energy kept, a magnitude that has its harmonics is left alone
(at the given F0 or off it), the F0 is refined onto the magnitude's own clear ripple, a weak comb
elsewhere does not pull the audio's pitch off the given F0, and unvoiced frames pass through."""

from __future__ import annotations

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.pitch import yin_f0
from gst_tts.audio.vocoders.harmonic import (
    BLURRED_RIPPLE,
    HARMONIC_TAPER_HZ,
    REFINE_MIN_RIPPLE,
    band_average,
    comb_strength,
    harmonic_ripple,
    harmonic_share,
    refine_f0,
    restore_harmonics,
)
from gst_tts.audio.vocoders.phase import fast_griffin_lim, pghi_phase

CFG = AudioConfig()
RATE = {"sample_rate": CFG.sample_rate, "n_fft": CFG.n_fft}
BINS = CFG.n_fft // 2 + 1
BIN_HZ = CFG.sample_rate / CFG.n_fft
FREQUENCIES = np.arange(BINS, dtype=np.float64) * BIN_HZ


def falling(frames: int) -> np.ndarray:
    """A smooth, speech-like falling log magnitude: no harmonic structure at all."""
    return np.repeat(-np.log1p(FREQUENCIES / 200.0)[:, None], frames, axis=1)


def rippled(frames: int, f0: float, depth: float = 3.0) -> np.ndarray:
    """``falling`` with peaks ``depth`` nepers high at the harmonics of ``f0``."""
    distance = np.remainder(FREQUENCIES + 0.5 * f0, f0) - 0.5 * f0
    return falling(frames) + depth * np.exp(-((distance / 17.0) ** 2))[:, None]


def test_a_blurred_voiced_frame_gets_harmonics_with_each_band_energy_kept():
    frames, f0 = 20, 120.0
    log_mag = falling(frames)
    restored = restore_harmonics(log_mag, np.full(frames, f0), np.ones(frames), **RATE)
    assert np.abs(harmonic_ripple(log_mag, np.full(frames, f0), **RATE)).max() < 0.1
    assert harmonic_ripple(restored, np.full(frames, f0), **RATE).min() > 2.0
    # Under the taper (from half a harmonic up) the energy is where it was: over the whole range,
    # and band by band up to the sampling of peaks narrower than a bin.
    below = (FREQUENCIES >= 0.5 * f0) & (FREQUENCIES < HARMONIC_TAPER_HZ[0])
    np.testing.assert_allclose(
        np.exp(2 * restored[below]).sum(0), np.exp(2 * log_mag[below]).sum(0), rtol=0.05, atol=0.0
    )
    for k in (2, 5, 12):
        band = (FREQUENCIES >= (k - 0.5) * f0) & (FREQUENCIES < (k + 0.5) * f0)
        before, after = np.exp(2 * log_mag[band]).sum(0), np.exp(2 * restored[band]).sum(0)
        np.testing.assert_allclose(after, before, rtol=0.25, atol=0.0)
    # From the taper's top up the magnitude is untouched, bit for bit (those bins are not computed).
    above = FREQUENCIES >= HARMONIC_TAPER_HZ[1]
    np.testing.assert_array_equal(restored[above], log_mag[above])
    assert not np.array_equal(restored[~above], log_mag[~above])


def test_a_magnitude_with_its_harmonics_and_an_unvoiced_frame_are_left_alone():
    frames, f0 = 12, 150.0
    log_mag = rippled(frames, f0)
    np.testing.assert_allclose(
        restore_harmonics(log_mag, np.full(frames, f0), np.ones(frames), **RATE), log_mag, rtol=1e-7, atol=1e-12
    )
    blurred = falling(frames)
    voicing = np.ones(frames)
    voicing[:4] = 0.0
    restored = restore_harmonics(blurred, np.full(frames, f0), voicing, **RATE)
    np.testing.assert_allclose(restored[:, :4], blurred[:, :4], rtol=1e-7, atol=1e-12)
    assert not np.allclose(restored[:, 4:], blurred[:, 4:])
    share = harmonic_share(np.array([1000.0, 4000.0, 6000.0]), np.float64(1.0))
    np.testing.assert_allclose(share, [1.0, 0.5, 0.0])


def test_the_f0_is_refined_onto_the_magnitudes_own_ripple():
    frames = 6
    log_mag = rippled(frames, 110.0, depth=1.5)
    guess = np.full(frames, 110.0 * 2 ** (50 / 1200))  # half a semitone sharp
    refined, ripple = refine_f0(log_mag, guess, **RATE)
    assert np.abs(1200 * np.log2(refined / 110.0)).max() <= 10.0
    assert (ripple > harmonic_ripple(log_mag, guess, **RATE)).all()
    # A ripple too weak to trust does not move it (a faint comb left by the estimator).
    weak = rippled(frames, 110.0, depth=0.8)
    assert 0.5 < harmonic_ripple(weak, np.full(frames, 110.0), **RATE).max() < REFINE_MIN_RIPPLE
    np.testing.assert_array_equal(refine_f0(weak, guess, **RATE)[0], guess)


def test_band_average_is_a_running_mean_of_each_frames_width():
    rng = np.random.default_rng(0)
    power = rng.random((64, 3))
    np.testing.assert_allclose(band_average(power, np.ones(3)), power, rtol=1e-12)
    averaged = band_average(power, np.array([3.0, 5.0, 2.0]))
    np.testing.assert_allclose(averaged[10, 0], power[9:12, 0].mean(), rtol=1e-12)
    np.testing.assert_allclose(averaged[10, 1], power[8:13, 1].mean(), rtol=1e-12)
    # A fractional width weighs the bins it half covers by half: [9.5, 11.5) around bin 10.
    np.testing.assert_allclose(averaged[10, 2], (0.5 * power[9, 2] + power[10, 2] + 0.5 * power[11, 2]) / 2, rtol=1e-12)
    # At the ends the window is cut and averages what remains.
    np.testing.assert_allclose(averaged[0, 1], power[0:3, 1].mean(), rtol=1e-12)
    np.testing.assert_allclose(band_average(np.full((40, 2), 7.0), np.array([4.3, 11.0])), 7.0, rtol=1e-12)


def test_a_magnitude_with_a_sharp_comb_off_the_given_f0_is_left_alone():
    # A recording's mel read by a pitch head that misses its F0 by three semitones: the comb is the
    # magnitude's own, and restoring another on top would cut it.
    frames, f0 = 10, 140.0
    log_mag = rippled(frames, f0)
    given = np.full(frames, f0 * 2 ** (300 / 1200))
    assert harmonic_ripple(log_mag, given, **RATE).max() < 1.0
    assert comb_strength(log_mag, given, **RATE).min() > BLURRED_RIPPLE[1]
    assert np.abs(comb_strength(falling(frames), given, **RATE)).max() < 0.5 * BLURRED_RIPPLE[0]
    np.testing.assert_allclose(
        restore_harmonics(log_mag, given, np.ones(frames), **RATE), log_mag, rtol=1e-7, atol=1e-12
    )


def test_restored_low_voices_are_periodic_after_pghi():
    frames = 120
    stft = {"n_fft": CFG.n_fft, "hop_length": CFG.hop_length, "win_length": CFG.win_length}
    f0 = np.geomspace(85.0, 200.0, frames)
    log_mag = restore_harmonics(falling(frames), f0, np.ones(frames), **RATE)
    audio = fast_griffin_lim(np.exp(log_mag), pghi_phase(log_mag, **stft), **stft, n_iter=32, momentum=0.99)
    track, voiced = yin_f0(torch.from_numpy(audio), CFG)
    inner = slice(6, frames - 6)
    assert voiced[inner].float().mean() > 0.9
    cents = 1200 * np.abs(np.log2(track[inner].numpy() / f0[inner]))
    assert np.median(cents) < 15.0
    # Without restoration the same smooth magnitude is not a voice.
    flat = fast_griffin_lim(
        np.exp(falling(frames)), pghi_phase(falling(frames), **stft), **stft, n_iter=32, momentum=0.99
    )
    assert yin_f0(torch.from_numpy(flat), CFG)[1][inner].float().mean() < 0.5


def test_a_weak_comb_elsewhere_does_not_pull_the_pitch_off_the_given_f0():
    # The estimator's magnitude for a model's high voice: a faint comb (0.8 nepers) at one F0, while
    # the pitch head (or a stretched track) asks for another, 60 cents higher. The audio's pitch
    # follows the F0 asked for, not the faint comb and not a beat between the two.
    frames = 120
    stft = {"n_fft": CFG.n_fft, "hop_length": CFG.hop_length, "win_length": CFG.win_length}
    old = np.geomspace(180.0, 230.0, frames)
    asked = old * 2 ** (60 / 1200)
    distance = np.remainder(FREQUENCIES[:, None] + 0.5 * old[None, :], old[None, :]) - 0.5 * old[None, :]
    log_mag = falling(frames) + 0.8 * np.exp(-((distance / 25.0) ** 2))
    assert 0.5 < np.median(harmonic_ripple(log_mag, old, **RATE)) < REFINE_MIN_RIPPLE
    log_mag = restore_harmonics(log_mag, asked, np.ones(frames), **RATE)
    audio = fast_griffin_lim(np.exp(log_mag), pghi_phase(log_mag, **stft), **stft, n_iter=32, momentum=0.99)
    track, voiced = yin_f0(torch.from_numpy(audio), CFG)
    inner = slice(6, frames - 6)
    assert voiced[inner].float().mean() > 0.9
    assert np.median(1200 * np.abs(np.log2(track[inner].numpy() / asked[inner]))) < 20.0


def test_the_restored_harmonics_follow_the_bands_power_not_a_faint_comb_beside_them():
    # A faint comb 60 cents below the F0 asked for: laid bin by bin on that magnitude, the new comb's
    # peaks would rise and fall with the old one's (a beat across the harmonics); on the band's power
    # they stand as evenly as on a smooth magnitude.
    frames = 4
    old = np.full(frames, 200.0)
    asked = old * 2 ** (60 / 1200)
    distance = np.remainder(FREQUENCIES[:, None] + 0.5 * old[None, :], old[None, :]) - 0.5 * old[None, :]
    faint = falling(frames) + 0.8 * np.exp(-((distance / 25.0) ** 2))
    harmonics = asked[:, None] * np.arange(1, 12)[None, :]

    def peaks(log_mag: np.ndarray) -> np.ndarray:  # the restored magnitude at each harmonic, (frames, 11)
        restored = restore_harmonics(log_mag, asked, np.ones(frames), **RATE)
        position = harmonics / BIN_HZ
        low = np.floor(position).astype(int)
        column = np.arange(frames)[:, None]
        return restored[low, column] * (1 - (position - low)) + restored[low + 1, column] * (position - low)

    lift = peaks(faint) - peaks(falling(frames))
    assert lift.mean() > 0.1  # the faint comb's power is there
    assert lift.std(axis=1).max() < 0.05
