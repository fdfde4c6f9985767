"""The checks a reference recording passes before it is decoded or encoded: its samples, or an
audio file's header, against the limits on rate, channels and length, and the shortest and
quietest reference accepted. Torch-free, so the ONNX runtime (:mod:`gst_tts.runtime`) checks
references as the :class:`~gst_tts.inference.style.StyleResolver` does."""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
import soundfile as sf

from gst_tts.errors import AudioError, first_line
from gst_tts.inference.style_spec import reference_name, short_repr

__all__ = [
    "MIN_REFERENCE_SECONDS",
    "MAX_REFERENCE_SECONDS",
    "SILENCE_PEAK",
    "reference_array",
    "reference_header",
    "reference_samples",
    "window_starts",
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


def reference_samples(
    reference: Any,
    *,
    rate: int,
    read_file: Callable[[str], tuple[np.ndarray, int]],
    mono: Callable[[np.ndarray, int], np.ndarray],
    resample: Callable[[np.ndarray, int, str], np.ndarray],
    trim: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """A reference recording (a path, or ``(samples, rate)``) as float32 mono samples at ``rate``,
    silence trimmed, every check passed; each synthesizer gives its own audio functions:
    ``read_file`` (a path's samples and rate, called once its header has passed), ``mono`` (at
    the recording's rate), ``resample`` (``(samples, from_rate, name)`` to ``rate``) and ``trim``.

    Raises:
        AudioError: missing, unreadable, not numbers, NaN or infinite samples, silent, shorter
            than :data:`MIN_REFERENCE_SECONDS` after trimming silence, or past the rate, channel and
            length limits.
    """
    name = reference_name(reference)
    if isinstance(reference, tuple) and len(reference) == 2:
        samples, given_rate = reference_array(*reference, name=name)
    elif isinstance(reference, (str, os.PathLike)):
        reference_header(reference, name)
        try:
            samples, given_rate = read_file(os.fspath(reference))
        except Exception:  # libsndfile raises several types
            raise AudioError(f"{name}: not readable as audio (its header reads, its samples do not)") from None
    else:
        raise AudioError(f"a reference is a file path or (samples, rate), got {short_repr(reference)}")
    samples = mono(samples, given_rate)  # checked before resampling, which would smear a NaN
    if samples.size and not np.isfinite(samples).all():
        raise AudioError(f"{name}: reference contains NaN or infinite samples")
    if samples.size == 0 or float(np.max(np.abs(samples))) < SILENCE_PEAK:
        raise AudioError(f"{name}: reference is silent")
    samples = trim(resample(samples, given_rate, name))
    if samples.size < MIN_REFERENCE_SECONDS * rate:
        raise AudioError(
            f"{name}: reference is {samples.size / rate:.2f} s of sound; at least {MIN_REFERENCE_SECONDS} s is needed"
        )
    return np.ascontiguousarray(samples, dtype=np.float32)


def window_starts(frames: int, window: int | None) -> list[int]:
    """Where the windows a reference of ``frames`` mel frames is encoded in start: every half
    window, the last ending with the reference; ``[0]`` (one window, the whole mel) when it is no
    longer than ``window`` or ``window`` is None."""
    if window is None or frames <= window:
        return [0]
    starts = list(range(0, frames - window + 1, max(1, window // 2)))
    if starts[-1] + window < frames:
        starts.append(frames - window)
    return starts


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
