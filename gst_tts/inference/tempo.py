"""Tempo from the reference: a decoded log-mel retimed so its syllable-nucleus rate follows a reference's.

Why: the demo's acoustic model follows a reference's tempo only part of the way (its outputs'
letter rate rises by about a third of the reference's, in log) and a real recording's hardly at
all (``docs/results/2026-11-29-tempo-transfer.md``). A reference's letter rate can be estimated
from its recording without a transcript (:func:`gst_tts.analysis.speech_rate.letter_rate_estimate`, from
its syllable nuclei), and an output's is measured (its text is known); the decoded log-mel is then
stretched in time by their ratio, before any vocoder, so it works with every vocoder. This is an explicit transfer, one statistic copied from the reference,
not something the model learned; ``synthesize(..., transfer_tempo=False)`` keeps the decoded tempo.

Each decoded chunk (a sentence of a split text) is retimed by its own factor. The alignment a
result reports stays the decoder's (its time axis is the decoded one).

numpy only (no torch): both synthesizers (``gst_tts.Synthesizer`` and the torch-free runtime) use it.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from gst_tts.analysis.prosody import articulation_rate
from gst_tts.inference.requests import DecodedChunk
from gst_tts.inference.style_spec import Reference, Style, TempoTarget, once_per_reference, style_tempo

__all__ = ["GAIN_LIMITS", "tempo_gain", "retimed", "with_tempo", "resolve_tempo_targets", "retimed_chunk"]

#: The tempo is changed by at most these factors (output rate / decoded rate): a reference read
#: too slow or too fast (music, a whisper, a reading of a few syllables) must not drag speech out
#: or rush it past recognition.
GAIN_LIMITS = (0.5, 2.0)


def tempo_gain(target: float, current: float, strength: float = 1.0) -> float:
    """The factor to speed an output up by (> 1 faster): ``(target / current) ** strength``
    within :data:`GAIN_LIMITS`; 1 for a rate that is not positive and finite."""
    if not (np.isfinite(target) and np.isfinite(current) and target > 0 and current > 0):
        return 1.0
    return float(np.clip((target / current) ** float(strength), *GAIN_LIMITS))


def retimed(log_mel: np.ndarray, gain: float) -> np.ndarray:
    """``(frames, n_mels)`` → ``(round(frames / gain), n_mels)``: each channel linearly
    interpolated at evenly spread points of the original (frame centres kept in proportion), the
    same dtype. ``gain`` 1 returns the input."""
    log_mel = np.asarray(log_mel)
    if gain == 1.0 or len(log_mel) < 2:
        return log_mel
    n_in = len(log_mel)
    n_out = max(1, int(round(n_in / gain)))
    where = np.clip((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0, n_in - 1.0)
    left = np.floor(where).astype(np.int64)
    right = np.minimum(left + 1, n_in - 1)
    frac = (where - left)[:, None]
    return ((1.0 - frac) * log_mel[left] + frac * log_mel[right]).astype(log_mel.dtype)


def with_tempo(log_mel: np.ndarray, text: str, target: TempoTarget | None, *,
               frame_seconds: float) -> tuple[np.ndarray, float]:
    """``(log_mel retimed toward target, the gain used)``: the gain of :func:`tempo_gain` from
    the output's articulation rate (``text``'s letters per second of speech in ``log_mel``,
    :func:`~gst_tts.analysis.prosody.articulation_rate`) to ``target``'s; ``(log_mel, 1.0)`` with
    no target.

    Args:
        log_mel: ``(frames, n_mels)`` natural-log mel magnitudes (not normalised), as decoded.
        text: what ``log_mel`` says (cleaned; its letters are counted).
        frame_seconds: seconds per frame (hop / rate).
    """
    if target is None or len(log_mel) < 2:
        return log_mel, 1.0
    gain = tempo_gain(target.letters_per_s, articulation_rate(text, log_mel, frame_seconds), target.strength)
    return retimed(log_mel, gain), gain


def resolve_tempo_targets(n_texts: int, *, transfer: bool, given: Sequence[TempoTarget | None] | None,
                  styles: Sequence[Style | None] | None, one: Style,
                  read: Callable[[Reference], float | None]) -> list[TempoTarget | None]:
    """The tempo each of ``n_texts`` texts is retimed to: none unless ``transfer``; ``given`` (one
    per text) as it is; else what each text's style asks for (``styles``, or ``one`` for every
    text), each reference read once (``read``: its letter rate,
    :func:`~gst_tts.analysis.speech_rate.letter_rate_estimate` of its log-mel).

    Raises:
        ValueError: ``given`` not one per text.
    """
    if given is not None and len(given) != n_texts:
        raise ValueError(f"tempo_targets needs one target (or None) per text: {len(given)} for {n_texts} texts")
    if not transfer:
        return [None] * n_texts
    if given is not None:
        return list(given)
    if styles is None:
        return [style_tempo(one, read)] * n_texts  # one reading for every text
    read = once_per_reference(read)
    return [style_tempo(style, read) for style in styles]


def retimed_chunk(chunk: DecodedChunk, target: TempoTarget | None, *, frame_seconds: float) -> DecodedChunk:
    """``chunk`` with its log-mel retimed toward ``target`` (:func:`with_tempo`; float32); its
    alignment and stop probabilities stay the decoder's."""
    if target is None:
        return chunk
    log_mel, _ = with_tempo(chunk.log_mel, chunk.text, target, frame_seconds=frame_seconds)
    return chunk._replace(log_mel=np.ascontiguousarray(log_mel, dtype=np.float32))
