"""The spectral vocoder's half after its network, in numpy: the estimator's log magnitude (and
pitch) → samples. Sharpening, the F0 track's spread set to a reference's (:mod:`~gst_tts.audio.vocoders.intonation`),
harmonic restoration (:mod:`~gst_tts.audio.vocoders.harmonic`), PGHI and fast Griffin-Lim
(:mod:`~gst_tts.audio.vocoders.phase`).

torch-free: :class:`~gst_tts.audio.vocoders.spectral.SpectralVocoder` runs its
:class:`~gst_tts.audio.vocoders.spectral.MagnitudeEstimator` in PyTorch and the torch-free runtime
runs the exported estimator graph in onnxruntime; both hand its outputs to :func:`spectral_audio`,
so the two differ only by the graph's rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gst_tts.audio.vocoders.harmonic import restore_harmonics
from gst_tts.audio.vocoders.intonation import with_f0_range
from gst_tts.audio.vocoders.phase import fast_griffin_lim, pghi_phase

__all__ = ["SPECTRAL_DEFAULTS", "LOG_MAGNITUDE_FLOOR", "spectral_audio"]

#: The reconstruction's settings and their defaults (``SpectralVocoder``'s arguments; an export's
#: ``model.json`` records the vocoder's own values under ``vocoder``).
SPECTRAL_DEFAULTS: dict[str, Any] = {"magnitude_power": 1.15, "n_iter": 16, "momentum": 0.99}
#: log of the features' floor (``gst_tts.audio.features.LOG_MEL_FLOOR``, 1e-5): the padding's level.
LOG_MAGNITUDE_FLOOR = float(np.log(1e-5))


def spectral_audio(
    log_magnitude: np.ndarray,
    pitch: np.ndarray | None,
    *,
    sample_rate: int,
    n_fft: int,
    hop_length: int,
    win_length: int,
    magnitude_power: float = SPECTRAL_DEFAULTS["magnitude_power"],
    n_iter: int = SPECTRAL_DEFAULTS["n_iter"],
    momentum: float = SPECTRAL_DEFAULTS["momentum"],
    f0_range_st: float | None = None,
    f0_range_strength: float = 1.0,
) -> np.ndarray:
    """The estimator's outputs → ``(frames - 1) · hop_length`` float32 samples in [-1, 1].

    Args:
        log_magnitude: ``(frames, n_fft // 2 + 1)`` natural-log magnitude (the estimator's output
            for one utterance).
        pitch: ``(frames, 2)`` the pitch head's raw output (log F0 in Hz, voicing logit), or None
            for an estimator without one.
        sample_rate, n_fft, hop_length, win_length: the STFT's settings.
        magnitude_power: the magnitude is raised to this power, then rescaled to its original
            energy: above 1 deepens the valleys between harmonics. Default 1.15.
        n_iter, momentum: fast Griffin-Lim's after PGHI. Defaults 16, 0.99.
        f0_range_st: with a ``pitch``: the F0 spread (semitones, 10th to 90th percentile) the
            harmonics are restored at: the pitch track is stretched about its median toward it
            (:func:`~gst_tts.audio.vocoders.intonation.with_f0_range`). Default ``None``: the
            track as read.
        f0_range_strength: how far toward ``f0_range_st`` (0: not at all, 1: all the way, above 1:
            past it). Default 1.
    """
    log_mag = np.asarray(log_magnitude, dtype=np.float64).T  # (bins, frames)
    frames = log_mag.shape[1]
    if magnitude_power != 1.0:
        # Raise to the power, then shift back so the total energy is unchanged.
        sharpened = magnitude_power * log_mag
        log_mag = sharpened + 0.5 * (_logsumexp(2 * log_mag) - _logsumexp(2 * sharpened))
    if pitch is not None:  # blurred harmonics restored at the F0 read off the mel, before the phase
        if f0_range_st is not None:
            pitch = with_f0_range(pitch, f0_range_st, f0_range_strength)
        raw = np.asarray(pitch, dtype=np.float64)
        f0, voicing = np.exp(raw[:, 0]), 1.0 / (1.0 + np.exp(-raw[:, 1]))
        log_mag = restore_harmonics(log_mag, f0, voicing, sample_rate=sample_rate, n_fft=n_fft)
    min_frames = n_fft // hop_length + 1  # the inverse of a centred STFT needs a few frames
    if frames < min_frames:
        log_mag = np.pad(log_mag, ((0, 0), (0, min_frames - frames)), constant_values=LOG_MAGNITUDE_FLOOR)
    phase = pghi_phase(log_mag, n_fft=n_fft, hop_length=hop_length, win_length=win_length)
    # float32 from here: the STFTs cost half of float64's, and the output is float32 anyway.
    audio = fast_griffin_lim(
        np.exp(log_mag).astype(np.float32),
        phase.astype(np.float32),
        n_fft=n_fft,
        hop_length=hop_length,
        win_length=win_length,
        n_iter=n_iter,
        momentum=momentum,
    )
    audio = audio[: max(frames - 1, 1) * hop_length]
    peak = float(np.max(np.abs(audio))) if audio.size else 0.0
    return (audio / peak * 0.99 if peak > 0.99 else audio).astype(np.float32)


def _logsumexp(x: np.ndarray) -> float:
    top = float(x.max())
    return top + float(np.log(np.sum(np.exp(x - top))))
