"""Vocoders: log-mel → waveform. Griffin-Lim (no training needed) and HiFi-GAN (the published
weights or gst-tts's own vocoder checkpoints, :mod:`~gst_tts.audio.vocoders.hifigan_io`), behind
one interface. The discriminators (``discriminators``) and the checkpoint layout (``checkpoint``)
serve vocoder training (``gst-tts-train-vocoder``)."""

from __future__ import annotations

import os
from typing import Any, Protocol

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.errors import VocoderError

#: The ``vocoder`` name that means Griffin-Lim; anything else names a HiFi-GAN generator file (a
#: published one, or a gst-tts vocoder checkpoint).
GRIFFIN_LIM = "griffin-lim"


class Vocoder(Protocol):
    """Anything with a ``sample_rate`` that turns a ``(frames, n_mels)`` log-mel into samples."""

    sample_rate: int

    def __call__(self, log_mel: torch.Tensor | np.ndarray) -> np.ndarray: ...


def load_vocoder(
    vocoder: str | os.PathLike,
    *,
    audio_config: AudioConfig,
    config_path: str | os.PathLike | None = None,
    device: str | torch.device | None = None,
    **griffin_lim: Any,
) -> Vocoder:
    """The vocoder ``vocoder`` names, for mels made with ``audio_config``.

    Args:
        vocoder: ``"griffin-lim"``, or the path of a HiFi-GAN generator file: a gst-tts vocoder
            checkpoint (``gst-tts-train-vocoder``'s ``generator.pt`` or ``last.pt``) or a published one.
        audio_config: the feature settings of the mels it will get.
        config_path: a published HiFi-GAN file only: its ``config.json``. Default: the one beside
            the weights.
        device: HiFi-GAN only: where it runs; ``None`` picks CUDA when available, else CPU.
        griffin_lim: Griffin-Lim only: ``GriffinLimVocoder`` keyword arguments.

    Raises:
        VocoderError: a config for Griffin-Lim, or a HiFi-GAN file that does not load
            (:func:`~gst_tts.audio.vocoders.hifigan_io.load_hifigan`).
    """
    if isinstance(vocoder, str) and vocoder == GRIFFIN_LIM:
        if config_path is not None:
            raise VocoderError(f"a vocoder config ({config_path}) applies to HiFi-GAN only, not to {GRIFFIN_LIM}")
        from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder

        return GriffinLimVocoder(audio_config, **griffin_lim)
    from gst_tts.audio.vocoders.hifigan_io import load_hifigan

    return load_hifigan(vocoder, config_path=config_path, audio_config=audio_config, device=device)
