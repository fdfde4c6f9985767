"""Harmonic-plus-noise synthesis: the voiced part of a magnitude spectrogram as a sum of sinusoids
at multiples of a given F0, the rest left to be phased as noise.

Why: a magnitude estimated from a predicted (over-smooth) mel keeps only part of the ripple between
harmonics, most of all for low voices, whose harmonics lie closest together. Phase reconstruction of
such a magnitude gives rough, barely periodic sound: pyin then calls a low voice unvoiced. Given the
F0 and voicing the estimator reads off the mel (:class:`~gst_tts.audio.vocoders.spectral.MagnitudeEstimator`
with ``pitch_head``), the voiced energy is rebuilt as exact harmonics, periodic by construction.

Each harmonic ``k`` of frame ``t`` takes the energy of the magnitude in the band ``[(k − ½)·F0,
(k + ½)·F0)`` times the harmonic share ``voicing[t] · taper(k·F0)`` (full below
:data:`HARMONIC_TAPER_HZ`'s start, none above its end: the upper spectrum of speech is mostly
noise-like); its amplitude is the sinusoid's that has that energy in a Hann-windowed STFT. What is
left (the magnitude scaled by ``√(1 − share)``) goes back to the caller to phase as before.
"""

from __future__ import annotations

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig

__all__ = ["HARMONIC_TAPER_HZ", "harmonic_share", "harmonic_plus_noise"]

#: The harmonic share falls linearly from full to none between these frequencies (Hz).
HARMONIC_TAPER_HZ = (3000.0, 5000.0)


def harmonic_share(frequencies: torch.Tensor, voicing: torch.Tensor, taper_hz: tuple[float, float] = HARMONIC_TAPER_HZ) -> torch.Tensor:
    """``voicing[t] · taper(f)``: the share of the energy at frequency ``f`` (Hz) of frame ``t``
    that is harmonic. ``frequencies`` ``(..., frames)`` or broadcastable against ``voicing`` ``(frames,)``."""
    low, high = taper_hz
    taper = torch.clamp((high - frequencies) / (high - low), 0.0, 1.0)
    return voicing * taper


def harmonic_plus_noise(
    log_magnitude: torch.Tensor,
    f0: torch.Tensor,
    voicing: torch.Tensor,
    audio_config: AudioConfig,
    *,
    taper_hz: tuple[float, float] = HARMONIC_TAPER_HZ,
) -> tuple[np.ndarray, torch.Tensor]:
    """Split a magnitude spectrogram into harmonics (synthesised) and the rest (returned).

    Args:
        log_magnitude: ``(n_fft // 2 + 1, frames)`` natural-log STFT magnitude (Hann window
            ``win_length``, frame ``t`` centred on sample ``t · hop``).
        f0: ``(frames,)`` F0 in Hz (its value in unvoiced frames only carries the phase along).
        voicing: ``(frames,)`` in [0, 1]: the harmonic share of each frame below the taper.
        audio_config: the STFT's settings.
        taper_hz: where the harmonic share falls from full to none. Default :data:`HARMONIC_TAPER_HZ`.

    Returns:
        ``(harmonics, rest)``: ``(frames - 1) · hop`` float64 samples of the harmonic part, and the
        log magnitude of the rest, shaped like ``log_magnitude``.
    """
    c = audio_config
    log_mag = log_magnitude.to(torch.float64)
    bins, frames = log_mag.shape
    f0 = f0.to(torch.float64).clamp(min=1.0)
    voicing = voicing.to(torch.float64).clamp(0.0, 1.0)
    bin_hz = c.sample_rate / c.n_fft
    bin_frequencies = torch.arange(bins, dtype=torch.float64) * bin_hz
    share = harmonic_share(bin_frequencies[:, None], voicing[None, :], taper_hz)  # (bins, frames)
    energy = torch.exp(2 * log_mag)
    rest = log_mag + 0.5 * torch.log(torch.clamp(1.0 - share, min=1e-12))

    samples = max(frames - 1, 1) * c.hop_length
    harmonics = np.zeros(samples)
    if float(voicing.max()) <= 0.0:
        return harmonics, rest
    # Energy below each bin edge: band energies by interpolating it at the band limits.
    harmonic_energy = energy * share
    cumulative = torch.nn.functional.pad(torch.cumsum(harmonic_energy, dim=0), (0, 0, 1, 0))  # (bins + 1, frames)
    edges = (torch.arange(bins + 1, dtype=torch.float64) - 0.5) * bin_hz  # bin b spans [b − ½, b + ½) bins

    def energy_below(hz: torch.Tensor) -> torch.Tensor:  # (frames,) → (frames,)
        position = torch.clamp((hz - edges[0]) / bin_hz, 0.0, float(bins))
        low = torch.clamp(position.floor().long(), max=bins - 1)
        fraction = position - low
        column = torch.arange(frames)
        return cumulative[low, column] + fraction * (cumulative[low + 1, column] - cumulative[low, column])

    # A sinusoid of amplitude A puts A² · 3 · n_fft · win_length / 32 of energy in the positive
    # frequencies of a Hann-windowed STFT (Parseval; Σ hann² = 3·win_length/8).
    to_amplitude = 32.0 / (3.0 * c.n_fft * c.win_length)
    frame_positions = np.arange(frames) * c.hop_length
    sample_positions = np.arange(samples)
    f0_samples = np.interp(sample_positions, frame_positions, f0.numpy())
    phase = 2 * np.pi * np.cumsum(f0_samples) / c.sample_rate
    highest = min(taper_hz[1], c.sample_rate / 2)
    # Fixed, spread starting phases: harmonics all in cosine phase would add up to a buzzy pulse train.
    offsets = np.random.default_rng(0).uniform(0.0, 2 * np.pi, int(highest / float(f0.min())) + 1)
    for k in range(1, int(highest / float(f0.min())) + 1):
        centre = k * f0
        band = energy_below(centre + 0.5 * f0) - energy_below(centre - 0.5 * f0)
        amplitude = torch.sqrt(torch.clamp(band, min=0.0) * to_amplitude)
        amplitude = torch.where(centre < highest, amplitude, torch.zeros_like(amplitude)).numpy()
        if not amplitude.any():
            continue
        harmonics += np.interp(sample_positions, frame_positions, amplitude) * np.cos(k * phase + offsets[k])
    return harmonics, rest

