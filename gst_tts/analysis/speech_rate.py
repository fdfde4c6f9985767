"""Speaking tempo without a transcript: syllable nuclei per second of articulation, read off a log-mel.

Why: a reference recording comes without its text, so its rate in letters per second (what
``measure-transfer`` reports, :func:`gst_tts.analysis.prosody.articulation_rate`) cannot be read.
Syllable nuclei can: a vowel is a peak of the level in the band of its first two formants. Their
count per second of speech (pauses excluded, as the articulation rate excludes them) follows the
letter rate of espeak-ng references at r 0.93-0.95 (``docs/results/2026-11-29-tempo-transfer.md``).
Times :data:`LETTERS_PER_NUCLEUS` it estimates a recording's letter rate, which
:mod:`gst_tts.inference.tempo` compares with an output's (whose text is known). Decoded speech is
not read this way: its smoother mel shows fewer nuclei per letter (3.9-4.2) than recordings do.

numpy only (no torch, no scipy): the torch-free runtime reads references with it too.
"""

from __future__ import annotations

import math

import numpy as np

from gst_tts.analysis.prosody import pause_frames, speech_frames

__all__ = [
    "NUCLEUS_BAND_HZ",
    "SMOOTH_FRAMES",
    "PROMINENCE_DB",
    "MIN_GAP_S",
    "FLOOR_DB",
    "MIN_NUCLEI",
    "LETTERS_PER_NUCLEUS",
    "slaney_mel_centres",
    "prominent_peaks",
    "nucleus_frames",
    "nucleus_rate",
    "letter_rate_estimate",
]

#: Nuclei are peaks of the level summed over the mel channels centred in this band (Hz): vowels'
#: first two formants, where they are loudest and most consonants are not.
NUCLEUS_BAND_HZ = (300.0, 2500.0)
#: The band level is averaged over this many frames (about 58 ms at 22050 Hz / 256) before peaks
#: are picked: one vowel, one peak, however its formants move.
SMOOTH_FRAMES = 5
#: A peak counts when it stands this far (dB) above the dips on both sides (its prominence).
PROMINENCE_DB = 3.0
#: Peaks closer than this (s) are one nucleus (the higher counts).
MIN_GAP_S = 0.058
#: Peaks more than this far (dB) under the loudest frame of the band are consonants or breath.
FLOOR_DB = 20.0
#: Fewer nuclei than this give no rate: too little speech to say anything about its tempo.
MIN_NUCLEI = 3
#: English letters per nucleus :func:`nucleus_frames` finds in recorded speech: the median is
#: 3.2-3.3 over espeak-ng voices and 3.7 over LJSpeech clips (``docs/results/2026-11-29-tempo-transfer.md``).
#: It sets the level of :func:`letter_rate_estimate`, not how it follows a rate.
LETTERS_PER_NUCLEUS = 3.5


def slaney_mel_centres(n_mels: int, fmin: float, fmax: float) -> np.ndarray:
    """Centre frequencies (Hz) of ``n_mels`` Slaney-scale mel channels from ``fmin`` to ``fmax``
    (the scale :class:`~gst_tts.audio.features.MelExtractor` uses), ``(n_mels,)``."""
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, log_step = min_log_hz / f_sp, math.log(6.4) / 27.0

    def to_mel(hz: float) -> float:
        return hz / f_sp if hz < min_log_hz else min_log_mel + math.log(hz / min_log_hz) / log_step

    mels = np.linspace(to_mel(fmin), to_mel(fmax), n_mels + 2)[1:-1]
    return np.where(mels < min_log_mel, mels * f_sp, min_log_hz * np.exp(log_step * (mels - min_log_mel)))


def prominent_peaks(x: np.ndarray, prominence: float, distance: int) -> np.ndarray:
    """Indices of the peaks of ``(n,)`` ``x`` (ascending) that stand ``prominence`` above the
    higher of the lowest points between them and a higher point (or the edge) on either side, the
    lower of two peaks closer than ``distance`` samples dropped first: ``scipy.signal.find_peaks(x,
    prominence=..., distance=...)``'s peaks (a flat top is a peak at its middle), which the
    tests check it against."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    candidates = []
    i = 1
    while i < n - 1:  # local maxima; a flat top at its middle
        if x[i - 1] < x[i]:
            j = i
            while j + 1 < n and x[j + 1] == x[i]:
                j += 1
            if j + 1 < n and x[j + 1] < x[i]:
                candidates.append((i + j) // 2)
            i = j + 1
        else:
            i += 1
    peaks = np.asarray(candidates, dtype=np.int64)
    if distance > 1 and len(peaks) > 1:
        keep = np.ones(len(peaks), dtype=bool)
        for k in np.argsort(x[peaks], kind="stable")[::-1]:  # the highest first
            if keep[k]:
                near = np.abs(peaks - peaks[k]) < distance
                near[k] = False
                keep[near] = False
        peaks = peaks[keep]
    return np.asarray([q for q in peaks if x[q] - max(_base(x, q, -1), _base(x, q, 1)) >= prominence], dtype=np.int64)


def _base(x: np.ndarray, q: int, step: int) -> float:
    """The lowest point of ``x`` from ``q`` toward the first point higher than ``x[q]`` (or the
    edge) in direction ``step`` (-1 left, 1 right), searched in widening windows."""
    width = 64
    while True:
        if step < 0:
            start = max(0, q - width)
            higher = np.flatnonzero(x[start:q] > x[q])
            if len(higher) or start == 0:
                return float(x[start + higher[-1] + 1 if len(higher) else 0 : q + 1].min())
        else:
            stop = min(len(x), q + 1 + width)
            higher = np.flatnonzero(x[q + 1 : stop] > x[q])
            if len(higher) or stop == len(x):
                return float(x[q : q + 1 + higher[0] if len(higher) else stop].min())
        width *= 8


def nucleus_frames(log_mel: np.ndarray, frame_seconds: float, *, fmin: float = 0.0, fmax: float = 8000.0) -> np.ndarray:
    """Indices of the frames of syllable nuclei in ``log_mel`` (ascending): peaks of the
    :data:`NUCLEUS_BAND_HZ` level, smoothed over :data:`SMOOTH_FRAMES`, at least
    :data:`PROMINENCE_DB` prominent, :data:`MIN_GAP_S` apart and within :data:`FLOOR_DB` of the
    loudest frame, between the first and last non-silent frame and outside pauses. None in a mel
    of fewer than :data:`SMOOTH_FRAMES` frames.

    Args:
        log_mel: ``(frames, n_mels)`` natural-log mel magnitudes (not normalised).
        frame_seconds: seconds per frame (hop / rate).
        fmin, fmax: the mel channels' range (Hz), :class:`~gst_tts.audio.features.AudioConfig`'s.
    """
    return _nuclei_and_speech(np.asarray(log_mel, dtype=np.float64), frame_seconds, fmin, fmax)[0]


def nucleus_rate(log_mel: np.ndarray, frame_seconds: float, *, fmin: float = 0.0, fmax: float = 8000.0) -> float | None:
    """Syllable nuclei per second of articulation (:func:`nucleus_frames` over the frames from the
    first to the last non-silent one, pauses excluded); ``None`` for fewer than :data:`MIN_NUCLEI`.

    Args: as :func:`nucleus_frames`.
    """
    nuclei, speech_frames_n = _nuclei_and_speech(np.asarray(log_mel, dtype=np.float64), frame_seconds, fmin, fmax)
    if len(nuclei) < MIN_NUCLEI:
        return None
    return len(nuclei) / (speech_frames_n * frame_seconds)


def _nuclei_and_speech(log_mel: np.ndarray, frame_seconds: float, fmin: float, fmax: float) -> tuple[np.ndarray, int]:
    """``(nucleus frame indices, frames of articulation)`` of a ``(frames, n_mels)`` log-mel."""
    if log_mel.ndim != 2 or len(log_mel) < SMOOTH_FRAMES:
        return np.zeros(0, dtype=np.int64), 0
    centres = slaney_mel_centres(log_mel.shape[1], fmin, fmax)
    band = (centres >= NUCLEUS_BAND_HZ[0]) & (centres <= NUCLEUS_BAND_HZ[1])
    level = 10.0 * np.log10(np.exp(2.0 * log_mel[:, band]).sum(axis=1) + 1e-20)
    level = np.convolve(level, np.ones(SMOOTH_FRAMES) / SMOOTH_FRAMES, mode="same")
    peaks = prominent_peaks(level, PROMINENCE_DB, max(1, round(MIN_GAP_S / frame_seconds)))
    active = speech_frames(log_mel)
    pauses = pause_frames(log_mel, frame_seconds)
    keep = (peaks >= active[0]) & (peaks <= active[-1]) & ~pauses[peaks] & (level[peaks] >= level.max() - FLOOR_DB)
    return peaks[keep], int(active[-1] - active[0] + 1 - pauses.sum())


def letter_rate_estimate(
    log_mel: np.ndarray, frame_seconds: float, *, fmin: float = 0.0, fmax: float = 8000.0
) -> float | None:
    """A recording's articulation rate in letters per second (that of
    :func:`~gst_tts.analysis.prosody.articulation_rate`) without its transcript:
    :func:`nucleus_rate` times :data:`LETTERS_PER_NUCLEUS`; ``None`` likewise.

    Args: as :func:`nucleus_frames`.
    """
    rate = nucleus_rate(log_mel, frame_seconds, fmin=fmin, fmax=fmax)
    return None if rate is None else rate * LETTERS_PER_NUCLEUS
