"""LJSpeech-format corpora: strict reading, the feature cache, the split, batching.

A corpus is a folder with ``metadata.csv`` (``id|raw|normalized`` or ``id|text``), audio at
``wavs/<id>.wav`` and optionally ``styles.csv`` (``id|style``). Every error names ``file:line``.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import os
from pathlib import Path
from typing import Iterator

from gst_tts.errors import DataError

log = logging.getLogger(__name__)

METADATA = "metadata.csv"
STYLES = "styles.csv"


@dataclass(frozen=True)
class Utterance:
    """One corpus entry. ``line`` is its 1-based line in metadata.csv, for error messages."""

    id: str
    text: str
    audio_path: Path
    line: int
    style: str | None = None

    @property
    def where(self) -> str:
        return f"{self.audio_path.parent.parent / METADATA}:{self.line}"


def read_corpus(root: str | os.PathLike) -> list[Utterance]:
    """Read and validate ``metadata.csv`` (and ``styles.csv`` when present) of an LJSpeech-style corpus.

    Raises:
        DataError: ``file:line: problem`` for a missing folder or metadata file, a wrong column
            count, a duplicate id, empty text, missing audio, or a bad styles.csv line.
    """
    root = Path(root)
    metadata = root / METADATA
    if not root.is_dir():
        raise DataError(f"{root}: corpus folder not found")
    if not metadata.is_file():
        raise DataError(f"{metadata}: metadata file not found (expected LJSpeech format id|raw|normalized)")
    utterances: list[Utterance] = []
    seen: dict[str, int] = {}
    for line_no, line in _read_lines(metadata):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) not in (2, 3):
            raise DataError(f"{metadata}:{line_no}: expected 2 or 3 '|'-separated columns, got {len(fields)}")
        utt_id = fields[0].strip()
        # LJSpeech's third column is the normalised text; fall back to the raw one when it is absent.
        text = (fields[2] if len(fields) == 3 and fields[2].strip() else fields[1]).strip()
        if not utt_id:
            raise DataError(f"{metadata}:{line_no}: empty id")
        if utt_id in seen:
            raise DataError(f"{metadata}:{line_no}: duplicate id {utt_id!r} (first on line {seen[utt_id]})")
        if not text:
            raise DataError(f"{metadata}:{line_no}: empty text for id {utt_id!r}")
        audio_path = root / "wavs" / f"{utt_id}.wav"
        if not audio_path.is_file():
            raise DataError(f"{metadata}:{line_no}: audio file not found: {audio_path}")
        seen[utt_id] = line_no
        utterances.append(Utterance(utt_id, text, audio_path, line_no))
    if not utterances:
        raise DataError(f"{metadata}: no utterances")
    styles = _read_styles(root / STYLES, seen) if (root / STYLES).is_file() else {}
    if styles:
        utterances = [
            Utterance(u.id, u.text, u.audio_path, u.line, styles.get(u.id)) for u in utterances
        ]
    return utterances


def _read_lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line_no = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line_no}: not valid UTF-8") from None
    # Split on newlines only: str.splitlines() also breaks at U+2028, form feeds etc. inside text.
    for line_no, line in enumerate(text.split("\n"), start=1):
        yield line_no, line.rstrip("\r")


def _read_styles(path: Path, ids: dict[str, int]) -> dict[str, str]:
    styles: dict[str, str] = {}
    for line_no, line in _read_lines(path):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != 2 or not fields[1].strip():
            raise DataError(f"{path}:{line_no}: expected 'id|style', got {line.strip()!r}")
        utt_id = fields[0].strip()
        if utt_id not in ids:
            raise DataError(f"{path}:{line_no}: id {utt_id!r} is not in {METADATA}")
        if utt_id in styles:
            raise DataError(f"{path}:{line_no}: duplicate id {utt_id!r}")
        styles[utt_id] = fields[1].strip()
    return styles


# ---------------------------------------------------------------------------------------------
# Feature cache


# ---------------------------------------------------------------------------------------------
# Split, dataset, sampler, collate



