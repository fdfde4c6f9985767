"""Vocoder quality measures (PESQ, MCD, F0 RMSE, VDE, voiced share) on synthetic signals with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gst_tts.analysis.vocoder_quality import (
    N_CEPSTRA,
    VocoderQuality,
    mcd_from_log_mels,
    mel_cepstra,
    pesq_wb,
    summarize,
    vocoder_quality,
    voiced_share,
)
from gst_tts.audio.features import AudioConfig

RATE = 22050
CONFIG = AudioConfig()


def harmonic(seconds: float = 2.0, f0: float = 120.0, rate: int = RATE, syllables: bool = True) -> np.ndarray:
    """A speech-like voiced signal: harmonics with falling amplitude and a slow vibrato, in
    syllable-like bursts (PESQ looks for speech activity) or continuous."""
    t = np.arange(int(seconds * rate)) / rate
    phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.03 * np.sin(2 * np.pi * 0.7 * t))) / rate
    x = sum(np.sin(k * phase) / k for k in range(1, int(5000 / f0)))
    envelope = np.clip(np.sin(2 * np.pi * 2 * t), 0, None) ** 0.5 if syllables else 1.0
    x = x * envelope
    return (0.3 * x / np.abs(x).max()).astype(np.float32)


def with_noise(x: np.ndarray, snr_db: float, seed: int = 1) -> np.ndarray:
    noise = np.random.default_rng(seed).standard_normal(len(x))
    noise *= math.sqrt(np.mean(x.astype(np.float64) ** 2) / np.mean(noise**2)) * 10 ** (-snr_db / 20)
    return (x + noise).astype(np.float32)


def test_identical_signals_score_perfectly():
    x = harmonic()
    q = vocoder_quality(x, x.copy(), RATE, CONFIG)
    assert q.pesq > 4.5
    assert q.mcd_db == pytest.approx(0.0, abs=1e-9)
    assert q.f0_rmse_cents == pytest.approx(0.0, abs=1e-9) and q.vde == 0.0
    assert 0.3 < q.voiced_share_reference == q.voiced_share_vocoded
    assert q.seconds == pytest.approx(2.0, abs=1e-3)


def test_a_pitch_shifted_copy_is_off_by_its_interval_in_cents():
    q = vocoder_quality(harmonic(f0=120.0), harmonic(f0=127.0), RATE, CONFIG)
    assert q.f0_rmse_cents == pytest.approx(1200 * math.log2(127 / 120), abs=15)  # 98 cents
    assert q.vde < 0.1


def test_white_noise_against_a_tone_disagrees_on_voicing():
    tone = harmonic(syllables=False)
    noise = np.random.default_rng(0).standard_normal(len(tone)).astype(np.float32) * 0.1
    q = vocoder_quality(tone, noise, RATE, CONFIG)
    assert q.vde > 0.8
    assert q.voiced_share_reference > 0.9 and q.voiced_share_vocoded < 0.25
    assert voiced_share(noise, RATE) == pytest.approx(q.voiced_share_vocoded)


def test_more_noise_lowers_pesq_and_raises_mcd():
    x = harmonic(3.0)
    scores = [vocoder_quality(x, with_noise(x, snr), RATE, CONFIG) for snr in (40, 30, 20, 10)]
    pesq, mcd = [q.pesq for q in scores], [q.mcd_db for q in scores]
    assert all(a > b for a, b in zip(pesq, pesq[1:])), pesq
    assert all(a < b for a, b in zip(mcd, mcd[1:])), mcd
    assert mcd[0] > 0


def test_longer_vocoded_output_is_compared_over_the_common_length():
    x = harmonic()
    padded = np.concatenate([x, np.zeros(3000, np.float32)])
    q = vocoder_quality(x, padded, RATE, CONFIG)
    assert q.mcd_db == pytest.approx(0.0, abs=1e-9) and q.vde == 0.0 and q.pesq > 4.5


def test_cepstra_are_the_usual_cepstrum_of_the_log_amplitude():
    """log A(ω) = c0 + 2 Σ c_d cos(dω) on the channel grid ω_n = π(2n+1)/(2N) gives back c_d; the
    level c0 is left out, so a gain changes nothing; MCD of a known difference is its formula."""
    n_mels = 80
    w = np.pi * (2 * np.arange(n_mels) + 1) / (2 * n_mels)
    c = {0: -3.0, 1: 0.4, 2: -0.25, 5: 0.1}
    log_mel = (c[0] + 2 * sum(v * np.cos(d * w) for d, v in c.items() if d))[None].repeat(3, 0)
    cep = mel_cepstra(log_mel)
    assert cep.shape == (3, N_CEPSTRA)
    np.testing.assert_allclose(cep[0, [0, 1, 4]], [0.4, -0.25, 0.1], atol=1e-12)
    assert mcd_from_log_mels(log_mel, log_mel + 1.7) == pytest.approx(0.0, abs=1e-9)
    shifted = log_mel + 2 * 0.05 * np.cos(3 * w)
    assert mcd_from_log_mels(log_mel, shifted) == pytest.approx(10 / math.log(10) * math.sqrt(2) * 0.05)


@pytest.mark.parametrize("case", ["too short", "silent"])
def test_a_clip_pesq_cannot_score_is_nan_with_a_warning(case):
    x = harmonic(0.1) if case == "too short" else np.zeros(RATE, np.float32)
    with pytest.warns(RuntimeWarning, match="utt-1: PESQ cannot score it"):
        assert math.isnan(pesq_wb(x, x, RATE, name="utt-1"))
    with pytest.warns(RuntimeWarning):
        q = vocoder_quality(x, x, RATE, CONFIG, name="utt-1")
    assert math.isnan(q.pesq) and q.vde == 0.0 and math.isnan(q.f0_rmse_cents) == (case == "silent")


def test_other_rates_are_resampled_for_the_features():
    x16 = harmonic(2.0, rate=16000)
    q = vocoder_quality(x16, x16, 16000, CONFIG)
    assert q.pesq > 4.5 and q.mcd_db == pytest.approx(0.0, abs=1e-9) and q.vde == 0.0


def test_summary_means_over_the_clips_that_scored():
    a = VocoderQuality(
        pesq=4.0,
        mcd_db=2.0,
        f0_rmse_cents=10.0,
        vde=0.1,
        voiced_share_reference=0.5,
        voiced_share_vocoded=0.4,
        seconds=1.0,
    )
    b = VocoderQuality(
        pesq=float("nan"),
        mcd_db=4.0,
        f0_rmse_cents=30.0,
        vde=0.3,
        voiced_share_reference=0.7,
        voiced_share_vocoded=0.6,
        seconds=2.0,
    )
    s = summarize([a, b])
    assert (
        s.count == 2 and s.pesq == 4.0 and s.mcd_db == 3.0 and s.f0_rmse_cents == 20.0 and s.vde == pytest.approx(0.2)
    )
    assert s.scored["pesq"] == 1 and s.scored["mcd_db"] == 2 and s.seconds == 3.0
    assert s.to_dict()["scored"]["pesq"] == 1 and a.to_dict()["pesq"] == 4.0
    empty = summarize([])
    assert empty.count == 0 and math.isnan(empty.pesq)
