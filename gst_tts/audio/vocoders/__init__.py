"""Vocoders: log-mel → waveform. Griffin-Lim now; a neural vocoder plugs in behind the same interface."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch


class Vocoder(Protocol):
    """Anything with a ``sample_rate`` that turns a ``(frames, n_mels)`` log-mel into samples."""

    sample_rate: int

    def __call__(self, log_mel: torch.Tensor | np.ndarray) -> np.ndarray: ...


