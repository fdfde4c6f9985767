"""DecodingConfig: the one source of decoding defaults, validated with one-line errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gst_tts.errors import GstTtsError
from gst_tts.inference.decoding import DecodingConfig


def test_defaults():
    d = DecodingConfig()
    assert (d.stop_threshold, d.max_frames_per_symbol, d.max_decoder_steps) == (0.5, 20.0, 1000)
    assert d.to_dict() == {"stop_threshold": 0.5, "max_frames_per_symbol": 20.0, "max_decoder_steps": 1000,
                           "attention_window": None, "stop_end_tolerance": 3}
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.stop_threshold = 0.9  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, message", [
    (dict(stop_threshold=0.0), "stop_threshold must be in (0, 1], got 0.0"),
    (dict(stop_threshold=1.5), "stop_threshold must be in (0, 1]"),
    (dict(stop_threshold=float("nan")), "stop_threshold must be a finite number"),
    (dict(stop_threshold="0.5"), "stop_threshold must be a finite number"),
    (dict(max_frames_per_symbol=0), "max_frames_per_symbol must be positive"),
    (dict(max_frames_per_symbol=float("inf")), "max_frames_per_symbol must be a finite number"),
    (dict(max_decoder_steps=0), "max_decoder_steps must be a whole number >= 1, got 0"),
    (dict(max_decoder_steps=2.5), "max_decoder_steps must be a whole number"),
    (dict(max_decoder_steps=True), "max_decoder_steps must be a whole number"),
])
def test_bad_values_are_one_line_errors(kwargs, message):
    with pytest.raises(GstTtsError) as info:
        DecodingConfig(**kwargs)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_edges_that_are_allowed():
    assert DecodingConfig(stop_threshold=1.0).stop_threshold == 1.0  # never stops on the token: timing runs
    assert DecodingConfig(max_decoder_steps=np.int64(3), max_frames_per_symbol=1).max_decoder_steps == 3


def test_attention_window_is_a_pair_of_whole_numbers_or_none():
    assert DecodingConfig().attention_window is None
    assert DecodingConfig(attention_window=(1, 3)).to_dict()["attention_window"] == [1, 3]  # JSON-ready
    # A sidecar's list reads back as the same config.
    assert DecodingConfig(**DecodingConfig(attention_window=(1, 3)).to_dict()) == DecodingConfig(attention_window=(1, 3))
    for bad in [(1,), (1, -1), (1.5, 2), (True, 2), "1,3", 3]:
        with pytest.raises(GstTtsError, match=r"^attention_window must be None or \(behind, ahead\)"):
            DecodingConfig(attention_window=bad)


def test_stop_end_tolerance_is_a_whole_number_or_none():
    assert DecodingConfig(stop_end_tolerance=None).stop_end_tolerance is None
    assert DecodingConfig(stop_end_tolerance=np.int64(0)).stop_end_tolerance == 0
    for bad in [-1, 1.5, True, "3"]:
        with pytest.raises(GstTtsError, match=r"^stop_end_tolerance must be None or a whole number >= 0"):
            DecodingConfig(stop_end_tolerance=bad)
