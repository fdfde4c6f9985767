"""Split long text into chunks the model can read in one go.

Tacotron attention degrades on inputs much longer than the training sentences, and the
decoder is bounded per utterance; a long paragraph is therefore read as several chunks.
Chunks break at sentence ends first, then at clause punctuation, then between words, and only
a single "word" longer than the limit is cut inside. Short neighbouring pieces are packed back
together up to the limit so that the model sees sentence-sized inputs, not fragments.

Nothing is lost: joining the chunks with single spaces gives back the input with its runs of
whitespace collapsed (a word longer than the limit is the one exception: its cut pieces get
spaces between them).
"""

from __future__ import annotations

import re

__all__ = ["split_text", "DEFAULT_MAX_CHARS"]

#: Default chunk limit in characters (of cleaned text): about one long training sentence.
DEFAULT_MAX_CHARS = 180

# A sentence ends at . ! ? (possibly repeated, possibly followed by closing quotes/brackets)
# followed by whitespace.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
# Clause boundaries: , ; : and dashes, followed by whitespace.
_CLAUSE_END = re.compile(r"(?<=[,;:\-])\s+")
_WHITESPACE = re.compile(r"\s+")


def split_text(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Split ``text`` into chunks of at most ``max_chars`` characters.

    Args:
        text: any text (normally already cleaned, so that its length is its symbol count).
        max_chars: chunk limit, at least 1.

    Returns:
        The non-empty chunks in reading order, whitespace collapsed; ``[]`` for blank text.
        A text within the limit is returned as one chunk.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    text = _WHITESPACE.sub(" ", text).strip()
    if not text:
        return []
    if len(text) <= max_chars:
        return [text]
    return _chunks(text, max_chars, level=0)


def _split_keep(pattern: re.Pattern, text: str) -> list[str]:
    """Split at ``pattern`` matches, keeping the punctuation (and closing quotes) on the left piece."""
    pieces, start = [], 0
    for m in pattern.finditer(text):
        # The closing quotes matched before the whitespace belong to the sentence before it.
        end = m.start() + len(m.group(0).rstrip())
        pieces.append(text[start:end].strip())
        start = m.end()
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


def _chunks(text: str, max_chars: int, level: int) -> list[str]:
    """Chunks of ``text`` within ``max_chars``, preferring the coarsest boundaries.

    ``text`` is split at the boundaries of ``level`` (0 sentence, 1 clause, 2 word); consecutive
    parts that fit are packed together, and a part that does not fit is split further on its
    own, so its pieces are never glued to neighbouring parts (a sentence break stays preferred
    to a clause break).
    """
    if len(text) <= max_chars:
        return [text]
    if level == 0:
        parts = _split_keep(_SENTENCE_END, text)
    elif level == 1:
        parts = _split_keep(_CLAUSE_END, text)
    elif level == 2:
        parts = text.split(" ")
    else:  # one word longer than the limit: cut it
        return [text[i : i + max_chars] for i in range(0, len(text), max_chars)]
    if len(parts) == 1:
        return _chunks(text, max_chars, level + 1)
    out: list[str] = []
    run: list[str] = []  # consecutive fitting parts, packed when the run ends
    for part in parts:
        if len(part) <= max_chars:
            run.append(part)
            continue
        out.extend(_pack(run, max_chars))
        run = []
        out.extend(_chunks(part, max_chars, level + 1))
    out.extend(_pack(run, max_chars))
    return out


def _pack(pieces: list[str], max_chars: int) -> list[str]:
    """Greedily join consecutive pieces with spaces while the result stays within the limit."""
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 1 + len(piece) <= max_chars:
            chunks[-1] = f"{chunks[-1]} {piece}"
        else:
            chunks.append(piece)
    return chunks
