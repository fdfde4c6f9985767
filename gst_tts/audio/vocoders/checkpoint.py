"""The gst-tts vocoder checkpoint: what ``gst-tts-train-vocoder`` writes, and what ``--vocoder PATH``
reads without a config file (the file records its generator's sizes and its feature settings).

This module is the only place that knows the layout. :func:`vocoder_payload` assembles it;
:func:`save_vocoder_checkpoint` writes it atomically; :func:`check_vocoder_checkpoint` checks a
loaded one (format marker, version, parts, generator kind); :func:`rebuild_generator`
rebuilds its generator, checked against the acoustic model's features. Reading goes through
:mod:`gst_tts.checkpoints.weights` (never runs code).

Two kinds of generator share the layout: ``"hifigan"``
(:class:`~gst_tts.audio.vocoders.hifigan.HiFiGANGenerator`) and ``"spectral"``
(:class:`~gst_tts.audio.vocoders.spectral.MagnitudeEstimator`, vocoded by
:class:`~gst_tts.audio.vocoders.spectral.SpectralVocoder`).

Layout, version 1 (a plain dict of containers and tensors)::

    format            "gst-tts-vocoder"
    version           1
    generator         the generator's state dict (HiFi-GAN: weight norm as torch's parametrization, or folded)
    generator_config  its constructor's keyword arguments, complete
    audio_config      AudioConfig fields of the mels it was trained on
    step              training steps taken
    generator_kind    "hifigan" | "spectral"                                (optional: "hifigan" when absent,
                                                                             as in files written before it)
    config            the resolved training config                          (optional)
    discriminator     HiFiGANDiscriminator state dict                       (optional: training)
    discriminator_config  HiFiGANDiscriminator keyword arguments, complete  (optional: training)
    val_ids, train_ids    the validation (split order) and training (sorted) utterances (optional)
    optimizer, scheduler, scaler  {"generator": state, "discriminator": state} each (optional: resuming)
    train_state, rng      the loop's position and random states              (optional: resuming; under
                          DDP rng also holds "ranks", every rank's, in rank order)
    digest                "crc32:…" of all the above, written on save and checked at load (absent: not checked)

The trainer writes the full file (``last.pt``, ``step_*.pt``) and a generator-only export
(``generator.pt``: the first seven entries, weight norm folded), which is what inference needs.
"""

from __future__ import annotations

from dataclasses import asdict
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

import torch
from torch import nn

from gst_tts.audio.features import AudioConfig
from gst_tts.errors import VocoderError, first_line
from gst_tts.checkpoints.weights import (
    check_fitting_state,
    check_versioned,
    named_tensor_state,
    run_parts,
    save_versioned,
)

__all__ = [
    "VOCODER_FORMAT",
    "VOCODER_VERSION",
    "HIFIGAN_KIND",
    "SPECTRAL_KIND",
    "GENERATOR_KINDS",
    "FEATURE_FIELDS",
    "vocoder_payload",
    "save_vocoder_checkpoint",
    "check_vocoder_checkpoint",
    "is_vocoder_checkpoint",
    "generator_kind",
    "check_vocoder_features",
    "rebuild_generator",
    "same_number",
]

VOCODER_FORMAT = "gst-tts-vocoder"
VOCODER_VERSION = 1
# What vocoding needs; a file without one of these is incomplete whatever its version.
REQUIRED = ("generator", "generator_config", "audio_config")
#: The ``generator_kind`` of a HiFi-GAN generator (also that of a file that records none).
HIFIGAN_KIND = "hifigan"
#: The ``generator_kind`` of the spectral vocoder's magnitude estimator.
SPECTRAL_KIND = "spectral"
GENERATOR_KINDS = (HIFIGAN_KIND, SPECTRAL_KIND)
#: The AudioConfig fields a vocoder's mels and the acoustic model's must share.
FEATURE_FIELDS = ("sample_rate", "n_fft", "hop_length", "win_length", "n_mels", "fmin", "fmax")

Module = TypeVar("Module", bound=nn.Module)


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
    generator_kind: str = HIFIGAN_KIND,
) -> dict[str, Any]:
    """A vocoder checkpoint of the current version, from its parts (an optional part not given is left out).

    Args:
        generator_state: the generator's ``state_dict()``.
        generator_config: its constructor keyword arguments (rebuilds it without Hydra).
        audio_config: the feature settings of the mels it was trained on.
        step: training steps taken. Default 0.
        generator_kind: ``"hifigan"`` or ``"spectral"``: which class ``generator_config`` builds.
            Default ``"hifigan"``.
        config: the resolved training config. Default: left out.
        discriminator_state, discriminator_config: the discriminator's, for resuming or
            fine-tuning. Default: left out.
        val_ids: the validation utterances, kept when resuming. Default: left out.
        train_ids: the training utterances (any order; stored sorted). Default: left out.
        optimizer, scheduler, scaler: ``{"generator": state_dict, "discriminator": state_dict}``
            each, for resuming. Default: left out.
        train_state: the loop's position (step, epoch, batch, skipped batches). Default: left out.
        rng: ``gst_tts.checkpoints.acoustic.rng_state()``, for an exact resume. Default: left out.

    Raises:
        ValueError: an unknown ``generator_kind`` (a programming error).
    """
    if generator_kind not in GENERATOR_KINDS:
        raise ValueError(f"generator_kind must be one of {', '.join(GENERATOR_KINDS)}, got {generator_kind!r}")
    payload: dict[str, Any] = {
        "format": VOCODER_FORMAT,
        "version": VOCODER_VERSION,
        "generator": generator_state,
        "generator_config": _lists(generator_config),
        "audio_config": asdict(audio_config),
        "step": int(step),
        "generator_kind": generator_kind,
    }
    if discriminator_state is not None:
        payload["discriminator"] = discriminator_state
    if discriminator_config is not None:
        payload["discriminator_config"] = _lists(discriminator_config)
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


def save_vocoder_checkpoint(path: str | os.PathLike, payload: Mapping[str, Any]) -> Path:
    """Write a :func:`vocoder_payload` to ``path`` via a temp file + rename."""
    return save_versioned(
        path,
        payload,
        marker=VOCODER_FORMAT,
        required=REQUIRED,
        kind="vocoder",
        builder="gst_tts.audio.vocoders.checkpoint.vocoder_payload",
    )


def is_vocoder_checkpoint(stored: Any) -> bool:
    """Whether a loaded object claims to be a gst-tts vocoder checkpoint (its format marker)."""
    return isinstance(stored, dict) and stored.get("format") == VOCODER_FORMAT


def check_vocoder_checkpoint(
    stored: Any, path: str | os.PathLike = "vocoder", *, config_path: str | os.PathLike | None = None
) -> dict[str, Any]:
    """``stored`` itself when it is a vocoder checkpoint this code reads (format, version, parts, a
    known ``generator_kind``); otherwise a one-line VocoderError. ``config_path``: a vocoder config
    given with it, which is refused (the checkpoint records its own settings)."""
    ckpt = check_versioned(
        stored,
        path,
        marker=VOCODER_FORMAT,
        version=VOCODER_VERSION,
        required=REQUIRED,
        error=VocoderError,
        what="gst-tts vocoder checkpoint",
        kind="vocoder checkpoint",
    )
    kind = generator_kind(ckpt)
    if kind not in GENERATOR_KINDS:
        raise VocoderError(f"{path}: unknown generator_kind {kind!r} (this gst-tts reads {', '.join(GENERATOR_KINDS)})")
    if config_path is not None:
        raise VocoderError(
            f"{path}: a gst-tts vocoder checkpoint records its own settings; give no vocoder config ({config_path})"
        )
    return ckpt


def generator_kind(stored: Mapping[str, Any]) -> Any:
    """The ``generator_kind`` a vocoder checkpoint records: ``"hifigan"`` when it records none."""
    return stored.get("generator_kind", HIFIGAN_KIND)


def check_vocoder_features(ckpt: Mapping[str, Any], path: str | os.PathLike, audio_config: AudioConfig) -> None:
    """A one-line VocoderError naming every feature setting (:data:`FEATURE_FIELDS`) of the
    checkpoint's ``audio_config`` that differs from ``audio_config``, with both values."""
    stored, ours = ckpt["audio_config"], asdict(audio_config)
    problems = [
        f"{field} {stored.get(field)!r} (acoustic model {ours[field]!r})"
        for field in FEATURE_FIELDS
        if not same_number(stored.get(field), ours[field])
    ]
    if problems:
        raise VocoderError(
            f"{path}: the vocoder was trained on other features than the acoustic model's: {'; '.join(problems)}"
        )


def rebuild_generator(
    ckpt: Mapping[str, Any],
    path: str | os.PathLike,
    cls: Callable[..., Module],
    *,
    kind: str,
    audio_config: AudioConfig | None = None,
    prepare: Callable[[dict[str, torch.Tensor]], dict[str, torch.Tensor]] | None = None,
) -> Module:
    """The generator of a checked vocoder checkpoint: ``cls(**generator_config)`` with its weights.

    Args:
        ckpt: the checkpoint (:func:`check_vocoder_checkpoint`).
        path: where it was read, for messages.
        cls: the generator's class.
        kind: the ``generator_kind`` ``cls`` is for; a checkpoint of another kind is refused.
        audio_config: the feature settings its mels must have (:func:`check_vocoder_features`);
            ``None`` skips the comparison.
        prepare: applied to the stored state dict before it is loaded (e.g. folding weight norm).

    Raises:
        VocoderError: another kind, other feature settings, unusable generator settings (built
            first on the meta device: absurd sizes are refused before allocating), or weights that
            do not fit them or hold NaN or infinity.
    """
    found = generator_kind(ckpt)
    if found != kind:
        raise VocoderError(f"{path}: a {found} vocoder checkpoint, not a {kind} one")
    if audio_config is not None:
        check_vocoder_features(ckpt, path, audio_config)
    state = named_tensor_state(ckpt, "generator", path, error=VocoderError)
    if prepare is not None:
        state = prepare(state)
    config = ckpt["generator_config"]
    if not isinstance(config, dict) or any(isinstance(v, torch.Tensor) for v in config.values()):
        raise VocoderError(f"{path}: generator_config is not a dict of plain settings")
    try:
        try:
            with torch.device("meta"):  # sizes checked against the weights before anything is allocated
                check_fitting_state(cls(**config), state, path, built_from="its generator_config", error=VocoderError)
        except NotImplementedError:  # a constructor that computes on data (the spectral estimator's filters)
            pass
        generator = cls(**config)
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise VocoderError(f"{path}: unusable generator settings ({first_line(exc)})") from None
    check_fitting_state(generator, state, path, built_from="its generator_config", error=VocoderError)
    generator.load_state_dict(state)
    return generator


def same_number(a: Any, b: Any) -> bool:
    """Both are numbers (not booleans) of equal value: how feature settings are compared."""
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return numbers and float(a) == float(b)


def _lists(config: Mapping[str, Any]) -> dict[str, Any]:
    """Tuples as lists (nested too): the stored config compares equal to one read from a config file."""

    def plain(v: Any) -> Any:
        return [plain(x) for x in v] if isinstance(v, (list, tuple)) else v

    return {k: plain(v) for k, v in config.items()}
