"""The runtime's signal processing in numpy: STFT and inverse, log-mel, silence trimming,
resampling and Griffin-Lim, computed as :mod:`gst_tts.audio` computes them with torchaudio and
librosa (``tests/runtime/test_runtime_audio.py`` compares them), so a reference gives the same mel here.
"""

from __future__ import annotations

import numpy as np

from gst_tts.audio.stft import hann_window, istft, stft  # noqa: F401  (istft: part of this module's surface)
from gst_tts.audio.vocoders.phase import fast_griffin_lim

LOG_MEL_FLOOR = 1e-5  # gst_tts.audio.features.LOG_MEL_FLOOR: one value, a test keeps them equal


def log_mel(samples: np.ndarray, *, filters: np.ndarray, n_fft: int, hop_length: int, win_length: int) -> np.ndarray:
    """``(n,)`` samples → ``(frames, n_mels)`` float32 ``log(max(mel, 1e-5))`` of the magnitude
    spectrum through ``filters`` ``(n_fft // 2 + 1, n_mels)`` (:class:`~gst_tts.audio.features.MelExtractor`)."""
    magnitude = np.abs(
        stft(samples.astype(np.float64), n_fft=n_fft, hop_length=hop_length, window=hann_window(win_length, n_fft))
    )
    return np.log(np.maximum(magnitude @ filters, LOG_MEL_FLOOR)).astype(np.float32)


def trim_silence(samples: np.ndarray, top_db: float | None, frame_length: int = 1024, hop: int = 256) -> np.ndarray:
    """Leading and trailing audio quieter than ``top_db`` below the loudest frame cut off
    (librosa.effects.trim: frame RMS over zero-padded centred frames, in dB of the peak power)."""
    if top_db is None or samples.size == 0:
        return samples
    padded = np.pad(samples.astype(np.float64), frame_length // 2)
    frames = 1 + (padded.size - frame_length) // hop
    index = np.arange(frame_length)[None, :] + hop * np.arange(frames)[:, None]
    power = np.mean(np.abs(padded[index]) ** 2, axis=1)
    reference = power.max()
    # librosa.power_to_db with amin 1e-10, relative to the peak
    db = 10 * np.log10(np.maximum(power, 1e-10)) - 10 * np.log10(max(reference, 1e-10))
    loud = np.flatnonzero(db > -top_db)
    if loud.size == 0:
        return samples[:0]
    start = loud[0] * hop
    end = min(samples.size, (loud[-1] + 1) * hop)
    return samples[start:end]


def resample(samples: np.ndarray, rate: int, wanted: int) -> np.ndarray:
    """``samples`` at ``rate`` Hz → ``wanted`` Hz by band-limited (FFT) interpolation. Not the
    torch path's polyphase filter: a reference at another rate gets nearly, not exactly, the same mel."""
    if rate == wanted or samples.size == 0:
        return samples
    n_out = max(1, int(round(samples.size * wanted / rate)))
    spectrum = np.fft.rfft(samples.astype(np.float64))
    bins = n_out // 2 + 1
    kept = np.zeros(bins, dtype=complex)
    kept[: min(bins, spectrum.size)] = spectrum[: min(bins, spectrum.size)]
    return (np.fft.irfft(kept, n=n_out) * (n_out / samples.size)).astype(np.float32)


#: The peak Griffin-Lim's output is scaled to (``GriffinLimVocoder.output_peak``).
GRIFFIN_LIM_PEAK = 0.95


def griffin_lim(
    log_mel_frames: np.ndarray,
    *,
    filters: np.ndarray,
    n_fft: int,
    hop_length: int,
    win_length: int,
    n_iter: int = 32,
    momentum: float = 0.99,
    power: float = 1.3,
    rng: np.random.Generator | None = None,
    peak: float | None = GRIFFIN_LIM_PEAK,
) -> np.ndarray:
    """``(frames, n_mels)`` log-mel (not normalised) → ``(n,)`` float32 peak-normalised to ``peak``
    (None: Griffin-Lim's own level, for streaming, which sets one gain across windows):
    the mel pseudo-inverse, magnitudes raised to ``power``, then fast Griffin-Lim with momentum
    (:class:`~gst_tts.audio.vocoders.griffin_lim.GriffinLimVocoder`'s settings and algorithm; its
    random initial phase is drawn here, so the samples differ, not the method)."""
    rng = rng or np.random.default_rng()
    linear = (
        np.maximum(np.exp(log_mel_frames.astype(np.float64)) @ np.linalg.pinv(filters.T.astype(np.float64)).T, 0.0)
        ** power
    )
    min_frames = n_fft // hop_length + 1
    if linear.shape[0] < min_frames:  # the STFT's reflect padding needs a few frames
        linear = np.pad(linear, ((0, min_frames - linear.shape[0]), (0, 0)))
    # The spectral vocoder's fast Griffin-Lim (phase.py), from a random phase.
    phase = 2 * np.pi * rng.random(linear.shape)
    audio = fast_griffin_lim(
        linear.T, phase.T, n_fft=n_fft, hop_length=hop_length, win_length=win_length, n_iter=n_iter, momentum=momentum
    )
    loudest = float(np.max(np.abs(audio))) if audio.size and peak is not None else 0.0
    return (audio / loudest * peak).astype(np.float32) if loudest > 0 else audio.astype(np.float32)
