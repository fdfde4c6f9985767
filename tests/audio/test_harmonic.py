"""Harmonic restoration (``gst_tts.audio.vocoders.harmonic``): a blurred voiced magnitude gets peaks
at the harmonics with each band's energy kept, a magnitude that has its harmonics is left alone,
the F0 is refined onto the magnitude's own ripple, and unvoiced frames pass through."""

from __future__ import annotations

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.pitch import yin_f0
from gst_tts.audio.vocoders.harmonic import HARMONIC_TAPER_HZ, harmonic_ripple, harmonic_share, refine_f0, restore_harmonics
from gst_tts.audio.vocoders.phase import fast_griffin_lim, pghi_phase

CFG = AudioConfig()
BINS = CFG.n_fft // 2 + 1
BIN_HZ = CFG.sample_rate / CFG.n_fft
FREQUENCIES = torch.arange(BINS, dtype=torch.float64) * BIN_HZ


def falling(frames: int) -> torch.Tensor:
    """A smooth, speech-like falling log magnitude: no harmonic structure at all."""
    return (-torch.log1p(FREQUENCIES / 200.0))[:, None].expand(-1, frames).clone()


def rippled(frames: int, f0: float, depth: float = 3.0) -> torch.Tensor:
    """``falling`` with peaks ``depth`` nepers high at the harmonics of ``f0``."""
    distance = torch.remainder(FREQUENCIES + 0.5 * f0, f0) - 0.5 * f0
    return falling(frames) + depth * torch.exp(-((distance / 17.0) ** 2))[:, None]


def test_a_blurred_voiced_frame_gets_harmonics_with_each_band_energy_kept():
    frames, f0 = 20, 120.0
    log_mag = falling(frames)
    restored = restore_harmonics(log_mag, torch.full((frames,), f0), torch.ones(frames), CFG)
    assert harmonic_ripple(log_mag, torch.full((frames,), f0), CFG).abs().max() < 0.1
    assert harmonic_ripple(restored, torch.full((frames,), f0), CFG).min() > 2.0
    # Under the taper (from half a harmonic up) the energy is where it was: over the whole range,
    # and band by band up to the sampling of peaks narrower than a bin.
    below = (FREQUENCIES >= 0.5 * f0) & (FREQUENCIES < HARMONIC_TAPER_HZ[0])
    torch.testing.assert_close(torch.exp(2 * restored[below]).sum(0), torch.exp(2 * log_mag[below]).sum(0), rtol=0.05, atol=0.0)
    for k in (2, 5, 12):
        band = (FREQUENCIES >= (k - 0.5) * f0) & (FREQUENCIES < (k + 0.5) * f0)
        before, after = torch.exp(2 * log_mag[band]).sum(0), torch.exp(2 * restored[band]).sum(0)
        torch.testing.assert_close(after, before, rtol=0.25, atol=0.0)
    # Above the taper the magnitude is untouched.
    above = FREQUENCIES > HARMONIC_TAPER_HZ[1]
    torch.testing.assert_close(restored[above], log_mag[above])


def test_a_magnitude_with_its_harmonics_and_an_unvoiced_frame_are_left_alone():
    frames, f0 = 12, 150.0
    log_mag = rippled(frames, f0)
    torch.testing.assert_close(restore_harmonics(log_mag, torch.full((frames,), f0), torch.ones(frames), CFG), log_mag)
    blurred = falling(frames)
    voicing = torch.ones(frames)
    voicing[:4] = 0.0
    restored = restore_harmonics(blurred, torch.full((frames,), f0), voicing, CFG)
    torch.testing.assert_close(restored[:, :4], blurred[:, :4])
    assert not torch.allclose(restored[:, 4:], blurred[:, 4:])
    share = harmonic_share(torch.tensor([1000.0, 4000.0, 6000.0]), torch.tensor(1.0))
    torch.testing.assert_close(share, torch.tensor([1.0, 0.5, 0.0]))


def test_the_f0_is_refined_onto_the_magnitudes_own_ripple():
    frames = 6
    log_mag = rippled(frames, 110.0, depth=1.0)
    guess = torch.full((frames,), 110.0 * 2 ** (50 / 1200))  # half a semitone sharp
    refined, ripple = refine_f0(log_mag, guess, CFG)
    assert (1200 * torch.log2(refined / 110.0)).abs().max() <= 10.0
    assert (ripple > harmonic_ripple(log_mag, guess, CFG)).all()


def test_restored_low_voices_are_periodic_after_pghi():
    frames = 120
    f0 = torch.from_numpy(np.geomspace(85.0, 200.0, frames))
    log_mag = restore_harmonics(falling(frames), f0, torch.ones(frames), CFG)
    phase = pghi_phase(log_mag.numpy(), n_fft=CFG.n_fft, hop_length=CFG.hop_length, win_length=CFG.win_length)
    audio = fast_griffin_lim(torch.exp(log_mag), torch.from_numpy(phase), n_fft=CFG.n_fft, hop_length=CFG.hop_length,
                             win_length=CFG.win_length, n_iter=32, momentum=0.99)
    track, voiced = yin_f0(audio.double(), CFG)
    inner = slice(6, frames - 6)
    assert voiced[inner].float().mean() > 0.9
    cents = 1200 * np.abs(np.log2(track[inner].numpy() / f0[inner].numpy()))
    assert np.median(cents) < 15.0
    # Without restoration the same smooth magnitude is not a voice.
    phase = pghi_phase(falling(frames).numpy(), n_fft=CFG.n_fft, hop_length=CFG.hop_length, win_length=CFG.win_length)
    flat = fast_griffin_lim(torch.exp(falling(frames)), torch.from_numpy(phase), n_fft=CFG.n_fft, hop_length=CFG.hop_length,
                            win_length=CFG.win_length, n_iter=32, momentum=0.99)
    assert yin_f0(flat.double(), CFG)[1][inner].float().mean() < 0.5
