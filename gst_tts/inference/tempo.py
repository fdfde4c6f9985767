"""Tempo from the reference: a decoded text's log-mel retimed so its letter rate follows a reference's.

Why: the demo's acoustic model follows a reference's tempo only part of the way (its outputs'
letter rate moves by about a third of the reference's, in log) and a real recording's hardly at
all (``docs/results/2026-11-29-tempo-transfer.md``). A reference's letter rate can be estimated
from its recording without a transcript (:func:`gst_tts.analysis.speech_rate.letter_rate_estimate`,
from its syllable nuclei); an output's is measured, its text being known
(:func:`gst_tts.analysis.prosody.articulation_rate`). The decoded log-mel is then stretched in time
by their ratio, before any vocoder, so it works with every vocoder. This is an explicit transfer,
one statistic copied from the reference, not something the model learned;
``synthesize(..., transfer_tempo=False)`` keeps the decoded tempo.

A text split into chunks is retimed by one factor, from all its chunks' letters and speech time
(a chunk of a few letters alone would give a noisy rate). No chunk is stretched past the frames
its decoding was bounded by (``DecodingConfig.chunk_frames``): a slower tempo never lengthens
speech beyond ``max_seconds``. The alignment a result reports stays the decoder's.

numpy only (no torch): both synthesizers (``gst_tts.Synthesizer`` and the torch-free runtime) use it.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from gst_tts.analysis.prosody import articulation_rate, letter_count
from gst_tts.errors import GstTtsError
from gst_tts.inference.results import DecodedChunk
from gst_tts.inference.retiming import retimed
from gst_tts.inference.style_spec import TempoTarget, check_style_strength

__all__ = [
    "GAIN_LIMITS",
    "tempo_gain",
    "retimed",
    "text_rate",
    "check_tempo_target",
    "retime_text",
]

#: The tempo is changed by at most these factors (output rate / decoded rate): a reference read
#: too slow or too fast (music, a whisper, a reading of a few syllables) must not drag speech out
#: or rush it past recognition.
GAIN_LIMITS = (0.5, 2.0)


def tempo_gain(target: float, current: float, strength: float = 1.0) -> float:
    """The factor to speed an output up by (> 1 faster): ``(target / current) ** strength``
    within :data:`GAIN_LIMITS`; 1 for a rate that is not positive and finite."""
    if not (math.isfinite(target) and math.isfinite(current) and target > 0 and current > 0):
        return 1.0
    return float(np.clip((target / current) ** float(strength), *GAIN_LIMITS))


def text_rate(parts: Sequence[DecodedChunk], frame_seconds: float) -> float:
    """A text's articulation rate over its decoded chunks: all their letters over all their
    speech seconds (each :func:`~gst_tts.analysis.prosody.articulation_rate`'s); NaN when no
    chunk has letters."""
    letters = seconds = 0.0
    for part in parts:
        n = letter_count(part.text)
        rate = articulation_rate(part.text, part.log_mel, frame_seconds) if n and len(part.log_mel) else math.nan
        if math.isfinite(rate) and rate > 0:
            letters, seconds = letters + n, seconds + n / rate
    return letters / seconds if seconds > 0 else math.nan


def check_tempo_target(target: TempoTarget | None) -> TempoTarget | None:
    """``target`` checked: ``None``, or a :class:`TempoTarget` of a positive finite rate and a strength in range."""
    if target is None:
        return None
    if not isinstance(target, TempoTarget):
        raise GstTtsError(
            f"a tempo target is a TempoTarget(letters_per_s, strength) or None, got {type(target).__name__}"
        )
    rate = target.letters_per_s
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
        raise GstTtsError(f"a tempo target's letters_per_s must be a positive finite number, got {rate!r}")
    return TempoTarget(float(rate), check_style_strength(target.strength))


def retime_text(
    parts: Sequence[DecodedChunk], target: TempoTarget | None, *, frame_seconds: float, max_frames: Sequence[int]
) -> list[DecodedChunk]:
    """A text's decoded chunks retimed toward ``target``: one factor for the whole text
    (:func:`tempo_gain` from :func:`text_rate` to the target's rate), raised for a chunk where it
    would stretch it past its ``max_frames`` (its decoding bound). Each chunk records its
    decoded frames and its factor; ``parts`` as they are with no target.

    Args:
        parts: the text's chunks as decoded (log-mels not normalised).
        target: the tempo asked for, or None.
        frame_seconds: seconds per mel frame (hop / rate).
        max_frames: each chunk's frame bound.
    """
    if target is None:
        return list(parts)
    gain = tempo_gain(target.letters_per_s, text_rate(parts, frame_seconds), target.strength)
    if gain == 1.0:
        return list(parts)
    out = []
    for part, bound in zip(parts, max_frames):
        n = len(part.log_mel)
        chunk_gain = max(gain, n / max(1, bound))  # never longer than its bound
        log_mel = np.ascontiguousarray(retimed(part.log_mel, chunk_gain), dtype=np.float32)
        out.append(part._replace(log_mel=log_mel, decoded_frames=n, tempo_gain=n / max(1, len(log_mel))))
    return out
