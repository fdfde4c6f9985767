"""benchmarks/bench_speed.py's CPU vocoder for ``rtf_cpu``: the spectral vocoder at
``conf/vocoder/cpu_small.yaml``'s sizes when no file is given, a trained file's own weights when one
is, and a file that does not load ends the run in one line, exit 2, before any model is built."""

from __future__ import annotations

from pathlib import Path
import sys

import numpy as np
import torch
import yaml

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders.checkpoint import save_vocoder_checkpoint, vocoder_payload
from gst_tts.audio.vocoders.spectral import MagnitudeEstimator, SpectralVocoder

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_speed  # noqa: E402
from common import cpu_vocoder  # noqa: E402

CONFIG = AudioConfig()


def mel(frames: int = 40) -> np.ndarray:
    return np.random.default_rng(0).normal(-6.0, 1.5, size=(frames, CONFIG.n_mels)).astype(np.float32)


def test_without_a_file_it_is_the_cpu_small_spectral_vocoder_untrained():
    preset = yaml.safe_load((ROOT / "conf" / "vocoder" / "cpu_small.yaml").read_text())
    vocoder, what = cpu_vocoder(None, audio_config=CONFIG, seed=0)
    assert isinstance(vocoder, SpectralVocoder) and "UNTRAINED" in what
    estimator = vocoder.estimator
    assert preset["generator_kind"] == "spectral"
    assert estimator.input_conv.out_channels == preset["generator"]["channels"]
    assert estimator.input_conv.kernel_size == (preset["generator"]["kernel_size"],)
    assert [block.dilation[0] for block in estimator.blocks] == list(preset["generator"]["dilations"])
    assert estimator.pitch_head == preset["generator"]["pitch_head"]
    audio = vocoder(mel())
    assert audio.shape == (39 * CONFIG.hop_length,) and audio.dtype == np.float32 and np.abs(audio).max() > 0
    again, _ = cpu_vocoder(None, audio_config=CONFIG, seed=0)
    for (name, a), (_, b) in zip(estimator.state_dict().items(), again.estimator.state_dict().items()):
        assert torch.equal(a, b), name  # seeded: the same weights every run


def test_a_trained_file_is_loaded_with_its_own_weights(tmp_path):
    sizes = dict(
        sample_rate=22050, n_fft=1024, n_mels=80, fmin=0.0, fmax=8000.0, channels=16, kernel_size=3, dilations=[1, 2]
    )
    torch.manual_seed(1)
    estimator = MagnitudeEstimator(**sizes)
    torch.nn.init.normal_(estimator.output_conv.weight, std=0.05)  # not the untrained pseudo-inverse
    path = save_vocoder_checkpoint(
        tmp_path / "generator.pt",
        vocoder_payload(
            generator_state=estimator.state_dict(),
            generator_config=sizes,
            audio_config=CONFIG,
            generator_kind="spectral",
        ),
    )
    vocoder, what = cpu_vocoder(path, audio_config=CONFIG, seed=0)
    assert str(path) in what and "UNTRAINED" not in what
    assert torch.equal(vocoder.estimator.output_conv.weight, estimator.output_conv.weight)
    expected = SpectralVocoder(estimator, audio_config=CONFIG)(mel())
    np.testing.assert_array_equal(vocoder(mel()), expected)


def test_a_vocoder_file_that_does_not_load_is_one_line_and_exit_2(tmp_path, capsys):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    assert bench_speed.main(["--vocoder", str(junk), "--quick", "--threads", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(junk) in err
