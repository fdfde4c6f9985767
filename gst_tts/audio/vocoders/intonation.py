"""Intonation width: an F0 track's spread set to a reference's before harmonic restoration.

Why: the demo's acoustic model follows a reference's pitch level and tempo, but decodes about the
same melodic spread (F0 range) whatever the reference's: a lively and a flat reference give the
same melody (``docs/results/2026-11-28-intonation.md``). The spectral vocoder restores harmonics
at an F0 track it reads off the mel (its pitch head), so it can realise another spread by
stretching that track about its median before the restoration. Given the reference's own spread
(read by YIN in the recording, :data:`REFERENCE_MEDIAN_FRAMES`), the output's spread follows the
reference's (``docs/results/2026-11-29-f0-range-transfer.md``). This is an explicit transfer, one
statistic copied from the reference, not something the model learned. Each vocoded chunk (a
sentence of a split text) is stretched about its own median by its own factor.

numpy only (no torch): the PyTorch spectral vocoder and the torch-free runtime call these same
functions through :func:`~gst_tts.audio.vocoders.reconstruction.spectral_audio`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "F0_RANGE_PERCENTILES",
    "MAX_EXCURSION_ST",
    "MIN_VOICED_FRAMES",
    "GAIN_LIMITS",
    "REFERENCE_MEDIAN_FRAMES",
    "spread_st",
    "f0_range_st",
    "range_gain",
    "with_f0_range",
]

#: The spread is the distance between these percentiles of the voiced frames' log F0 (those of
#: the F0 range ``measure-transfer`` reports, :data:`gst_tts.analysis.prosody.F0_SPREAD_PERCENTILES`,
#: which reads pyin's track and drops its octave errors without median-filtering).
F0_RANGE_PERCENTILES = (10.0, 90.0)
#: Voiced frames farther than this (semitones) from the median are a tracker's octave errors
#: (halved or doubled F0, about 12 semitones off; runs of them outlast the median filter) and are
#: left out of the spread, as the measure leaves out pyin's
#: (:data:`gst_tts.analysis.prosody.MAX_EXCURSION_ST`). On the demo's 24 held-out recordings (one
#: sentence each) YIN's spread then follows pyin's at r 0.74 (0.04 with them: 7 of the 24 read
#: 12-19 semitones for pyin's 2-6), on 120 espeak-ng references of 4 sentences at r 0.96 (0.90).
MAX_EXCURSION_ST = 10.0
#: A track with fewer voiced frames has no spread worth measuring: it is left as it is.
MIN_VOICED_FRAMES = 10
#: The stretch is kept within these factors: a reference read as nearly flat (a whisper, a
#: tracker's failure) must not flatten speech, nor a noisy one turn it into a siren.
GAIN_LIMITS = (0.5, 3.0)
#: A reference's spread is read off a YIN track (:func:`~gst_tts.audio.pitch.yin_f0`) whose voiced
#: log F0 is median-filtered over this many frames, which removes single-frame octave jumps: on the
#: 72 espeak-ng references of three ``measure-transfer`` seeds the spread then follows pyin's at
#: r 0.87 (unfiltered: 0.54; both before :data:`MAX_EXCURSION_ST`), and the outputs' spread
#: follows the references' more closely (``docs/results/2026-11-29-f0-range-transfer.md``).
REFERENCE_MEDIAN_FRAMES = 5
# A track's spread is floored here (semitones) before it divides: a flat track is not stretched without bound.
_MIN_RANGE_ST = 0.5


def spread_st(log_f0: np.ndarray, median_frames: int = 1) -> float | None:
    """The spread (semitones) between the 10th and 90th percentile of voiced frames' log F0 (Hz),
    after a running median over ``median_frames`` of them (odd; 1: none), frames farther than
    :data:`MAX_EXCURSION_ST` from their median left out; ``None`` for fewer than
    :data:`MIN_VOICED_FRAMES` frames, before or after leaving those out."""
    log_f0 = np.asarray(log_f0, dtype=np.float64).ravel()
    if log_f0.size < MIN_VOICED_FRAMES:
        return None
    if median_frames > 1:
        half = median_frames // 2
        padded = np.pad(log_f0, half, mode="edge")
        log_f0 = np.median(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=-1)
    semitones = 12.0 * log_f0 / math.log(2.0)
    semitones = semitones[np.abs(semitones - np.median(semitones)) <= MAX_EXCURSION_ST]
    if semitones.size < MIN_VOICED_FRAMES:  # (also NaNs: nothing compares within)
        return None
    low, high = np.percentile(semitones, F0_RANGE_PERCENTILES)
    return float(high - low)


def f0_range_st(pitch: np.ndarray) -> float | None:
    """:func:`spread_st` of a pitch head's ``(frames, 2)`` output (log F0 in Hz, voicing logit;
    voiced where the logit is positive)."""
    pitch = np.asarray(pitch, dtype=np.float64)
    return spread_st(pitch[pitch[:, 1] > 0, 0])


def range_gain(current_st: float, target_st: float, strength: float = 1.0) -> float:
    """The factor that takes a spread of ``current_st`` to ``target_st`` semitones, raised to
    ``strength`` (1: all the way, 0: no change, above 1: past the target), within :data:`GAIN_LIMITS`."""
    gain = (max(float(target_st), 0.0) / max(float(current_st), _MIN_RANGE_ST)) ** float(strength)
    return float(np.clip(gain, *GAIN_LIMITS))


def with_f0_range(pitch: np.ndarray, target_st: float, strength: float = 1.0) -> np.ndarray:
    """A copy of a pitch head's ``(frames, 2)`` output whose log F0 is stretched about its voiced
    median by :func:`range_gain` (its spread toward ``target_st`` semitones, by ``strength``);
    voicing unchanged. Frames farther than :data:`MAX_EXCURSION_ST` from the median (octave
    errors, which the spread leaves out) keep their F0: stretched, they would land octaves away.
    A track with too few voiced frames to measure comes back unchanged."""
    pitch = np.array(pitch, dtype=np.float32, copy=True)
    current = f0_range_st(pitch)
    if current is None:
        return pitch
    gain = range_gain(current, target_st, strength)
    centre = float(np.median(pitch[pitch[:, 1] > 0, 0]))
    inside = np.abs(pitch[:, 0] - centre) <= MAX_EXCURSION_ST * math.log(2.0) / 12.0
    pitch[inside, 0] = centre + (pitch[inside, 0] - centre) * gain
    return pitch
