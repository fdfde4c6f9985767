"""The YIN F0 track (``gst_tts.audio.pitch``): framing like the STFT, accuracy on harmonic tones
across the speech range and on a glide, unvoiced silence and noise, and agreement with pyin on real
speech."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.pitch import yin_f0

CFG = AudioConfig()


def harmonic_tone(f0_track: np.ndarray, rate: int = CFG.sample_rate, seed: int = 0) -> torch.Tensor:
    """Harmonics of a per-sample F0 track with random amplitudes falling with frequency."""
    rng = np.random.default_rng(seed)
    phase = 2 * np.pi * np.cumsum(f0_track) / rate
    y = sum(rng.uniform(0.3, 1.0) / k * np.sin(k * phase + rng.uniform(0, 2 * np.pi)) for k in range(1, 30))
    return torch.from_numpy(0.3 * y / np.abs(y).max())


def cents(a, b) -> np.ndarray:
    return 1200 * np.abs(np.log2(np.asarray(a) / np.asarray(b)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("f0", [70.0, 95.0, 140.0, 230.0, 420.0])
def test_steady_tones_are_voiced_at_their_f0(f0, dtype):
    audio = harmonic_tone(np.full(CFG.sample_rate, f0)).to(dtype)  # float32: what training tracks
    track, voiced = yin_f0(audio, CFG)
    assert track.dtype == dtype
    assert track.shape == voiced.shape == (1 + audio.numel() // CFG.hop_length,)
    inner = slice(4, -4)  # the reflect padding mirrors the ends
    assert voiced[inner].all()
    assert np.median(cents(track[inner].numpy(), f0)) < 3.0
    assert cents(track[inner].numpy(), f0).max() < 20.0


def test_a_glide_is_followed_frame_by_frame():
    seconds = 1.5
    n = int(seconds * CFG.sample_rate)
    f0 = 90.0 * 3.0 ** (np.arange(n) / n)  # 90 → 270 Hz
    track, voiced = yin_f0(harmonic_tone(f0), CFG)
    centres = np.arange(track.numel()) * CFG.hop_length
    inner = slice(4, -4)
    expected = f0[np.minimum(centres, n - 1)][inner]
    assert voiced[inner].all()
    assert np.median(cents(track[inner].numpy(), expected)) < 10.0


def test_silence_and_noise_are_unvoiced_and_batches_keep_their_shape():
    rng = np.random.default_rng(1)
    batch = torch.stack([torch.zeros(8192, dtype=torch.float64), torch.from_numpy(0.1 * rng.standard_normal(8192))])
    track, voiced = yin_f0(batch, CFG)
    assert track.shape == voiced.shape == (2, 33)
    assert torch.isfinite(track).all()
    assert not voiced[0].any()
    assert voiced[1].float().mean() < 0.2


def test_quiet_frames_are_unvoiced_even_when_periodic():
    loud = harmonic_tone(np.full(CFG.sample_rate // 2, 150.0))
    audio = torch.cat([loud, 1e-3 * loud])  # the second half 60 dB down
    _, voiced = yin_f0(audio, CFG)
    half = voiced.numel() // 2
    assert voiced[4 : half - 4].all() and not voiced[half + 4 : -4].any()


def test_a_window_too_short_for_fmin_is_refused():
    with pytest.raises(ValueError, match="too short"):
        yin_f0(torch.zeros(4096), AudioConfig(n_fft=256, win_length=256, hop_length=64), fmin=60.0)


def test_it_agrees_with_pyin_on_real_speech(shared_data):
    import librosa

    clip = sorted((shared_data / "ljspeech-mini" / "wavs").glob("*.wav"))[0]
    audio, rate = sf.read(clip, dtype="float64")
    assert rate == CFG.sample_rate
    track, voiced = yin_f0(torch.from_numpy(audio), CFG)
    reference, ref_voiced, _ = librosa.pyin(
        audio, fmin=60.0, fmax=500.0, sr=rate, frame_length=CFG.win_length, hop_length=CFG.hop_length
    )
    n = min(track.numel(), reference.size)
    ours, theirs = voiced.numpy()[:n], ref_voiced[:n]
    both = ours & theirs
    assert both.sum() > 50
    assert (ours == theirs).mean() > 0.8
    assert np.median(cents(track.numpy()[:n][both], reference[both])) < 20.0
