"""Ground-truth-aligned (GTA) mels: an acoustic model's teacher-forced outputs for a corpus, one
``<id>.npy`` per utterance and a ``manifest.json``, written by ``gst-tts dump-gta-mels`` and read
by the vocoder trainer (``data.gta_dir``) in place of the recordings' own mels.

A GTA mel is a natural-log mel (not normalised), ``(frames, n_mels)`` float32, frame ``t`` aligned
with frame ``t`` of the utterance's cached features, so with the same samples of its trimmed
recording. It is shorter by the ``frames % r`` frames the acoustic model never emits.

Manifest, version 1 (JSON)::

    format            "gst-tts-gta-mels"
    version           1
    audio_config      AudioConfig fields of the acoustic model
    checkpoint        the acoustic checkpoint it came from (path, as given)
    step              that checkpoint's step
    reduction_factor  the model's r
    entries           {utterance id: frames}
"""

from __future__ import annotations

from dataclasses import asdict
import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from gst_tts.audio.features import AudioConfig
from gst_tts.data.corpus import id_file
from gst_tts.errors import DataError
from gst_tts.files import write_json
from gst_tts.checkpoints.weights import check_versioned

GTA_FORMAT = "gst-tts-gta-mels"
GTA_VERSION = 1
MANIFEST = "manifest.json"


def write_gta_manifest(
    folder: str | os.PathLike,
    *,
    audio_config: AudioConfig,
    checkpoint: str | os.PathLike,
    step: int,
    reduction_factor: int,
    entries: Mapping[str, int],
) -> Path:
    """Writes ``folder/manifest.json`` atomically (after the ``.npy`` files it lists)."""
    return write_json(
        Path(folder) / MANIFEST,
        {
            "format": GTA_FORMAT,
            "version": GTA_VERSION,
            "audio_config": asdict(audio_config),
            "checkpoint": str(checkpoint),
            "step": int(step),
            "reduction_factor": int(reduction_factor),
            "entries": {k: int(v) for k, v in entries.items()},
        },
    )


class GtaMels:
    """A folder of GTA mels, checked against the feature settings of the run that reads it.

    Args:
        folder: what ``gst-tts dump-gta-mels`` wrote.
        audio_config: the run's feature settings; the acoustic model's must be the same.

    Raises:
        DataError: no manifest, not a GTA manifest (or a newer version), other feature settings
            (every differing field named).
    """

    def __init__(self, folder: str | os.PathLike, audio_config: AudioConfig) -> None:
        self.dir = Path(folder)
        path = self.dir / MANIFEST
        if not path.is_file():
            raise DataError(f"{path}: GTA mel manifest not found (write the folder with gst-tts dump-gta-mels)")
        try:
            manifest: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"{path}: unreadable GTA mel manifest ({type(exc).__name__})") from None
        manifest = check_versioned(
            manifest,
            path,
            marker=GTA_FORMAT,
            version=GTA_VERSION,
            required=("audio_config", "entries"),
            error=DataError,
            what="GTA mel manifest",
            kind="GTA mel manifest",
        )
        theirs, ours = manifest["audio_config"], asdict(audio_config)
        # Trimming decides which samples frame 0 stands for, so it must agree too.
        changed = [f"{k} {theirs.get(k)!r} (this run {v!r})" for k, v in ours.items() if theirs.get(k) != v]
        if changed:
            raise DataError(f"{path}: GTA mels of other feature settings than data.audio: {'; '.join(changed)}")
        self.manifest = manifest
        self.entries: dict[str, int] = {str(k): int(v) for k, v in manifest["entries"].items()}
        self.n_mels = audio_config.n_mels

    def check_covers(self, utt_ids: Iterable[str]) -> None:
        """Raises a one-line DataError naming the first few of ``utt_ids`` that have no GTA mel."""
        missing = [i for i in utt_ids if i not in self.entries]
        if missing:
            shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
            raise DataError(
                f"{self.dir / MANIFEST}: no GTA mel for {len(missing)} utterances of the corpus ({shown}); "
                "dump them with gst-tts dump-gta-mels on this corpus"
            )

    def path(self, utt_id: str) -> Path:
        """``<folder>/<id>.npy``; a DataError for an id (say, from an edited manifest) that would
        name a file elsewhere."""
        return id_file(self.dir, utt_id, ".npy")

    def load(self, utt_id: str) -> np.ndarray:
        """``(frames, n_mels)`` float32 log-mel of one utterance.

        Raises:
            DataError: a missing or unreadable file, or one whose shape the manifest does not list.
        """
        path = self.path(utt_id)
        try:
            mel = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: unreadable GTA mel ({type(exc).__name__})") from None
        if mel.shape != (self.entries.get(utt_id), self.n_mels):
            raise DataError(
                f"{path}: GTA mel of shape {mel.shape}, the manifest says ({self.entries.get(utt_id)}, {self.n_mels})"
            )
        return mel.astype(np.float32, copy=False)
