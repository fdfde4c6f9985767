"""A log-mel stretched in time: what retiming an output to a reference's tempo does to its mel
(:mod:`gst_tts.inference.tempo`), and what draws a retimed result at the decoder's tempo again
(:meth:`gst_tts.inference.results.SynthesisResult.figure`). numpy only."""

from __future__ import annotations

import numpy as np

__all__ = ["retimed"]


def retimed(log_mel: np.ndarray, gain: float) -> np.ndarray:
    """``(frames, n_mels)`` → ``(round(frames / gain), n_mels)`` (at least 1): each channel
    linearly interpolated at evenly spread points of the original (frame centres kept in
    proportion), the same dtype. ``gain`` 1 returns the input."""
    log_mel = np.asarray(log_mel)
    if gain == 1.0 or len(log_mel) < 2:
        return log_mel
    n_in = len(log_mel)
    n_out = max(1, int(round(n_in / gain)))
    where = np.clip((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0, n_in - 1.0)
    left = np.floor(where).astype(np.int64)
    right = np.minimum(left + 1, n_in - 1)
    frac = (where - left)[:, None]
    return ((1.0 - frac) * log_mel[left] + frac * log_mel[right]).astype(log_mel.dtype)
