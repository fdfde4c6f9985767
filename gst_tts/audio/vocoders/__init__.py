"""Vocoders: log-mel → waveform. Griffin-Lim (no training needed), HiFi-GAN (the published
weights or gst-tts's own vocoder checkpoints, :mod:`~gst_tts.audio.vocoders.hifigan_io`) and the
spectral vocoder (a trained magnitude estimator with PGHI phase, :mod:`~gst_tts.audio.vocoders.spectral`),
behind one interface. The discriminators (``discriminators``) and the checkpoint layout
(``checkpoint``) serve vocoder training (``gst-tts-train-vocoder``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gst_tts.errors import VocoderError

if TYPE_CHECKING:  # the package imports no torch: its phase and harmonic modules serve the torch-free runtime too
    import numpy as np
    import torch

    from gst_tts.audio.features import AudioConfig

#: The ``vocoder`` name that means Griffin-Lim; anything else names a vocoder file (a gst-tts
#: vocoder checkpoint, HiFi-GAN or spectral, or a published HiFi-GAN generator).
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
        vocoder: ``"griffin-lim"``, or the path of a vocoder file: a gst-tts vocoder checkpoint
            (``gst-tts-train-vocoder``'s ``generator.pt`` or ``last.pt``; a HiFi-GAN generator or
            the spectral vocoder's magnitude estimator) or a published HiFi-GAN generator.
        audio_config: the feature settings of the mels it will get.
        config_path: a published HiFi-GAN file only: its ``config.json``. Default: the one beside
            the weights.
        device: a file's vocoder only: where its network runs; ``None`` picks CUDA when
            available, else CPU.
        griffin_lim: Griffin-Lim only: ``GriffinLimVocoder`` keyword arguments.

    Raises:
        VocoderError: a config for Griffin-Lim or for a gst-tts vocoder checkpoint, or a file that
            does not load (:func:`~gst_tts.audio.vocoders.hifigan_io.load_hifigan`,
            :func:`~gst_tts.audio.vocoders.spectral.spectral_vocoder_from_checkpoint`).
    """
    from gst_tts.audio.vocoders.checkpoint import (
        SPECTRAL_KIND,
        check_vocoder_checkpoint,
        generator_kind,
        is_vocoder_checkpoint,
    )
    from gst_tts.checkpoints.weights import load_weights_only

    if isinstance(vocoder, str) and vocoder == GRIFFIN_LIM:
        if config_path is not None:
            raise VocoderError(f"a vocoder config ({config_path}) applies to HiFi-GAN only, not to {GRIFFIN_LIM}")
        from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder

        return GriffinLimVocoder(audio_config, **griffin_lim)
    path = Path(vocoder)
    stored = load_weights_only(path, error=VocoderError, what="vocoder file")
    if is_vocoder_checkpoint(stored) and generator_kind(stored) == SPECTRAL_KIND:
        from gst_tts.audio.vocoders.spectral import spectral_vocoder_from_checkpoint

        ckpt = check_vocoder_checkpoint(stored, path, config_path=config_path)
        return spectral_vocoder_from_checkpoint(ckpt, path, audio_config=audio_config, device=device)
    from gst_tts.audio.vocoders.hifigan_io import hifigan_vocoder

    return hifigan_vocoder(stored, path, config_path=config_path, audio_config=audio_config, device=device)
