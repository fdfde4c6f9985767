"""Tempo without a transcript (gst_tts.analysis.speech_rate) on syllable trains whose rate is known."""

from __future__ import annotations

import librosa
import numpy as np
import pytest

from gst_tts.analysis.speech_rate import (
    LETTERS_PER_NUCLEUS,
    letter_rate_estimate,
    nucleus_frames,
    nucleus_rate,
    prominent_peaks,
    slaney_mel_centres,
)
from gst_tts.audio.features import AudioConfig, wav_to_logmel

CONFIG = AudioConfig()
FRAME_S = CONFIG.hop_length / CONFIG.sample_rate


def syllables(per_second: float, seconds: float = 3.0, rate: int = CONFIG.sample_rate) -> np.ndarray:
    """A vowel-like voice (150 Hz and its harmonics) swelling ``per_second`` times a second, with
    quiet dips between the swells, as syllables have."""
    t = np.arange(int(seconds * rate)) / rate
    voice = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 16))
    swell = 0.05 + 0.95 * (0.5 - 0.5 * np.cos(2 * np.pi * per_second * t))
    return (0.2 * voice * swell).astype(np.float32)


def test_the_mel_centres_are_librosas_slaney_scale():
    expected = librosa.mel_frequencies(CONFIG.n_mels + 2, fmin=CONFIG.fmin, fmax=CONFIG.fmax)[1:-1]
    np.testing.assert_allclose(slaney_mel_centres(CONFIG.n_mels, CONFIG.fmin, CONFIG.fmax), expected, rtol=1e-6)


@pytest.mark.parametrize("per_second", [3.0, 4.5, 6.0])
def test_a_syllable_train_is_read_at_its_rate(per_second):
    log_mel = wav_to_logmel(syllables(per_second), CONFIG)
    assert nucleus_rate(log_mel, FRAME_S) == pytest.approx(per_second, rel=0.1)
    assert letter_rate_estimate(log_mel, FRAME_S) == pytest.approx(per_second * LETTERS_PER_NUCLEUS, rel=0.1)


def test_a_pause_is_not_speaking_time():
    swells = syllables(4.0, seconds=2.0)
    with_pause = np.concatenate([swells, np.zeros(CONFIG.sample_rate, np.float32), swells])
    assert nucleus_rate(wav_to_logmel(with_pause, CONFIG), FRAME_S) == pytest.approx(4.0, rel=0.1)


def test_quiet_peaks_and_a_steady_tone_are_not_nuclei():
    loud, quiet = syllables(4.0, seconds=2.0), 0.05 * syllables(4.0, seconds=2.0)  # 26 dB down: breath, not vowels
    log_mel = wav_to_logmel(np.concatenate([loud, quiet]), CONFIG)
    assert nucleus_frames(log_mel, FRAME_S).max() < 2.2 * CONFIG.frames_per_second
    t = np.arange(2 * CONFIG.sample_rate) / CONFIG.sample_rate
    steady = (0.2 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)
    assert nucleus_rate(wav_to_logmel(steady, CONFIG), FRAME_S) is None  # too few nuclei: no tempo
    assert nucleus_rate(np.zeros((3, CONFIG.n_mels)), FRAME_S) is None
    assert (
        len(nucleus_frames(np.zeros((3, CONFIG.n_mels)), FRAME_S)) == 0
        and len(nucleus_frames(np.zeros((0, 80)), FRAME_S)) == 0
    )


@pytest.mark.parametrize("seed", range(5))
def test_the_peaks_are_scipys(seed):
    from scipy.signal import find_peaks

    rng = np.random.default_rng(seed)
    level = np.convolve(rng.normal(0.0, 3.0, 3000), np.ones(5) / 5, mode="same") + 8 * np.sin(np.arange(3000) / 200)
    level[1000:1040] = level[1000]  # a flat stretch
    for prominence, distance in ((3.0, 5), (1.0, 1), (6.0, 20)):
        expected, _ = find_peaks(level, prominence=prominence, distance=distance)
        np.testing.assert_array_equal(prominent_peaks(level, prominence, distance), expected)
