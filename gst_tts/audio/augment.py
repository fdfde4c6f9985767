"""Pitch-shifted and time-stretched copies of a clip (``librosa``): references with a known change
of pitch level or tempo, made from real recordings of one voice.

``librosa.effects.pitch_shift`` resamples after a phase-vocoder stretch, so the formants move
with the pitch (as between speakers); ``librosa.effects.time_stretch`` keeps pitch and formants
and changes the tempo. Both run the phase vocoder with a speech-length window
(:data:`PHASE_VOCODER_WINDOW_S`) and still leave its artefacts: the copies are measurement
probes, not natural speech.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gst_tts.errors import GstTtsError

__all__ = ["DEFAULT_SEMITONES", "DEFAULT_SPEEDS", "PHASE_VOCODER_WINDOW_S", "Variation", "shift_and_stretch"]

DEFAULT_SEMITONES = (-4.0, 4.0)
"""Pitch shifts :func:`shift_and_stretch` makes by default (semitones)."""

DEFAULT_SPEEDS = (0.8, 1.25)
"""Tempo factors :func:`shift_and_stretch` makes by default (> 1: faster)."""

#: The phase vocoder's window (s), as speech analysis uses. librosa's default (2048 samples, 93 ms at
#: 22050 Hz) smears every onset over a syllable: the demo model heard LJSpeech copies stretched that
#: way as slow whatever their tempo (rate Spearman 0.42 over 30 references, 0.83 with this window).
PHASE_VOCODER_WINDOW_S = 0.023


def _speech_stft(sample_rate: int) -> dict[str, int]:
    """The phase vocoder's STFT settings at ``sample_rate``: a power-of-two window near
    :data:`PHASE_VOCODER_WINDOW_S`, hop a quarter of it."""
    n_fft = 2 ** int(round(np.log2(PHASE_VOCODER_WINDOW_S * sample_rate)))
    return {"n_fft": n_fft, "hop_length": n_fft // 4}


@dataclass(frozen=True)
class Variation:
    """One changed copy of a clip."""

    suffix: str  # for file names: "pitch+4", "speed0.8"
    audio: np.ndarray  # (n_samples,) float32, same rate as the input
    semitones: float  # pitch shift applied (0 for a tempo change)
    speed: float  # tempo factor applied (1 for a pitch shift)


def shift_and_stretch(
    audio: np.ndarray,
    sample_rate: int,
    *,
    semitones: tuple[float, ...] = DEFAULT_SEMITONES,
    speeds: tuple[float, ...] = DEFAULT_SPEEDS,
) -> list[Variation]:
    """A pitch-shifted copy of ``audio`` per entry of ``semitones`` and a time-stretched copy per
    entry of ``speeds``, in that order; the input itself is not among them.

    Args:
        audio: ``(n_samples,)`` mono samples.
        sample_rate: their rate (Hz).
        semitones: pitch shifts, tempo kept. Default :data:`DEFAULT_SEMITONES`.
        speeds: tempo factors (0.8: 25 % longer), pitch kept. Default :data:`DEFAULT_SPEEDS`.

    Raises:
        GstTtsError: a speed that is not positive, or a shift or speed that is not finite.
    """
    import librosa  # slow to import; only augmentation needs it

    for value in (*semitones, *speeds):
        if not np.isfinite(value):
            raise GstTtsError(f"pitch shifts and speeds must be finite, got {value}")
    if any(speed <= 0 for speed in speeds):
        raise GstTtsError(f"speeds must be positive, got {list(speeds)}")
    audio = np.asarray(audio, dtype=np.float32)
    stft = _speech_stft(sample_rate)
    out = [
        Variation(
            f"pitch{n:+g}",
            librosa.effects.pitch_shift(audio, sr=sample_rate, n_steps=float(n), **stft).astype(np.float32),
            float(n),
            1.0,
        )
        for n in semitones
    ]
    out += [
        Variation(
            f"speed{s:g}", librosa.effects.time_stretch(audio, rate=float(s), **stft).astype(np.float32), 0.0, float(s)
        )
        for s in speeds
    ]
    return out
