"""Harmonic-plus-noise synthesis (``gst_tts.audio.vocoders.harmonic``): the harmonics carry the
magnitude's voiced energy at the given F0, the rest keeps what is not harmonic, and unvoiced frames
pass through untouched."""

from __future__ import annotations

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.pitch import yin_f0
from gst_tts.audio.vocoders.harmonic import HARMONIC_TAPER_HZ, harmonic_plus_noise, harmonic_share
from gst_tts.audio.vocoders.spectral import stft_log_magnitude

CFG = AudioConfig()


def flat_log_magnitude(frames: int, level: float = 1.0) -> torch.Tensor:
    return torch.full((CFG.n_fft // 2 + 1, frames), float(np.log(level)), dtype=torch.float64)


def test_harmonics_have_the_energy_of_the_magnitude_they_replace():
    frames = 80
    log_mag = flat_log_magnitude(frames)
    harmonics, rest = harmonic_plus_noise(log_mag, torch.full((frames,), 120.0), torch.ones(frames), CFG)
    assert harmonics.shape == ((frames - 1) * CFG.hop_length,)
    resynthesised = stft_log_magnitude(torch.from_numpy(harmonics), CFG).numpy()[8:-8]  # (frames, bins)
    bin_hz = CFG.sample_rate / CFG.n_fft
    below_taper = slice(int(200 / bin_hz), int(HARMONIC_TAPER_HZ[0] / bin_hz))
    energy = np.exp(2 * resynthesised[:, below_taper]).sum(axis=1)
    expected = np.exp(2 * log_mag.numpy()[below_taper, 8:-8]).sum(axis=0)
    np.testing.assert_allclose(energy, expected, rtol=0.15)
    # ... and all of the flat magnitude below the taper went into them.
    assert torch.exp(rest[below_taper]).max() < 1e-5


def test_the_harmonics_are_periodic_at_the_given_f0():
    frames = 120
    f0 = torch.from_numpy(np.geomspace(85.0, 200.0, frames))
    bin_hz = CFG.sample_rate / CFG.n_fft
    falling = -torch.log1p(torch.arange(CFG.n_fft // 2 + 1, dtype=torch.float64) * bin_hz / 200.0)  # speech-like tilt
    harmonics, _ = harmonic_plus_noise(falling[:, None].expand(-1, frames), f0, torch.ones(frames), CFG)
    track, voiced = yin_f0(torch.from_numpy(harmonics), CFG)
    inner = slice(6, frames - 6)
    assert voiced[inner].all()
    cents = 1200 * np.abs(np.log2(track[inner].numpy() / f0[inner].numpy()))
    assert np.median(cents) < 10.0


def test_unvoiced_frames_pass_through_and_the_share_tapers_with_frequency():
    frames = 30
    log_mag = torch.randn(CFG.n_fft // 2 + 1, frames, dtype=torch.float64)
    voicing = torch.zeros(frames)
    voicing[10:20] = 0.75
    harmonics, rest = harmonic_plus_noise(log_mag, torch.full((frames,), 150.0), voicing, CFG)
    torch.testing.assert_close(rest[:, :10], log_mag[:, :10])
    torch.testing.assert_close(rest[:, 20:], log_mag[:, 20:])
    # A voiced frame keeps a quarter of the energy under the taper, all of it above.
    bin_hz = CFG.sample_rate / CFG.n_fft
    low, high = int(1000 / bin_hz), int(6000 / bin_hz)
    torch.testing.assert_close(rest[low, 15], log_mag[low, 15] + 0.5 * np.log(0.25))
    torch.testing.assert_close(rest[high, 15], log_mag[high, 15])
    share = harmonic_share(torch.tensor([1000.0, 4000.0, 6000.0]), torch.tensor(1.0))
    torch.testing.assert_close(share, torch.tensor([1.0, 0.5, 0.0]))
    # Silence makes no harmonics.
    silent, _ = harmonic_plus_noise(log_mag, torch.full((frames,), 150.0), torch.zeros(frames), CFG)
    assert not silent.any()
