"""Audio I/O and features: reading any WAV/FLAC, log-mel spectrograms, Griffin-Lim inversion.

Audio is read and written with soundfile (torchaudio's own I/O needs torchcodec); torchaudio
supplies the transforms.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
import hashlib
import json

import numpy as np
import torch
import torchaudio

from gst_tts.audio.io import trim_silence

LOG_MEL_FLOOR = 1e-5


@dataclass(frozen=True)
class AudioConfig:
    """Feature settings. Defaults match LJSpeech recipes of common neural vocoders.

    Args:
        sample_rate: rate every input is resampled to (Hz). Default 22050.
        n_fft: FFT size. Default 1024.
        hop_length: frame shift in samples. Default 256.
        win_length: window length in samples. Default 1024.
        n_mels: number of mel channels. Default 80.
        fmin: lowest mel frequency (Hz). Default 0.
        fmax: highest mel frequency (Hz). Default 8000.
        trim_top_db: leading/trailing silence below this many dB under the peak is trimmed;
            ``None`` disables trimming. Default 40.
    """

    sample_rate: int = 22050
    n_fft: int = 1024
    hop_length: int = 256
    win_length: int = 1024
    n_mels: int = 80
    fmin: float = 0.0
    fmax: float = 8000.0
    trim_top_db: float | None = 40.0

    def fingerprint(self) -> str:
        """Short stable hash of the settings, used to key feature caches."""
        return hashlib.sha1(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]

    @property
    def frames_per_second(self) -> float:
        return self.sample_rate / self.hop_length


class MelExtractor(torch.nn.Module):
    """Waveform → log-mel spectrogram, ``log(clamp(mel, 1e-5))`` of a slaney mel magnitude spectrum."""

    def __init__(self, config: AudioConfig = AudioConfig()) -> None:
        super().__init__()
        self.config = config
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=config.sample_rate,
            n_fft=config.n_fft,
            win_length=config.win_length,
            hop_length=config.hop_length,
            f_min=config.fmin,
            f_max=config.fmax,
            n_mels=config.n_mels,
            power=1.0,
            norm="slaney",
            mel_scale="slaney",
            center=True,
            pad_mode="reflect",
        )

    @torch.no_grad()
    def forward(self, samples: torch.Tensor) -> torch.Tensor:
        """``(n_samples,)`` → ``(frames, n_mels)`` log-mel."""
        return self.log_mel(samples)

    def log_mel(self, samples: torch.Tensor) -> torch.Tensor:
        """``(..., n_samples)`` → ``(..., 1 + n_samples // hop_length, n_mels)`` log-mel, differentiable
        (the mel loss of vocoder training; :meth:`forward` is this without gradients)."""
        mel = self.mel(samples.float())
        return torch.log(torch.clamp(mel, min=LOG_MEL_FLOOR)).transpose(-1, -2).contiguous()


def wav_to_logmel(samples: np.ndarray, config: AudioConfig, extractor: MelExtractor | None = None) -> np.ndarray:
    """Trimmed float samples at ``config.sample_rate`` → ``(frames, n_mels)`` float32 log-mel."""
    extractor = extractor or MelExtractor(config)
    samples = trim_silence(samples, config.trim_top_db)
    return extractor(torch.from_numpy(samples)).numpy().astype(np.float32)


@dataclass(frozen=True)
class MelStats:
    """Per-channel mean and standard deviation of training log-mels (global MVN).

    Without it the GST reference encoder's query saturates and every reference gets the same
    token weights; the model sees and predicts normalised mels only.
    """

    mean: torch.Tensor  # (n_mels,)
    std: torch.Tensor  # (n_mels,)

    @classmethod
    def from_sums(cls, total: np.ndarray, total_sq: np.ndarray, count: int) -> "MelStats":
        mean = total / count
        var = np.maximum(total_sq / count - mean**2, 1e-8)
        return cls(torch.tensor(mean, dtype=torch.float32), torch.tensor(np.sqrt(var), dtype=torch.float32))

    def normalize(self, log_mel: torch.Tensor) -> torch.Tensor:
        return (log_mel - self.mean.to(log_mel.device)) / self.std.to(log_mel.device)

    def denormalize(self, mel: torch.Tensor) -> torch.Tensor:
        return mel * self.std.to(mel.device) + self.mean.to(mel.device)

    def to_dict(self) -> dict[str, torch.Tensor]:
        return {"mean": self.mean.clone(), "std": self.std.clone()}

    @classmethod
    def from_dict(cls, d: dict) -> "MelStats":
        return cls(torch.as_tensor(d["mean"], dtype=torch.float32), torch.as_tensor(d["std"], dtype=torch.float32))
