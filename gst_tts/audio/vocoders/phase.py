"""Phase for a magnitude spectrogram: phase-gradient heap integration (PGHI), then fast Griffin-Lim.

Griffin-Lim starting from random phase needs hundreds of iterations to undo the phasiness it starts
with; PGHI (Průša, Balazs & Søndergaard 2017) computes a phase that is already nearly consistent,
from the magnitude alone. For a Gaussian-like window the log-magnitude ``s`` and the phase ``φ`` of
an STFT are tied (phase referenced to the window's centre, ``x`` in samples, ``ω`` in cycles per
sample, ``λ`` the window's time-frequency spread)::

    ∂φ/∂x = 2πω + (1/λ) ∂s/∂ω        (a sinusoid's phase advances at its own frequency)
    ∂φ/∂ω = −λ ∂s/∂x                 (an impulse's phase turns with its distance from the centre)

PGHI integrates these gradients outward from the loudest coefficient, always continuing from the
loudest one already reached, so errors accumulate in quiet regions where they matter least.
Coefficients more than ``tolerance`` nepers under the maximum get random phase. A few iterations
of fast Griffin-Lim (Perraudin et al. 2013) then polish the result.

On true magnitudes of 8 held-out demo-corpus clips, PGHI plus 32 fast Griffin-Lim iterations
reached wide-band PESQ 3.9, against 2.7 for 32 iterations from random phase (the prototype behind
the spectral vocoder; ``benchmarks/README.md``).
"""

from __future__ import annotations

import heapq

import numpy as np
import torch

__all__ = ["HANN_LAMBDA", "pghi_phase", "fast_griffin_lim"]

#: λ / win_length² of the Gaussian that best matches a Hann window (Průša et al. 2017).
HANN_LAMBDA = 0.25645

_NEIGHBOURS = ((0, 1), (0, -1), (1, 0), (-1, 0))  # (bin step, frame step)


def pghi_phase(
    log_magnitude: np.ndarray,
    *,
    n_fft: int,
    hop_length: int,
    win_length: int,
    tolerance: float = 10.0,
    seed: int = 0,
) -> np.ndarray:
    """Phase for a Hann-window STFT magnitude, in ``torch.stft``'s convention (``center=True``).

    Args:
        log_magnitude: ``(n_fft // 2 + 1, frames)`` natural log of the magnitude.
        n_fft, hop_length, win_length: the STFT's settings.
        tolerance: coefficients more than this many nepers under the loudest get random phase
            (10 nepers ≈ 87 dB). Default 10.
        seed: seed of those random phases, so the output is deterministic. Default 0.

    Returns:
        ``(n_fft // 2 + 1, frames)`` float64 phase in radians.
    """
    s = np.asarray(log_magnitude, dtype=np.float64)
    bins, frames = s.shape
    lam = HANN_LAMBDA * win_length**2
    ds_dw = np.zeros_like(s)  # ∂s/∂ω, ω in cycles per sample (one bin = 1 / n_fft)
    if bins > 2:
        ds_dw[1:-1] = (s[2:] - s[:-2]) * (n_fft / 2.0)
    ds_dx = np.gradient(s, hop_length, axis=1) if frames > 1 else np.zeros_like(s)  # ∂s/∂x, x in samples
    phase_dx = 2.0 * np.pi * (np.arange(bins)[:, None] / n_fft) + ds_dw / lam  # radians per sample
    phase_dw = -lam * ds_dx  # radians per (cycle per sample)

    phase = np.zeros_like(s)
    done = s < s.max() - tolerance
    phase[done] = np.random.default_rng(seed).uniform(-np.pi, np.pi, int(done.sum()))
    order = np.argsort(-s, axis=None)  # where to start again when a region is exhausted
    next_start = 0
    remaining = int((~done).sum())
    heap: list[tuple[float, int, int]] = []
    while remaining:
        if not heap:
            while done.flat[order[next_start]]:
                next_start += 1
            k, m = divmod(int(order[next_start]), frames)
            done[k, m] = True
            remaining -= 1
            heap.append((-s[k, m], k, m))
        _, k, m = heapq.heappop(heap)
        for dk, dm in _NEIGHBOURS:
            kk, mm = k + dk, m + dm
            if 0 <= kk < bins and 0 <= mm < frames and not done[kk, mm]:
                if dm:  # along time: trapezoid of ∂φ/∂x over one hop
                    phase[kk, mm] = phase[k, m] + dm * hop_length * 0.5 * (phase_dx[k, m] + phase_dx[kk, mm])
                else:  # along frequency: trapezoid of ∂φ/∂ω over one bin
                    phase[kk, mm] = phase[k, m] + dk / n_fft * 0.5 * (phase_dw[k, m] + phase_dw[kk, mm])
                done[kk, mm] = True
                remaining -= 1
                heapq.heappush(heap, (-s[kk, mm], kk, mm))
    # torch.stft references each frame's phase to its first sample, n_fft / 2 before its centre.
    return phase - np.pi * np.arange(bins)[:, None]


def fast_griffin_lim(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    *,
    n_fft: int,
    hop_length: int,
    win_length: int,
    n_iter: int = 32,
    momentum: float = 0.99,
    length: int | None = None,
) -> torch.Tensor:
    """Fast Griffin-Lim from a given initial phase.

    Args:
        magnitude: ``(n_fft // 2 + 1, frames)`` STFT magnitude (Hann window, ``center=True``).
        phase: same shape, the initial phase (:func:`pghi_phase`).
        n_fft, hop_length, win_length: the STFT's settings.
        n_iter: iterations; 0 returns the inverse STFT of the initial spectrogram. Default 32.
        momentum: the "fast" term (Perraudin et al. 2013). Default 0.99.
        length: output samples. Default: ``(frames - 1) · hop_length``.

    Returns:
        ``(samples,)`` waveform in the magnitude's dtype.
    """
    window = torch.hann_window(win_length, dtype=magnitude.dtype, device=magnitude.device)
    spectrum = torch.polar(magnitude, phase.to(magnitude.dtype))
    previous = torch.zeros_like(spectrum)
    for _ in range(n_iter):
        audio = torch.istft(spectrum, n_fft, hop_length, win_length, window, length=length)
        rebuilt = torch.stft(audio, n_fft, hop_length, win_length, window, return_complex=True)
        angles = rebuilt - (momentum / (1.0 + momentum)) * previous
        previous = rebuilt
        spectrum = magnitude * angles / (angles.abs() + 1e-16)
    return torch.istft(spectrum, n_fft, hop_length, win_length, window, length=length)
