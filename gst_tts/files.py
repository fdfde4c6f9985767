"""Atomic file writes: the one helper every output goes through (checkpoints, cache entries, wavs,
figures, reports), so that an interrupted run never leaves a half-written file behind.

The content goes to a temporary file in the destination folder (same file system), which then
replaces the destination in one ``os.replace``: a reader sees the old file or the new one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import tempfile
from typing import Any, BinaryIO, Callable

import numpy as np


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], Any]) -> Path:
    """Call ``write(file)`` on a temporary binary file beside ``path``, then rename it into place.

    Missing parent folders are created. On any error (or interrupt) the temporary file is removed
    and ``path`` is left as it was. Returns ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    data = text.encode("utf-8")
    return atomic_write(path, lambda f: f.write(data))


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    return write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def write_npy(path: str | os.PathLike, array: np.ndarray) -> Path:
    return atomic_write(path, lambda f: np.save(f, array, allow_pickle=False))
