import numpy as np
import pytest

from gst_tts.analysis.parallel_prosody import dtw_path, mcd_dtw, pitch_errors
from gst_tts.analysis.prosody import f0_track

RATE = 22050


def _log_mel(frames: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(frames, 80))


def test_identical_log_mels_have_zero_mcd_on_the_diagonal():
    mel = _log_mel(30)
    mcd, path = mcd_dtw(mel, mel)
    assert mcd == pytest.approx(0.0, abs=1e-6)
    assert np.array_equal(path, np.stack([np.arange(30)] * 2, axis=1))


def test_dtw_recovers_a_time_stretched_copy():
    mel = _log_mel(40)
    stretched = np.repeat(mel, 2, axis=0)  # every frame held twice
    mcd, path = mcd_dtw(mel, stretched)
    assert mcd == pytest.approx(0.0, abs=1e-6)
    assert np.array_equal(path[:, 0], np.arange(80) // 2)
    # the measure is not trivially 0: an unrelated log-mel is far off
    assert mcd_dtw(mel, _log_mel(40, seed=1))[0] > 1.0


def test_dtw_path_is_monotonic_and_spans_both_ends():
    path = dtw_path(np.random.default_rng(2).random((7, 11)))
    assert tuple(path[0]) == (0, 0) and tuple(path[-1]) == (6, 10)
    steps = np.diff(path, axis=0)
    assert np.all((steps >= 0) & (steps <= 1)) and np.all(steps.sum(1) >= 1)


def _tone(hz: float, seconds: float = 0.6) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def test_an_octave_shifted_tone_is_all_gross_pitch_errors():
    f0_a, v_a = f0_track(_tone(150.0), RATE)
    f0_b, v_b = f0_track(_tone(300.0), RATE)
    path = np.stack([np.arange(len(f0_a))] * 2, axis=1)
    errors = pitch_errors(f0_a, v_a, f0_b, v_b, path)
    assert errors.gpe == pytest.approx(1.0)
    assert errors.f0_rmse_cents == pytest.approx(1200.0, abs=25.0)  # an octave
    assert pitch_errors(f0_a, v_a, f0_a, v_a, path).ffe == 0.0


def test_voicing_errors_count_over_all_frames_gross_errors_over_both_voiced():
    n = 20
    f0 = np.full(n, 200.0)
    voiced_ref = np.ones(n, bool)
    voiced_out = np.r_[np.ones(15, bool), np.zeros(5, bool)]  # last quarter unvoiced
    f0_out = f0.copy()
    f0_out[:3] = 250.0  # 25 % off: gross
    f0_out[3:6] = 230.0  # 15 % off: fine
    path = np.stack([np.arange(n)] * 2, axis=1)
    errors = pitch_errors(f0, voiced_ref, f0_out, voiced_out, path)
    assert errors.vde == pytest.approx(5 / 20)
    assert errors.gpe == pytest.approx(3 / 15)
    assert errors.ffe == pytest.approx(8 / 20)
    assert errors.n_pairs == n
    # 3 pairs at +25 %, 3 at +15 %, 9 exact, over the 15 voiced in both
    cents = 1200 * np.log2([1.25] * 3 + [1.15] * 3 + [1.0] * 9)
    assert errors.f0_rmse_cents == pytest.approx(float(np.sqrt(np.mean(cents**2))))


def test_no_frames_give_nan():
    assert np.isnan(mcd_dtw(np.zeros((0, 80)), _log_mel(5))[0])
    assert np.isnan(
        pitch_errors(np.zeros(0), np.zeros(0, bool), np.zeros(3), np.ones(3, bool), np.zeros((0, 2), int)).ffe
    )
