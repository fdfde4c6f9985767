"""Dial names (gst_tts.inference.dial_names): a dial is named by the changes probe-tokens measured
that reach their thresholds, the larger first; the file beside a checkpoint round-trips and a bad
one is refused in one line naming it."""

from __future__ import annotations

import json

import pytest

from gst_tts.errors import GstTtsError
from gst_tts.inference.dial_names import (
    NO_EFFECT,
    UNSTABLE,
    dial_name,
    dials_path,
    named_dials,
    read_dials,
    write_dials,
)


@pytest.mark.parametrize(
    "d_f0, rate, energy, expected",
    [
        (2.5, 1.0, 0.0, "higher pitch"),
        (-1.2, 0.80, 0.0, "slower, lower pitch"),  # log(0.8) / log(1.08) = 2.9 > 1.2: rate first
        (0.3, 1.20, 3.5, "faster, louder"),
        (0.9, 1.07, -1.4, NO_EFFECT),  # each just under its threshold
        (-4.0, 1.5, -7.5, "faster, softer"),  # two at most: rate 5.3 and energy 5.0 thresholds outrank pitch's 4.0
        (None, None, None, NO_EFFECT),
    ],
)
def test_a_dial_is_named_by_its_largest_changes(d_f0, rate, energy, expected):
    assert dial_name(d_f0, rate, energy) == expected


def test_a_dial_that_runs_on_is_unstable_whatever_it_measured():
    assert dial_name(5.0, 2.0, 10.0, stopped_on_bound=True) == UNSTABLE


def probe_rows() -> list[dict]:
    def row(head, token, scale, d_f0, rate, energy, bound=False):
        return {
            "head": head,
            "token": token,
            "scale": scale,
            "d_f0_semitones": d_f0,
            "rate_ratio": rate,
            "d_energy_db": energy,
            "stopped_on_bound": bound,
        }

    return [
        row("", "neutral", "", 0.0, 1.0, 0.0),
        row("0", "1", "0.5", -1.0, 1.0, 0.0),
        row("0", "1", "1", -3.0, 1.0, 0.0),
        row("1", "2", "0.5", 0.2, 1.05, 0.0),
        row("1", "2", "1", 0.5, 1.30, 0.0),
        row("1", "3", "1", 0.1, 1.01, float("nan")),
        row("2", "0", "1", 9.0, 0.5, 9.0, True),
    ]


def test_named_dials_take_the_amount_asked_strongest_first():
    dials = named_dials(probe_rows(), 1.0)
    assert [(d.head, d.token, d.name) for d in dials] == [
        (1, 2, "faster"),
        (0, 1, "lower pitch"),
        (1, 3, NO_EFFECT),
        (2, 0, UNSTABLE),
    ]
    assert dials[2].d_energy_db is None and dials[0].amount == 1.0 and dials[-1].effect == 0.0
    assert [(d.head, d.token) for d in named_dials(probe_rows(), 0.5)] == [(0, 1), (1, 2)]


def test_the_file_beside_a_checkpoint_round_trips(tmp_path):
    path = dials_path(tmp_path / "best.pt")
    assert path == tmp_path / "best.dials.json"
    dials = named_dials(probe_rows(), 1.0)
    write_dials(path, dials, checkpoint=tmp_path / "best.pt", sentence="A probe.", repeats=1, seed=0)
    assert read_dials(path, n_heads=3, n_tokens=4) == dials


@pytest.mark.parametrize(
    "content, message",
    [
        ("not json", "not a readable dials file"),
        (json.dumps({"format": "something else", "dials": []}), "not a gst-tts style dials file"),
        (json.dumps({"format": "gst-tts style dials", "dials": [{"head": 0}]}), "dial 0 is not"),
        (
            json.dumps(
                {
                    "format": "gst-tts style dials",
                    "dials": [
                        {
                            "head": 5,
                            "token": 0,
                            "name": "x",
                            "amount": 1,
                            "d_f0_semitones": 0,
                            "rate_ratio": 1,
                            "d_energy_db": 0,
                        }
                    ],
                }
            ),
            "dial 0 is head 5 token 0, but the model has 3 heads",
        ),
    ],
)
def test_a_bad_dials_file_is_one_line_naming_it(tmp_path, content, message):
    path = tmp_path / "best.dials.json"
    path.write_text(content)
    with pytest.raises(GstTtsError, match=message) as info:
        read_dials(path, n_heads=3, n_tokens=4)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
