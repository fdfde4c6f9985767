"""Config → a vocoder run's pieces (``gst-tts-train-vocoder``, conf/vocoder_train.yaml): the
generator (HiFi-GAN's, or the spectral vocoder's magnitude estimator), HiFi-GAN's discriminator,
their loss, optimisers and schedules; and :func:`check_vocoder_config`, which checks the run's
config before anything heavy is built or read.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from omegaconf import DictConfig
import torch
from torch import nn

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders.checkpoint import GENERATOR_KINDS, HIFIGAN_KIND, SPECTRAL_KIND
from gst_tts.audio.vocoders.discriminators import HiFiGANDiscriminator
from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator
from gst_tts.audio.vocoders.spectral import MagnitudeEstimator, edge_frames
from gst_tts.errors import GstTtsError, first_line
from gst_tts.training.config_args import (
    check_trainer,
    complete_kwargs,
    constructor_kwargs,
    instantiate_target,
    plain_dict,
)
from gst_tts.training.data_builders import build_audio_config
from gst_tts.training.vocoder_losses import HiFiGANLoss

# Generator arguments that the data decides, by generator kind.
GENERATOR_FROM_DATA = {"n_mels": "data.audio.n_mels"}
ESTIMATOR_FROM_DATA = {k: f"data.audio.{k}" for k in ("sample_rate", "n_fft", "n_mels", "fmin", "fmax")}
# The class each generator kind builds.
GENERATOR_CLASSES = {HIFIGAN_KIND: HiFiGANGenerator, SPECTRAL_KIND: MagnitudeEstimator}
# Vocoder trainer keys that divide or count.
VOCODER_POSITIVE_TRAINER_KEYS = (
    "max_steps",
    "lr_decay_steps",
    "log_every",
    "val_every",
    "checkpoint_every",
    "keep_checkpoints",
)


def check_vocoder_config(cfg: DictConfig) -> AudioConfig:
    """Checks the vocoder run's groups before anything heavy is built or read (``generator_kind``,
    the generator's keys and, for HiFi-GAN, its hop; HiFi-GAN's discriminator keys; the loss's keys,
    ``data.audio``, the trainer's numbers); returns the :class:`AudioConfig`."""
    audio_config = build_audio_config(cfg.data.audio)
    kind = vocoder_kind(cfg)
    generator_arguments(cfg.generator, audio_config=audio_config, kind=kind)
    if kind == HIFIGAN_KIND:
        constructor_kwargs(HiFiGANDiscriminator, plain_dict(cfg.discriminator), "discriminator")
    build_vocoder_loss(cfg.loss, audio_config=audio_config)
    check_trainer(cfg.trainer, VOCODER_POSITIVE_TRAINER_KEYS)
    if not 0 < float(cfg.trainer.lr_decay) <= 1:
        raise GstTtsError(f"trainer.lr_decay must be in (0, 1], got {cfg.trainer.lr_decay!r}")
    if cfg.trainer.grad_clip is not None and not float(cfg.trainer.grad_clip) > 0:
        raise GstTtsError(f"trainer.grad_clip must be > 0 or null, got {cfg.trainer.grad_clip!r}")
    for key in ("segment_frames", "batch_size"):
        value = cfg.data[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GstTtsError(f"data.{key} must be a whole number >= 1, got {value!r}")
    share = cfg.data.get("gta_share", 1.0)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
        raise GstTtsError(f"data.gta_share must be a number within [0, 1], got {share!r}")
    edges = edge_frames(audio_config)
    if kind == SPECTRAL_KIND and cfg.data.segment_frames <= 2 * edges:
        raise GstTtsError(
            f"data.segment_frames must exceed {2 * edges} for the spectral vocoder (the first and last "
            f"{edges} frames of a segment are left out of its loss), got {cfg.data.segment_frames}"
        )
    return audio_config


def vocoder_kind(cfg: DictConfig) -> str:
    """The run's ``generator_kind`` (``hifigan`` when the config has none), checked."""
    kind = cfg.get("generator_kind", HIFIGAN_KIND)
    if kind not in GENERATOR_KINDS:
        raise GstTtsError(f"generator_kind must be one of {', '.join(GENERATOR_KINDS)}, got {kind!r}")
    return kind


def generator_arguments(
    generator: DictConfig | Mapping[str, Any], *, audio_config: AudioConfig, kind: str = HIFIGAN_KIND
) -> dict[str, Any]:
    """The ``generator`` group's checked keys plus those ``data.audio`` decides, complete (defaults
    filled in: the checkpoint's ``generator_config``). ``kind``: ``hifigan`` (:class:`HiFiGANGenerator`)
    or ``spectral`` (:class:`MagnitudeEstimator`).

    Raises:
        GstTtsError: an unknown key, a key that ``data.audio`` decides, or (HiFi-GAN) an upsampling
            that does not make ``data.audio.hop_length``.
    """
    if kind == SPECTRAL_KIND:
        kwargs = constructor_kwargs(
            MagnitudeEstimator, plain_dict(generator), "generator", from_elsewhere=ESTIMATOR_FROM_DATA
        )
        from_data = {k: getattr(audio_config, k) for k in ESTIMATOR_FROM_DATA}
        return complete_kwargs(MagnitudeEstimator, {**kwargs, **from_data})
    kwargs = constructor_kwargs(
        HiFiGANGenerator, plain_dict(generator), "generator", from_elsewhere=GENERATOR_FROM_DATA
    )
    kwargs = complete_kwargs(HiFiGANGenerator, {**kwargs, "n_mels": audio_config.n_mels})
    hop = math.prod(int(u) for u in kwargs["upsample_rates"]) * int(kwargs["istft_hop_length"] or 1)
    if hop != audio_config.hop_length:
        raise GstTtsError(
            f"generator: upsample_rates {kwargs['upsample_rates']}"
            + (f" × istft_hop_length {kwargs['istft_hop_length']}" if kwargs["istft_hop_length"] else "")
            + f" make {hop} samples per frame, but data.audio.hop_length is {audio_config.hop_length}"
        )
    return kwargs


def build_generator(
    generator: DictConfig | Mapping[str, Any], *, audio_config: AudioConfig, kind: str = HIFIGAN_KIND
) -> tuple[nn.Module, dict[str, Any]]:
    """The ``generator`` group's network and its complete constructor arguments
    (:func:`generator_arguments`): a :class:`HiFiGANGenerator` with weight norm applied (training),
    or a :class:`MagnitudeEstimator`."""
    kwargs = generator_arguments(generator, audio_config=audio_config, kind=kind)
    cls = GENERATOR_CLASSES[kind]
    model = instantiate_target(f"{cls.__module__}.{cls.__name__}", kwargs, "generator")
    return (model.apply_weight_norm() if kind == HIFIGAN_KIND else model), kwargs


def build_discriminator(discriminator: DictConfig | Mapping[str, Any]) -> tuple[HiFiGANDiscriminator, dict[str, Any]]:
    """The ``discriminator`` group's :class:`HiFiGANDiscriminator` and its complete constructor arguments."""
    checked = constructor_kwargs(HiFiGANDiscriminator, plain_dict(discriminator), "discriminator")
    kwargs = complete_kwargs(HiFiGANDiscriminator, checked)
    target = f"{HiFiGANDiscriminator.__module__}.HiFiGANDiscriminator"
    return instantiate_target(target, kwargs, "discriminator"), kwargs


def build_vocoder_loss(loss: DictConfig | Mapping[str, Any], *, audio_config: AudioConfig) -> HiFiGANLoss:
    """The ``loss`` group's :class:`HiFiGANLoss`, with the run's feature settings."""
    kwargs = constructor_kwargs(HiFiGANLoss, plain_dict(loss), "loss", from_elsewhere={"audio_config": "data.audio"})
    try:
        return HiFiGANLoss(**kwargs, audio_config=audio_config)
    except (TypeError, ValueError) as exc:
        raise GstTtsError(f"loss config: {first_line(exc)}") from None


def build_vocoder_optimizers(
    networks: Mapping[str, nn.Module], trainer: DictConfig
) -> tuple[dict[str, torch.optim.AdamW], dict[str, torch.optim.lr_scheduler.LambdaLR]]:
    """AdamW for each of ``networks`` (by name: ``"generator"`` and, for HiFi-GAN,
    ``"discriminator"``; ``trainer.learning_rate``, ``adam_betas``, ``weight_decay``) and a schedule
    multiplying the rate by ``lr_decay`` every ``lr_decay_steps`` steps (continuously), as
    HiFi-GAN's per-epoch decay. Both keyed by the networks' names."""
    optimizers = {
        name: torch.optim.AdamW(
            module.parameters(),
            lr=float(trainer.learning_rate),
            betas=tuple(trainer.adam_betas),
            weight_decay=float(trainer.weight_decay),
        )
        for name, module in networks.items()
    }
    decay, every = float(trainer.lr_decay), int(trainer.lr_decay_steps)
    schedulers = {
        name: torch.optim.lr_scheduler.LambdaLR(opt, lambda step: decay ** (step / every))
        for name, opt in optimizers.items()
    }
    return optimizers, schedulers
