"""The numpy STFT (``gst_tts.audio.stft``) against torch.stft / torch.istft: the same frames and
samples, whatever the length, window or thread count (the inverse's window sum is cached per shape)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gst_tts.audio.stft import fft_threads, hann_window, istft, stft


def torch_window(win_length: int, n_fft: int) -> torch.Tensor:
    left = (n_fft - win_length) // 2
    return torch.nn.functional.pad(
        torch.hann_window(win_length, dtype=torch.float64), (left, n_fft - win_length - left)
    )


@pytest.mark.parametrize(
    ("n_fft", "hop", "win", "samples"), [(1024, 256, 1024, 22050), (512, 128, 400, 3000), (256, 100, 256, 1777)]
)
def test_stft_and_istft_match_torch(n_fft, hop, win, samples):
    y = np.random.default_rng(samples).standard_normal(samples)
    window = hann_window(win, n_fft)
    expected = torch.stft(
        torch.from_numpy(y), n_fft, hop, window=torch_window(win, n_fft), center=True, return_complex=True
    ).T.numpy()
    got = stft(y, n_fft=n_fft, hop_length=hop, window=window)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    for length in (None, samples, samples - 37):  # different lengths back to back: each its own window sum
        back = istft(got, n_fft=n_fft, hop_length=hop, window=window, length=length)
        reference = torch.istft(
            torch.from_numpy(expected.T), n_fft, hop, window=torch_window(win, n_fft), center=True, length=length
        ).numpy()
        assert back.shape == reference.shape
        np.testing.assert_allclose(back, reference, rtol=0, atol=1e-9)


def test_threads_change_no_bit():
    y = np.random.default_rng(0).standard_normal(30000).astype(np.float32)
    window = hann_window(1024, 1024).astype(np.float32)
    one = stft(y, n_fft=1024, hop_length=256, window=window)
    with fft_threads(2):
        two = stft(y, n_fft=1024, hop_length=256, window=window)
        back_two = istft(two, n_fft=1024, hop_length=256, window=window, length=y.size)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(istft(one, n_fft=1024, hop_length=256, window=window, length=y.size), back_two)
    assert back_two.dtype == np.float32
