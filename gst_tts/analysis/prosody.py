"""Prosody of a waveform and its log-mel: F0 level, range and voicing, speaking rate, energy;
and how well one set of measures follows another (Pearson, Spearman, slope).

What ``probe-tokens`` reports per style token and ``measure-transfer`` / ``demo-report`` per
reference. F0 is tracked on the audio (``librosa.pyin``); rate and energy are read off the (not
normalised) log-mel, because Griffin-Lim output is peak-normalised and its level says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "F0_RANGE_HZ",
    "SILENCE_DB",
    "F0_SPREAD_PERCENTILES",
    "MAX_EXCURSION_ST",
    "MIN_PAUSE_S",
    "Pitch",
    "PitchStats",
    "Prosody",
    "Fit",
    "f0_track",
    "voiced_f0",
    "median_f0",
    "pitch_stats",
    "frame_levels_db",
    "speech_frames",
    "pause_frames",
    "letter_count",
    "speaking_rate",
    "articulation_rate",
    "energy_db",
    "measure_prosody",
    "pearson_r",
    "spearman_r",
    "slope",
    "fit",
]

#: pyin's search range (Hz): wide enough for speech from low male to high female voices.
F0_RANGE_HZ = (65.0, 600.0)
#: Frames more than this far below the loudest frame count as silence (dB).
SILENCE_DB = 40.0
#: The F0 range of an utterance is the spread between these percentiles of its voiced frames.
F0_SPREAD_PERCENTILES = (10.0, 90.0)
#: Voiced frames farther than this from the median F0 (semitones) are taken for pyin's octave
#: errors (halved or doubled F0, about 12 semitones off) and left out of the F0 range.
MAX_EXCURSION_ST = 10.0
#: A silent run inside an utterance is a pause from this length on (s); shorter ones (a frame or
#: two: stop closures) count as speaking time. Silent runs look shorter on the log-mel than they
#: are, by about a window less a hop (35 ms at 22050 Hz, 1024/256), so 30 ms means about 65 ms.
MIN_PAUSE_S = 0.03


@dataclass(frozen=True)
class Pitch:
    median_hz: float  # median F0 over voiced frames; NaN when none is voiced
    voiced_share: float  # share of frames pyin calls voiced, 0..1


@dataclass(frozen=True)
class PitchStats:
    median_hz: float  # median F0 over voiced frames; NaN when fewer than two are voiced
    range_semitones: float  # spread between F0_SPREAD_PERCENTILES of voiced F0, semitones; NaN likewise
    voiced_share: float  # share of frames pyin calls voiced, 0..1


@dataclass(frozen=True)
class Fit:
    """How measures ``y`` follow measures ``x`` over a set (NaN pairs left out)."""

    r: float  # Pearson correlation; NaN with fewer than 2 pairs or no spread
    spearman: float  # rank correlation, likewise
    slope: float  # least-squares slope of y on x; NaN likewise
    n: int  # pairs used

    def to_dict(self) -> dict[str, float | int]:
        return {"r": self.r, "spearman": self.spearman, "slope": self.slope, "n": self.n}


@dataclass(frozen=True)
class Prosody:
    f0_hz: float  # median F0 over voiced frames; NaN when none is voiced or there is no audio
    voiced_share: float  # 0..1
    rate_letters_per_s: float  # letters per second of speech (leading/trailing silence excluded)
    energy_db: float  # mean frame level over non-silent frames


def f0_track(
    audio: np.ndarray,
    sample_rate: int,
    *,
    f0_range_hz: tuple[float, float] = F0_RANGE_HZ,
    frame_length: int = 1024,
    hop_length: int = 256,
    highpass_hz: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Frame-by-frame F0 by ``librosa.pyin``: ``(f0, voiced)``, both ``(frames,)``, frame t centred
    on sample t·hop_length (``1 + n_samples // hop_length`` frames). The one pyin call of gst-tts.

    Args:
        audio: ``(n_samples,)`` mono samples; empty gives no frames.
        sample_rate: their rate (Hz).
        f0_range_hz: ``(fmin, fmax)`` pyin searches in. Default :data:`F0_RANGE_HZ`.
        frame_length, hop_length: pyin's analysis frame and hop, in samples. Defaults 1024, 256.
        highpass_hz: first remove what lies below this frequency (4th-order Butterworth, zero
            phase): mains hum in real recordings otherwise reads as F0 at the bottom of the range
            (half the frames of some VCTK clips). Default None (no filter).

    Returns:
        f0: Hz, NaN where unvoiced; voiced: bool, pyin's voicing decision.
    """
    import librosa  # slow to import; only the commands that measure pitch need it

    audio = np.asarray(audio, dtype=np.float32)
    if audio.size == 0:  # synthesized without the vocoder
        return np.zeros(0), np.zeros(0, dtype=bool)
    if highpass_hz is not None and audio.size > 27:  # sosfiltfilt's padding needs a few samples
        from scipy.signal import butter, sosfiltfilt

        sos = butter(4, highpass_hz, btype="highpass", fs=sample_rate, output="sos")
        audio = sosfiltfilt(sos, audio).astype(np.float32)
    f0, voiced, _ = librosa.pyin(
        audio,
        fmin=f0_range_hz[0],
        fmax=f0_range_hz[1],
        sr=sample_rate,
        frame_length=frame_length,
        hop_length=hop_length,
    )
    voiced = voiced & np.isfinite(f0)
    return np.where(voiced, f0, np.nan), voiced


def voiced_f0(
    audio: np.ndarray,
    sample_rate: int,
    *,
    f0_range_hz: tuple[float, float] = F0_RANGE_HZ,
    frame_length: int = 1024,
    hop_length: int = 256,
    highpass_hz: float | None = None,
) -> tuple[np.ndarray, float]:
    """F0 (Hz) of the frames ``librosa.pyin`` calls voiced, ``(n_voiced,)``, and the voiced share of frames.

    Args: as :func:`f0_track`; empty audio gives no frames and a voiced share of 0.
    """
    f0, voiced = f0_track(
        audio,
        sample_rate,
        f0_range_hz=f0_range_hz,
        frame_length=frame_length,
        hop_length=hop_length,
        highpass_hz=highpass_hz,
    )
    share = float(np.mean(voiced)) if voiced.size else 0.0
    return f0[voiced], share


def median_f0(
    audio: np.ndarray,
    sample_rate: int,
    *,
    f0_range_hz: tuple[float, float] = F0_RANGE_HZ,
    frame_length: int = 1024,
    hop_length: int = 256,
) -> Pitch:
    """Median F0 over voiced frames by ``librosa.pyin``, and the voiced share of frames.

    Args: as :func:`voiced_f0`; empty audio gives NaN and a voiced share of 0.
    """
    f0, share = voiced_f0(audio, sample_rate, f0_range_hz=f0_range_hz, frame_length=frame_length, hop_length=hop_length)
    return Pitch(float(np.median(f0)) if f0.size else float("nan"), share)


def pitch_stats(
    audio: np.ndarray,
    sample_rate: int,
    *,
    f0_range_hz: tuple[float, float] = F0_RANGE_HZ,
    percentiles: tuple[float, float] = F0_SPREAD_PERCENTILES,
    frame_length: int = 1024,
    hop_length: int = 256,
    highpass_hz: float | None = None,
    max_excursion_st: float | None = MAX_EXCURSION_ST,
) -> PitchStats:
    """F0 level (median over voiced frames), F0 range (the spread between ``percentiles`` of
    voiced F0, in semitones) and voiced share.

    Args: as :func:`voiced_f0`, and
        percentiles: (low, high). Default :data:`F0_SPREAD_PERCENTILES`.
        max_excursion_st: frames farther from the median are left out of the range (octave
            errors); None keeps them. Default :data:`MAX_EXCURSION_ST`.

    Fewer than two voiced frames give NaN level and range.
    """
    f0, share = voiced_f0(
        audio,
        sample_rate,
        f0_range_hz=f0_range_hz,
        frame_length=frame_length,
        hop_length=hop_length,
        highpass_hz=highpass_hz,
    )
    if f0.size < 2:
        return PitchStats(float("nan"), float("nan"), share)
    median = float(np.median(f0))
    if max_excursion_st is not None:
        f0 = f0[np.abs(12.0 * np.log2(f0 / median)) <= max_excursion_st]
    low, high = np.percentile(f0, percentiles)
    return PitchStats(median, float(12.0 * np.log2(high / low)), share)


def frame_levels_db(log_mel: np.ndarray) -> np.ndarray:
    """``(frames, n_mels)`` natural-log mel magnitudes → ``(frames,)`` level in dB (mean power over channels)."""
    power = np.exp(2.0 * np.asarray(log_mel, dtype=np.float64))
    return 10.0 * np.log10(power.mean(axis=1) + 1e-20)


def speech_frames(log_mel: np.ndarray, silence_db: float = SILENCE_DB) -> np.ndarray:
    """Indices of the frames within ``silence_db`` of the loudest one, ``(n_active,)``, ascending."""
    level = frame_levels_db(log_mel)
    return np.flatnonzero(level >= level.max() - silence_db)


def pause_frames(
    log_mel: np.ndarray, frame_seconds: float, silence_db: float = SILENCE_DB, min_pause_s: float = MIN_PAUSE_S
) -> np.ndarray:
    """``(frames,)`` bool: the frames of pauses, runs of silent frames (see :func:`speech_frames`)
    at least ``min_pause_s`` long between the first and the last non-silent frame.

    Args:
        log_mel: ``(frames, n_mels)`` natural-log mel magnitudes.
        frame_seconds: seconds per mel frame (hop / rate).
        silence_db: default :data:`SILENCE_DB`.
        min_pause_s: default :data:`MIN_PAUSE_S`.
    """
    active = speech_frames(log_mel, silence_db)
    silent = np.ones(len(log_mel), dtype=bool)
    silent[active] = False
    pauses = np.zeros(len(log_mel), dtype=bool)
    run_start = None
    for i in range(int(active[0]), int(active[-1]) + 2):  # the frame after the last is not silent
        if i <= active[-1] and silent[i]:
            run_start = i if run_start is None else run_start
        elif run_start is not None:
            if (i - run_start) * frame_seconds >= min_pause_s - 1e-9:
                pauses[run_start:i] = True
            run_start = None
    return pauses


def letter_count(text: str) -> int:
    """The letters of ``text``: what rates are counted in (spaces and punctuation take no time of their own)."""
    return sum(c.isalpha() for c in text)


def speaking_rate(text: str, log_mel: np.ndarray, frame_seconds: float, silence_db: float = SILENCE_DB) -> float:
    """Letters of ``text`` per second of speech: from the first to the last non-silent frame.

    Args:
        text: what was spoken (only letters count; spaces and punctuation take no time of their own).
        log_mel: ``(frames, n_mels)`` natural-log mel magnitudes.
        frame_seconds: seconds per mel frame (hop / rate).
        silence_db: see :func:`speech_frames`. Default :data:`SILENCE_DB`.
    """
    active = speech_frames(log_mel, silence_db)
    speech_s = (active[-1] - active[0] + 1) * frame_seconds
    return letter_count(text) / speech_s


def articulation_rate(
    text: str,
    log_mel: np.ndarray,
    frame_seconds: float,
    *,
    silence_db: float = SILENCE_DB,
    min_pause_s: float = MIN_PAUSE_S,
) -> float:
    """Letters of ``text`` per second of speech with pauses excluded: the frames from the first to
    the last non-silent one, less those of :func:`pause_frames`. The rate of articulation, which
    does not change when the same words are spoken with longer pauses between them.

    Args: as :func:`speaking_rate` and :func:`pause_frames`. Text without letters gives NaN.
    """
    letters = letter_count(text)
    if letters == 0:
        return float("nan")
    active = speech_frames(log_mel, silence_db)
    n_speech = active[-1] - active[0] + 1 - int(pause_frames(log_mel, frame_seconds, silence_db, min_pause_s).sum())
    return letters / (n_speech * frame_seconds)


def energy_db(log_mel: np.ndarray, silence_db: float = SILENCE_DB) -> float:
    """Mean level (dB) of the non-silent frames of a ``(frames, n_mels)`` log-mel."""
    return float(frame_levels_db(log_mel)[speech_frames(log_mel, silence_db)].mean())


def measure_prosody(
    audio: np.ndarray,
    sample_rate: int,
    log_mel: np.ndarray,
    hop_length: int,
    text: str,
    *,
    f0_range_hz: tuple[float, float] = F0_RANGE_HZ,
    silence_db: float = SILENCE_DB,
) -> Prosody:
    """All measures of one utterance: F0 from ``audio`` (empty: NaN), rate and energy from ``log_mel``.

    Args:
        audio: ``(n_samples,)``, may be empty (synthesized without the vocoder).
        sample_rate: of the audio and of the mel's frames.
        log_mel: ``(frames, n_mels)`` natural-log mel magnitudes (not normalised).
        hop_length: samples per mel frame.
        text: what was spoken.
    """
    pitch = median_f0(audio, sample_rate, f0_range_hz=f0_range_hz)
    return Prosody(
        f0_hz=pitch.median_hz,
        voiced_share=pitch.voiced_share,
        rate_letters_per_s=speaking_rate(text, log_mel, hop_length / sample_rate, silence_db),
        energy_db=energy_db(log_mel, silence_db),
    )


# ---------------------------------------------------------------- agreement of two sets of measures


def _finite_pairs(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"expected two 1-d sequences of one length, got shapes {x.shape} and {y.shape}")
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def pearson_r(x, y) -> float:
    """Pearson correlation of ``x`` and ``y`` (pairs with a NaN left out); NaN with fewer than 2
    pairs or without spread in either."""
    x, y = _finite_pairs(x, y)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    return float(np.clip((dx @ dy) / np.sqrt((dx @ dx) * (dy @ dy)), -1.0, 1.0))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their mean rank."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman_r(x, y) -> float:
    """Spearman rank correlation (Pearson of the ranks, ties averaged); NaN as :func:`pearson_r`."""
    x, y = _finite_pairs(x, y)
    return pearson_r(_ranks(x), _ranks(y)) if x.size else float("nan")


def slope(x, y) -> float:
    """Least-squares slope of ``y`` on ``x`` (pairs with a NaN left out); NaN with fewer than 2
    pairs or no spread in ``x``."""
    x, y = _finite_pairs(x, y)
    if x.size < 2 or np.ptp(x) == 0:
        return float("nan")
    dx = x - x.mean()
    return float((dx @ (y - y.mean())) / (dx @ dx))


def fit(x, y) -> Fit:
    """Pearson r, Spearman and slope of ``y`` on ``x`` over the pairs without a NaN."""
    n = int(_finite_pairs(x, y)[0].size)
    return Fit(r=pearson_r(x, y), spearman=spearman_r(x, y), slope=slope(x, y), n=n)
