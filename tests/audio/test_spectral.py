"""The spectral vocoder (``gst_tts.audio.vocoders.spectral``): the untrained estimator is the mel
pseudo-inverse, its shapes, the magnitude loss, the training target lines up with the features, a
few steps learn, and ``SpectralVocoder`` keeps the ``Vocoder`` contract (length, dtype, range); the
pitch head, its loss, and harmonic synthesis keeping a smeared low voice periodic."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchaudio

from gst_tts.audio.features import AudioConfig, MelExtractor
from gst_tts.audio.pitch import yin_f0
from gst_tts.audio.vocoders.spectral import (
    PITCH_CENTRE_HZ,
    MagnitudeEstimator,
    SpectralVocoder,
    edge_frames,
    magnitude_loss,
    pitch_loss,
    stft_log_magnitude,
)

CFG = AudioConfig()
N_FREQS = CFG.n_fft // 2 + 1
TINY = dict(channels=16, kernel_size=3, dilations=(1, 2))


def harmonic(seconds: float, f0: float, seed: int = 0) -> torch.Tensor:
    """A sum of harmonics of a gliding ``f0`` with random amplitudes: speech-like enough to learn on."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * CFG.sample_rate)) / CFG.sample_rate
    phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.1 * np.sin(2 * np.pi * 2 * t))) / CFG.sample_rate
    y = sum(rng.uniform(0.2, 1.0) / k * np.sin(k * phase) for k in range(1, int(7000 / f0)))
    return torch.from_numpy((0.3 * y / np.abs(y).max()).astype(np.float32))


def test_the_untrained_estimator_is_the_mel_pseudo_inverse():
    torch.manual_seed(0)
    estimator = MagnitudeEstimator(**TINY)
    estimator.set_mel_stats(torch.randn(80), torch.rand(80) + 0.5)  # the normalisation does not matter yet
    mel = MelExtractor(CFG)(harmonic(0.3, 150.0))
    filterbank = torchaudio.functional.melscale_fbanks(
        N_FREQS, CFG.fmin, CFG.fmax, CFG.n_mels, CFG.sample_rate, norm="slaney", mel_scale="slaney"
    ).numpy()
    pinv = np.linalg.pinv(filterbank.T.astype(np.float64))  # (n_freqs, n_mels), computed here independently
    expected = np.log(np.maximum(np.exp(mel.numpy().astype(np.float64)) @ pinv.T, 1e-5))
    with torch.no_grad():
        out = estimator(mel[None])[0]
    assert out.shape == (mel.shape[0], N_FREQS)
    # float32 against float64: near the floor the log magnifies rounding, hence the relative tolerance.
    np.testing.assert_allclose(out.numpy(), expected, atol=2e-3, rtol=5e-3)


@pytest.mark.parametrize("frames", [1, 2, 7, 40])
def test_output_shapes(frames):
    estimator = MagnitudeEstimator(**TINY)
    with torch.no_grad():
        assert estimator(torch.randn(3, frames, 80) - 5).shape == (3, frames, N_FREQS)
    with pytest.raises(ValueError, match="odd"):
        MagnitudeEstimator(kernel_size=4)


def test_the_target_lines_up_with_the_features_frame_for_frame():
    audio = harmonic(0.5, 130.0)
    target = stft_log_magnitude(audio, CFG)  # (frames, n_freqs)
    mel = MelExtractor(CFG)(audio)
    assert target.shape == (1 + audio.numel() // CFG.hop_length, N_FREQS) and target.shape[0] == mel.shape[0]
    filterbank = torchaudio.functional.melscale_fbanks(
        N_FREQS, CFG.fmin, CFG.fmax, CFG.n_mels, CFG.sample_rate, norm="slaney", mel_scale="slaney"
    )
    rebuilt = torch.log(torch.clamp(torch.exp(target) @ filterbank, min=1e-5))
    torch.testing.assert_close(rebuilt, mel, atol=1e-3, rtol=1e-3)
    batched = stft_log_magnitude(torch.stack([audio, audio.flip(0)]), CFG)
    assert batched.shape == (2, *target.shape) and torch.equal(batched[0], target)
    assert edge_frames(CFG) == 2  # a 1024-sample window reaches 2 hops either side


def test_magnitude_loss_is_zero_for_equal_inputs_and_finite_for_wild_ones():
    target = torch.randn(2, 10, N_FREQS) - 3
    terms = magnitude_loss(target, target)
    assert set(terms) == {"log_magnitude_l1", "spectral_convergence", "total"}
    assert all(float(v) == 0.0 for v in terms.values())
    wild = torch.full_like(target, 1000.0, requires_grad=True)
    terms = magnitude_loss(wild, target)
    terms["total"].backward()
    assert all(torch.isfinite(v) for v in terms.values()) and torch.isfinite(wild.grad).all()
    assert float(terms["log_magnitude_l1"].detach()) > 1000


def test_a_few_steps_learn_the_magnitude():
    torch.manual_seed(0)
    clips = [harmonic(0.4, f0, seed=i) for i, f0 in enumerate((110.0, 160.0, 220.0))]
    mels = torch.stack([MelExtractor(CFG)(c) for c in clips])  # (3, frames, 80)
    targets = stft_log_magnitude(torch.stack(clips), CFG)
    estimator = MagnitudeEstimator(**TINY)
    estimator.set_mel_stats(mels.mean((0, 1)), mels.std((0, 1)))
    optimizer = torch.optim.Adam(estimator.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = magnitude_loss(estimator(mels), targets)["total"]
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.8 * losses[0], losses


@pytest.mark.parametrize("frames", [1, 3, 30])
def test_the_vocoder_makes_frames_minus_one_hops_of_float32_in_range(frames):
    torch.manual_seed(0)
    vocoder = SpectralVocoder(MagnitudeEstimator(**TINY), audio_config=CFG, n_iter=4)
    assert vocoder.sample_rate == 22050 and not any(p.requires_grad for p in vocoder.estimator.parameters())
    loud = np.random.default_rng(0).normal(0.0, 1.0, (frames, 80)).astype(np.float32) + 3.0  # far above [-1, 1]
    audio = vocoder(loud)
    assert audio.shape == (max(frames - 1, 1) * CFG.hop_length,) and audio.dtype == np.float32
    assert np.isfinite(audio).all() and np.abs(audio).max() <= 1.0
    np.testing.assert_array_equal(vocoder(torch.from_numpy(loud)), audio)  # tensors too; deterministic


def test_the_vocoder_resynthesises_a_harmonic_signal():
    # The untrained estimator (the pseudo-inverse) with PGHI: the result's log-mel is near the input's.
    audio = harmonic(0.6, 140.0)
    mel = MelExtractor(CFG)(audio)
    out = SpectralVocoder(MagnitudeEstimator(**TINY), audio_config=CFG)(mel)
    again = MelExtractor(CFG)(torch.from_numpy(out))
    voiced = mel[: again.shape[0]].max(1).values > np.log(1e-2)
    assert voiced.sum() > 10
    error = (again - mel[: again.shape[0]]).abs()[voiced].mean()
    assert error < 0.5, float(error)


# The pitch head and harmonic synthesis


def test_the_pitch_head_reads_f0_and_voicing_and_starts_at_its_centre():
    torch.manual_seed(0)
    estimator = MagnitudeEstimator(**TINY, pitch_head=True)
    mel = torch.randn(2, 9, 80) - 5
    with torch.no_grad():
        log_mag, pitch = estimator(mel, with_pitch=True)
        torch.testing.assert_close(log_mag, estimator(mel))  # the magnitude does not depend on asking for pitch
    assert pitch.shape == (2, 9, 2)
    torch.testing.assert_close(torch.exp(pitch[..., 0]), torch.full((2, 9), PITCH_CENTRE_HZ))
    torch.testing.assert_close(pitch[..., 1], torch.zeros(2, 9))
    with pytest.raises(ValueError, match="no pitch head"):
        MagnitudeEstimator(**TINY)(mel, with_pitch=True)


def test_pitch_loss_counts_f0_on_voiced_frames_only():
    f0 = torch.tensor([[100.0, 200.0, 300.0]])
    voiced = torch.tensor([[True, True, False]])
    exact = torch.stack([torch.log(f0), torch.tensor([[20.0, 20.0, -20.0]])], dim=-1)
    terms = pitch_loss(exact, f0, voiced)
    assert float(terms["log_f0_l1"]) == 0.0 and float(terms["voicing_bce"]) < 1e-6
    off = exact.clone()
    off[0, 2, 0] += 1.0  # an unvoiced frame's F0 is free
    assert float(pitch_loss(off, f0, voiced)["log_f0_l1"]) == 0.0
    off[0, 0, 0] += 0.5
    assert float(pitch_loss(off, f0, voiced)["log_f0_l1"]) == pytest.approx(0.25)


def test_a_pitch_head_makes_a_low_voice_periodic_at_its_f0():
    # A smeared 90 Hz voice: without harmonic synthesis the phase has little to go on.
    torch.manual_seed(0)
    mel = MelExtractor(CFG)(harmonic(1.0, 90.0))
    smeared = torch.nn.functional.avg_pool1d(mel.T[None], 5, 1, 2)[0].T  # over time; then over frequency:
    smeared = torch.nn.functional.avg_pool1d(smeared[:, None], 5, 1, 2)[:, 0]
    estimator = MagnitudeEstimator(**TINY, pitch_head=True)
    with torch.no_grad():  # reads 90 Hz, voiced, whatever the mel
        estimator.pitch_output.bias.copy_(torch.tensor([np.log(90.0 / PITCH_CENTRE_HZ), 10.0]))
    out = SpectralVocoder(estimator, audio_config=CFG)(smeared)
    assert out.shape == ((mel.shape[0] - 1) * CFG.hop_length,) and out.dtype == np.float32 and np.abs(out).max() <= 1.0
    track, voiced = yin_f0(torch.from_numpy(out.astype(np.float64)), CFG)
    inner = slice(8, -8)
    assert voiced[inner].float().mean() > 0.95
    assert np.median(1200 * np.abs(np.log2(track[inner].numpy() / 90.0))) < 10.0
