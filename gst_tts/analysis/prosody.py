"""Prosody of a waveform and its log-mel: median F0 and voicing, speaking rate, energy.

What ``probe-tokens`` reports per style token and ``demo-report`` per reference style. F0 is
tracked on the audio (``librosa.pyin``); rate and energy are read off the (not normalised)
log-mel, because Griffin-Lim output is peak-normalised and its level says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "F0_RANGE_HZ", "SILENCE_DB", "Pitch", "Prosody",
    "median_f0", "frame_levels_db", "speech_frames", "speaking_rate", "energy_db", "measure_prosody",
]

#: pyin's search range (Hz): wide enough for speech from low male to high female voices.
F0_RANGE_HZ = (65.0, 600.0)
#: Frames more than this far below the loudest frame count as silence (dB).
SILENCE_DB = 40.0


@dataclass(frozen=True)
class Pitch:
    median_hz: float  # median F0 over voiced frames; NaN when none is voiced
    voiced_share: float  # share of frames pyin calls voiced, 0..1


@dataclass(frozen=True)
class Prosody:
    f0_hz: float  # median F0 over voiced frames; NaN when none is voiced or there is no audio
    voiced_share: float  # 0..1
    rate_letters_per_s: float  # letters per second of speech (leading/trailing silence excluded)
    energy_db: float  # mean frame level over non-silent frames


def median_f0(
    audio: np.ndarray,
    sample_rate: int,
    *,
    f0_range_hz: tuple[float, float] = F0_RANGE_HZ,
    frame_length: int = 1024,
    hop_length: int = 256,
) -> Pitch:
    """Median F0 over voiced frames by ``librosa.pyin``, and the voiced share of frames.

    Args:
        audio: ``(n_samples,)`` mono samples; empty gives NaN and a voiced share of 0.
        sample_rate: their rate (Hz).
        f0_range_hz: ``(fmin, fmax)`` pyin searches in. Default :data:`F0_RANGE_HZ`.
        frame_length, hop_length: pyin's analysis frame and hop, in samples. Defaults 1024, 256.
    """
    import librosa  # slow to import; only the commands that measure pitch need it

    audio = np.asarray(audio, dtype=np.float32)
    if audio.size == 0:  # synthesized without the vocoder
        return Pitch(float("nan"), 0.0)
    f0, voiced, _ = librosa.pyin(
        audio, fmin=f0_range_hz[0], fmax=f0_range_hz[1], sr=sample_rate, frame_length=frame_length, hop_length=hop_length,
    )
    voiced_f0 = f0[voiced & np.isfinite(f0)]
    share = float(np.mean(voiced)) if voiced.size else 0.0
    return Pitch(float(np.median(voiced_f0)) if voiced_f0.size else float("nan"), share)


def frame_levels_db(log_mel: np.ndarray) -> np.ndarray:
    """``(frames, n_mels)`` natural-log mel magnitudes → ``(frames,)`` level in dB (mean power over channels)."""
    power = np.exp(2.0 * np.asarray(log_mel, dtype=np.float64))
    return 10.0 * np.log10(power.mean(axis=1) + 1e-20)


def speech_frames(log_mel: np.ndarray, silence_db: float = SILENCE_DB) -> np.ndarray:
    """Indices of the frames within ``silence_db`` of the loudest one, ``(n_active,)``, ascending."""
    level = frame_levels_db(log_mel)
    return np.flatnonzero(level >= level.max() - silence_db)


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
    return sum(c.isalpha() for c in text) / speech_s


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
