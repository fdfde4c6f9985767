"""LJSpeech-format corpora: strict reading, the feature cache, the split, batching.

A corpus is a folder with ``metadata.csv`` (``id|raw|normalized`` or ``id|text``), audio at
``wavs/<id>.wav`` and optionally ``styles.csv`` (``id|style``). Every error names ``file:line``.

What a corpus file may hold (anything else is a one-line ``DataError``):

- text files: UTF-8 (a leading byte-order mark is dropped), LF or CRLF line ends, no NUL or other
  control character but tab, lines of at most :data:`MAX_LINE_CHARS` characters;
- ids: letters and digits of any script, ``-``, ``_`` and ``.``; not starting with ``.``, no
  ``..``, at most :data:`MAX_ID_CHARS` characters (``LJ001-0001``, ``p225_001``). An id becomes a
  file name (``wavs/<id>.wav``, the cache's ``<id>.npy``), so it never holds a path separator;
- audio: ``wavs/<id>.wav`` is a file whose real path (symbolic links followed) lies inside the
  corpus folder or its ``wavs`` folder (itself possibly a link to where the recordings are), so
  nothing outside them is ever read. The sample format is checked where features are computed
  (:mod:`gst_tts.data.cache`).
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import os
from pathlib import Path
import re
import stat
from typing import Iterator
import unicodedata

from gst_tts.errors import DataError

log = logging.getLogger(__name__)

METADATA = "metadata.csv"
STYLES = "styles.csv"
# LJSpeech's longest line is about 400 characters; a 60 s clip (the cache's longest) holds about
# 1,200 characters of speech in each of two text columns. Much longer lines are not utterances
# (a file joined into one line, a binary file), and one would make an attention matrix of its size.
MAX_LINE_CHARS = 4000
MAX_ID_CHARS = 200
# File names are limited to 255 bytes; "<id>.npy" and the atomic writer's ".<name>.XXXXXXXX.tmp"
# must fit, whatever the id's script costs in UTF-8.
_MAX_ID_BYTES = 230
_ID_PUNCTUATION = frozenset("-_.")
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f]")  # C0 controls but tab; "\n" never reaches it


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
        DataError: ``file:line: problem`` for a missing folder or metadata file, text that is
            not UTF-8, a control character, an overlong line, a wrong column count, an id that
            cannot name a file (see the module docstring), a duplicate id, empty text, missing
            audio or audio linked from outside the corpus, or a bad styles.csv line.
    """
    root = Path(root)
    metadata = root / METADATA
    if not root.is_dir():
        raise DataError(f"{root}: corpus folder not found")
    if not metadata.is_file():
        raise DataError(f"{metadata}: metadata file not found (expected LJSpeech format id|raw|normalized)")
    utterances: list[Utterance] = []
    seen: dict[str, int] = {}
    homes = tuple(os.path.join(os.path.realpath(home), "") for home in (root, root / "wavs"))  # "/corpus/"
    for line_no, line in _read_lines(metadata):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) not in (2, 3):
            raise DataError(f"{metadata}:{line_no}: expected 2 or 3 '|'-separated columns, got {len(fields)}")
        utt_id = fields[0].strip()
        # LJSpeech's third column is the normalised text; fall back to the raw one when it is absent.
        text = (fields[2] if len(fields) == 3 and fields[2].strip() else fields[1]).strip()
        problem = id_problem(utt_id)
        if problem:
            raise DataError(f"{metadata}:{line_no}: {problem}")
        if utt_id in seen:
            raise DataError(f"{metadata}:{line_no}: duplicate id {utt_id!r} (first on line {seen[utt_id]})")
        if not text:
            raise DataError(f"{metadata}:{line_no}: empty text for id {utt_id!r}")
        audio_path = _audio_path(root, homes, utt_id, f"{metadata}:{line_no}")
        seen[utt_id] = line_no
        utterances.append(Utterance(utt_id, text, audio_path, line_no))
    if not utterances:
        raise DataError(f"{metadata}: no utterances")
    styles = _read_styles(root / STYLES, seen) if (root / STYLES).is_file() else {}
    if styles:
        utterances = [Utterance(u.id, u.text, u.audio_path, u.line, styles.get(u.id)) for u in utterances]
    return utterances


def id_problem(utt_id: str) -> str | None:
    """What makes ``utt_id`` unusable as an utterance id (and so as a file name), or None.

    The message is one line: the id is shown escaped and shortened.
    """
    if not utt_id:
        return "empty id"
    shown = _shown(utt_id)
    n_bytes = len(utt_id.encode("utf-8", "surrogatepass"))
    if len(utt_id) > MAX_ID_CHARS or n_bytes > _MAX_ID_BYTES:
        return (
            f"id of {len(utt_id)} characters, {n_bytes} bytes in UTF-8 ({shown}); ids are at most "
            f"{MAX_ID_CHARS} characters and {_MAX_ID_BYTES} bytes (they name files)"
        )
    bad = next((c for c in utt_id if not (c in _ID_PUNCTUATION or unicodedata.category(c)[0] in "LNM")), None)
    if bad is not None:
        what = "a path separator" if bad in "/\\" else f"the character {bad!r}"
        return f"id {shown} holds {what}; ids are letters, digits, '-', '_' and '.' (they name files)"
    if utt_id.startswith(".") or ".." in utt_id:
        return f"id {shown} starts with '.' or holds '..'; ids name files, which must not be hidden or climb folders"
    return None


def id_file(folder: str | os.PathLike, utt_id: str, suffix: str) -> Path:
    """``folder/<utt_id><suffix>``, the one way an utterance id becomes a path (feature cache, GTA
    mels, their writers).

    Raises:
        DataError: an id that :func:`id_problem` refuses, or a name that would leave ``folder``
            (a second line of defence: ids from the corpus reader never do).
    """
    folder = Path(folder)
    problem = id_problem(utt_id)
    path = folder / f"{utt_id}{suffix}"
    if problem is None and os.path.dirname(os.path.abspath(path)) != os.path.abspath(folder):
        problem = f"id {_shown(utt_id)} names a file outside the folder"
    if problem:
        raise DataError(f"{folder}: {problem}")
    return path


def _audio_path(root: Path, homes: tuple[str, ...], utt_id: str, where: str) -> Path:
    """``root/wavs/<id>.wav``, checked to be a file whose real path (links followed) lies in one of
    ``homes``: the real paths of the corpus folder and of its wavs folder, each ending in "/"."""
    audio_path = id_file(root / "wavs", utt_id, ".wav")
    mode = _file_mode(audio_path, follow_links=False)
    # Not a link: it lies in the wavs folder, whose real path is a home (one lstat for LJSpeech's
    # 13,100 files rather than one per path component).
    if stat.S_ISLNK(mode):
        real = os.path.realpath(audio_path)
        if not real.startswith(homes):
            raise DataError(f"{where}: {audio_path} links to {real}, outside the corpus folder; copy the file into it")
        mode = _file_mode(real, follow_links=True)
    if not stat.S_ISREG(mode):  # missing, a folder, a FIFO (which a reader would wait on forever)
        raise DataError(f"{where}: audio file not found: {audio_path}")
    return audio_path


def _file_mode(path: str | os.PathLike, *, follow_links: bool) -> int:
    """``st_mode`` of ``path`` (of a link itself unless ``follow_links``); 0 when there is none."""
    try:
        return os.stat(path, follow_symlinks=follow_links).st_mode
    except OSError:
        return 0


def _shown(value: str, limit: int = 40) -> str:
    """``value`` escaped (control characters visible) and cut to about ``limit`` characters."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f"… ({len(value)} characters)"


def _read_lines(path: Path) -> Iterator[tuple[int, str]]:
    raw = path.read_bytes()
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(f"{path}:1: UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")  # drops a leading byte-order mark (Windows editors write one)
    except UnicodeDecodeError as exc:
        line_no = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line_no}: not valid UTF-8") from None
    # Split on newlines only: str.splitlines() also breaks at U+2028, form feeds etc. inside text.
    for line_no, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if len(line) > MAX_LINE_CHARS:
            raise DataError(f"{path}:{line_no}: line of {len(line)} characters; a line holds at most {MAX_LINE_CHARS}")
        control = _CONTROL.search(line)
        if control:
            c, column = control.group(), control.start() + 1
            why = (
                "line ends must be LF or CRLF" if c == "\r" else "a binary file, or one in another encoding than UTF-8?"
            )
            raise DataError(f"{path}:{line_no}: control character {c!r} at column {column} ({why})")
        yield line_no, line


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
