"""The gst-tts vocoder checkpoint: what ``gst-tts-train-vocoder`` writes, and what ``--vocoder PATH``
reads without a config file (the file records its generator's sizes and its feature settings).

This module is the only place that knows the layout. :func:`vocoder_payload` assembles it;
:func:`save_vocoder_checkpoint` writes it atomically; :func:`check_vocoder_checkpoint` checks a
loaded one (format marker, version, parts). Reading goes through :mod:`gst_tts.weights` (never
runs code).

Layout, version 1 (a plain dict of containers and tensors)::

    format            "gst-tts-vocoder"
    version           1
    generator         HiFiGANGenerator state dict (weight norm as torch's parametrization, or folded)
    generator_config  HiFiGANGenerator keyword arguments, complete
    audio_config      AudioConfig fields of the mels it was trained on
    step              training steps taken
    config            the resolved training config                          (optional)
    discriminator     HiFiGANDiscriminator state dict                       (optional: training)
    discriminator_config  HiFiGANDiscriminator keyword arguments, complete  (optional: training)
    val_ids, train_ids    the validation (split order) and training (sorted) utterances (optional)
    optimizer, scheduler, scaler  {"generator": state, "discriminator": state} each (optional: resuming)
    train_state, rng      the loop's position and random states              (optional: resuming)

The trainer writes the full file (``last.pt``, ``step_*.pt``) and a generator-only export
(``generator.pt``: the first six entries, weight norm folded), which is what inference needs.
"""

from __future__ import annotations

from dataclasses import asdict
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.errors import VocoderError
from gst_tts.weights import check_versioned, run_parts, save_versioned

__all__ = ["VOCODER_FORMAT", "VOCODER_VERSION", "vocoder_payload", "save_vocoder_checkpoint", "check_vocoder_checkpoint",
           "is_vocoder_checkpoint"]

VOCODER_FORMAT = "gst-tts-vocoder"
VOCODER_VERSION = 1
# What vocoding needs; a file without one of these is incomplete whatever its version.
REQUIRED = ("generator", "generator_config", "audio_config")


def vocoder_payload(
    *,
    generator_state: Mapping[str, torch.Tensor],
    generator_config: Mapping[str, Any],
    audio_config: AudioConfig,
    step: int = 0,
    config: Mapping[str, Any] | None = None,
    discriminator_state: Mapping[str, torch.Tensor] | None = None,
    discriminator_config: Mapping[str, Any] | None = None,
    val_ids: Sequence[str] | None = None,
    train_ids: Sequence[str] | None = None,
    optimizer: Mapping[str, Any] | None = None,
    scheduler: Mapping[str, Any] | None = None,
    scaler: Mapping[str, Any] | None = None,
    train_state: Mapping[str, int] | None = None,
    rng: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A vocoder checkpoint of the current version, from its parts (an optional part not given is left out).

    Args:
        generator_state: the generator's ``state_dict()``.
        generator_config: its constructor keyword arguments (rebuilds it without Hydra).
        audio_config: the feature settings of the mels it was trained on.
        step: training steps taken. Default 0.
        config: the resolved training config. Default: left out.
        discriminator_state, discriminator_config: the discriminator's, for resuming or
            fine-tuning. Default: left out.
        val_ids: the validation utterances, kept when resuming. Default: left out.
        train_ids: the training utterances (any order; stored sorted). Default: left out.
        optimizer, scheduler, scaler: ``{"generator": state_dict, "discriminator": state_dict}``
            each, for resuming. Default: left out.
        train_state: the loop's position (step, epoch, batch, skipped batches). Default: left out.
        rng: ``gst_tts.training.checkpoint.rng_state()``, for an exact resume. Default: left out.
    """
    payload: dict[str, Any] = {
        "format": VOCODER_FORMAT,
        "version": VOCODER_VERSION,
        "generator": generator_state,
        "generator_config": _lists(generator_config),
        "audio_config": asdict(audio_config),
        "step": int(step),
    }
    if discriminator_state is not None:
        payload["discriminator"] = discriminator_state
    if discriminator_config is not None:
        payload["discriminator_config"] = _lists(discriminator_config)
    payload.update(run_parts(config=config, val_ids=val_ids, train_ids=train_ids, optimizer=optimizer, scheduler=scheduler,
                             scaler=scaler, train_state=train_state, rng=rng))
    return payload


def save_vocoder_checkpoint(path: str | os.PathLike, payload: Mapping[str, Any]) -> Path:
    """Write a :func:`vocoder_payload` to ``path`` via a temp file + rename."""
    return save_versioned(path, payload, marker=VOCODER_FORMAT, required=REQUIRED, kind="vocoder",
                          builder="gst_tts.audio.vocoders.checkpoint.vocoder_payload")


def is_vocoder_checkpoint(stored: Any) -> bool:
    """Whether a loaded object claims to be a gst-tts vocoder checkpoint (its format marker)."""
    return isinstance(stored, dict) and stored.get("format") == VOCODER_FORMAT


def check_vocoder_checkpoint(stored: Any, path: str | os.PathLike = "vocoder") -> dict[str, Any]:
    """``stored`` itself when it is a vocoder checkpoint this code reads; otherwise a one-line VocoderError."""
    return check_versioned(stored, path, marker=VOCODER_FORMAT, version=VOCODER_VERSION, required=REQUIRED,
                           error=VocoderError, what="gst-tts vocoder checkpoint", kind="vocoder checkpoint")


def _lists(config: Mapping[str, Any]) -> dict[str, Any]:
    """Tuples as lists (nested too): the stored config compares equal to one read from a config file."""
    def plain(v: Any) -> Any:
        return [plain(x) for x in v] if isinstance(v, (list, tuple)) else v

    return {k: plain(v) for k, v in config.items()}
