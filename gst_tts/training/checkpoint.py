"""Checkpoints: written atomically, read with ``torch.load(weights_only=True)`` (never runs code)."""

from __future__ import annotations

import os
from pathlib import Path
import pickle
from typing import Any

import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.errors import CheckpointError
from gst_tts.files import atomic_write
from gst_tts.model import GSTTacotron
from gst_tts.text.symbols import SymbolTable

FORMAT = "gst-tts-checkpoint"
VERSION = 1


def save_checkpoint(path: str | os.PathLike, payload: dict[str, Any]) -> Path:
    """Write ``payload`` (plain containers and tensors only) to ``path`` via a temp file + rename."""
    return atomic_write(path, lambda f: torch.save({"format": FORMAT, "version": VERSION, **payload}, f))


def load_checkpoint(path: str | os.PathLike, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint`.

    Raises:
        CheckpointError: missing file, not a checkpoint, or a pickle carrying code or objects
            (refused by ``weights_only`` loading, never executed).
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: checkpoint not found")
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        detail = _weights_unpickler_detail(str(exc))
        if "global" in detail.lower():  # a class or function reference: code, refused unexecuted
            raise CheckpointError(
                f"{path}: refused to load: the file references code or objects that weights-only loading does not allow ({detail})"
            ) from None
        raise CheckpointError(f"{path}: not a gst-tts checkpoint (unreadable pickle: {detail})") from None
    except Exception as exc:  # zip/EOF/decode errors from random bytes
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ""
        raise CheckpointError(f"{path}: not a gst-tts checkpoint ({type(exc).__name__}: {first})") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a gst-tts checkpoint (no '{FORMAT}' marker)")
    missing = [k for k in ("model", "model_config", "symbols", "audio_config", "mel_stats") if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path}: incomplete checkpoint, missing {', '.join(missing)}")
    return ckpt


def model_from_checkpoint(ckpt: dict[str, Any], path: str | os.PathLike = "checkpoint") -> GSTTacotron:
    """Rebuild the model and load its weights; a config/weights mismatch is a CheckpointError."""
    symbols = SymbolTable.from_dict(ckpt["symbols"])
    config = dict(ckpt["model_config"])
    if config.get("n_symbols") != len(symbols):
        raise CheckpointError(
            f"{path}: model has {config.get('n_symbols')} symbols but the checkpoint's symbol table has {len(symbols)}"
        )
    try:
        model = GSTTacotron(**config)
        model.load_state_dict(ckpt["model"])
    except (TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path}: weights do not match the model config ({str(exc).splitlines()[0][:160]})") from None
    return model


def checkpoint_parts(ckpt: dict[str, Any]) -> tuple[SymbolTable, AudioConfig, MelStats]:
    return (
        SymbolTable.from_dict(ckpt["symbols"]),
        AudioConfig(**ckpt["audio_config"]),
        MelStats.from_dict(ckpt["mel_stats"]),
    )


def _weights_unpickler_detail(message: str) -> str:
    """The informative part of torch's long weights-only error, on one line."""
    marker = "WeightsUnpickler error:"
    detail = message.split(marker, 1)[1] if marker in message else message
    detail = " ".join(detail.split())
    return detail.split(". ")[0][:160]
