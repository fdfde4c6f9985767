"""A synthesis request's rules, shared by :class:`gst_tts.Synthesizer` and the torch-free
:class:`gst_tts.runtime.OnnxSynthesizer` (so this module imports neither torch nor the model):
the limits on a text and a pause, the option checks, the texts of a call, a text's
cleaning and splitting into chunks, and the joining of a text's decoded chunks into one
:class:`~gst_tts.inference.results.SynthesisResult`.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence
import warnings

import numpy as np

from gst_tts.analysis.alignment import alignment_health
from gst_tts.errors import GstTtsError, TextError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.results import ChunkReport, DecodedChunk, SynthesisResult
from gst_tts.text.split import split_text
from gst_tts.text.symbols import DroppedCharacterWarning, SymbolTable, quote_text

__all__ = [
    "DEFAULT_PAUSE_S",
    "MAX_TEXT_CHARS",
    "MAX_CLEANED_CHARS",
    "MAX_PAUSE_S",
    "check_options",
    "whole",
    "text_list",
    "TextPreparer",
    "assemble",
]

#: Silence between the chunks of a long text, in seconds.
DEFAULT_PAUSE_S = 0.25

#: Longest text synthesized in one call, in characters as given: about 11 minutes of speech, a
#: long chapter section. It bounds the cleaning work; longer input belongs in several texts (one
#: paragraph a line with ``synthesize --text-file``).
MAX_TEXT_CHARS = 10_000
#: Longest text once cleaned (numbers spelled out: "1,000,000" is 11 characters, "one million"
#: 11, "777" 3 and "seven hundred seventy-seven" 27): it bounds the chunks, so the frames decoded.
MAX_CLEANED_CHARS = 4 * MAX_TEXT_CHARS
#: Longest pause between chunks, in seconds (the silence is allocated whole).
MAX_PAUSE_S = 10.0


def check_options(batch_size: int, max_chunk_chars: int | None, pause_s: float, decoding: DecodingConfig) -> None:
    """Raise a one-line ``GstTtsError`` for a bad option (the seed's range is each synthesizer's own)."""
    if not whole(batch_size) or batch_size < 1:
        raise GstTtsError(f"batch_size must be a whole number >= 1, got {batch_size!r}")
    if max_chunk_chars is not None and (not whole(max_chunk_chars) or max_chunk_chars < 1):
        raise GstTtsError(f"max_chunk_chars must be a whole number >= 1 (or None), got {max_chunk_chars!r}")
    if not isinstance(pause_s, numbers.Real) or not 0 <= pause_s <= MAX_PAUSE_S:  # NaN fails too
        raise GstTtsError(f"pause_s must be a number of seconds from 0 to {MAX_PAUSE_S:g}, got {pause_s!r}")
    if not isinstance(decoding, DecodingConfig):
        raise GstTtsError(f"decoding must be a DecodingConfig, got {type(decoding).__name__}")


def whole(value: object) -> bool:
    """Whether ``value`` is a whole number (``True`` and ``False`` are not)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def text_list(texts: str | Sequence[str]) -> tuple[bool, list]:
    """``(single, texts as a list)``: one text, or a list of them; ``TextError`` for anything else."""
    single = isinstance(texts, str)
    try:
        return single, [texts] if single else list(texts)
    except TypeError:
        raise TextError(f"texts must be a string or a list of strings, got {type(texts).__name__}") from None


class TextPreparer:
    """A text's checks, cleaning and chunks for a symbol table.

    Args:
        symbols: the model's table.
        encode: ``text → ids`` with ``eos`` (``symbols.encode`` for a tensor, ``symbols.encode_ids``
            for a list); ``TextError`` for a text without symbols.
    """

    def __init__(self, symbols: SymbolTable, encode: Callable[[str], Any]) -> None:
        self.symbols = symbols
        self.encode = encode
        self._letter_ids = np.array([i for i, c in enumerate(symbols.symbols) if c.isalnum()], dtype=np.int64)

    def speakable(self, ids: Any) -> bool:
        """Whether ``ids`` hold a letter or digit (when the table has any): punctuation alone says nothing."""
        return self._letter_ids.size == 0 or bool(np.isin(np.asarray(ids), self._letter_ids).any())

    def encode_whole(self, text: str) -> tuple[str, Any]:
        """The cleaned text and its ids; ``TextError`` for a text that is not a string, longer than
        :data:`MAX_TEXT_CHARS` (checked before any cleaning, so a huge text costs nothing), empty or
        without a symbol of the table, punctuation only, or longer than :data:`MAX_CLEANED_CHARS`
        once cleaned."""
        if not isinstance(text, str):
            raise TextError(f"text must be a string, got {type(text).__name__}")
        if len(text) > MAX_TEXT_CHARS:
            raise TextError(
                f"text is {len(text):,} characters; one text holds at most {MAX_TEXT_CHARS:,} "
                f"(split it into several texts): {quote_text(text)}"
            )
        ids = self.encode(text)  # TextError for empty / symbol-less text; warns once about dropped characters
        if not self.speakable(ids):
            raise TextError(f"text has nothing to speak (only punctuation): {quote_text(text)}")
        cleaned = self.symbols.clean(text)
        if len(cleaned) > MAX_CLEANED_CHARS:
            raise TextError(
                f"text is {len(cleaned):,} characters once numbers and abbreviations are spelled out; "
                f"one text holds at most {MAX_CLEANED_CHARS:,} (split it into several texts): {quote_text(text)}"
            )
        return cleaned, ids

    def prepare(self, text: str, max_chunk_chars: int | None) -> tuple[str, list[tuple[str, Any]]]:
        """Cleaned text and its chunks ``[(cleaned chunk, ids)]``, split at sentence, then clause
        boundaries past ``max_chunk_chars`` cleaned characters (``None``: never); ``TextError`` for unusable text."""
        cleaned, ids = self.encode_whole(text)
        if max_chunk_chars is None or len(cleaned) <= max_chunk_chars:
            return cleaned, [(cleaned, ids)]
        chunks = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DroppedCharacterWarning)  # already warned for the whole text
            for piece in split_text(cleaned, max_chunk_chars):
                try:
                    piece_ids = self.encode(piece)
                except TextError:
                    continue
                if self.speakable(piece_ids):  # punctuation only: the pause between chunks stands in for it
                    chunks.append((piece, piece_ids))
        if not chunks:  # cannot happen for a speakable text, but an empty list would fail far from here
            raise TextError(f"text has nothing to speak once split into chunks: {quote_text(text)}")
        return cleaned, chunks


def assemble(
    text: str,
    cleaned: str,
    parts: Sequence[DecodedChunk],
    *,
    weights: np.ndarray,
    pause_s: float,
    vocode: Callable[[np.ndarray], np.ndarray] | None,
    symbols: SymbolTable,
    sample_rate: int,
    hop_length: int,
    frames_per_step: int,
    decoding: DecodingConfig,
) -> SynthesisResult:
    """Join a text's decoded chunks (reading order) into one result.

    Args:
        weights: the text's ``(n_heads, n_tokens)`` token weights.
        pause_s: silence between chunks, in seconds.
        vocode: ``(frames, n_mels)`` log-mel → float32 samples; ``None`` leaves ``audio`` empty.
        sample_rate: Hz; hop_length: samples per frame; frames_per_step: the decoder's r.
    """
    reports = [
        ChunkReport(
            p.text,
            int(p.log_mel.shape[0]),
            "stop_token" if p.stopped_on_token else "max_steps",
            alignment_health(p.alignment),
            decoded_frames=p.decoded_frames,
            tempo_gain=p.tempo_gain,
        )
        for p in parts
    ]
    if len(parts) == 1:
        alignment, health = parts[0].alignment, reports[0].health
    else:
        steps = sum(p.alignment.shape[0] for p in parts)
        n_symbols = sum(p.alignment.shape[1] for p in parts)
        alignment = np.zeros((steps, n_symbols), dtype=np.float32)
        t = s = 0
        for p in parts:
            alignment[t : t + p.alignment.shape[0], s : s + p.alignment.shape[1]] = p.alignment
            t, s = t + p.alignment.shape[0], s + p.alignment.shape[1]
        health = alignment_health(alignment)
    if vocode is not None:
        # Chunks are vocoded separately so each pause is clean silence, not a smeared edge.
        pause = np.zeros(int(round(pause_s * sample_rate)), dtype=np.float32)
        pieces = []
        for k, p in enumerate(parts):
            if k:
                pieces.append(pause)
            pieces.append(np.asarray(vocode(p.log_mel), dtype=np.float32))
        audio = np.concatenate(pieces)
        if not np.isfinite(audio).all():
            raise GstTtsError(f"the vocoder gave NaN or infinite samples for {quote_text(text)}")
    else:
        audio = np.zeros(0, dtype=np.float32)
    return SynthesisResult(
        text=text,
        cleaned_text=cleaned,
        audio=audio,
        sample_rate=sample_rate,
        mel=np.concatenate([p.log_mel for p in parts]),
        alignment=alignment,
        stop_probs=np.concatenate([p.stop_probs for p in parts]),
        stop_reason="stop_token" if all(p.stopped_on_token for p in parts) else "max_steps",
        style_weights=np.asarray(weights, dtype=np.float32),
        health=health,
        input_labels=[symbols.symbols[int(i)] for p in parts for i in p.ids],
        chunks=reports,
        hop_length=hop_length,
        frames_per_step=frames_per_step,
        decoding=decoding,
    )
