"""HiFi-GAN weights as a gst-tts vocoder: reading a generator file (a published one with its
``config.json``, or gst-tts's own vocoder checkpoint, which records its settings), checking it
against the acoustic model's features, and :class:`HiFiGANVocoder`.

The files are those the HiFi-GAN authors publish (github.com/jik876/hifi-gan): a generator file
(``g_02500000``, ``generator_v1``, …; legacy or zip torch format) holding ``{"generator":
state_dict}``, and the ``config.json`` that ships beside it. They are read without running code
(:mod:`gst_tts.checkpoints.weights`).

The features already match the published LJSpeech models: 22050 Hz, n_fft 1024, hop 256, window
1024, 80 slaney mels from 0 to 8000 Hz, ``log(clamp(mel, 1e-5))`` of the magnitude
(:class:`~gst_tts.audio.features.MelExtractor`). One difference stays: gst-tts centres frame ``t``
on sample ``t · hop`` (``center=True``), HiFi-GAN's training features centre it half a hop later,
so the waveform comes out half a hop (128 samples, 5.8 ms) late, and one hop longer for a mel of
a recording (gst-tts makes ``1 + samples // hop`` frames, HiFi-GAN ``samples // hop``). Neither is
audible; nothing is shifted, so the output is exactly ``frames · hop`` samples.

gst-tts's own vocoder checkpoints (``gst-tts-train-vocoder``; layout in
:mod:`gst_tts.audio.vocoders.checkpoint`) carry their generator's sizes and their
:class:`~gst_tts.audio.features.AudioConfig`: they load without a config file, and their feature
settings are compared field by field with the acoustic model's.
"""

from __future__ import annotations

from dataclasses import asdict
import json
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders.checkpoint import (
    FEATURE_FIELDS,
    HIFIGAN_KIND,
    check_vocoder_checkpoint,
    is_vocoder_checkpoint,
    rebuild_generator,
    same_number,
)
from gst_tts.audio.vocoders.hifigan import (
    FEATURE_CONFIG_KEYS,
    GENERATOR_CONFIG_KEYS,
    HiFiGANGenerator,
    fold_weight_norm,
)
from gst_tts.compute import resolve_device
from gst_tts.errors import VocoderError, first_line
from gst_tts.checkpoints.weights import load_fitting_state, load_weights_only, named_tensor_state

__all__ = [
    "HiFiGANVocoder",
    "load_hifigan",
    "hifigan_vocoder",
    "check_hifigan_config",
    "generator_from_checkpoint",
    "DEFAULT_CONFIG_NAME",
]

#: The config file looked for beside the weights when none is named.
DEFAULT_CONFIG_NAME = "config.json"

# config.json key → AudioConfig field it must equal.
_FEATURE_FIELDS = dict(zip(FEATURE_CONFIG_KEYS, FEATURE_FIELDS))
# What the training script of HiFi-GAN stores beside the generator, in its "do_" files.
_DISCRIMINATOR_KEYS = ("mpd", "msd", "optim_g", "optim_d")


class HiFiGANVocoder:
    """A folded :class:`HiFiGANGenerator` behind the ``Vocoder`` interface: eval mode, no gradients.

    Args:
        generator: the generator; its weight norm, if any, is folded here, and it is put in eval
            mode, without gradients, on ``device``.
        sample_rate: the rate of its output (Hz).
        device: where it runs. Default CPU.
    """

    #: The name ``gst-tts serve`` offers it under.
    kind = "hifigan"

    def __init__(self, generator: HiFiGANGenerator, *, sample_rate: int, device: str | torch.device = "cpu") -> None:
        self.device = resolve_device(device)
        self.generator = generator.remove_weight_norm().to(self.device).eval().requires_grad_(False)
        self.sample_rate = int(sample_rate)

    @property
    def hop_length(self) -> int:
        return self.generator.hop_length

    @torch.no_grad()
    def __call__(self, log_mel: torch.Tensor | np.ndarray) -> np.ndarray:
        """``(frames, n_mels)`` natural-log mel (not normalised) → ``(frames · hop,)`` float32 in [-1, 1].

        Raises:
            VocoderError: the mel does not have the generator's number of channels.
        """
        mel = torch.as_tensor(np.asarray(log_mel, dtype=np.float32) if isinstance(log_mel, np.ndarray) else log_mel)
        if mel.dim() != 2 or mel.shape[1] != self.generator.n_mels:
            raise VocoderError(f"HiFi-GAN expects a (frames, {self.generator.n_mels}) log-mel, got {tuple(mel.shape)}")
        if mel.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        audio = self.generator(mel.float().T.unsqueeze(0).to(self.device))  # (1, 1, frames · hop)
        return audio.reshape(-1).float().cpu().numpy()


def load_hifigan(
    path: str | os.PathLike,
    *,
    config_path: str | os.PathLike | None = None,
    audio_config: AudioConfig,
    device: str | torch.device | None = None,
) -> HiFiGANVocoder:
    """A HiFi-GAN generator file as a vocoder for ``audio_config``'s mels: a gst-tts vocoder
    checkpoint (it records its settings), or a published generator file and its ``config.json``.
    (:func:`~gst_tts.audio.vocoders.load_vocoder` takes the spectral vocoder's checkpoints too.)

    Args:
        path: a gst-tts vocoder checkpoint (``generator.pt``, or a training checkpoint), or a
            published generator file (``{"generator": state_dict}``, legacy or zip torch format).
        config_path: a published file's ``config.json``. Default: ``config.json`` beside ``path``.
            Not for a gst-tts vocoder checkpoint.
        audio_config: the acoustic model's feature settings, which the vocoder's must equal.
        device: where the vocoder runs; ``None`` picks CUDA when available, else CPU.

    Raises:
        VocoderError: a missing or unreadable file; a config that lacks keys or does not match
            ``audio_config`` (every mismatched key named, with both values); a file that is not a
            generator (a ``do_*`` discriminator file, a pickled module: refused, never run);
            weights that do not fit the config; a gst-tts vocoder checkpoint of a newer version
            or of the spectral vocoder, or one given a config file.
    """
    path = Path(path)
    stored = load_weights_only(path, error=VocoderError, what="HiFi-GAN generator file")
    return hifigan_vocoder(stored, path, config_path=config_path, audio_config=audio_config, device=device)


def hifigan_vocoder(
    stored: Any,
    path: str | os.PathLike,
    *,
    config_path: str | os.PathLike | None = None,
    audio_config: AudioConfig,
    device: str | torch.device | None = None,
) -> HiFiGANVocoder:
    """:func:`load_hifigan` of a file already read: ``stored`` is its contents, ``path`` where it was read."""
    path = Path(path)
    dev = resolve_device(device)
    if is_vocoder_checkpoint(stored):
        generator = generator_from_checkpoint(
            check_vocoder_checkpoint(stored, path, config_path=config_path), path, audio_config
        )
        return HiFiGANVocoder(generator, sample_rate=audio_config.sample_rate, device=dev)
    config_path = Path(config_path) if config_path is not None else path.parent / DEFAULT_CONFIG_NAME
    state = _generator_state(stored, path)
    config = _read_config(config_path)
    check_hifigan_config(config, audio_config, config_path)
    try:
        generator = HiFiGANGenerator(**{k: config[k] for k in GENERATOR_CONFIG_KEYS}, n_mels=int(config["num_mels"]))
    except (TypeError, ValueError) as exc:
        raise VocoderError(f"{config_path}: unusable HiFi-GAN generator settings ({first_line(exc)})") from None
    load_fitting_state(generator, state, path, built_from=str(config_path), error=VocoderError)
    return HiFiGANVocoder(generator, sample_rate=audio_config.sample_rate, device=dev)


def generator_from_checkpoint(
    ckpt: Mapping[str, Any], path: str | os.PathLike, audio_config: AudioConfig | None = None
) -> HiFiGANGenerator:
    """The HiFi-GAN generator of a checked gst-tts vocoder checkpoint, weight norm folded.

    Args:
        ckpt: the checkpoint (:func:`~gst_tts.audio.vocoders.checkpoint.check_vocoder_checkpoint`).
        path: where it was read, for messages.
        audio_config: the feature settings its mels must have; ``None`` skips the comparison.

    Raises:
        VocoderError: a spectral vocoder's checkpoint, other feature settings (every differing
            field named, with both values), unusable generator settings, or weights that do not fit them.
    """
    return rebuild_generator(
        ckpt,
        path,
        HiFiGANGenerator,
        kind=HIFIGAN_KIND,
        audio_config=audio_config,
        prepare=lambda state: _fold(state, path),
    )


def _read_config(config_path: Path) -> dict[str, Any]:
    if not config_path.is_file():
        raise VocoderError(
            f"{config_path}: HiFi-GAN config not found (give the config.json that came with the weights)"
        )
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocoderError(f"{config_path}: not a JSON HiFi-GAN config ({first_line(exc)})") from None
    if not isinstance(config, dict):
        raise VocoderError(f"{config_path}: not a HiFi-GAN config (a JSON {type(config).__name__}, not an object)")
    return config


def check_hifigan_config(
    config: Mapping[str, Any], audio_config: AudioConfig, config_path: str | os.PathLike = "config.json"
) -> None:
    """Raises a one-line :class:`VocoderError` naming every key of ``config`` (a HiFi-GAN
    ``config.json``) that is missing, or whose feature setting differs from ``audio_config``, and
    an upsampling whose product is not the hop."""
    missing = [k for k in (*GENERATOR_CONFIG_KEYS, *FEATURE_CONFIG_KEYS) if k not in config]
    if missing:
        raise VocoderError(f"{config_path}: not a HiFi-GAN config, missing {', '.join(missing)}")
    features = asdict(audio_config)
    problems = []
    for key, field in _FEATURE_FIELDS.items():
        ours, theirs = features[field], config[key]
        if key == "fmax" and theirs is None:  # librosa's mel filters: None is the Nyquist frequency
            theirs = config["sampling_rate"] / 2
        if not same_number(theirs, ours):
            problems.append(f"{key} {theirs!r} (acoustic model {field} {ours!r})")
    rates = config["upsample_rates"]
    try:
        product = int(np.prod([int(r) for r in rates]))
    except (TypeError, ValueError):
        problems.append(f"upsample_rates {rates!r} are not whole numbers")
    else:
        if not same_number(config["hop_size"], product):
            problems.append(f"upsample_rates {rates} multiply to {product}, not hop_size {config['hop_size']!r}")
    if problems:
        raise VocoderError(
            f"{config_path}: HiFi-GAN config does not match the acoustic model's features: {'; '.join(problems)}"
        )


def _generator_state(stored: Any, path: Path) -> dict[str, torch.Tensor]:
    """The generator's state dict, weight norm folded, from a published file's contents."""
    if isinstance(stored, dict) and "generator" not in stored and any(k in stored for k in _DISCRIMINATOR_KEYS):
        held = ", ".join(str(k) for k in list(stored)[:6])
        raise VocoderError(
            f"{path}: a HiFi-GAN discriminator/optimizer file (holds {held}), not a generator: "
            "give the g_XXXXXXXX or generator_* file"
        )
    if not isinstance(stored, dict) or "generator" not in stored:
        held = (
            f"keys {', '.join(str(k) for k in list(stored)[:6])}"
            if isinstance(stored, dict)
            else f"a {type(stored).__name__}"
        )
        raise VocoderError(f"{path}: holds no HiFi-GAN generator (no 'generator' entry; {held})")
    return _folded_generator(stored, path)


def _folded_generator(stored: Mapping[str, Any], path: str | os.PathLike) -> dict[str, torch.Tensor]:
    """``stored["generator"]``, checked to be a state dict, with its weight norm folded."""
    return _fold(named_tensor_state(stored, "generator", path, error=VocoderError), path)


def _fold(state: Mapping[str, torch.Tensor], path: str | os.PathLike) -> dict[str, torch.Tensor]:
    try:
        return fold_weight_norm(state)
    except ValueError as exc:
        raise VocoderError(f"{path}: {exc}") from None
