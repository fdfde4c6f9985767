"""The runtime's numpy signal processing against the torch path's (torchaudio, librosa)."""

from __future__ import annotations

import numpy as np
import torch

from gst_tts.audio import features
from gst_tts.audio.features import AudioConfig, MelExtractor
from gst_tts.audio.io import trim_silence as librosa_trim
from gst_tts.export.exporter import mel_filters
from gst_tts.runtime import audio

CONFIG = AudioConfig()


def _speechlike(seconds: float, rate: int = 22050, seed: int = 0) -> np.ndarray:
    """A gliding tone with noise, silent at both ends (so trimming has something to cut)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    voice = 0.3 * np.sin(2 * np.pi * (120 + 90 * t) * t) + 0.02 * rng.standard_normal(t.size)
    envelope = ((t > 0.2) & (t < seconds - 0.3)).astype(float)
    return (voice * envelope + 1e-4 * rng.standard_normal(t.size)).astype(np.float32)


def test_log_mel_matches_the_mel_extractor():
    samples = _speechlike(1.0)
    expected = MelExtractor(CONFIG)(torch.from_numpy(samples)).numpy()
    got = audio.log_mel(
        samples,
        filters=mel_filters(CONFIG),
        n_fft=CONFIG.n_fft,
        hop_length=CONFIG.hop_length,
        win_length=CONFIG.win_length,
    )
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < 1e-3  # log-mel; float32 FFTs differ in the last bits
    assert audio.LOG_MEL_FLOOR == features.LOG_MEL_FLOOR


def test_trim_silence_cuts_where_librosa_does():
    for seed in range(3):
        samples = _speechlike(1.5, seed=seed)
        expected = librosa_trim(samples, 40.0)
        got = audio.trim_silence(samples, 40.0)
        assert got.size == expected.size and np.array_equal(got, expected)


def test_istft_inverts_stft_and_griffin_lim_gives_hop_samples_a_frame():
    samples = _speechlike(0.5).astype(np.float64)
    window = audio.hann_window(CONFIG.win_length, CONFIG.n_fft)
    spectrum = audio.stft(samples, n_fft=CONFIG.n_fft, hop_length=CONFIG.hop_length, window=window)
    back = audio.istft(spectrum, n_fft=CONFIG.n_fft, hop_length=CONFIG.hop_length, window=window, length=samples.size)
    assert np.abs(back - samples).max() < 1e-9
    log_mel = audio.log_mel(
        samples,
        filters=mel_filters(CONFIG),
        n_fft=CONFIG.n_fft,
        hop_length=CONFIG.hop_length,
        win_length=CONFIG.win_length,
    )
    wave = audio.griffin_lim(
        log_mel,
        filters=mel_filters(CONFIG),
        n_fft=CONFIG.n_fft,
        hop_length=CONFIG.hop_length,
        win_length=CONFIG.win_length,
        n_iter=8,
        rng=np.random.default_rng(0),
    )
    assert wave.dtype == np.float32 and wave.size == (log_mel.shape[0] - 1) * CONFIG.hop_length
    assert abs(float(np.abs(wave).max()) - 0.95) < 1e-6


def test_resampling_keeps_a_tone_and_the_length():
    rate, wanted = 16000, 22050
    t = np.arange(rate) / rate
    out = audio.resample(np.sin(2 * np.pi * 440 * t).astype(np.float32), rate, wanted)
    assert out.size == wanted
    peak = np.argmax(np.abs(np.fft.rfft(out)))
    assert abs(peak * wanted / out.size - 440) < 2
