"""Vocoders: log-mel → waveform. Griffin-Lim now; a neural vocoder plugs in behind the same interface."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch

from gst_tts.audio import AudioConfig, GriffinLimVocoder


class Vocoder(Protocol):
    """Anything with a ``sample_rate`` that turns a ``(frames, n_mels)`` log-mel into samples."""

    sample_rate: int

    def __call__(self, log_mel: torch.Tensor | np.ndarray) -> np.ndarray: ...


def griffin_lim(config: AudioConfig, n_iter: int = 32, momentum: float = 0.99, power: float = 1.3) -> Vocoder:
    return GriffinLimVocoder(config, n_iter=n_iter, momentum=momentum, power=power)
