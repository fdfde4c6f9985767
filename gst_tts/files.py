"""Atomic file writes: the one helper every output goes through (checkpoints, cache entries, wavs,
figures, reports), so that an interrupted run never leaves a half-written file behind.

The content goes to a temporary file in the destination folder (same file system), which then
replaces the destination in one ``os.replace``: a reader sees the old file or the new one. A write
the file system refuses (no space left, a read-only folder) is a one-line
:class:`~gst_tts.errors.OutputError` naming the file and the reason; the old file stays as it was.
A process killed mid-write leaves its temporary file (``.<name>.<random>.tmp``) behind:
:func:`remove_temporaries` clears a folder of them.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
import shutil
import tempfile
import time
from typing import Any, BinaryIO, Callable, Iterator

import numpy as np

from gst_tts.errors import GstTtsError, OutputError

TEMPORARY_GLOB = ".*.tmp"  # what atomic_write's temporaries look like


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], Any]) -> Path:
    """Call ``write(file)`` on a temporary binary file beside ``path``, then rename it into place.

    Missing parent folders are created. On any error (or interrupt) the temporary file is removed
    and ``path`` is left as it was. Returns ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OutputError: the file system refused the write (an ``OSError`` of creating the folder or
            the temporary file, writing, or renaming): one line naming ``path`` and the reason.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise output_error(path, exc) from None
    recorder: _WriteRecorder | None = None
    try:
        with os.fdopen(fd, "wb") as f:
            recorder = _WriteRecorder(f)
            write(recorder)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        cause = exc if isinstance(exc, OSError) else recorder and recorder.error
        if cause is not None and not isinstance(exc, GstTtsError):
            raise output_error(path, cause) from None
        raise
    return path


class _WriteRecorder:
    """The temporary file as ``write`` sees it, keeping the first ``OSError`` of a write: torch.save
    reports a full disk as a RuntimeError ("unexpected pos"), and numpy writes a real file past
    Python with a message that drops the reason; through this wrapper both write via Python."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self.error: OSError | None = None

    def write(self, data) -> int:
        try:
            return self._file.write(data)
        except OSError as exc:
            self.error = self.error or exc
            raise

    def __getattr__(self, name: str) -> Any:  # seek, tell, flush, ...: the file's own
        return getattr(self._file, name)


def output_error(path: str | os.PathLike, cause: OSError) -> OutputError:
    """A one-line :class:`OutputError`: ``"<path>: cannot write: <reason>"`` (``"no space left on
    device"``, ``"read-only file system"``, ``"permission denied"``), with ``cause``'s errno."""
    reason = os.strerror(cause.errno) if cause.errno else (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    error = OutputError(f"{path}: cannot write: {reason[:1].lower()}{reason[1:]}")
    error.errno = cause.errno  # strerror stays unset: str(error) is the message above
    return error


def remove_temporaries(folder: str | os.PathLike, *, older_than: float | None = None) -> int:
    """Removes what killed atomic writes left in ``folder`` (their ``.<name>.<random>.tmp`` files;
    only for a folder no other process is writing into, or, with ``older_than``, only those last
    written more than that many seconds ago: a live writer's is younger); returns how many. Never
    fatal."""
    cutoff = None if older_than is None else time.time() - older_than
    removed = 0
    for tmp in Path(folder).glob(TEMPORARY_GLOB):
        try:
            if cutoff is not None and tmp.stat().st_mtime >= cutoff:
                continue
            tmp.unlink()
            removed += 1
        except OSError:  # removed meanwhile, or not ours to remove
            pass
    return removed


def write_text(path: str | os.PathLike, text: str) -> Path:
    data = text.encode("utf-8")
    return atomic_write(path, lambda f: f.write(data))


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    return write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def write_npy(path: str | os.PathLike, array: np.ndarray) -> Path:
    return atomic_write(path, lambda f: np.save(f, array, allow_pickle=False))


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """A staging folder beside ``path`` for the block to fill; renamed into place when the block
    ends without an error, removed when it does not: a reader sees the old folder or the whole new
    one, never a part. A folder already at ``path`` is replaced (the caller decides whether it may be).

    Raises:
        OutputError: the file system refused to create the staging folder or to rename it.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; outputs are ordinary folders
    except OSError as exc:
        raise output_error(path, exc) from None
    old = None
    try:
        yield staging
        if path.exists():
            old = path.parent / f"{staging.name[: -len('.partial')]}.old"
            os.replace(path, old)
        os.replace(staging, path)
    except OutputError:  # already names its file
        shutil.rmtree(staging, ignore_errors=True)
        raise
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None and not path.exists():
            os.replace(old, path)  # the old folder back where it was
        raise output_error(path, exc) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if old is not None and old.exists():
            shutil.rmtree(old, ignore_errors=True)
