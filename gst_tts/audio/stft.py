"""The STFT and its inverse in numpy, in ``torch.stft`` / ``torch.istft``'s convention (Hann window,
``center=True``, reflect padding), torch-free: the runtime's features and Griffin-Lim, and the
spectral vocoder's fast Griffin-Lim (:mod:`~gst_tts.audio.vocoders.phase`), which the PyTorch path
and the runtime share, use these (``tests/runtime/test_runtime_audio.py`` compares them with torch's).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Iterator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

try:  # scipy's pocketfft is several times numpy's on float32 frames (7x on 260 × 1024); numpy's where
    # scipy is absent (the runtime's [onnx] extra does not install it)
    from scipy import fft as _fft
except ImportError:  # pragma: no cover - scipy is a dependency of the full install
    _fft = np.fft

__all__ = ["fft_threads", "hann_window", "stft", "istft"]


@contextlib.contextmanager
def fft_threads(threads: int | None) -> Iterator[None]:
    """Within it, :func:`stft` and :func:`istft` split their frames over ``threads`` threads (scipy's
    ``set_workers``; 0.53 -> 0.38 ms per 346 × 1024 rfft on 2 cores). None, or without scipy: one."""
    if threads is None or _fft is np.fft or threads <= 1:
        yield
        return
    with _fft.set_workers(int(threads)):
        yield


def hann_window(win_length: int, n_fft: int) -> np.ndarray:
    """``(n_fft,)`` periodic Hann window of ``win_length`` samples, centred with zeros (as torch pads it)."""
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(win_length) / win_length)
    left = (n_fft - win_length) // 2
    return np.pad(window, (left, n_fft - win_length - left))


def stft(samples: np.ndarray, *, n_fft: int, hop_length: int, window: np.ndarray) -> np.ndarray:
    """``(n,)`` float → ``(1 + n // hop_length, n_fft // 2 + 1)`` complex: centred frames, reflect
    padding (torch.stft with ``center=True``). float32 samples and window give complex64."""
    padded = np.pad(samples, n_fft // 2, mode="reflect")
    # A strided view of the frames: the windowing is their only copy.
    return _fft.rfft(sliding_window_view(padded, n_fft)[::hop_length] * window, axis=1)


def _overlap_add(pieces: np.ndarray, hop_length: int) -> np.ndarray:
    """``(frames, n_fft)`` → ``(n_fft + hop · (frames - 1),)``: each frame added in at ``t · hop``."""
    frames, n_fft = pieces.shape
    total = n_fft + hop_length * (frames - 1)
    if n_fft % hop_length:  # frames overlap by n_fft / hop: a handful of adds per sample
        out = np.zeros(total, dtype=pieces.dtype)
        for t in range(frames):
            out[t * hop_length : t * hop_length + n_fft] += pieces[t]
        return out
    # Hop-sized blocks: frame t's block j lands on block t + j, one vectorised add per j.
    blocks = n_fft // hop_length
    out = np.zeros((frames + blocks - 1, hop_length), dtype=pieces.dtype)
    split = pieces.reshape(frames, blocks, hop_length)
    for j in range(blocks):
        out[j : j + frames] += split[:, j]
    return out.reshape(-1)


def istft(
    spectrum: np.ndarray, *, n_fft: int, hop_length: int, window: np.ndarray, length: int | None = None
) -> np.ndarray:
    """``(frames, n_fft // 2 + 1)`` complex → samples: overlap-add divided by the summed squared
    window, the centre padding cut off (torch.istft with ``center=True``); complex64 gives float32."""
    pieces = _fft.irfft(spectrum, n=n_fft, axis=1) * window
    out = _overlap_add(pieces, hop_length)
    out /= _window_norm(spectrum.shape[0], hop_length, window.tobytes(), str(window.dtype))
    total = out.size
    start = n_fft // 2
    end = total - n_fft // 2 if length is None else start + length
    out = out[start:end]
    return out if out.size == end - start else np.pad(out, (0, end - start - out.size))


@functools.lru_cache(maxsize=8)
def _window_norm(frames: int, hop_length: int, window_bytes: bytes, dtype: str) -> np.ndarray:
    """The summed squared window :func:`istft` divides by (1 where it vanishes), per length: fast
    Griffin-Lim inverts the same shape every iteration."""
    window = np.frombuffer(window_bytes, dtype=dtype)
    norm = _overlap_add(np.broadcast_to(window**2, (frames, window.size)), hop_length)
    norm = np.where(norm > 1e-11, norm, 1.0)
    norm.flags.writeable = False
    return norm
