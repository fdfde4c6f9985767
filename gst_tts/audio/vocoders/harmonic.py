"""Harmonic restoration: a magnitude spectrogram whose harmonics were blurred gets them back, at
multiples of a given F0, before its phase is reconstructed.

Why: a magnitude estimated from a predicted (over-smooth) mel keeps little of the ripple between
harmonics, least of all for low voices, whose harmonics lie closest together. Phase reconstruction
of such a magnitude gives rough, barely periodic sound: pyin then calls a low voice unvoiced. Given
the F0 and voicing the estimator reads off the mel
(:class:`~gst_tts.audio.vocoders.spectral.MagnitudeEstimator` with ``pitch_head``), each voiced
frame's power is redistributed within every harmonic's band onto a comb of peaks at ``k · F0``,
shaped as a steady sinusoid's in a Hann-windowed STFT, so the band's energy is kept (what lies under
the first harmonic is emptied). PGHI then phases a magnitude with sharp harmonics, which it turns
into periodic sound.

numpy only (no torch): the PyTorch spectral vocoder and the torch-free runtime call these same functions.

Five things keep it from harming what was fine, and make the audio's pitch follow the F0 it is given:

- **Only where the ripple is missing.** A frame whose magnitude already rises :data:`RIPPLE_FULL`
  nepers from between harmonics to the harmonics (a recording's mel) is left alone; a flat one (the
  model's mels) is restored fully; in between, in proportion.
- **Only where the magnitude has no comb of its own** (:func:`comb_strength`): a recording's
  magnitude has sharp harmonics even where the pitch head's F0 misses them by more than the
  refinement reaches (a head fine-tuned on the model's mels reads recordings' mels less well).
  Frames whose strongest comb within :data:`COMB_SEARCH_CENTS` of the given F0 reaches
  ``BLURRED_RIPPLE[1]`` nepers are left alone, those under ``BLURRED_RIPPLE[0]`` may be restored
  fully. With the rest of this list, in copy synthesis of recordings' mels through the demo's
  GTA-tuned vocoder wide-band PESQ went from 1.96 to 2.33 (12 held-out demo clips) and from 2.01
  to 2.55 (6 LJSpeech clips); on the model's teacher-forced mels of the 12 clips it stayed at 1.10
  (1.09).
- **The comb is laid on the power averaged over one F0** around each bin (:func:`band_average`),
  not on the power bin by bin, where the magnitude's comb is blurred: the estimator keeps a weak
  comb of its own, often off the pitch head's F0, most of all for high voices (harmonics far apart,
  which a mel partly resolves). Multiplied bin by bin, the two combs beat and the audio's pitch
  follows neither: on the demo model's outputs for three voices near 200 Hz the audio's F0 (pyin)
  moved with the pitch head's track at a mean slope of 0.45, with the averaging (and the refinement
  below) at 0.66 (``docs/results/2026-11-29-harmonic-restoration.md``).
- **The F0 is refined** within :data:`REFINE_CENTS` of the given one, to where the magnitude's own
  ripple is strongest, where that ripple is clear (:data:`REFINE_MIN_RIPPLE`): a comb off by a
  fraction of a semitone would cut the true harmonics.
- **Only below the taper** (:data:`HARMONIC_TAPER_HZ`): the upper spectrum of speech is mostly noise.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BLURRED_RIPPLE",
    "COMB_SEARCH_CENTS",
    "COMB_SEARCH_STEP_CENTS",
    "HARMONIC_TAPER_HZ",
    "MIN_F0_HZ",
    "RIPPLE_FULL",
    "REFINE_CENTS",
    "REFINE_MIN_RIPPLE",
    "RIPPLE_MAX_HZ",
    "band_average",
    "comb_strength",
    "harmonic_share",
    "harmonic_ripple",
    "refine_f0",
    "restore_harmonics",
]

#: The restored share falls linearly from full to none between these frequencies (Hz).
HARMONIC_TAPER_HZ = (3000.0, 5000.0)
#: F0 is floored here (Hz): below any voice.
MIN_F0_HZ = 30.0
#: A frame whose harmonic ripple (nepers, :func:`harmonic_ripple`) reaches this is left as it is.
#: Voiced frames of recordings' mels: median 3.2; of the demo model's GTA mels: median 0.3.
RIPPLE_FULL = 2.0
#: How far (cents) :func:`refine_f0` looks either side of the given F0, in 10-cent steps.
REFINE_CENTS = 80
#: :func:`refine_f0` moves the F0 only where the best ripple reaches this (nepers). The demo
#: model's outputs for high voices keep a weak comb of 0.4–0.7 nepers whose peaks lie off the pitch
#: head's F0 by most of a semitone: the comb the estimator blurred, not the F0 to follow.
REFINE_MIN_RIPPLE = 1.0
#: :func:`comb_strength` looks this far (cents) either side of the given F0, in steps of
#: :data:`COMB_SEARCH_STEP_CENTS`: a recording's comb shows within a step of its F0 (on the demo's
#: clips, 50-cent steps change the gate below by more than 0.1 on 3–6% of voiced frames against
#: 10-cent steps, at a fifth of the cost).
COMB_SEARCH_CENTS = 700
COMB_SEARCH_STEP_CENTS = 50
#: A frame whose :func:`comb_strength` reaches the second value (nepers) has harmonics of its own
#: and is left alone; under the first it may be restored fully; in between, in proportion. The
#: strongest comb of voiced frames in the demo's GTA-tuned vocoder (percentiles 10 / 50 / 90):
#: recordings' mels 1.3 / 4.2 / 8.8, the model's teacher-forced mels 0.4 / 0.7 / 1.4.
BLURRED_RIPPLE = (1.0, 2.0)
#: The ripple is measured on the harmonics under this frequency (Hz), where a mel resolves them.
RIPPLE_MAX_HZ = 1500.0


def harmonic_share(
    frequencies: np.ndarray, voicing: np.ndarray, taper_hz: tuple[float, float] = HARMONIC_TAPER_HZ
) -> np.ndarray:
    """``voicing · taper(f)``: the share of the power at frequency ``f`` (Hz) that is harmonic.
    ``frequencies`` and ``voicing`` broadcast against each other."""
    low, high = taper_hz
    return np.asarray(voicing) * np.clip((high - np.asarray(frequencies)) / (high - low), 0.0, 1.0)


def band_average(power: np.ndarray, width_bins: np.ndarray) -> np.ndarray:
    """Each bin's ``power`` averaged over ``width_bins`` bins centred on it, frame by frame.

    Args:
        power: ``(bins, frames)``, non-negative.
        width_bins: ``(frames,)`` the width of each frame's window in bins (fractional; floored
            at 1). Windows are cut at the spectrum's ends and averaged over what remains.

    Returns:
        ``(bins, frames)`` float64.
    """
    power = np.asarray(power, dtype=np.float64)
    bins, frames = power.shape
    below = np.concatenate([np.zeros((1, frames)), np.cumsum(power, axis=0)])  # below[j]: the power under bin j
    column = np.arange(frames)

    def cumulative(position: np.ndarray) -> np.ndarray:  # below[] at fractional positions
        low = np.minimum(np.floor(position).astype(np.int64), bins - 1)
        return below[low, column] + (position - low) * power[low, column]

    half = 0.5 * np.maximum(np.asarray(width_bins, dtype=np.float64), 1.0)[None, :]
    centre = np.arange(bins, dtype=np.float64)[:, None] + 0.5
    start, end = np.clip(centre - half, 0.0, bins), np.clip(centre + half, 0.0, bins)
    return (cumulative(end) - cumulative(start)) / (end - start)


def _log_magnitude_at(log_magnitude: np.ndarray, hz: np.ndarray, bin_hz: float) -> np.ndarray:
    """``log_magnitude`` ``(bins, frames)`` interpolated at ``hz`` ``(..., frames, K)`` (frame on the
    second-to-last axis)."""
    bins, frames = log_magnitude.shape
    position = np.clip(hz / bin_hz, 0.0, bins - 1.001)
    low = np.floor(position).astype(np.int64)
    fraction = position - low
    column = np.broadcast_to(np.arange(frames).reshape(frames, 1), low.shape)
    return log_magnitude[low, column] * (1 - fraction) + log_magnitude[low + 1, column] * fraction


def harmonic_ripple(log_magnitude: np.ndarray, f0: np.ndarray, *, sample_rate: int, n_fft: int) -> np.ndarray:
    """How far (nepers) a magnitude rises from between harmonics to the harmonics of ``f0``: the mean
    over harmonics under :data:`RIPPLE_MAX_HZ` of ``log |X|(k·F0) − log |X|((k + ½)·F0)``.

    Args:
        log_magnitude: ``(n_fft // 2 + 1, frames)`` natural-log magnitude.
        f0: ``(..., frames)`` F0 candidates (Hz).
        sample_rate, n_fft: the STFT's settings.

    Returns:
        ``(..., frames)`` ripple, about 0 for a magnitude with no harmonic structure.
    """
    bin_hz = sample_rate / n_fft
    log_magnitude = np.asarray(log_magnitude, dtype=np.float64)
    f0 = np.maximum(np.asarray(f0, dtype=np.float64), MIN_F0_HZ)
    count = max(1, int(RIPPLE_MAX_HZ / float(f0.min())))
    harmonics = f0[..., None] * np.arange(1, count + 1, dtype=np.float64)
    inside = (harmonics < RIPPLE_MAX_HZ).astype(np.float64)
    rise = _log_magnitude_at(log_magnitude, harmonics, bin_hz) - _log_magnitude_at(
        log_magnitude, harmonics + 0.5 * f0[..., None], bin_hz
    )
    return (rise * inside).sum(-1) / np.maximum(inside.sum(-1), 1.0)


def comb_strength(
    log_magnitude: np.ndarray,
    f0: np.ndarray,
    *,
    sample_rate: int,
    n_fft: int,
    cents: int = COMB_SEARCH_CENTS,
    step_cents: int = COMB_SEARCH_STEP_CENTS,
) -> np.ndarray:
    """Each frame's strongest :func:`harmonic_ripple` over F0s within ``cents`` of ``f0``
    ``(frames,)``, in steps of ``step_cents``: how sharp a comb the magnitude has of its own,
    whether or not at the given F0. ``(frames,)`` nepers."""
    steps = np.arange(-cents, cents + 1, step_cents, dtype=np.float64)
    f0 = np.maximum(np.asarray(f0, dtype=np.float64), MIN_F0_HZ)
    candidates = f0[None, :] * np.power(2.0, steps / 1200.0)[:, None]
    return harmonic_ripple(log_magnitude, candidates, sample_rate=sample_rate, n_fft=n_fft).max(0)


def refine_f0(
    log_magnitude: np.ndarray, f0: np.ndarray, *, sample_rate: int, n_fft: int, cents: int = REFINE_CENTS
) -> tuple[np.ndarray, np.ndarray]:
    """Each frame's F0 moved, within ``cents`` in 10-cent steps, to where :func:`harmonic_ripple`
    is largest, where that reaches :data:`REFINE_MIN_RIPPLE`; returns ``(f0, ripple)`` (the ripple
    at the F0 returned), each ``(frames,)``. ``cents`` is a multiple of 10."""
    steps = np.arange(-cents, cents + 1, 10, dtype=np.float64)
    f0 = np.maximum(np.asarray(f0, dtype=np.float64), MIN_F0_HZ)
    candidates = f0[None, :] * np.power(2.0, steps / 1200.0)[:, None]
    ripple = harmonic_ripple(log_magnitude, candidates, sample_rate=sample_rate, n_fft=n_fft)  # (candidates, frames)
    best = ripple.argmax(0)
    column = np.arange(f0.size)
    # Where there is next to no ripple its maximum says nothing (on a smooth slope it drifts to an
    # end of the search): keep the given F0 there.
    trusted = ripple[best, column] >= REFINE_MIN_RIPPLE
    given = ripple[cents // 10, column]
    return np.where(trusted, candidates[best, column], f0), np.where(trusted, ripple[best, column], given)


def restore_harmonics(
    log_magnitude: np.ndarray,
    f0: np.ndarray,
    voicing: np.ndarray,
    *,
    sample_rate: int,
    n_fft: int,
    taper_hz: tuple[float, float] = HARMONIC_TAPER_HZ,
    ripple_full: float = RIPPLE_FULL,
) -> np.ndarray:
    """A magnitude spectrogram with the harmonics of ``f0`` restored where they are blurred.

    Args:
        log_magnitude: ``(n_fft // 2 + 1, frames)`` natural-log STFT magnitude (Hann window).
        f0: ``(frames,)`` F0 (Hz), refined here (:func:`refine_f0`).
        voicing: ``(frames,)`` in [0, 1]: how voiced each frame is.
        sample_rate, n_fft: the STFT's settings.
        taper_hz: where the restored share falls from full to none. Default :data:`HARMONIC_TAPER_HZ`.
        ripple_full: a frame with this much ripple already is left alone. Default :data:`RIPPLE_FULL`.

    Returns:
        The restored log magnitude, shaped like ``log_magnitude`` (float64). Every harmonic band's
        energy is kept: the power moves onto the harmonics, it is not added.
    """
    log_mag = np.asarray(log_magnitude, dtype=np.float64)
    voicing = np.clip(np.asarray(voicing, dtype=np.float64), 0.0, 1.0)
    if float(voicing.max()) <= 0.0:
        return log_mag
    low, high = BLURRED_RIPPLE
    blurred = np.clip(
        (high - comb_strength(log_mag, f0, sample_rate=sample_rate, n_fft=n_fft)) / (high - low), 0.0, 1.0
    )
    f0, ripple = refine_f0(log_mag, f0, sample_rate=sample_rate, n_fft=n_fft)
    bin_hz = sample_rate / n_fft
    # From the taper's top up the share is 0 and the magnitude stays as it is: only the bins below
    # are computed (under half of them at 22.05 kHz).
    bins = min(log_mag.shape[0], int(np.ceil(taper_hz[1] / bin_hz)))
    frequencies = np.arange(bins, dtype=np.float64)[:, None] * bin_hz
    missing = np.minimum(np.clip(1.0 - ripple / ripple_full, 0.0, 1.0), blurred)
    share = harmonic_share(frequencies, (voicing * missing)[None, :], taper_hz)
    # Each harmonic takes the shape a steady sinusoid has in a Hann-windowed STFT, sidelobes
    # included: a magnitude close to a consistent STFT, which PGHI and Griffin-Lim then keep periodic.
    # |W(Δ)| = sinc(Δ) + ½ sinc(Δ − 1) + ½ sinc(Δ + 1) with Δ in bins (= sinc(Δ) / (1 − Δ²)); its power
    # averages 1.5 bins per harmonic, so the comb is normalised to a mean of 1 over each F0 of band.
    # Bins under the first harmonic take its lower flank: a voice has nothing there, so it is emptied.
    nearest = np.maximum(np.round(frequencies / f0[None, :]), 1.0)
    distance = (frequencies - nearest * f0[None, :]) / bin_hz
    lobe = np.sinc(distance) + 0.5 * (np.sinc(distance - 1.0) + np.sinc(distance + 1.0))
    comb = lobe**2 * f0[None, :] / (1.5 * bin_hz)
    power = np.exp(2 * log_mag[:bins])
    # The comb goes on the band's power where the magnitude's own comb is blurred, on each bin's
    # where it is sharp: the product keeps a recording's harmonics where the F0 misses them a little.
    under_comb = power + blurred[None, :] * (band_average(power, f0 / bin_hz) - power)
    power = power * (1.0 - share) + under_comb * share * comb
    restored = log_mag.copy()
    restored[:bins] = 0.5 * np.log(np.maximum(power, np.finfo(np.float64).tiny))
    return restored
