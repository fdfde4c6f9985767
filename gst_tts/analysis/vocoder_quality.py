"""How close a vocoded waveform is to the recording it was made from: the measures vocoder papers
report for copy synthesis (a recording's mel through the vocoder, compared with the recording).

* **PESQ** (ITU-T P.862.2, wide band; the ``pesq`` package): both signals resampled to 16 kHz
  (soxr). MOS-LQO from about 1.0 (bad) to 4.64 (identical). A clip PESQ cannot score (shorter
  than a quarter second, silent, no speech found) gives NaN and a warning.
* **MCD** (mel-cepstral distortion, dB) from gst-tts's own log-mel features
  (:class:`~gst_tts.audio.features.MelExtractor`, natural log of slaney mel magnitudes): the
  cepstrum of each frame is the orthonormal DCT-II of its log-mel over the channels, divided by
  ``sqrt(2·n_mels)`` so that coefficient d is the usual (two-sided) cepstrum of the log amplitude on
  the mel axis, ``log A(ω) = c_0 + 2 Σ_d c_d cos(dω)``; coefficients 1..24 (c_0, the level, left
  out), and MCD = mean over frames of ``(10 / ln 10) · sqrt(2 · Σ_d (c_d − ĉ_d)²)``. Copy synthesis
  is frame-aligned, so frames are compared one to one, without DTW; every frame counts, silence
  included. It is an MFCC-style MCD (a DCT of a slaney mel filterbank, 80 channels to 8 kHz), *not*
  the SPTK mel-cepstrum (``mcep``, all-pass warping) most papers use: compare its values with each
  other, not with published MCD figures.
* **F0 RMSE** (cents) over the frames ``librosa.pyin`` calls voiced in both signals, and **VDE**
  (voicing decision error): the share of frames whose voiced/unvoiced decision differs. Both with
  :func:`gst_tts.analysis.prosody.f0_track` (pyin in :data:`~gst_tts.analysis.prosody.F0_RANGE_HZ`,
  the hop of the features), so frame t of both signals is centred on the same sample.
* **Voiced share** of one waveform: where there is no recording to compare with (the acoustic
  model's own mels, vocoded), the share of frames pyin calls voiced says whether the vocoder kept
  the voicing.

Signals are compared from sample 0 over their common length: a vocoder that delays its output
(HiFi-GAN's half hop, 5.8 ms at 22050/256) is measured as it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
import math
import os
from typing import Iterable
import warnings

import numpy as np
import torch

from gst_tts.analysis.prosody import F0_RANGE_HZ, f0_track, voiced_f0
from gst_tts.audio.features import AudioConfig, MelExtractor
from gst_tts.audio.io import load_audio, trim_silence
from gst_tts.audio.vocoders import Vocoder

__all__ = [
    "PESQ_RATE",
    "N_CEPSTRA",
    "MEASURES",
    "VocoderQuality",
    "QualitySummary",
    "pesq_wb",
    "mel_cepstra",
    "mcd_from_log_mels",
    "mel_cepstral_distortion",
    "f0_errors",
    "voiced_share",
    "vocoder_quality",
    "summarize",
    "load_recording",
    "copy_synthesis",
]

#: Wide-band PESQ works at 16 kHz.
PESQ_RATE = 16000
#: Cepstral coefficients 1..N_CEPSTRA enter the MCD (the usual 24; c_0 left out).
N_CEPSTRA = 24
#: The comparative measures of one clip: field name → label for tables.
MEASURES = {"pesq": "PESQ", "mcd_db": "MCD dB", "f0_rmse_cents": "F0 RMSE ct", "vde": "VDE"}
_DB_PER_NEPER = 10.0 / math.log(10.0)


@dataclass(frozen=True)
class VocoderQuality:
    """One clip: a vocoded waveform against its recording. NaN where a measure cannot be taken."""

    pesq: float  # wide-band PESQ, MOS-LQO ~1.0..4.64; NaN when PESQ cannot score the clip
    mcd_db: float  # mel-cepstral distortion (dB), 0 for identical signals
    f0_rmse_cents: float  # over frames voiced in both; NaN when there is none
    vde: float  # share of frames whose voicing decision differs, 0..1
    voiced_share_reference: float  # share of the recording's frames pyin calls voiced
    voiced_share_vocoded: float  # likewise for the vocoded waveform
    seconds: float  # the common length compared

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class QualitySummary:
    """Means over clips, each over the clips where the measure is a number (see ``scored``)."""

    count: int  # clips
    pesq: float
    mcd_db: float
    f0_rmse_cents: float
    vde: float
    voiced_share_reference: float
    voiced_share_vocoded: float
    seconds: float  # total compared
    scored: dict[str, int] = field(default_factory=dict)  # measure → clips with a finite value

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(clips: Iterable[VocoderQuality]) -> QualitySummary:
    """Mean of every measure over the clips where it is finite (NaN when none is), and the counts."""
    clips = list(clips)
    means, scored = {}, {}
    for name in ("pesq", "mcd_db", "f0_rmse_cents", "vde", "voiced_share_reference", "voiced_share_vocoded"):
        values = np.array([getattr(c, name) for c in clips], dtype=np.float64)
        finite = values[np.isfinite(values)]
        means[name] = float(finite.mean()) if finite.size else float("nan")
        scored[name] = int(finite.size)
    return QualitySummary(count=len(clips), seconds=float(sum(c.seconds for c in clips)), scored=scored, **means)


# ---------------------------------------------------------------- the measures


def _resample(audio: np.ndarray, rate: int, target: int) -> np.ndarray:
    audio = np.asarray(audio, dtype=np.float32)
    if rate == target:
        return audio
    import librosa

    return librosa.resample(audio, orig_sr=rate, target_sr=target, res_type="soxr_hq").astype(np.float32)


def pesq_wb(reference: np.ndarray, degraded: np.ndarray, sample_rate: int, *, name: str = "clip") -> float:
    """Wide-band PESQ of ``degraded`` against ``reference`` (same rate, aligned from sample 0, cut to
    their common length), both resampled to 16 kHz. NaN, with a warning naming ``name``, when PESQ
    cannot score the pair (too short, silent, no speech found)."""
    from pesq import PesqError, pesq

    n = min(len(reference), len(degraded))
    ref, deg = (
        _resample(np.asarray(x)[:n], sample_rate, PESQ_RATE).astype(np.float64) if n else np.zeros(0)
        for x in (reference, degraded)
    )
    if n == 0:
        problem = "no common samples"
    elif not (np.all(np.isfinite(ref)) and np.all(np.isfinite(deg))):
        problem = "a signal is not finite"
    elif not (np.any(ref) and np.any(deg)):
        problem = "a signal is silent"
    else:
        try:
            return float(pesq(PESQ_RATE, ref, deg, "wb"))
        except PesqError as exc:
            message = exc.args[0] if exc.args else exc
            problem = message.decode() if isinstance(message, bytes) else str(message)
    warnings.warn(f"{name}: PESQ cannot score it ({problem}); counted as NaN", RuntimeWarning, stacklevel=2)
    return float("nan")


def mel_cepstra(log_mel: np.ndarray | torch.Tensor, n_cepstra: int = N_CEPSTRA) -> np.ndarray:
    """``(frames, n_mels)`` natural-log mel magnitudes → ``(frames, n_cepstra)``: cepstral
    coefficients 1..n_cepstra of each frame, scaled as the usual cepstrum of the log amplitude
    (orthonormal DCT-II over the channels / sqrt(2·n_mels))."""
    from scipy.fft import dct

    log_mel = np.asarray(log_mel, dtype=np.float64)
    n_mels = log_mel.shape[-1]
    if not 1 <= n_cepstra < n_mels:
        raise ValueError(f"n_cepstra must be in 1..{n_mels - 1}, got {n_cepstra}")
    return dct(log_mel, type=2, norm="ortho", axis=-1)[..., 1 : n_cepstra + 1] / math.sqrt(2.0 * n_mels)


def mcd_from_log_mels(
    reference: np.ndarray | torch.Tensor, degraded: np.ndarray | torch.Tensor, n_cepstra: int = N_CEPSTRA
) -> float:
    """MCD (dB) of two frame-aligned ``(frames, n_mels)`` log-mels over their common frames: mean
    over frames of ``(10 / ln 10) · sqrt(2 Σ_d Δc_d²)``, d = 1..n_cepstra. NaN without frames."""
    n = min(len(reference), len(degraded))
    if n == 0:
        return float("nan")
    diff = mel_cepstra(np.asarray(reference)[:n], n_cepstra) - mel_cepstra(np.asarray(degraded)[:n], n_cepstra)
    return float(np.mean(_DB_PER_NEPER * np.sqrt(2.0 * np.sum(diff**2, axis=-1))))


def mel_cepstral_distortion(
    reference: np.ndarray, degraded: np.ndarray, audio_config: AudioConfig, *, extractor: MelExtractor | None = None
) -> float:
    """MCD (dB) of two waveforms at ``audio_config.sample_rate``, aligned from sample 0, over their
    common length: :func:`mcd_from_log_mels` of their log-mels (no silence trimming)."""
    extractor = extractor or MelExtractor(audio_config)
    n = min(len(reference), len(degraded))
    if n <= audio_config.n_fft // 2:  # the STFT's reflect padding needs more
        return float("nan")
    mels = [
        extractor(torch.from_numpy(np.ascontiguousarray(x[:n], dtype=np.float32))).numpy()
        for x in (reference, degraded)
    ]
    return mcd_from_log_mels(*mels)


def f0_errors(
    reference: np.ndarray,
    degraded: np.ndarray,
    sample_rate: int,
    *,
    hop_length: int = 256,
    frame_length: int = 1024,
    f0_range_hz: tuple[float, float] = F0_RANGE_HZ,
) -> tuple[float, float, float, float]:
    """F0 agreement of two waveforms over their common length, frame by frame (pyin,
    :func:`~gst_tts.analysis.prosody.f0_track`).

    Returns:
        ``(f0_rmse_cents, vde, voiced_share_reference, voiced_share_degraded)``: the RMS of
        ``1200 · log2(f0_degraded / f0_reference)`` over frames voiced in both (NaN when none is),
        the share of frames whose voicing decision differs, and each signal's voiced share. No
        frames: all NaN.
    """
    n = min(len(reference), len(degraded))
    if n == 0:
        return (float("nan"),) * 4
    kw = dict(f0_range_hz=f0_range_hz, frame_length=frame_length, hop_length=hop_length)
    f0_ref, voiced_ref = f0_track(np.asarray(reference)[:n], sample_rate, **kw)
    f0_deg, voiced_deg = f0_track(np.asarray(degraded)[:n], sample_rate, **kw)
    both = voiced_ref & voiced_deg
    cents = 1200.0 * np.log2(f0_deg[both] / f0_ref[both])
    rmse = float(np.sqrt(np.mean(cents**2))) if cents.size else float("nan")
    return rmse, float(np.mean(voiced_ref != voiced_deg)), float(np.mean(voiced_ref)), float(np.mean(voiced_deg))


def voiced_share(
    audio: np.ndarray,
    sample_rate: int,
    *,
    hop_length: int = 256,
    frame_length: int = 1024,
    f0_range_hz: tuple[float, float] = F0_RANGE_HZ,
) -> float:
    """Share of the frames of one waveform that pyin calls voiced (0 for empty audio):
    :func:`gst_tts.analysis.prosody.voiced_f0`'s, at the features' hop."""
    return voiced_f0(audio, sample_rate, f0_range_hz=f0_range_hz, frame_length=frame_length, hop_length=hop_length)[1]


def vocoder_quality(
    reference: np.ndarray,
    vocoded: np.ndarray,
    sample_rate: int,
    audio_config: AudioConfig,
    *,
    name: str = "clip",
    extractor: MelExtractor | None = None,
) -> VocoderQuality:
    """Every measure of one vocoded waveform against its recording.

    Args:
        reference: ``(n_samples,)`` the recording.
        vocoded: ``(n_samples',)`` the vocoder's output from the recording's mel, at the same rate
            and aligned from sample 0; compared over the common length.
        sample_rate: their rate; resampled to ``audio_config.sample_rate`` for the MCD and F0
            measures when it differs.
        audio_config: the feature settings (mel, hop) of the MCD and the F0 frames.
        name: names the clip in warnings. Default "clip".
        extractor: a :class:`MelExtractor` for ``audio_config`` to reuse. Default: a new one.
    """
    n = min(len(reference), len(vocoded))
    reference, vocoded = np.asarray(reference, dtype=np.float32)[:n], np.asarray(vocoded, dtype=np.float32)[:n]
    score = pesq_wb(reference, vocoded, sample_rate, name=name)
    rate = audio_config.sample_rate
    reference, vocoded = _resample(reference, sample_rate, rate), _resample(vocoded, sample_rate, rate)
    rmse, vde, share_ref, share_voc = f0_errors(reference, vocoded, rate, hop_length=audio_config.hop_length)
    return VocoderQuality(
        pesq=score,
        mcd_db=mel_cepstral_distortion(reference, vocoded, audio_config, extractor=extractor),
        f0_rmse_cents=rmse,
        vde=vde,
        voiced_share_reference=share_ref,
        voiced_share_vocoded=share_voc,
        seconds=n / sample_rate,
    )


# ---------------------------------------------------------------- copy synthesis


def load_recording(path: str | os.PathLike, audio_config: AudioConfig) -> np.ndarray:
    """A recording as the feature cache reads it: mono at ``audio_config.sample_rate``, leading and
    trailing silence trimmed (``trim_top_db``); the reference copy synthesis is compared with."""
    samples, _ = load_audio(path, audio_config.sample_rate)
    return trim_silence(samples, audio_config.trim_top_db)


def copy_synthesis(
    vocoder: Vocoder, samples: np.ndarray, audio_config: AudioConfig, *, extractor: MelExtractor | None = None
) -> np.ndarray:
    """``samples`` (at ``audio_config.sample_rate``) → their log-mel → ``vocoder`` → float32 samples."""
    extractor = extractor or MelExtractor(audio_config)
    log_mel = extractor(torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32)))
    return np.asarray(vocoder(log_mel), dtype=np.float32)
