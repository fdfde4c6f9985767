"""The checkpoint schema: what a checkpoint holds, how it is written and how it is read.

This module is the only place that knows the layout. :func:`checkpoint_payload` assembles it from
its parts (the trainer and the test fixtures both call it); :func:`save_checkpoint` writes it
atomically; :func:`load_checkpoint` reads it with ``torch.load(weights_only=True)`` (never runs
code) and checks the format marker and version.

Layout, version 1 (a plain dict of containers and tensors)::

    format        "gst-tts-checkpoint"
    version       1
    model         model state dict: the weights synthesis uses (with trainer.weight_average_decay, their average)
    model_config  GSTTacotron constructor keyword arguments
    symbols       SymbolTable.to_dict()
    audio_config  AudioConfig fields
    mel_stats     MelStats.to_dict()
    step          optimizer steps taken
    config        the resolved training config            (optional)
    val_ids       validation utterance ids, split order    (optional)
    train_ids     training utterance ids, sorted           (optional)
    neutral_style (n_heads, n_tokens) float32: the mean token weights of the training references
                  (gst_tts.training.neutral; the neutral style)            (optional: older checkpoints lack it)
    neutral_meter its running sums, for an exact resume                   (optional)
    training_model the weights being trained, when ``model`` holds their average
                  (gst_tts.training.averaging), for resuming               (optional)
    optimizer, scheduler, scaler, train_state, rng        (optional: resuming training; under DDP
                  rng also holds "ranks", every rank's random states in rank order)
    digest        "crc32:…" of all the above, written by save_checkpoint and checked at load
                  (gst_tts.checkpoints.weights.payload_digest; absent in files written before it: not checked)

An optional part that is not given is left out rather than stored as ``None``.
"""

from __future__ import annotations

from dataclasses import asdict
import logging
import math
import os
from pathlib import Path
import random
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.errors import CheckpointError, GstTtsError, first_line
from gst_tts.model import GSTTacotron
from gst_tts.text.symbols import SymbolTable
from gst_tts.checkpoints.weights import (
    check_fitting_state,
    check_versioned,
    load_weights_only,
    named_tensor_state,
    run_parts,
    save_versioned,
)

log = logging.getLogger("gst_tts.checkpoints.acoustic")

FORMAT = "gst-tts-checkpoint"
VERSION = 1
# What synthesis needs; a checkpoint without one of these is incomplete whatever its version.
REQUIRED = ("model", "model_config", "symbols", "audio_config", "mel_stats")


def checkpoint_payload(
    *,
    model_state: Mapping[str, torch.Tensor],
    model_config: Mapping[str, Any],
    symbols: SymbolTable,
    audio_config: AudioConfig,
    mel_stats: MelStats,
    step: int = 0,
    reference_frames: int | None = None,
    config: Mapping[str, Any] | None = None,
    val_ids: Sequence[str] | None = None,
    train_ids: Sequence[str] | None = None,
    optimizer: Mapping[str, Any] | None = None,
    scheduler: Mapping[str, Any] | None = None,
    scaler: Mapping[str, Any] | None = None,
    train_state: Mapping[str, int] | None = None,
    rng: Mapping[str, Any] | None = None,
    neutral_style: torch.Tensor | None = None,
    neutral_meter: Mapping[str, Any] | None = None,
    training_model_state: Mapping[str, torch.Tensor] | None = None,
) -> dict[str, Any]:
    """The checkpoint of the current version, from its parts.

    Args:
        model_state: the model's ``state_dict()``.
        model_config: the model's constructor keyword arguments (rebuilds it without Hydra).
        symbols, audio_config, mel_stats: the text and feature front end the model was trained with.
        step: optimizer steps taken. Default 0.
        reference_frames: the longest training reference (frames, with ``data.reference_seconds``):
            the longest reference inference encodes in one pass. Default: left out (whole references).
        config: the resolved training config, for the record and for resuming. Default: left out.
        val_ids: the validation utterances, kept when resuming. Default: left out.
        train_ids: the training utterances (any order; stored sorted). Default: left out.
        optimizer, scheduler, scaler: their ``state_dict()``, for resuming. Default: left out.
        train_state: the loop's position (step, epoch, batch, skipped batches). Default: left out.
        rng: :func:`rng_state`, for an exact resume. Default: left out.
        neutral_style: ``(n_heads, n_tokens)`` mean token weights of the training references, the
            neutral style synthesis uses (:func:`stored_neutral_style`). Default: left out (uniform).
        neutral_meter: the running sums behind it (:class:`gst_tts.training.neutral.NeutralStyleMeter`),
            for resuming. Default: left out.
        training_model_state: the weights being trained when ``model_state`` is their average
            (:class:`gst_tts.training.averaging.WeightAverage`), for resuming. Default: left out.
    """
    payload: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "model": model_state,  # as given: a state_dict carries metadata that load_state_dict reads
        # Lists, not tuples: the stored config compares equal to one read back from a config file.
        "model_config": {k: list(v) if isinstance(v, tuple) else v for k, v in model_config.items()},
        "symbols": symbols.to_dict(),
        "audio_config": asdict(audio_config),
        "mel_stats": mel_stats.to_dict(),
        "step": int(step),
    }
    if reference_frames is not None:
        payload["reference_frames"] = int(reference_frames)
    if neutral_style is not None:
        payload["neutral_style"] = neutral_style.detach().float().cpu()
    if neutral_meter is not None:
        payload["neutral_meter"] = dict(neutral_meter)
    if training_model_state is not None:
        payload["training_model"] = training_model_state
    payload.update(
        run_parts(
            config=config,
            val_ids=val_ids,
            train_ids=train_ids,
            optimizer=optimizer,
            scheduler=scheduler,
            scaler=scaler,
            train_state=train_state,
            rng=rng,
        )
    )
    return payload


def save_checkpoint(path: str | os.PathLike, payload: Mapping[str, Any]) -> Path:
    """Write a :func:`checkpoint_payload` (or a loaded checkpoint) to ``path`` via a temp file + rename."""
    return save_versioned(
        path,
        payload,
        marker=FORMAT,
        required=REQUIRED,
        kind="checkpoint",
        builder="gst_tts.checkpoints.acoustic.checkpoint_payload",
    )


def load_checkpoint(path: str | os.PathLike, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (any version up to :data:`VERSION`).

    Raises:
        CheckpointError: missing file, not a checkpoint, a pickle carrying code or objects
            (refused by ``weights_only`` loading, never executed), a version this code does not
            know (one from a newer gst-tts), a checkpoint missing a part synthesis needs, or one
            whose contents do not match its digest (corrupted on disk).
    """
    ckpt = load_weights_only(path, error=CheckpointError, what="gst-tts checkpoint", map_location=map_location)
    return check_checkpoint(ckpt, path)


def check_checkpoint(ckpt: Any, path: str | os.PathLike = "checkpoint") -> dict[str, Any]:
    """``ckpt`` itself when it is a checkpoint this code reads; otherwise a one-line CheckpointError."""
    return check_versioned(
        ckpt,
        path,
        marker=FORMAT,
        version=VERSION,
        required=REQUIRED,
        error=CheckpointError,
        what="gst-tts checkpoint",
        kind="checkpoint",
    )


def model_from_checkpoint(ckpt: dict[str, Any], path: str | os.PathLike = "checkpoint") -> GSTTacotron:
    """Rebuild the model and load its weights.

    The model_config must hold plain values (numbers, strings, lists of them); the model is first
    built on the meta device and the weights' names and shapes checked against it, so a config of
    absurd sizes is refused before anything is allocated; weights holding NaN or infinity are
    refused too (see :func:`gst_tts.checkpoints.weights.check_fitting_state`).

    Raises:
        CheckpointError: one line, for any of these, a symbol count other than the table's, or a
            config the model's constructor refuses.
    """
    symbols = _symbols(ckpt["symbols"], path)
    config = _plain_config(ckpt["model_config"], path, "model_config")
    if config.get("n_symbols") != len(symbols):
        raise CheckpointError(
            f"{path}: model has {config.get('n_symbols')} symbols but the checkpoint's symbol table has {len(symbols)}"
        )
    state = named_tensor_state(ckpt, "model", path, error=CheckpointError)
    try:
        with torch.device("meta"):
            skeleton = GSTTacotron(**config)
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise CheckpointError(f"{path}: unusable model_config ({first_line(exc)})") from None
    check_fitting_state(skeleton, state, path, built_from="the model config", error=CheckpointError)
    model = GSTTacotron(**config)
    model.load_state_dict(state)
    return model


def stored_neutral_style(
    ckpt: Mapping[str, Any], path: str | os.PathLike, n_heads: int, n_tokens: int
) -> np.ndarray | None:
    """The checkpoint's neutral token weights as float32 ``(n_heads, n_tokens)``, or ``None`` for a
    checkpoint written before they were stored (synthesis then keeps uniform weights).

    Raises:
        CheckpointError: a stored value that is not a finite tensor of that shape.
    """
    stored = ckpt.get("neutral_style")
    if stored is None:
        return None
    if (
        not isinstance(stored, torch.Tensor)
        or tuple(stored.shape) != (n_heads, n_tokens)
        or not stored.is_floating_point()
    ):
        shown = tuple(stored.shape) if isinstance(stored, torch.Tensor) else type(stored).__name__
        raise CheckpointError(
            f"{path}: neutral_style must be a float tensor of shape ({n_heads}, {n_tokens}), got {shown}"
        )
    if not bool(torch.isfinite(stored).all()):
        raise CheckpointError(f"{path}: neutral_style holds NaN or infinite weights")
    return stored.float().cpu().numpy()


def checkpoint_parts(
    ckpt: dict[str, Any], path: str | os.PathLike = "checkpoint"
) -> tuple[SymbolTable, AudioConfig, MelStats]:
    """The symbol table, feature settings and normalisation statistics; a one-line CheckpointError
    for an ``audio_config`` that is not :class:`AudioConfig`'s fields with values of their types."""
    try:
        stats = MelStats.from_dict(ckpt["mel_stats"])
    except (TypeError, ValueError, KeyError, AttributeError, RuntimeError) as exc:
        raise CheckpointError(f"{path}: unusable mel_stats ({type(exc).__name__}: {first_line(exc)})") from None
    return _symbols(ckpt["symbols"], path), _audio_config(ckpt["audio_config"], path), stats


def _symbols(stored: Any, path: str | os.PathLike) -> SymbolTable:
    """The stored symbol table; its one-line complaint about a malformed one names ``path``."""
    try:
        return SymbolTable.from_dict(stored)
    except GstTtsError as exc:
        raise CheckpointError(f"{path}: {exc}") from None


def _plain_config(config: Any, path: str | os.PathLike, what: str) -> dict[str, Any]:
    """``config`` as a dict when its keys are strings and its values plain (None, bool, numbers,
    strings, lists of them, nested): a tensor or other object there is a one-line CheckpointError."""
    if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
        raise CheckpointError(f"{path}: {what} is not a dict of named settings")

    def plain(value: Any) -> bool:
        if isinstance(value, (list, tuple)):
            return all(plain(v) for v in value)
        return value is None or isinstance(value, (bool, int, float, str))

    for key, value in config.items():
        if not plain(value):
            raise CheckpointError(f"{path}: {what} {key!r} is a {type(value).__name__}, not a plain setting")
    return dict(config)


def _audio_config(stored: Any, path: str | os.PathLike) -> AudioConfig:
    """:class:`AudioConfig` from its stored fields, each a finite number (a whole one where the
    field is an int)."""
    stored = _plain_config(stored, path, "audio_config")
    defaults = asdict(AudioConfig())
    unknown = [k for k in stored if k not in defaults]
    if unknown:
        raise CheckpointError(f"{path}: audio_config has unknown fields {', '.join(unknown)}")
    for key, value in stored.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not number or (isinstance(defaults[key], int) and not float(value).is_integer()):
            kind = "a whole number" if isinstance(defaults[key], int) else "a number"
            raise CheckpointError(f"{path}: audio_config {key} is {value!r}, not {kind}")
    return AudioConfig(**stored)


def rng_state() -> dict[str, Any]:
    """Every random stream training draws from, in the checkpoint's ``rng`` layout; CUDA's holds
    the GPU dropout masks."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    # A run that never touched CUDA has nothing to save there; asking would start it on the GPU.
    used_cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if used_cuda else None,
        "python": random.getstate(),
        # As a tensor and numbers: weights-only loading refuses numpy arrays.
        "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, gauss],
    }


def restore_rng_state(rng: Mapping[str, Any], path: str | os.PathLike, on_cuda: bool) -> None:
    """Restores what :func:`rng_state` saved; ``on_cuda``: this run draws dropout on the GPU."""
    torch.set_rng_state(rng["torch"].cpu())
    random.setstate(_as_tuple(rng["python"]))
    if rng.get("numpy") is not None:
        kind, keys, pos, has_gauss, gauss = rng["numpy"]
        np.random.set_state((kind, keys.cpu().numpy().astype(np.uint32), pos, has_gauss, gauss))
    cuda = rng.get("cuda")
    if not torch.cuda.is_available():
        return
    if cuda and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([state.cpu() for state in cuda])
    elif on_cuda and not cuda:
        log.warning(
            "%s holds no CUDA random state (written without CUDA): GPU dropout will not repeat an uninterrupted run",
            path,
        )
    elif on_cuda:
        log.warning(
            "%s holds the random state of %d CUDA devices but %d are visible: GPU dropout will not "
            "repeat an uninterrupted run",
            path,
            len(cuda),
            torch.cuda.device_count(),
        )


def _as_tuple(x):
    """Python's random state is nested tuples; a checkpoint may hand it back as lists."""
    return tuple(_as_tuple(v) for v in x) if isinstance(x, (list, tuple)) else x
