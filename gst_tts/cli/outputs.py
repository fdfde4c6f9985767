"""What the ``gst-tts`` commands write, shared: early checks of output locations, a synthesis and
its sidecars, CSV tables. Every file goes through :mod:`gst_tts.files` (atomic)."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from gst_tts.audio.io import write_wav
from gst_tts.errors import GstTtsError
from gst_tts.files import write_json, write_npy, write_text
from gst_tts.inference.results import SynthesisResult

__all__ = ["check_writable_location", "sidecar_paths", "write_outputs", "write_csv"]


def check_writable_location(path: Path, what: str) -> None:
    """Fail early when ``path`` cannot be created: the nearest existing ancestor must be a writable folder.

    Args:
        path: the file to be written.
        what: the option that named it, for the message (``"--out"``).
    """
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise GstTtsError(f"{what} {path}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise GstTtsError(f"{what} {path}: {parent} is not writable")


def sidecar_paths(wav_path: Path) -> dict[str, Path]:
    """``X.wav`` → ``{"json": X.json, "alignment": X.alignment.npy, "plot": X.alignment.png}``."""
    stem = wav_path.with_suffix("")
    return {
        "json": stem.with_name(stem.name + ".json"),
        "alignment": stem.with_name(stem.name + ".alignment.npy"),
        "plot": stem.with_name(stem.name + ".alignment.png"),
    }


def write_outputs(
    result: SynthesisResult, wav_path: Path, *, save_alignment: bool, plot: bool, extra: dict[str, Any], title: str = ""
) -> list[Path]:
    """The wav and its sidecars; the wav is written last, so a wav always has its sidecars.

    Args:
        result: one synthesis.
        wav_path: where the wav goes; the sidecars go beside it (:func:`sidecar_paths`).
        save_alignment: also write the alignment ``(decoder_steps, input_symbols)`` as float32 ``.npy``.
        plot: also write the attention / stop / mel figure.
        extra: more JSON fields for the ``.json`` sidecar (style source, seed, checkpoint, …).
        title: the figure's title.

    Returns:
        The paths written, the wav last.
    """
    paths = sidecar_paths(wav_path)
    written = [write_json(paths["json"], {**result.to_dict(), **extra})]
    if save_alignment:
        written.append(write_npy(paths["alignment"], result.alignment.astype(np.float32)))
    if plot:
        from gst_tts.analysis.plots import save_figure  # matplotlib only when plotting

        written.append(save_figure(result.figure(title=title), paths["plot"]))
    write_wav(wav_path, result.audio, result.sample_rate)
    written.append(wav_path)
    return written


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """A CSV table (``\\n`` line ends), written atomically."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return write_text(path, buf.getvalue())
