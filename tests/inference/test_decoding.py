"""DecodingConfig: the one source of decoding defaults, validated with one-line errors; its bound
in seconds of audio, turned into mel frames with a checkpoint's frame rate and into decoder steps
by the model."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from conftest import tiny_model
import numpy as np
import pytest
import torch
import yaml

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.errors import GstTtsError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.model import GSTTacotron
from gst_tts.text.symbols import SymbolTable

TACOTRON2 = Path(__file__).resolve().parents[2] / "conf" / "model" / "tacotron2.yaml"


def test_defaults():
    d = DecodingConfig()
    assert (d.stop_threshold, d.max_frames_per_symbol, d.max_seconds) == (0.5, 20.0, 60.0)
    assert d.to_dict() == {
        "stop_threshold": 0.5,
        "max_frames_per_symbol": 20.0,
        "max_seconds": 60.0,
        "attention_window": None,
        "stop_end_tolerance": 3,
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.stop_threshold = 0.9  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(stop_threshold=0.0), "stop_threshold must be in (0, 1], got 0.0"),
        (dict(stop_threshold=1.5), "stop_threshold must be in (0, 1]"),
        (dict(stop_threshold=float("nan")), "stop_threshold must be a finite number"),
        (dict(stop_threshold="0.5"), "stop_threshold must be a finite number"),
        (dict(max_frames_per_symbol=0), "max_frames_per_symbol must be positive"),
        (dict(max_frames_per_symbol=float("inf")), "max_frames_per_symbol must be a finite number"),
        (dict(max_seconds=0), "max_seconds must be positive, got 0"),
        (dict(max_seconds=-1.5), "max_seconds must be positive"),
        (dict(max_seconds=float("nan")), "max_seconds must be a finite number"),
        (dict(max_seconds=True), "max_seconds must be a finite number"),
    ],
)
def test_bad_values_are_one_line_errors(kwargs, message):
    with pytest.raises(GstTtsError) as info:
        DecodingConfig(**kwargs)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_edges_that_are_allowed():
    assert DecodingConfig(stop_threshold=1.0).stop_threshold == 1.0  # never stops on the token: timing runs
    assert DecodingConfig(max_seconds=np.int64(3), max_frames_per_symbol=1).max_seconds == 3
    assert DecodingConfig(max_seconds=0.001).max_frames(frames_per_second=86.1) == 1  # never a bound of no frames


def test_attention_window_is_a_pair_of_whole_numbers_or_none():
    assert DecodingConfig().attention_window is None
    assert DecodingConfig(attention_window=(1, 3)).to_dict()["attention_window"] == [1, 3]  # JSON-ready
    # A sidecar's list reads back as the same config.
    assert DecodingConfig(**DecodingConfig(attention_window=(1, 3)).to_dict()) == DecodingConfig(
        attention_window=(1, 3)
    )
    for bad in [(1,), (1, -1), (1.5, 2), (True, 2), "1,3", 3]:
        with pytest.raises(GstTtsError, match=r"^attention_window must be None or \(behind, ahead\)"):
            DecodingConfig(attention_window=bad)


def test_stop_end_tolerance_is_a_whole_number_or_none():
    assert DecodingConfig(stop_end_tolerance=None).stop_end_tolerance is None
    assert DecodingConfig(stop_end_tolerance=np.int64(0)).stop_end_tolerance == 0
    for bad in [-1, 1.5, True, "3"]:
        with pytest.raises(GstTtsError, match=r"^stop_end_tolerance must be None or a whole number >= 0"):
            DecodingConfig(stop_end_tolerance=bad)


@pytest.mark.parametrize("r", [1, 3])
def test_seconds_become_frames_at_the_checkpoints_rate_and_whole_steps_of_r(r):
    model = tiny_model(20, reduction_factor=r)
    fps = AudioConfig().frames_per_second  # 22050 / 256 = 86.13 frames a second
    frames = DecodingConfig(max_seconds=1.0).max_frames(frames_per_second=fps)
    assert frames == 87  # ceil(86.13)
    assert DecodingConfig(max_seconds=1.0).max_frames(frames_per_second=16000 / 200) == 80
    # A long text (1,000 symbols at 20 frames each) meets the absolute bound: ceil(87 / r) steps, so
    # never fewer frames than the bound asked for, and fewer than r more.
    args = DecodingConfig(max_seconds=1.0).model_arguments(frames_per_second=fps)
    steps = model.step_bounds(
        torch.tensor([1000, 3]), max_frames_per_symbol=args["max_frames_per_symbol"], max_frames=args["max_frames"]
    )
    assert steps.tolist() == [{1: 87, 3: 29}[r], {1: 60, 3: 20}[r]]  # a short text: its 20 frames a symbol
    assert 87 <= steps[0] * r < 87 + r


def test_a_180_character_chunk_of_the_tacotron2_model_may_run_for_20_seconds_and_more():
    # Tacotron 2 decodes one frame a step (r = 1): a bound of 1,000 steps was 11.6 s, shorter than
    # such a chunk read slowly. The bound comes from the Synthesizer's own per-chunk computation,
    # with random weights, decoding nothing.
    config = yaml.safe_load(TACOTRON2.read_text())
    config.pop("_target_")
    symbols, audio = SymbolTable(), AudioConfig()
    assert (config["reduction_factor"], audio.sample_rate, audio.hop_length) == (1, 22050, 256)
    torch.manual_seed(0)
    model = GSTTacotron(n_symbols=len(symbols), n_mels=audio.n_mels, **config)
    synth = Synthesizer(model, symbols, audio, MelStats(torch.zeros(audio.n_mels), torch.ones(audio.n_mels)))
    text = (
        "The committee met on a grey morning in early spring, and after a long and careful discussion it agreed "
        "that the old bridge over the river should be repaired before the next summer."
    )
    assert len(text) == 180
    frames = synth.frame_bounds(text)
    assert len(frames) == 1  # one chunk: 180 characters is the default chunk length
    assert frames[0] / audio.frames_per_second >= 20.0
    # The absolute bound in seconds still holds where it is the lower one.
    short = synth.frame_bounds(text, decoding=DecodingConfig(max_seconds=5.0))
    assert short == [DecodingConfig(max_seconds=5.0).max_frames(frames_per_second=audio.frames_per_second)]


def test_a_stored_config_from_before_max_seconds_reads_back(caplog):
    old = {
        "stop_threshold": 0.5,
        "max_frames_per_symbol": 20.0,
        "max_decoder_steps": 8,
        "attention_window": [1, 3],
        "stop_end_tolerance": 3,
    }
    # With the sidecar's seconds_per_step the old bound becomes the same length in seconds.
    converted = DecodingConfig.from_dict(old, seconds_per_step=2 * 256 / 22050)
    assert converted == DecodingConfig(max_seconds=8 * 2 * 256 / 22050, attention_window=(1, 3))
    assert converted.max_frames(frames_per_second=22050 / 256) == 16
    # Without it the old key is dropped, and a line says so; so is a key this version does not know.
    with caplog.at_level(logging.WARNING, logger="gst_tts.inference.decoding"):
        dropped = DecodingConfig.from_dict({**old, "beam_width": 4})
    assert dropped == DecodingConfig(attention_window=(1, 3))
    assert "max_decoder_steps=8" in caplog.text and "beam_width" in caplog.text
    assert DecodingConfig.from_dict(DecodingConfig(max_seconds=7.5).to_dict()) == DecodingConfig(max_seconds=7.5)
    with pytest.raises(GstTtsError, match="^decoding must be a mapping"):
        DecodingConfig.from_dict([("max_seconds", 3)])
