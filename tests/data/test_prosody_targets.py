"""prosody.csv reading (file:line errors) and the standardised prosody targets."""

from __future__ import annotations

import math

import pytest
import torch

from gst_tts.data.prosody import ProsodyTargets, prosody_spec, read_prosody
from gst_tts.errors import DataError, GstTtsError

IDS = ["A", "B", "C"]


def _write(tmp_path, *lines: str):
    path = tmp_path / "prosody.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _error(path, ids=IDS, columns=("f0_hz", "rate")) -> str:
    with pytest.raises(DataError) as info:
        read_prosody(path, ids, columns)
    return str(info.value)


def test_reads_the_named_columns_in_order(tmp_path):
    path = _write(tmp_path, "id,label,rate,f0_hz", "A,x,10,100", "", "B,y,12.5,200", "C,z,9,150")
    rows = read_prosody(path, IDS, ("f0_hz", "rate"))
    assert rows == {"A": (100.0, 10.0), "B": (200.0, 12.5), "C": (150.0, 9.0)}


@pytest.mark.parametrize(
    "lines, expected",
    [
        (("id,f0_hz", "A,100"), "prosody.csv:1: header has no column 'rate'"),
        (("id,f0_hz,rate", "A,100,10", "B,abc,11", "C,1,1"), "prosody.csv:3: f0_hz must be a finite number, got 'abc'"),
        (("id,f0_hz,rate", "A,100,10", "B,nan,11"), "prosody.csv:3: f0_hz must be a finite number"),
        (("id,f0_hz,rate", "A,100,10", "Z,100,11"), "prosody.csv:3: id 'Z' is not in the corpus's metadata.csv"),
        (("id,f0_hz,rate", "A,100,10", "A,100,11"), "prosody.csv:3: duplicate id 'A'"),
        (("id,f0_hz,rate", "A,100,10", "B,100"), "prosody.csv:3: expected 3 columns, got 2"),
        (("id,f0_hz,rate", "A,100,10", "C,100,12"), "no row for 1 utterance(s) of metadata.csv, first 'B'"),
    ],
)
def test_bad_files_name_the_line_and_value(tmp_path, lines, expected):
    assert expected in _error(_write(tmp_path, *lines))


def test_a_missing_file_says_how_to_train_without(tmp_path):
    assert "data.prosody=null" in _error(tmp_path / "prosody.csv")


def test_spec_checks_transforms():
    assert prosody_spec({"f0_hz": "log", "word_gap": "linear"}) == (("f0_hz", "word_gap"), ("log", "linear"))
    assert prosody_spec(None) == ((), ())
    with pytest.raises(GstTtsError, match="data.prosody.f0_hz: transform must be one of log, linear, got 'sqrt'"):
        prosody_spec({"f0_hz": "sqrt"})
    with pytest.raises(GstTtsError, match="'id' is the key column"):
        prosody_spec({"id": "linear"})


def test_targets_are_standardised_over_the_training_rows():
    rows = [(100.0, 2.0), (200.0, 4.0), (400.0, 9.0)]
    targets = ProsodyTargets.fit(("f0_hz", "gap"), ("log", "linear"), rows)
    encoded = torch.stack([targets.encode(r) for r in rows])
    assert encoded.dtype == torch.float32
    assert torch.allclose(encoded.mean(0), torch.zeros(2), atol=1e-6)
    assert torch.allclose(encoded.std(0, unbiased=False), torch.ones(2), atol=1e-5)
    # log: equal ratios are equal steps (100 -> 200 -> 400).
    assert math.isclose(float(encoded[1, 0] - encoded[0, 0]), float(encoded[2, 0] - encoded[1, 0]), rel_tol=1e-5)
    # linear: equal differences are equal steps, so 2 -> 4 is smaller than 4 -> 9.
    assert float(encoded[1, 1] - encoded[0, 1]) < float(encoded[2, 1] - encoded[1, 1])


def test_targets_refuse_log_of_non_positive_and_constant_columns():
    with pytest.raises(DataError, match="f0_hz is log-transformed .* values <= 0"):
        ProsodyTargets.fit(("f0_hz",), ("log",), [(0.0,), (1.0,)])
    with pytest.raises(DataError, match="gap has the same value for every training utterance"):
        ProsodyTargets.fit(("gap",), ("linear",), [(3.0,), (3.0,)])
