"""Audio I/O and features: reading any WAV/FLAC, log-mel spectrograms, Griffin-Lim inversion.

Audio is read and written with soundfile (torchaudio's own I/O needs torchcodec); torchaudio
supplies the transforms.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
import torchaudio

from gst_tts.errors import AudioError

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


def load_audio(path: str | os.PathLike, sample_rate: int | None = None) -> tuple[np.ndarray, int]:
    """Read an audio file as mono float32, resampled to ``sample_rate`` when given.

    Any format libsndfile reads (WAV, FLAC, OGG; int or float samples; any channel count).

    Returns:
        ``(samples, rate)`` with samples of shape ``(n_samples,)``.

    Raises:
        AudioError: the file is missing or is not audio libsndfile can read.
    """
    path = Path(path)
    if not path.is_file():
        raise AudioError(f"{path}: audio file not found")
    try:
        samples, rate = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises several types for non-audio input
        raise AudioError(f"{path}: not readable as audio ({_one_line(exc)})") from None
    return to_mono_resampled(samples, rate, sample_rate), (sample_rate or rate)


def to_mono_resampled(samples: np.ndarray, rate: int, sample_rate: int | None) -> np.ndarray:
    """Average channels of ``(n,)`` or ``(n, channels)`` samples and resample to ``sample_rate``."""
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim == 2:
        samples = samples.mean(axis=1)
    if sample_rate is not None and rate != sample_rate and samples.size:
        samples = torchaudio.functional.resample(
            torch.from_numpy(samples), orig_freq=int(rate), new_freq=int(sample_rate)
        ).numpy()
    return np.ascontiguousarray(samples, dtype=np.float32)


def trim_silence(samples: np.ndarray, top_db: float | None, frame_length: int = 1024, hop: int = 256) -> np.ndarray:
    """Cut leading and trailing audio quieter than ``top_db`` below the peak (as librosa.effects.trim)."""
    if top_db is None or samples.size == 0:
        return samples
    import librosa

    trimmed, _ = librosa.effects.trim(samples, top_db=top_db, frame_length=frame_length, hop_length=hop)
    return trimmed


def write_wav(path: str | os.PathLike, samples: np.ndarray, sample_rate: int) -> None:
    """Write 16-bit PCM WAV atomically (temp file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    peak = float(np.max(np.abs(samples))) if samples.size else 0.0
    if peak > 1.0:  # Griffin-Lim output can overshoot; scale rather than clip
        samples = samples / peak
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        sf.write(tmp, samples, sample_rate, subtype="PCM_16", format="WAV")
        os.chmod(tmp, 0o644)  # mkstemp makes 0600 files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
        mel = self.mel(samples.float())
        return torch.log(torch.clamp(mel, min=LOG_MEL_FLOOR)).transpose(-1, -2).contiguous()


def wav_to_logmel(samples: np.ndarray, config: AudioConfig, extractor: MelExtractor | None = None) -> np.ndarray:
    """Trimmed float samples at ``config.sample_rate`` → ``(frames, n_mels)`` float32 log-mel."""
    extractor = extractor or MelExtractor(config)
    samples = trim_silence(samples, config.trim_top_db)
    return extractor(torch.from_numpy(samples)).numpy().astype(np.float32)


class GriffinLimVocoder:
    """Log-mel → waveform by Griffin-Lim (torchaudio), behind the small vocoder interface.

    Args:
        config: feature settings the mels were made with.
        n_iter: Griffin-Lim iterations. Default 32.
        momentum: Griffin-Lim momentum. Default 0.99.
        power: magnitudes are raised to this power before inversion; values above 1
            sharpen over-smooth predicted spectra (the Tacotron 1 trick). Default 1.3.
    """

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

    @torch.no_grad()
    def __call__(self, log_mel: torch.Tensor | np.ndarray) -> np.ndarray:
        """``(frames, n_mels)`` log-mel (not normalised) → ``(n_samples,)`` float32 in [-1, 1]."""
        log_mel = torch.as_tensor(np.asarray(log_mel, dtype=np.float32) if isinstance(log_mel, np.ndarray) else log_mel)
        mel = torch.exp(log_mel.float()).T  # (n_mels, frames)
        linear = torch.clamp(self._mel_to_linear @ mel, min=0.0) ** self.power
        min_frames = self.config.n_fft // self.config.hop_length + 1
        if linear.shape[1] < min_frames:  # the STFT's reflect padding needs a few frames
            linear = torch.nn.functional.pad(linear, (0, min_frames - linear.shape[1]))
        audio = self._griffin_lim(linear).numpy()
        peak = float(np.max(np.abs(audio))) if audio.size else 0.0
        return (audio / peak * 0.95).astype(np.float32) if peak > 0 else audio.astype(np.float32)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


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
