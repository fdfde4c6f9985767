"""Reading and writing audio: any file soundfile reads, to mono float32 at a chosen rate; silence
trimming; atomic wav writes."""

from __future__ import annotations

from dataclasses import dataclass
import io
import math
import struct
import os
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
import torchaudio

from gst_tts.errors import AudioError, first_line
from gst_tts.files import atomic_write


# libsndfile's names of the containers that hold WAV data (RIFF, its extensible form, the 64-bit ones).
WAV_FORMATS = frozenset({"WAV", "WAVEX", "RF64", "W64"})


@dataclass(frozen=True)
class AudioHeader:
    """What an audio file's header says, read without decoding a sample.

    ``format`` and ``subtype`` are libsndfile's names (``"WAV"``, ``"PCM_16"``, ``"PCM_U8"``,
    ``"FLOAT"``, ``"MPEG_LAYER_III"``).
    """

    rate: int
    channels: int
    frames: int
    format: str
    subtype: str

    @property
    def seconds(self) -> float:
        return self.frames / self.rate if self.rate > 0 else 0.0

    def conversions(self, sample_rate: int) -> list[str]:
        """What :func:`load_audio` changes, or what is worth a warning, reading it at ``sample_rate``."""
        notes = []
        if self.channels > 1:
            notes.append(f"{self.channels} channels averaged")
        if self.rate != sample_rate:
            notes.append(f"{self.rate} Hz resampled")
        if self.subtype in ("PCM_U8", "PCM_S8"):
            notes.append("8-bit samples")
        return notes


def read_audio_header(path: str | os.PathLike) -> AudioHeader:
    """The header of an audio file (sample rate, channels, length, format), no sample decoded.

    Raises:
        AudioError: the file is missing or is not audio libsndfile can read.
    """
    path = Path(path)
    if not path.is_file():
        raise AudioError(f"{path}: audio file not found")
    try:
        info = sf.info(str(path))
    except Exception as exc:  # soundfile raises several types for non-audio input
        raise AudioError(f"{path}: not readable as audio ({first_line(exc)})") from None
    return AudioHeader(
        rate=int(info.samplerate),
        channels=int(info.channels),
        frames=int(info.frames),
        format=str(info.format),
        subtype=str(info.subtype),
    )


def load_audio(path: str | os.PathLike, sample_rate: int | None = None) -> tuple[np.ndarray, int]:
    """Read an audio file as mono float32, resampled to ``sample_rate`` when given.

    Any format libsndfile reads (WAV, FLAC, OGG; int or float samples; any channel count).

    Returns:
        ``(samples, rate)`` with samples of shape ``(n_samples,)``.

    Raises:
        AudioError: the file is missing or is not audio libsndfile can read, or a (float) file
            holds NaN or infinite samples.
    """
    path = Path(path)
    if not path.is_file():
        raise AudioError(f"{path}: audio file not found")
    try:
        samples, rate = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises several types for non-audio input
        raise AudioError(f"{path}: not readable as audio ({first_line(exc)})") from None
    finite = np.isfinite(samples)
    if not finite.all():  # they would turn every feature and loss they touch into NaN
        first = int(np.argmin(finite.all(axis=1)))
        raise AudioError(
            f"{path}: {int(finite.size - finite.sum())} NaN or infinite samples (the first at {first / rate:.3f} s)"
        )
    return to_mono_resampled(samples, rate, sample_rate, name=str(path)), (sample_rate or rate)


# torchaudio's resampler builds a kernel of about (rate / g) x (wanted / g) values for g = gcd(rate,
# wanted): 2 GB and more for 22,051 Hz -> 22,050 Hz. A rate that would need more is read as the
# nearest multiple of 50 Hz (every common rate is one), a speed change of at most 25 / rate.
MAX_RESAMPLE_KERNEL = 10_000_000


def to_mono_resampled(samples: np.ndarray, rate: int, sample_rate: int | None, *, name: str = "audio") -> np.ndarray:
    """Average channels of ``(n,)`` or ``(n, channels)`` samples and resample to ``sample_rate``
    (from :func:`resampling_rate`; ``name`` names the audio in its error)."""
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim == 2:
        samples = samples.mean(axis=1)
    if sample_rate is not None and rate != sample_rate and samples.size:
        samples = torchaudio.functional.resample(
            torch.from_numpy(samples),
            orig_freq=resampling_rate(int(rate), int(sample_rate), name),
            new_freq=int(sample_rate),
        ).numpy()
    return np.ascontiguousarray(samples, dtype=np.float32)


def resampling_rate(rate: int, wanted: int, name: str = "audio") -> int:
    """The rate to resample ``rate`` Hz audio from: ``rate`` itself, or the nearest multiple of 50 Hz
    when the exact ratio needs a huge resampling kernel (see :data:`MAX_RESAMPLE_KERNEL`).

    Raises:
        AudioError: neither is affordable (a ``wanted`` rate that is no multiple of 50 Hz).
    """
    for candidate in (rate, max(50, 50 * round(rate / 50))):
        g = math.gcd(candidate, wanted)
        if (candidate // g) * (wanted // g) <= MAX_RESAMPLE_KERNEL:
            return candidate
    raise AudioError(f"{name}: {rate:,} Hz cannot be resampled to {wanted:,} Hz at a bounded cost")


def trim_silence(samples: np.ndarray, top_db: float | None, frame_length: int = 1024, hop: int = 256) -> np.ndarray:
    """Cut leading and trailing audio quieter than ``top_db`` below the peak (as librosa.effects.trim)."""
    if top_db is None or samples.size == 0:
        return samples
    import librosa

    trimmed, _ = librosa.effects.trim(samples, top_db=top_db, frame_length=frame_length, hop_length=hop)
    return trimmed


def write_wav(path: str | os.PathLike, samples: np.ndarray, sample_rate: int) -> None:
    """Write 16-bit PCM WAV atomically (temp file in the same folder, then rename)."""
    data = wav_bytes(samples, sample_rate)
    atomic_write(path, lambda f: f.write(data))


#: The RIFF and data sizes of a WAV whose length is not known when its header is sent (a stream):
#: the largest a 32-bit size can say, which readers (libsndfile, browsers) take as "to the end".
STREAMING_WAV_SIZE = 0xFFFFFFFF


def streaming_wav_header(sample_rate: int) -> bytes:
    """The 44-byte header of a mono 16-bit PCM WAV of unknown length (:data:`STREAMING_WAV_SIZE`),
    to send before :func:`wav_pcm16` chunks as they are made."""
    fmt = struct.pack("<HHIIHH", 1, 1, sample_rate, 2 * sample_rate, 2, 16)  # PCM, mono, rate, bytes/s, block, bits
    return (
        b"RIFF"
        + struct.pack("<I", STREAMING_WAV_SIZE)
        + b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", STREAMING_WAV_SIZE)
    )


def wav_pcm16(samples: np.ndarray) -> bytes:
    """``(n,)`` float samples as little-endian 16-bit PCM (clipped to [-1, 1], scaled by 32767 and
    rounded, as libsndfile writes float to 16 bits): the body of :func:`streaming_wav_header`'s WAV."""
    return np.round(np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV file contents, as :func:`write_wav` writes them (for answers sent over HTTP)."""
    peak = float(np.max(np.abs(samples))) if samples.size else 0.0
    if peak > 1.0:  # Griffin-Lim output can overshoot; scale rather than clip
        samples = samples / peak
    buffer = io.BytesIO()
    sf.write(buffer, samples, sample_rate, subtype="PCM_16", format="WAV")
    return buffer.getvalue()
