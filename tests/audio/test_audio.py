"""Audio I/O and features: load_audio, log-mels, trimming, Griffin-Lim, MelStats, write_wav."""

from __future__ import annotations

import dataclasses
import math

from conftest import tone
import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.audio.features import LOG_MEL_FLOOR, AudioConfig, MelExtractor, MelStats, wav_to_logmel
from gst_tts.audio.io import load_audio, resampling_rate, to_mono_resampled, trim_silence, write_wav
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.errors import AudioError, GstTtsError

CFG = AudioConfig()


# ---------------------------------------------------------------------------------------------
# load_audio


def test_a_rate_whose_exact_resampling_kernel_is_huge_is_read_as_the_nearest_multiple_of_50_hz():
    assert [resampling_rate(r, 22_050) for r in (44_100, 11_025, 48_000, 22_051, 44_101)] == [
        44_100,
        11_025,
        48_000,
        22_050,
        44_100,
    ]
    # Exact 22,051 -> 22,050 Hz would build a kernel of about 22,051 x 22,050 values (GBs); read as
    # 22,050 Hz it is a copy.
    out = to_mono_resampled(np.ones(22_051, np.float32), 22_051, 22_050)
    assert out.shape == (22_051,)


def test_load_stereo_int16_48k_is_mono_float32_resampled(tmp_path):
    rate, seconds = 48000, 1.0
    left = tone(seconds, rate, 300.0, 0.5)
    right = -left * 0.5  # averaging the two channels gives 0.25 * left
    stereo = np.stack([left, right], axis=1)
    path = tmp_path / "stereo.wav"
    sf.write(path, stereo, rate, subtype="PCM_16")
    assert sf.info(path).channels == 2 and sf.info(path).subtype == "PCM_16"

    samples, out_rate = load_audio(path, 22050)

    assert out_rate == 22050
    assert samples.dtype == np.float32
    assert samples.ndim == 1
    expected = int(seconds * 22050)
    assert abs(samples.size - expected) <= 0.01 * expected
    # Mono is the channel mean, 0.25 * left: not one channel (1x) nor their sum (0.5x).
    peak = float(np.abs(samples).max())
    assert peak == pytest.approx(0.25 * float(np.abs(left).max()), rel=0.05)


def test_load_without_rate_keeps_native_rate(tmp_path):
    path = tmp_path / "native.wav"
    sf.write(path, tone(0.5, 16000), 16000, subtype="PCM_16")
    samples, rate = load_audio(path)
    assert rate == 16000
    assert samples.size == 8000


def test_load_float_flac(tmp_path):
    rate = 16000
    data = tone(0.5, rate, 440.0, 0.4)
    path = tmp_path / "clip.flac"
    sf.write(path, data, rate, format="FLAC", subtype="PCM_24")
    samples, out_rate = load_audio(path, 22050)
    assert out_rate == 22050 and samples.dtype == np.float32 and samples.ndim == 1
    assert abs(samples.size - 11025) <= 0.01 * 11025
    assert 0.35 < float(np.abs(samples).max()) < 0.6


def test_load_float_wav_same_rate_is_unchanged(tmp_path):
    data = tone(0.3, 22050, 200.0, 0.7)
    path = tmp_path / "float.wav"
    sf.write(path, data, 22050, subtype="FLOAT")
    samples, _ = load_audio(path, 22050)
    np.testing.assert_allclose(samples, data, atol=1e-6)


def test_load_missing_file_names_path(tmp_path):
    path = tmp_path / "nope" / "missing.wav"
    with pytest.raises(AudioError) as info:
        load_audio(path, 22050)
    assert str(path) in str(info.value)
    assert isinstance(info.value, GstTtsError)


def test_load_text_file_as_wav_is_one_line_audio_error(tmp_path):
    path = tmp_path / "fake.wav"
    path.write_text("this is not audio\nat all\n" * 20)
    with pytest.raises(AudioError) as info:
        load_audio(path, 22050)
    message = str(info.value)
    assert str(path) in message
    assert "\n" not in message
    assert info.value.__cause__ is None  # raised "from None": no chained traceback


# ---------------------------------------------------------------------------------------------
# Log-mel


@pytest.mark.parametrize("n_samples", [22050, 12345, 256 * 40])
def test_mel_extractor_shape_and_floor(n_samples):
    samples = tone(n_samples / 22050, 22050)[:n_samples]
    assert samples.size == n_samples
    mel = MelExtractor(CFG)(torch.from_numpy(samples))
    assert tuple(mel.shape) == (n_samples // 256 + 1, 80)
    assert float(mel.min()) >= math.log(LOG_MEL_FLOOR) - 1e-5


def test_mel_extractor_silence_is_floor():
    mel = MelExtractor(CFG)(torch.zeros(4096))
    assert torch.allclose(mel, torch.full_like(mel, math.log(LOG_MEL_FLOOR)))


def test_wav_to_logmel_shape_values_and_tone_peak():
    samples = tone(1.0, 22050, freq=1000.0)
    mel = wav_to_logmel(samples, dataclasses.replace(CFG, trim_top_db=None))
    assert mel.dtype == np.float32
    assert mel.shape == (samples.size // 256 + 1, 80)
    assert float(mel.min()) >= math.log(LOG_MEL_FLOOR) - 1e-5
    # The loudest channel of a 1 kHz tone sits in the lower third of the 0-8 kHz mel range.
    peak_channel = int(np.argmax(mel.mean(0)))
    assert 10 < peak_channel < 40


def test_wav_to_logmel_trims_when_configured():
    padded = np.concatenate([np.zeros(11025, np.float32), tone(1.0, 22050), np.zeros(11025, np.float32)])
    untrimmed = wav_to_logmel(padded, dataclasses.replace(CFG, trim_top_db=None))
    trimmed = wav_to_logmel(padded, CFG)
    assert untrimmed.shape[0] == padded.size // 256 + 1
    assert abs(trimmed.shape[0] - (22050 // 256 + 1)) <= 8


def test_trim_silence_removes_leading_and_trailing_silence():
    lead, body_len, trail = 22050, 22050, 11025
    body = tone(1.0, 22050)
    padded = np.concatenate([np.zeros(lead, np.float32), body, np.zeros(trail, np.float32)])
    trimmed = trim_silence(padded, 40.0)
    # Frame-granular trimming: within a few frames of the body length.
    assert abs(trimmed.size - body_len) <= 4 * 1024
    assert trimmed.size < padded.size - (lead + trail) // 2
    # The tone is kept: what was cut is silence.
    assert np.isclose(float(np.abs(trimmed).max()), float(np.abs(body).max()), atol=1e-6)


def test_trim_silence_disabled_or_empty():
    padded = np.concatenate([np.zeros(1000, np.float32), tone(0.2, 22050)])
    assert trim_silence(padded, None) is padded
    empty = np.zeros(0, np.float32)
    assert trim_silence(empty, 40.0).size == 0


# ---------------------------------------------------------------------------------------------
# Griffin-Lim


@pytest.fixture(scope="module")
def vocoder():
    return GriffinLimVocoder(CFG, n_iter=4)


def test_griffin_lim_output(vocoder):
    mel = wav_to_logmel(tone(0.5, 22050), dataclasses.replace(CFG, trim_top_db=None))
    audio = vocoder(mel)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(audio.size - mel.shape[0] * 256) <= 256
    assert np.isfinite(audio).all()
    assert float(np.abs(audio).max()) <= 1.0
    assert float(np.abs(audio).max()) > 0.5  # normalised to 0.95 peak, not silent


def test_griffin_lim_accepts_tensor(vocoder):
    mel = torch.from_numpy(wav_to_logmel(tone(0.3, 22050), dataclasses.replace(CFG, trim_top_db=None)))
    audio = vocoder(mel)
    assert audio.dtype == np.float32 and abs(audio.size - mel.shape[0] * 256) <= 256


def test_griffin_lim_three_frames(vocoder):
    mel = np.full((3, 80), -2.0, dtype=np.float32)
    audio = vocoder(mel)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert 2 * 256 <= audio.size <= 5 * 256
    assert np.isfinite(audio).all()
    assert float(np.abs(audio).max()) <= 1.0


# ---------------------------------------------------------------------------------------------
# MelStats


def test_mel_stats_round_trip_and_dict():
    torch.manual_seed(0)
    mean, std = torch.randn(80), torch.rand(80) + 0.5
    stats = MelStats(mean, std)
    x = torch.randn(7, 80) * 3 - 4
    normed = stats.normalize(x)
    assert not torch.allclose(normed, x)
    torch.testing.assert_close(stats.denormalize(normed), x, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(normed, (x - mean) / std)

    d = stats.to_dict()
    assert set(d) == {"mean", "std"}
    d["mean"] += 1  # a copy: editing it leaves the stats alone
    torch.testing.assert_close(stats.mean, mean)
    again = MelStats.from_dict(stats.to_dict())
    torch.testing.assert_close(again.mean, mean)
    torch.testing.assert_close(again.std, std)
    from_numpy = MelStats.from_dict({"mean": mean.numpy(), "std": std.numpy()})
    assert from_numpy.mean.dtype == torch.float32
    torch.testing.assert_close(from_numpy.normalize(x), normed)


def test_mel_stats_from_sums():
    rng = np.random.default_rng(0)
    data = rng.normal(2.0, 3.0, size=(500, 80))
    stats = MelStats.from_sums(data.sum(0), (data**2).sum(0), data.shape[0])
    np.testing.assert_allclose(stats.mean.numpy(), data.mean(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(stats.std.numpy(), data.std(0), rtol=1e-4)
    const = MelStats.from_sums(np.full(80, 10.0), np.full(80, 20.0), 5)  # zero variance
    assert bool((const.std > 0).all())


# ---------------------------------------------------------------------------------------------
# write_wav, AudioConfig


def test_write_wav_atomic_pcm16(tmp_path):
    out = tmp_path / "sub" / "out.wav"
    data = tone(0.25, 22050, amplitude=0.5)
    write_wav(out, data, 22050)
    assert sorted(p.name for p in out.parent.iterdir()) == ["out.wav"]
    info = sf.info(out)
    assert info.subtype == "PCM_16" and info.samplerate == 22050 and info.channels == 1
    back, rate = sf.read(out, dtype="float32")
    assert rate == 22050 and back.size == data.size
    np.testing.assert_allclose(back, data, atol=1 / 32768 * 2)


def test_write_wav_scales_overshoot(tmp_path):
    out = tmp_path / "loud.wav"
    data = tone(0.1, 22050, amplitude=1.0) * 3
    write_wav(out, data, 22050)
    back, _ = sf.read(out, dtype="float32")
    assert 0.95 < float(np.abs(back).max()) <= 1.0
    assert [p.name for p in tmp_path.iterdir()] == ["loud.wav"]


def test_fingerprint_changes_with_each_field():
    base = AudioConfig()
    assert base.fingerprint() == AudioConfig().fingerprint()
    assert len(base.fingerprint()) == 12
    changes = dict(
        sample_rate=16000,
        n_fft=2048,
        hop_length=200,
        win_length=800,
        n_mels=64,
        fmin=50.0,
        fmax=7600.0,
        trim_top_db=None,
    )
    assert set(changes) == {f.name for f in dataclasses.fields(AudioConfig)}
    prints = {base.fingerprint()}
    for name, value in changes.items():
        prints.add(dataclasses.replace(base, **{name: value}).fingerprint())
    assert len(prints) == len(changes) + 1
    assert base.frames_per_second == pytest.approx(22050 / 256)
