"""A model's speech as the intelligibility measure hears it: clips to transcribe, and their scores.

The figures themselves (normalisation, CER, WER, the ASR) are :mod:`gst_tts.analysis.intelligibility`'s;
this module makes what is scored: free-running syntheses of texts in given styles, or
teacher-forced mels of corpus utterances, vocoded. Each clip is the model's own output: no tempo
or F0-range copy of a reference is applied after decoding.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from gst_tts.analysis.intelligibility import (
    IntelligibilitySummary,
    Transcriber,
    UtteranceScore,
    score_utterance,
    summarize,
)
from gst_tts.data.corpus import Utterance
from gst_tts.inference.style import Style
from gst_tts.inference.synthesizer import Synthesizer


class Clip(NamedTuple):
    """Speech to score: an id, the text it should say, its samples at ``sample_rate``, and for a
    free-running synthesis whether its alignment was healthy (None where nothing was decoded)."""

    id: str
    text: str
    samples: np.ndarray
    sample_rate: int
    aligned: bool | None = None


def spoken_texts(
    synth: Synthesizer,
    texts: Sequence[str],
    styles: Mapping[str, Style | None],
    *,
    seed: int = 0,
    ids: Sequence[str] | None = None,
    **options,
) -> dict[str, list[Clip]]:
    """Style name → the ``texts`` spoken free-running in that style (None: neutral) and vocoded.
    ``options``: ``Synthesizer.synthesize``'s decoding keywords (``decoding``, ``batch_size``,
    ``max_chunk_chars``)."""
    ids = list(ids) if ids is not None else [f"s{i + 1:03d}" for i in range(len(texts))]
    clips = {}
    for name, style in styles.items():
        results = synth.synthesize(
            list(texts),
            styles=[style] * len(texts),
            seed=seed,
            transfer_tempo=False,
            transfer_f0_range=False,
            names=ids,
            **options,
        )
        clips[name] = [Clip(i, t, r.audio, r.sample_rate, r.ok) for i, t, r in zip(ids, texts, results)]
    return clips


def spoken_utterances(synth: Synthesizer, utterances: Sequence[Utterance], *, seed: int = 0, **options) -> list[Clip]:
    """Each corpus utterance's sentence spoken free-running in the style of its own recording."""
    results = synth.synthesize(
        [u.text for u in utterances],
        styles=[Style(reference=u.audio_path) for u in utterances],
        seed=seed,
        transfer_tempo=False,
        transfer_f0_range=False,
        names=[u.id for u in utterances],
        **options,
    )
    return [Clip(u.id, u.text, r.audio, r.sample_rate, r.ok) for u, r in zip(utterances, results)]


def teacher_forced_clips(
    synth: Synthesizer,
    utterances: Sequence[Utterance],
    cache_dir: str | os.PathLike,
    *,
    batch_size: int = 16,
    seed: int = 0,
) -> list[Clip]:
    """Each corpus utterance's teacher-forced mel (:mod:`gst_tts.inference.teacher_forcing`), vocoded."""
    from gst_tts.inference.teacher_forcing import teacher_forced_mels

    mels = dict(teacher_forced_mels(synth, utterances, cache_dir, batch_size=batch_size, seed=seed))
    return [Clip(u.id, u.text, synth.vocoder(mels[u.id]), synth.vocoder.sample_rate) for u in utterances]


def score_clips(transcriber: Transcriber, clips: Iterable[Clip]) -> tuple[list[UtteranceScore], IntelligibilitySummary]:
    """Every clip transcribed and scored, and the set's corpus-level summary."""
    scores = [score_utterance(c.id, c.text, transcriber.transcribe(c.samples, c.sample_rate)) for c in clips]
    return scores, summarize(scores)
