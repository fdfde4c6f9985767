"""Parallel prosody-transfer measures (Skerry-Ryan et al. 2018, "Towards End-to-End Prosody
Transfer"): how close a synthesized utterance is to a reference recording, frame by frame.

* **MCD13-DTW** (dB): mel-cepstral coefficients 1..13 (c_0 left out) of each frame, from gst-tts's
  own log-mels (:func:`gst_tts.analysis.vocoder_quality.mel_cepstra`, an MFCC-style cepstrum, not
  SPTK's warped mcep), frame distance ``(10 / ln 10) · sqrt(2 · Σ_d (c_d − ĉ_d)²)``, averaged along
  the dynamic-time-warping path that minimises the summed distance (steps (1,0), (0,1), (1,1)).
* **GPE / VDE / FFE** (Chu & Alwan 2009) on the *same* DTW path, each path step one frame pair:
  VDE = pairs whose voicing decisions differ / all pairs; GPE = pairs voiced in both whose F0
  differs by more than 20 % of the reference F0 / pairs voiced in both (Chu & Alwan's
  normalisation; some papers divide by all frames instead); FFE = (voicing errors + gross pitch
  errors) / all pairs; **F0 RMSE** (cents) over the pairs voiced in both. Skerry-Ryan et al.
  compare outputs with references of other lengths, so frames must be paired somehow; we reuse the
  MCD path so that spectral and pitch figures are read off the same frame pairs (their paper's
  exact pairing for the pitch measures was not checked against its text here).
* F0 by ``librosa.pyin`` (:func:`gst_tts.analysis.prosody.f0_track`, in
  :data:`~gst_tts.analysis.prosody.F0_RANGE_HZ`) at the features' hop, so pitch frame t and mel
  frame t are centred on the same sample.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from gst_tts.analysis.prosody import f0_track
from gst_tts.analysis.vocoder_quality import mel_cepstra
from gst_tts.audio.features import AudioConfig, MelExtractor

__all__ = [
    "N_MCD_CEPSTRA",
    "GROSS_ERROR",
    "MEASURES",
    "PitchErrors",
    "dtw_path",
    "cepstral_frame_distances",
    "mcd_dtw",
    "pitch_errors",
    "compare_parallel",
]

#: Skerry-Ryan et al.'s MCD13: coefficients 1..13.
N_MCD_CEPSTRA = 13
#: A pitch error is gross beyond this relative deviation from the reference F0 (Chu & Alwan: 20 %).
GROSS_ERROR = 0.2
#: What :func:`compare_parallel` reports of one pair.
MEASURES = ("mcd_db", "ffe", "gpe", "vde", "f0_rmse_cents")
_DB_PER_NEPER = 10.0 / math.log(10.0)


@dataclass(frozen=True)
class PitchErrors:
    gpe: float  # gross pitch errors / pairs voiced in both; NaN when none is
    vde: float  # voicing disagreements / all pairs
    ffe: float  # (voicing disagreements + gross pitch errors) / all pairs
    f0_rmse_cents: float  # RMS of the F0 difference in cents over pairs voiced in both; NaN when none is
    n_pairs: int  # frame pairs compared (DTW path length)


def cepstral_frame_distances(reference: np.ndarray, output: np.ndarray, n_cepstra: int = N_MCD_CEPSTRA) -> np.ndarray:
    """``(T_ref, n_mels)`` and ``(T_out, n_mels)`` natural-log mels → ``(T_ref, T_out)`` per-frame
    MCD (dB) of every pair: ``(10 / ln 10) · sqrt(2 Σ_d Δc_d²)``, d = 1..n_cepstra."""
    a, b = mel_cepstra(reference, n_cepstra), mel_cepstra(output, n_cepstra)
    sq = np.maximum(np.sum(a**2, 1)[:, None] + np.sum(b**2, 1)[None, :] - 2.0 * a @ b.T, 0.0)
    return _DB_PER_NEPER * np.sqrt(2.0 * sq)


def dtw_path(cost: np.ndarray) -> np.ndarray:
    """Minimum-total-cost monotonic path through a ``(T_a, T_b)`` cost matrix from (0, 0) to
    (T_a−1, T_b−1), steps (1,0), (0,1), (1,1): ``(path_length, 2)`` int indices, in time order."""
    n, m = cost.shape
    if n == 0 or m == 0:
        return np.zeros((0, 2), dtype=int)
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    for i in range(1, n + 1):  # a row at a time; the (0,1) step needs a running minimum
        diag_up = np.minimum(acc[i - 1, :-1], acc[i - 1, 1:]) + cost[i - 1]
        row = acc[i]
        for j in range(1, m + 1):
            row[j] = min(diag_up[j - 1], row[j - 1] + cost[i - 1, j - 1])
    i, j, path = n, m, []
    while i > 0 and j > 0:
        path.append((i - 1, j - 1))
        steps = (acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])
        k = int(np.argmin(steps))
        i, j = (i - 1, j - 1) if k == 0 else (i - 1, j) if k == 1 else (i, j - 1)
    return np.asarray(path[::-1], dtype=int)


def mcd_dtw(reference: np.ndarray, output: np.ndarray, n_cepstra: int = N_MCD_CEPSTRA) -> tuple[float, np.ndarray]:
    """MCD (dB) of two log-mels ``(T_ref, n_mels)``, ``(T_out, n_mels)`` along their DTW path:
    ``(mean frame MCD over the path, path (L, 2))``. NaN and an empty path without frames."""
    if len(reference) == 0 or len(output) == 0:
        return float("nan"), np.zeros((0, 2), dtype=int)
    cost = cepstral_frame_distances(np.asarray(reference), np.asarray(output), n_cepstra)
    path = dtw_path(cost)
    return float(np.mean(cost[path[:, 0], path[:, 1]])), path


def pitch_errors(
    f0_ref: np.ndarray,
    voiced_ref: np.ndarray,
    f0_out: np.ndarray,
    voiced_out: np.ndarray,
    path: np.ndarray,
    *,
    gross_error: float = GROSS_ERROR,
) -> PitchErrors:
    """GPE, VDE, FFE (Chu & Alwan 2009) and F0 RMSE (cents) over the frame pairs of ``path`` ``(L, 2)`` (reference
    index, output index); F0 in Hz ``(T,)``, voicing bool ``(T,)``. Path indices beyond a track
    (pitch and mel frame counts can differ by one) are clipped to its last frame."""
    if len(path) == 0 or len(f0_ref) == 0 or len(f0_out) == 0:
        return PitchErrors(float("nan"), float("nan"), float("nan"), float("nan"), 0)
    i = np.minimum(path[:, 0], len(f0_ref) - 1)
    j = np.minimum(path[:, 1], len(f0_out) - 1)
    v_ref, v_out = np.asarray(voiced_ref, bool)[i], np.asarray(voiced_out, bool)[j]
    both = v_ref & v_out
    fr, fo = np.asarray(f0_ref, float)[i][both], np.asarray(f0_out, float)[j][both]
    gross = int(np.sum(np.abs(fo - fr) > gross_error * fr))
    voicing = int(np.sum(v_ref != v_out))
    cents = 1200.0 * np.log2(fo / fr)
    n = len(path)
    return PitchErrors(
        gpe=gross / int(both.sum()) if both.any() else float("nan"),
        vde=voicing / n,
        ffe=(voicing + gross) / n,
        f0_rmse_cents=float(np.sqrt(np.mean(cents**2))) if both.any() else float("nan"),
        n_pairs=n,
    )


def compare_parallel(
    reference: np.ndarray, output: np.ndarray, audio_config: AudioConfig, *, extractor: MelExtractor | None = None
) -> dict[str, float]:
    """The measures of one output against one reference recording, both ``(n_samples,)`` at
    ``audio_config.sample_rate`` (trim leading and trailing silence first: DTW pins both ends).

    Log-mels by the project's :class:`~gst_tts.audio.features.MelExtractor`, F0 by pyin
    (:func:`~gst_tts.analysis.prosody.f0_track`) at the same hop; the DTW path of the mel-cepstra
    gives the frame pairs of all four measures.

    Returns:
        ``{"mcd_db", "ffe", "gpe", "vde", "f0_rmse_cents"}``; NaN where a signal is too short for a frame.
    """
    import torch

    extractor = extractor or MelExtractor(audio_config)
    if min(len(reference), len(output)) <= audio_config.n_fft // 2:  # the STFT's reflect padding needs more
        return dict.fromkeys(MEASURES, float("nan"))
    mels = [extractor(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))).numpy() for x in (reference, output)]
    mcd, path = mcd_dtw(mels[0], mels[1])
    kw = dict(frame_length=audio_config.n_fft, hop_length=audio_config.hop_length)
    f0_ref, v_ref = f0_track(reference, audio_config.sample_rate, **kw)
    f0_out, v_out = f0_track(output, audio_config.sample_rate, **kw)
    errors = pitch_errors(f0_ref, v_ref, f0_out, v_out, path)
    return {
        "mcd_db": mcd,
        "ffe": errors.ffe,
        "gpe": errors.gpe,
        "vde": errors.vde,
        "f0_rmse_cents": errors.f0_rmse_cents,
    }
