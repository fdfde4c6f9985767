"""The checks a reference recording passes before it is decoded or encoded: its samples, or an
audio file's header, against the limits on rate, channels and length, and the shortest and
quietest reference accepted. Torch-free, so the ONNX runtime (:mod:`gst_tts.runtime`) checks
references as the :class:`~gst_tts.inference.style.StyleResolver` does."""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from gst_tts.errors import AudioError, first_line
from gst_tts.inference.style_spec import short_repr

__all__ = [
    "MIN_REFERENCE_SECONDS",
    "MAX_REFERENCE_SECONDS",
    "SILENCE_PEAK",
    "reference_array",
    "reference_header",
]

MIN_REFERENCE_SECONDS = 0.5
#: Longest reference, in seconds: a style is heard in seconds, and the whole recording is read
#: into memory (longer ones are encoded in windows, see
#: :meth:`~gst_tts.inference.style.StyleResolver.reference_weights`).
MAX_REFERENCE_SECONDS = 600.0
#: Peak below which a reference counts as silent (about -80 dBFS).
SILENCE_PEAK = 1e-4
# Reference sample rates accepted (Hz), and the most channels.
_MIN_REFERENCE_RATE, _MAX_REFERENCE_RATE, _MAX_REFERENCE_CHANNELS = 1_000, 384_000, 8
# Sample values (frames x channels) read at most: 10 minutes of 48 kHz stereo, 230 MB of float32.
_MAX_REFERENCE_VALUES = int(MAX_REFERENCE_SECONDS) * 48_000 * 2


def reference_array(samples: Any, rate: Any, name: str) -> tuple[np.ndarray, int]:
    """``(samples (n,) | (n, channels) | (channels, n), rate)`` → float ``(n,)`` / ``(n, channels)`` and the
    rate, checked; integer samples scaled to [-1, 1] by their type's full scale, as soundfile does."""
    rate = _reference_rate(rate, name)
    try:
        samples = np.asarray(samples)
        if samples.dtype.kind == "O":  # numbers of mixed types, or anything else
            samples = samples.astype(np.float64)
    except (TypeError, ValueError) as exc:  # ragged lists, objects
        raise AudioError(f"{name}: samples are not numbers ({first_line(exc, 80)})") from None
    if samples.dtype.kind not in "iuf":  # strings, bools, complex numbers
        raise AudioError(f"{name}: samples must be real numbers, got an array of {samples.dtype}")
    if samples.ndim == 2 and samples.shape[0] <= _MAX_REFERENCE_CHANNELS < samples.shape[1]:
        samples = samples.T  # (channels, n) as torchaudio gives it → (n, channels)
    if samples.ndim not in (1, 2) or (samples.ndim == 2 and samples.shape[1] > _MAX_REFERENCE_CHANNELS):
        raise AudioError(
            f"{name}: expected samples (n,) or (n, channels) with at most {_MAX_REFERENCE_CHANNELS} "
            f"channels, got shape {samples.shape}"
        )
    _check_reference_size(name, samples.shape[0], 1 if samples.ndim == 1 else samples.shape[1], rate)  # before copying
    if samples.dtype.kind in "iu":
        half = np.float32(2.0 ** (8 * samples.dtype.itemsize - 1))
        return (samples.astype(np.float32) - (half if samples.dtype.kind == "u" else 0)) / half, rate
    return samples.astype(np.float32, copy=False), rate


def reference_header(path: str | os.PathLike, name: str) -> None:
    """Check an audio file's header against the reference limits before anything is decoded
    (decoding allocates what the header claims). ``name``: the path as messages show it.

    Raises:
        AudioError: missing, not readable as audio, or past the rate, channel and length limits.
    """
    path = Path(path)
    if not path.is_file():
        raise AudioError(f"{name}: audio file not found")
    try:
        info = sf.info(str(path))
    except Exception as exc:  # libsndfile raises several types for data it cannot parse
        raise AudioError(f"{name}: not readable as audio ({first_line(exc)})") from None
    _check_reference_size(name, info.frames, info.channels, _reference_rate(info.samplerate, name))


def _reference_rate(rate: Any, name: str) -> int:
    """A reference's sample rate as an int; ``AudioError`` unless a whole number of Hz in the accepted range."""
    ok = (
        isinstance(rate, numbers.Real)
        and not isinstance(rate, bool)
        and math.isfinite(rate)
        and float(rate).is_integer()
    )
    if not ok or not _MIN_REFERENCE_RATE <= int(rate) <= _MAX_REFERENCE_RATE:
        raise AudioError(
            f"{name}: the sample rate must be a whole number of Hz from {_MIN_REFERENCE_RATE:,} to "
            f"{_MAX_REFERENCE_RATE:,}, got {short_repr(rate)}"
        )
    return int(rate)


def _check_reference_size(name: str, frames: int, channels: int, rate: int) -> None:
    """``AudioError`` for more channels, seconds or sample values than a reference may have."""
    if not 1 <= channels <= _MAX_REFERENCE_CHANNELS:
        raise AudioError(f"{name}: a reference has 1 to {_MAX_REFERENCE_CHANNELS} channels, got {channels}")
    if frames / rate > MAX_REFERENCE_SECONDS or frames * channels > _MAX_REFERENCE_VALUES:
        raise AudioError(
            f"{name}: reference is {frames / rate:,.1f} s of {channels} channel(s) at {rate:,} Hz; at most "
            f"{MAX_REFERENCE_SECONDS:g} s and {_MAX_REFERENCE_VALUES:,} samples in all are read "
            "(cut a shorter excerpt)"
        )
