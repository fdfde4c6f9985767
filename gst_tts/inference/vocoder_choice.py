"""Which vocoder speaks for a checkpoint: the one recorded beside it, else Griffin-Lim.

The record is ``vocoder.json`` in the checkpoint's folder, ``{"vocoder": "<path relative to that
folder>"}`` (``make demo`` records ``../vocoder_gta/checkpoints/generator.pt`` beside
``demo_out/checkpoints/best.pt``). :func:`record_vocoder` writes it, :func:`recorded_vocoder`
reads it, :func:`resolve_vocoder` turns a ``--vocoder`` value (``auto``, ``griffin-lim`` or a
path) into the vocoder and the one line that says which speaks and why, and
:func:`vocoder_fit` says whether a vocoder file fits a checkpoint's features (the checks
:func:`~gst_tts.audio.vocoders.load_vocoder` makes: mel bins, sample rate, hop, window, band).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders import GRIFFIN_LIM, Vocoder, load_vocoder
from gst_tts.errors import VocoderError, first_line
from gst_tts.files import write_json

__all__ = [
    "AUTO",
    "RECORD_NAME",
    "record_vocoder",
    "recorded_vocoder",
    "vocoder_fit",
    "resolve_vocoder",
    "describe_vocoder",
    "tidy_path",
    "KIND_NAMES",
]

log = logging.getLogger("gst_tts.inference.vocoder_choice")

#: The ``--vocoder`` value that means: the recorded vocoder, else Griffin-Lim.
AUTO = "auto"
#: The record's file name, in the checkpoint's folder.
RECORD_NAME = "vocoder.json"
#: A vocoder's ``kind`` → the name a person reads.
KIND_NAMES = {GRIFFIN_LIM: "Griffin-Lim", "hifigan": "HiFi-GAN", "spectral": "spectral vocoder"}
# A record is a few dozen bytes; a larger file is not one (and is not read into memory).
_MAX_RECORD_BYTES = 64 * 1024
_OVERRIDE_HINT = f"--vocoder {GRIFFIN_LIM} to use Griffin-Lim"


def record_vocoder(checkpoint_dir: Path, generator: Path) -> Path:
    """Records ``generator`` as the vocoder of the checkpoints in ``checkpoint_dir``: writes
    ``checkpoint_dir/vocoder.json`` atomically, the generator's path relative to that folder (so
    the pair can be moved together). Returns the record's path.

    Raises:
        VocoderError: ``generator`` is not a file.
        OutputError: the record cannot be written.
    """
    checkpoint_dir, generator = Path(checkpoint_dir), Path(generator)
    if not generator.is_file():
        raise VocoderError(f"{generator}: vocoder file not found; nothing recorded in {checkpoint_dir / RECORD_NAME}")
    relative = os.path.relpath(generator.absolute(), checkpoint_dir.absolute())
    return write_json(checkpoint_dir / RECORD_NAME, {"vocoder": Path(relative).as_posix()})


def recorded_vocoder(checkpoint: Path) -> Path | None:
    """The vocoder file recorded beside ``checkpoint`` (a checkpoint file, or its folder), or None.

    None when the folder has no ``vocoder.json``, and (with a logged warning) when the record
    names a file that does not exist.

    Raises:
        VocoderError: a record that is not ``{"vocoder": "<path>"}`` (unreadable, not JSON, another
            shape), one line naming the record.
    """
    checkpoint = Path(checkpoint)
    folder = checkpoint if checkpoint.is_dir() else checkpoint.parent
    record = folder / RECORD_NAME
    if not record.exists():
        return None
    value = _record_value(record)
    target = folder / value
    if not target.is_file():
        log.warning(
            "%s names %s, which is not a file: ignored (Griffin-Lim speaks unless --vocoder names one)", record, target
        )
        return None
    return tidy_path(target)


def tidy_path(path: Path) -> Path:
    """``path`` without ``folder/..`` detours (``checkpoints/../vocoder/g.pt`` → ``vocoder/g.pt``)
    when that names the same existing file (through a symbolic link it may not); else ``path``."""
    short = Path(os.path.normpath(path))
    return short if short.is_file() and os.path.samefile(short, path) else Path(path)


def _record_value(record: Path) -> str:
    """The ``"vocoder"`` string of a record; a one-line VocoderError for anything else."""
    expected = '{"vocoder": "<path relative to this folder>"}'
    try:
        if record.stat().st_size > _MAX_RECORD_BYTES:
            raise VocoderError(
                f"{record}: not a vocoder record (larger than {_MAX_RECORD_BYTES // 1024} KiB); expected {expected}"
            )
        stored: Any = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocoderError(f"{record}: not a vocoder record ({first_line(exc, 100)}); expected {expected}") from None
    value = stored.get("vocoder") if isinstance(stored, dict) else None
    if not isinstance(value, str) or not value.strip():
        found = f"a JSON {type(stored).__name__}" if not isinstance(stored, dict) else f"'vocoder' is {value!r}"
        raise VocoderError(f"{record}: not a vocoder record ({found}); expected {expected}")
    return value


def vocoder_fit(path: Path, audio_config: AudioConfig) -> tuple[str | None, str | None]:
    """Whether the vocoder file ``path`` fits mels made with ``audio_config``: ``(kind, None)``
    when it loads for them (``kind``: ``"hifigan"`` or ``"spectral"``), ``(None, problem)``
    otherwise, ``problem`` one line (the feature settings that differ, with both values, or why
    the file does not load). Loads it on the CPU and drops it: a check, not for speaking."""
    try:
        vocoder = load_vocoder(path, audio_config=audio_config, device="cpu")
    except VocoderError as exc:
        return None, str(exc)
    return getattr(vocoder, "kind", "custom"), None


def resolve_vocoder(
    requested: str | os.PathLike,
    *,
    checkpoint: Path,
    audio_config: AudioConfig,
    device: str | torch.device | None = None,
    config_path: str | os.PathLike | None = None,
    **griffin_lim: Any,
) -> tuple[Vocoder, str]:
    """The vocoder a ``--vocoder`` value names for ``checkpoint``, and the line that says which and why.

    Args:
        requested: ``"auto"`` (the vocoder recorded beside the checkpoint, else Griffin-Lim; a
            recorded one that does not fit the checkpoint's features is skipped with a warning),
            ``"griffin-lim"``, or a vocoder file (which must load: it was asked for).
        checkpoint: the acoustic checkpoint's file.
        audio_config: its feature settings, which a vocoder file's must equal.
        device: where a file's network runs (``None``: CUDA when available, else CPU).
        config_path: a published HiFi-GAN file's ``config.json`` (given ``requested`` a file).
        griffin_lim: ``GriffinLimVocoder`` keyword arguments, when Griffin-Lim speaks.

    Returns:
        ``(vocoder, description)``: the description as :func:`describe_vocoder` writes it, e.g.
        ``"spectral vocoder demo_out/vocoder_gta/checkpoints/generator.pt (recorded beside the
        checkpoint; --vocoder griffin-lim to use Griffin-Lim)"``.

    Raises:
        VocoderError: a record that is malformed, or a requested file that does not load.
    """
    if isinstance(requested, str) and requested == GRIFFIN_LIM:
        return load_vocoder(GRIFFIN_LIM, audio_config=audio_config, **griffin_lim), describe_vocoder(
            GRIFFIN_LIM, f"--vocoder {GRIFFIN_LIM}"
        )
    if not (isinstance(requested, str) and requested == AUTO):
        vocoder = load_vocoder(requested, audio_config=audio_config, device=device, config_path=config_path)
        return vocoder, describe_vocoder(_kind(vocoder), "--vocoder", path=Path(requested))
    recorded = recorded_vocoder(checkpoint)
    why = f"no vocoder recorded beside the checkpoint ({RECORD_NAME}); --vocoder PATH to use a trained one"
    if recorded is not None:
        try:
            vocoder = load_vocoder(recorded, audio_config=audio_config, device=device)
        except VocoderError as exc:
            log.warning("the vocoder recorded beside %s does not fit it, so Griffin-Lim speaks: %s", checkpoint, exc)
            why = f"the vocoder recorded beside the checkpoint, {recorded}, does not fit it: see the warning above"
        else:
            return vocoder, describe_vocoder(
                _kind(vocoder), f"recorded beside the checkpoint; {_OVERRIDE_HINT}", path=recorded
            )
    return load_vocoder(GRIFFIN_LIM, audio_config=audio_config, **griffin_lim), describe_vocoder(GRIFFIN_LIM, why)


def describe_vocoder(kind: str, reason: str, *, path: Path | None = None) -> str:
    """One line: the vocoder's name, its file, and why it speaks: ``"HiFi-GAN gen.pt (--vocoder)"``.

    Args:
        kind: ``"griffin-lim"``, ``"hifigan"``, ``"spectral"`` (another kind is shown as given).
        reason: why this vocoder, in a few words.
        path: its file; None for Griffin-Lim.
    """
    name = KIND_NAMES.get(kind, kind)
    return f"{name}{'' if path is None else f' {path}'} ({reason})"


def _kind(vocoder: Vocoder) -> str:
    return getattr(vocoder, "kind", "custom")
