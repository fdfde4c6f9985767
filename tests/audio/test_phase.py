"""PGHI phase and fast Griffin-Lim (``gst_tts.audio.vocoders.phase``): on the true magnitude of a
harmonic signal PGHI is nearly consistent with no iteration at all, beats Griffin-Lim from random
phase at the same iteration count, is deterministic, and follows ``torch.stft``'s phase convention
(the waveform itself comes back, not just one with its magnitude). Both are numpy, torch-free."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchaudio

from gst_tts.audio.vocoders import phase as phase_module
from gst_tts.audio.vocoders.phase import fast_griffin_lim, pghi_phase, warm_up_pghi

SR, N_FFT, HOP = 22050, 1024, 256
STFT = dict(n_fft=N_FFT, hop_length=HOP, win_length=N_FFT)
WINDOW = torch.hann_window(N_FFT, dtype=torch.float64)


def stft(y: torch.Tensor) -> torch.Tensor:
    return torch.stft(y, N_FFT, HOP, N_FFT, WINDOW, center=True, return_complex=True)


def convergence(y: torch.Tensor, magnitude: torch.Tensor) -> float:
    """|| |STFT(y)| - M || / ||M||: how far the waveform's magnitude is from the one it was made for."""
    rebuilt = stft(y.double()).abs()[:, : magnitude.shape[1]]
    return float(torch.linalg.vector_norm(rebuilt - magnitude) / torch.linalg.vector_norm(magnitude))


def gl(magnitude: torch.Tensor, phase: torch.Tensor, **settings) -> torch.Tensor:
    """numpy's fast Griffin-Lim on tensors: the waveform as a tensor."""
    return torch.from_numpy(fast_griffin_lim(magnitude.numpy(), phase.numpy(), **settings))


def log_of(magnitude: torch.Tensor) -> np.ndarray:
    return torch.log(torch.clamp(magnitude, min=1e-8)).numpy()


@pytest.fixture(scope="module")
def harmonic() -> torch.Tensor:
    """One second of a 120 Hz sawtooth-like sum of harmonics with a slow 3 Hz vibrato (whole hops)."""
    n = SR // HOP * HOP
    t = np.arange(n) / SR
    f0 = 120.0 * (1 + 0.03 * np.sin(2 * np.pi * 3 * t))
    phase = 2 * np.pi * np.cumsum(f0) / SR
    y = sum(np.sin(k * phase) / k for k in range(1, 60))
    return torch.from_numpy(0.2 * y / np.abs(y).max())


def test_pghi_alone_is_far_more_consistent_than_random_phase(harmonic):
    magnitude = stft(harmonic).abs()
    phase = torch.from_numpy(pghi_phase(log_of(magnitude), **STFT))
    random = torch.from_numpy(np.random.default_rng(0).uniform(-np.pi, np.pi, tuple(magnitude.shape)))
    pghi = convergence(gl(magnitude, phase, **STFT, n_iter=0), magnitude)
    chance = convergence(gl(magnitude, random, **STFT, n_iter=0), magnitude)
    assert pghi < 0.2 and pghi < chance / 4, (pghi, chance)


@pytest.mark.parametrize("n_iter", [8, 16])
def test_pghi_then_fast_griffin_lim_beats_griffin_lim_from_random_phase(harmonic, n_iter):
    magnitude = stft(harmonic).abs()
    phase = torch.from_numpy(pghi_phase(log_of(magnitude), **STFT))
    ours = convergence(gl(magnitude, phase, **STFT, n_iter=n_iter), magnitude)
    torch.manual_seed(0)
    griffin_lim = torchaudio.transforms.GriffinLim(
        n_fft=N_FFT, hop_length=HOP, win_length=N_FFT, power=1.0, n_iter=n_iter, momentum=0.99, rand_init=True
    )
    theirs = convergence(griffin_lim(magnitude.float()), magnitude)
    assert ours < 0.7 * theirs, (ours, theirs)


def test_pghi_is_deterministic_and_its_seed_reaches_only_the_quiet_coefficients(harmonic):
    log_magnitude = log_of(stft(harmonic).abs())
    first, again = pghi_phase(log_magnitude, **STFT), pghi_phase(log_magnitude, **STFT)
    np.testing.assert_array_equal(first, again)
    assert first.shape == log_magnitude.shape and first.dtype == np.float64
    other_seed = pghi_phase(log_magnitude, **STFT, seed=1)
    quiet = log_magnitude < log_magnitude.max() - 10.0
    assert quiet.any() and (~quiet).any()
    np.testing.assert_array_equal(first[~quiet], other_seed[~quiet])
    assert not np.array_equal(first[quiet], other_seed[quiet])


@pytest.mark.parametrize("bin_", [21.0, 21.3, 20.0])
def test_the_phase_follows_torch_stfts_convention(bin_):
    # A tone under a Gaussian envelope, in cosine phase at the envelope's peak: PGHI starts from the
    # loudest coefficient with phase 0 (window-centred), which is this tone's true phase there. An odd
    # bin catches a phase referenced to the wrong point of the frame (off by pi per bin: the tone
    # comes back inverted), a fractional one the integration across bins and frames.
    n, centre = 80 * HOP, 40 * HOP
    t = np.arange(n)
    tone = torch.from_numpy(
        0.5 * np.exp(-(((t - centre) / 2500.0) ** 2)) * np.cos(2 * np.pi * bin_ * SR / N_FFT * (t - centre) / SR)
    )
    magnitude = stft(tone).abs()
    rebuilt = gl(magnitude, torch.from_numpy(pghi_phase(log_of(magnitude), **STFT)), **STFT, n_iter=0)
    assert rebuilt.shape == (n,)
    correlation = float(torch.dot(tone, rebuilt) / (tone.norm() * rebuilt.norm()))
    assert correlation > 0.9, correlation


def test_fast_griffin_lim_length_and_dtype():
    magnitude = torch.rand(N_FFT // 2 + 1, 12, dtype=torch.float32)
    phase = torch.zeros_like(magnitude)
    audio = gl(magnitude, phase, **STFT, n_iter=2)
    assert audio.shape == (11 * HOP,) and audio.dtype == torch.float32 and torch.isfinite(audio).all()
    assert gl(magnitude, phase, **STFT, n_iter=0, length=1000).shape == (1000,)


def torch_fast_griffin_lim(magnitude: torch.Tensor, phase: torch.Tensor, n_iter: int, momentum: float) -> torch.Tensor:
    """Fast Griffin-Lim (Perraudin et al. 2013) written plainly on torch.stft: the reference."""
    spectrum = torch.polar(magnitude, phase)
    previous = torch.zeros_like(spectrum)
    length = (magnitude.shape[1] - 1) * HOP
    for _ in range(n_iter):
        rebuilt = stft(torch.istft(spectrum, N_FFT, HOP, N_FFT, WINDOW, length=length))
        angles = rebuilt - momentum / (1 + momentum) * previous
        previous = rebuilt
        spectrum = magnitude * angles / angles.abs().clamp_min(1e-300)
    return torch.istft(spectrum, N_FFT, HOP, N_FFT, WINDOW, length=length)


@pytest.mark.parametrize("n_iter", [0, 1, 5])
def test_fast_griffin_lim_equals_a_plain_torch_implementation(harmonic, n_iter):
    magnitude = stft(harmonic).abs()
    phase = torch.from_numpy(np.random.default_rng(1).uniform(-np.pi, np.pi, tuple(magnitude.shape)))
    expected = torch_fast_griffin_lim(magnitude, phase, n_iter, 0.99)
    got = gl(magnitude, phase, **STFT, n_iter=n_iter, momentum=0.99)
    assert got.dtype == torch.float64 and got.shape == expected.shape
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-9 * float(expected.abs().max()))


# ---------------------------------------------------------------- the compiled heap loop against the Python one


def both_backends(log_magnitude: np.ndarray, **kwargs) -> tuple[np.ndarray, np.ndarray]:
    settings = {**STFT, **kwargs}
    return pghi_phase(log_magnitude, **settings, backend="numba"), pghi_phase(
        log_magnitude, **settings, backend="python"
    )


def test_compiled_pghi_equals_the_python_reference_on_a_harmonic_signal(harmonic):
    log_magnitude = log_of(stft(harmonic).abs())
    compiled, reference = both_backends(log_magnitude)
    integrated = log_magnitude >= log_magnitude.max() - 10.0
    assert integrated.sum() > 1000  # the heap did real work, not only the random fill
    np.testing.assert_array_equal(compiled, reference)


@pytest.mark.parametrize("case", ["one frame", "two frames", "all equal", "islands"])
def test_compiled_pghi_equals_the_python_reference_on_edge_cases(case):
    rng = np.random.default_rng(3)
    bins = N_FFT // 2 + 1
    log_magnitude = {
        "one frame": rng.normal(size=(bins, 1)),
        "two frames": rng.normal(size=(bins, 2)),
        # every coefficient ties: the order comes from the tie-break alone
        "all equal": np.full((bins, 7), -2.5),
        # loud specks in silence: the heap runs empty and restarts many times
        "islands": np.where(rng.random((bins, 40)) < 0.05, 0.0, -30.0) + rng.normal(size=(bins, 40)),
    }[case]
    compiled, reference = both_backends(log_magnitude)
    assert compiled.shape == log_magnitude.shape and np.isfinite(compiled).all()
    np.testing.assert_array_equal(compiled, reference)


@pytest.mark.parametrize("tolerance", [0.0, -1.0])
def test_compiled_pghi_equals_the_python_reference_when_the_tolerance_cuts_everything(harmonic, tolerance):
    # 0: only the loudest coefficient is integrated (a region of one); below 0: none, all random phase.
    log_magnitude = log_of(stft(harmonic).abs())
    compiled, reference = both_backends(log_magnitude, tolerance=tolerance)
    np.testing.assert_array_equal(compiled, reference)
    random_only = pghi_phase(log_magnitude, **STFT, tolerance=tolerance, seed=1)
    changed = compiled != random_only
    assert changed.sum() >= log_magnitude.size - (1 if tolerance == 0.0 else 0)


def test_unknown_pghi_backend_is_refused():
    with pytest.raises(ValueError, match="backend 'cython'"):
        pghi_phase(np.zeros((N_FFT // 2 + 1, 3)), **STFT, backend="cython")


def test_warm_up_compiles_the_kernel_the_default_backend_calls(harmonic):
    warm_up_pghi()
    compiled = phase_module._compiled_integrate()
    assert len(compiled.signatures) == 1  # the tiny warm-up call compiled for the types a real call passes
    pghi_phase(log_of(stft(harmonic).abs()), **STFT)
    assert len(compiled.signatures) == 1  # ...so the real call compiled nothing new


def test_without_numba_the_default_backend_is_the_python_loop(harmonic, monkeypatch):
    # The runtime's [onnx] extra installs no numba: PGHI then runs its Python loop, same phase.
    log_magnitude = log_of(stft(harmonic).abs())[:, :20]
    monkeypatch.setattr(phase_module, "_numba_available", lambda: False)
    monkeypatch.setattr(phase_module, "_compiled_integrate", lambda: pytest.fail("numba's kernel was called"))
    np.testing.assert_array_equal(
        pghi_phase(log_magnitude, **STFT), pghi_phase(log_magnitude, **STFT, backend="python")
    )
