"""Griffin-Lim (torchaudio): the vocoder that needs no training, behind the ``Vocoder`` interface."""

from __future__ import annotations

import numpy as np
import torch
import torchaudio

from gst_tts.audio.features import AudioConfig


class GriffinLimVocoder:
    """Log-mel → waveform by Griffin-Lim (torchaudio), behind the small vocoder interface.

    Args:
        config: feature settings the mels were made with.
        n_iter: Griffin-Lim iterations. Default 32.
        momentum: Griffin-Lim momentum. Default 0.99.
        power: magnitudes are raised to this power before inversion; values above 1
            sharpen over-smooth predicted spectra (the Tacotron 1 trick). Default 1.3.
    """

    #: The name ``gst-tts serve`` offers it under.
    kind = "griffin-lim"

    def __init__(self, config: AudioConfig, n_iter: int = 32, momentum: float = 0.99, power: float = 1.3) -> None:
        self.config = config
        self.sample_rate = config.sample_rate
        self.power = power
        filterbank = torchaudio.functional.melscale_fbanks(
            n_freqs=config.n_fft // 2 + 1,
            f_min=config.fmin,
            f_max=config.fmax,
            n_mels=config.n_mels,
            sample_rate=config.sample_rate,
            norm="slaney",
            mel_scale="slaney",
        )  # (n_freqs, n_mels)
        # The pseudo-inverse is computed once; a least-squares solve per call is far slower.
        self._mel_to_linear = torch.linalg.pinv(filterbank.T)  # (n_freqs, n_mels)
        self._griffin_lim = torchaudio.transforms.GriffinLim(
            n_fft=config.n_fft,
            win_length=config.win_length,
            hop_length=config.hop_length,
            power=1.0,
            n_iter=n_iter,
            momentum=momentum,
        )

    #: The peak every output is scaled to.
    output_peak = 0.95

    def __call__(self, log_mel: torch.Tensor | np.ndarray) -> np.ndarray:
        """``(frames, n_mels)`` log-mel (not normalised) → ``(n_samples,)`` float32 in [-1, 1], its
        peak at :attr:`output_peak`."""
        audio = self.invert(log_mel)
        peak = float(np.max(np.abs(audio))) if audio.size else 0.0
        return (audio / peak * self.output_peak).astype(np.float32) if peak > 0 else audio

    @torch.no_grad()
    def invert(self, log_mel: torch.Tensor | np.ndarray) -> np.ndarray:
        """``(frames, n_mels)`` log-mel (not normalised) → ``((frames - 1) · hop,)`` float32 samples at
        Griffin-Lim's own level (not scaled: streaming synthesis sets one gain across windows)."""
        log_mel = torch.as_tensor(np.asarray(log_mel, dtype=np.float32) if isinstance(log_mel, np.ndarray) else log_mel)
        mel = torch.exp(log_mel.float()).T  # (n_mels, frames)
        linear = torch.clamp(self._mel_to_linear @ mel, min=0.0) ** self.power
        min_frames = self.config.n_fft // self.config.hop_length + 1
        if linear.shape[1] < min_frames:  # the STFT's reflect padding needs a few frames
            linear = torch.nn.functional.pad(linear, (0, min_frames - linear.shape[1]))
        return self._griffin_lim(linear).numpy().astype(np.float32)
