"""``gst-tts plot-alignment``, ``plot-style`` and ``probe-tokens`` in-process on a tiny random model."""

from __future__ import annotations

import csv
import json
import shutil

from PIL import Image
from conftest import seconds_for_steps, tone
import numpy as np
import pytest
import soundfile as sf

from gst_tts.cli import main, probe_tokens
from gst_tts.inference.dial_names import read_dials

FAST = ["--max-seconds", str(seconds_for_steps(8))]


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc: int, err: str, command: str) -> None:
    assert rc == 2
    assert err.startswith(f"gst-tts {command}: error:") and err.count("\n") == 1 and "Traceback" not in err, err


def image_size(path) -> tuple[int, int]:
    with Image.open(path) as im:
        return im.size


@pytest.fixture
def refs(tmp_path):
    a, b = tmp_path / "calm.wav", tmp_path / "loud.wav"
    sf.write(a, tone(1.0, 16000, 150.0, 0.2), 16000)
    sf.write(b, np.stack([tone(1.5, 44100, 300.0, 0.9)] * 2, 1), 44100)
    return a, b


# ------------------------------------------------------------------ plot-alignment


def test_plot_alignment_from_checkpoint_and_text(tiny_checkpoint, tmp_path, capsys, refs):
    out = tmp_path / "fig.png"
    rc, stdout, err = run(
        capsys,
        "plot-alignment",
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Hello world.",
        "--reference",
        str(refs[0]),
        "--seed",
        "0",
        "--out",
        str(out),
        *FAST,
    )
    assert rc == 0, err
    w, h = image_size(out)
    assert h > w * 0.6  # three stacked panels: attention, stop token, mel
    assert "coverage" in stdout and "wrote" in stdout


def test_plot_alignment_from_saved_npy_uses_the_sidecar(tiny_checkpoint, tmp_path, capsys):
    wav = tmp_path / "s" / "utt.wav"
    assert (
        run(
            capsys,
            "synthesize",
            "--checkpoint",
            str(tiny_checkpoint),
            "--text",
            "Saved alignment.",
            "--out",
            str(wav),
            "--save-alignment",
            "--griffin-lim-iters",
            "2",
            *FAST,
        )[0]
        == 0
    )
    npy = tmp_path / "s" / "utt.alignment.npy"
    out = tmp_path / "from_npy.png"
    rc, stdout, err = run(capsys, "plot-alignment", "--alignment", str(npy), "--out", str(out))
    assert rc == 0, err
    assert out.is_file() and image_size(out)[0] > 0
    side = json.loads((tmp_path / "s" / "utt.json").read_text())
    assert len(side["input_symbols"]) == np.load(npy).shape[1]  # labels available to the plot
    # Health printed for the saved alignment matches the sidecar's.
    assert f"coverage {side['health']['coverage']:.0%}" in stdout

    # Without a sidecar, the bare alignment is still plotted.
    bare = tmp_path / "bare.npy"
    np.save(bare, np.eye(6, 4, dtype=np.float32))
    assert run(capsys, "plot-alignment", "--alignment", str(bare), "--out", str(tmp_path / "bare.png"))[0] == 0


@pytest.mark.parametrize("kind", ["random bytes", "pickled object array", "1-D array", "missing", "neither input"])
def test_plot_alignment_bad_input(kind, tiny_checkpoint, tmp_path, capsys):
    npy = tmp_path / "bad.npy"
    if kind == "random bytes":
        npy.write_bytes(b"\x00garbage" * 50)
    elif kind == "pickled object array":
        np.save(npy, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    elif kind == "1-D array":
        np.save(npy, np.zeros(5, dtype=np.float32))
    args = ["--alignment", str(npy)] if kind != "neither input" else []
    out = tmp_path / "fig.png"
    rc, _, err = run(capsys, "plot-alignment", *args, "--out", str(out))
    assert_one_line_error(rc, err, "plot-alignment")
    assert not out.exists()


# ------------------------------------------------------------------ plot-style


def test_plot_style_heatmap_and_csv(tiny_checkpoint, tmp_path, capsys, refs):
    out, table = tmp_path / "style.png", tmp_path / "style.csv"
    rc, stdout, err = run(
        capsys,
        "plot-style",
        "--checkpoint",
        str(tiny_checkpoint),
        "--references",
        str(refs[0]),
        str(refs[1]),
        "--out",
        str(out),
        "--csv",
        str(table),
    )
    assert rc == 0, err
    assert out.is_file()
    rows = list(csv.reader(table.open()))
    assert rows[0] == ["reference", "head", "token_0", "token_1", "token_2", "token_3", "token_4"]
    assert [r[:2] for r in rows[1:]] == [["calm", "0"], ["calm", "1"], ["loud", "0"], ["loud", "1"]]
    for r in rows[1:]:
        assert sum(float(x) for x in r[2:]) == pytest.approx(1.0, abs=1e-4)  # softmax over tokens per head
    assert "calm" in stdout and "loud" in stdout


def test_plot_style_bad_reference_writes_nothing(tiny_checkpoint, tmp_path, capsys, refs):
    short = tmp_path / "short.wav"
    sf.write(short, tone(0.2), 22050)
    out, table = tmp_path / "style.png", tmp_path / "style.csv"
    rc, _, err = run(
        capsys,
        "plot-style",
        "--checkpoint",
        str(tiny_checkpoint),
        "--references",
        str(refs[0]),
        str(short),
        "--out",
        str(out),
        "--csv",
        str(table),
    )
    assert_one_line_error(rc, err, "plot-style")
    assert "short.wav" in err and not out.exists() and not table.exists()


# ------------------------------------------------------------------ probe-tokens


def test_probe_tokens_table_and_csv(tiny_checkpoint, tmp_path, capsys):
    table = tmp_path / "tokens.csv"
    rc, stdout, err = run(
        capsys,
        "probe-tokens",
        "--checkpoint",
        str(tiny_checkpoint),
        "--scales",
        "0.5,2",
        "--text",
        "A short probe.",
        "--griffin-lim-iters",
        "2",
        "--csv",
        str(table),
        *FAST,
    )
    assert rc == 0, err
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 1 + 2 * 5 * 2  # neutral + every head's dial of every token at every scale
    assert (
        rows[0]["token"] == "neutral" and float(rows[0]["rate_ratio"]) == 1.0 and float(rows[0]["d_energy_db"]) == 0.0
    )
    assert [(r["head"], r["token"], r["scale"]) for r in rows[1:3]] == [("0", "0", "0.5"), ("0", "0", "2")]
    assert [(r["head"], r["token"]) for r in rows[-2:]] == [("1", "4"), ("1", "4")]
    for r in rows:
        assert float(r["rate_letters_per_s"]) > 0 and np.isfinite(float(r["energy_db"]))
    # The random model mostly never stops: flagged, not hidden.
    n_bound = sum(r["stopped_on_bound"] == "True" for r in rows)
    assert n_bound >= 10
    lines = stdout.strip().splitlines()
    assert "ΔF0 st" in lines[0] and "rate" in lines[0] and "energy" in lines[0]
    assert len(lines) == 1 + 21 + 1 + 2 and f"{n_bound} stopped on the step bound" in lines[-3]
    assert lines[-2].startswith("pitch: ") and lines[-1].startswith("rate: ")


def test_probe_tokens_weight_control_is_the_token_alone_in_every_head(tiny_checkpoint, tmp_path, capsys):
    table = tmp_path / "tokens.csv"
    rc, _, err = run(
        capsys,
        "probe-tokens",
        "--checkpoint",
        str(tiny_checkpoint),
        "--control",
        "weight",
        "--scales",
        "1",
        "--tokens",
        "0,3",
        "--text",
        "A probe.",
        "--griffin-lim-iters",
        "2",
        "--csv",
        str(table),
        *FAST,
    )
    assert rc == 0, err
    rows = list(csv.DictReader(table.open()))
    assert [(r["head"], r["token"], r["scale"]) for r in rows] == [
        ("", "neutral", ""),
        ("all", "0", "1"),
        ("all", "3", "1"),
    ]


def test_probe_tokens_saves_dial_names_beside_the_checkpoint(tiny_checkpoint, tmp_path, capsys):
    checkpoint = tmp_path / "model.pt"
    shutil.copy(tiny_checkpoint, checkpoint)
    rc, stdout, err = run(
        capsys,
        "probe-tokens",
        "--checkpoint",
        str(checkpoint),
        "--scales",
        "0.5,2",
        "--tokens",
        "0,3",
        "--text",
        "A probe.",
        "--griffin-lim-iters",
        "2",
        "--save-dials",
        *FAST,
    )
    assert rc == 0, err
    saved = json.loads((tmp_path / "model.dials.json").read_text())
    assert saved["format"] == "gst-tts style dials" and saved["sentence"] == "A probe."
    # Every head's dial of each probed token, named at the largest scale under 1 (no 1 was probed).
    assert sorted((d["head"], d["token"]) for d in saved["dials"]) == [(0, 0), (0, 3), (1, 0), (1, 3)]
    assert {d["amount"] for d in saved["dials"]} == {0.5} and all(d["name"] for d in saved["dials"])
    assert read_dials(tmp_path / "model.dials.json", n_heads=2, n_tokens=5)
    assert f"dial names (at amount 0.5): {tmp_path / 'model.dials.json'}" in stdout


def test_probe_tokens_refuses_to_name_dials_of_the_weight_control(tiny_checkpoint, tmp_path, capsys):
    checkpoint = tmp_path / "model.pt"
    shutil.copy(tiny_checkpoint, checkpoint)
    rc, _, err = run(
        capsys, "probe-tokens", "--checkpoint", str(checkpoint), "--control", "weight", "--save-dials", *FAST
    )
    assert_one_line_error(rc, err, "probe-tokens")
    assert "--save-dials" in err and not (tmp_path / "model.dials.json").exists()


def test_dials_are_named_at_one_or_the_largest_scale_under_it():
    assert [probe_tokens.dial_amount(s) for s in ([0.5, 1, 2], [0.25, 0.5, 2], [2, 3])] == [1.0, 0.5, 2]


def test_graded_controls_pick_the_monotone_control_with_the_largest_smallest_step():
    def row(head, token, scale, d_f0, rate, bound=False):
        return {
            "head": head,
            "token": token,
            "scale": scale,
            "d_f0_semitones": d_f0,
            "rate_ratio": rate,
            "stopped_on_bound": bound,
        }

    rows = [row("", "neutral", "", 0.0, 1.0)]
    # Given out of order of scale. F0: a dial (steps 2 and 3 semitones); a switch (0.1, 9) with the wider range.
    rows += [row("0", "1", s, f, r) for s, f, r in (("1", -3.0, 0.9), ("0.5", -1.0, 0.95), ("2", -6.0, 0.98))]
    rows += [row("1", "2", s, f, r) for s, f, r in (("1", 8.1, 1.2), ("0.5", 8.0, 1.1), ("2", 17.0, 1.5))]
    rows += [
        row("1", "3", s, f, r) for s, f, r in (("1", 4.0, 0.45), ("0.5", 3.0, 0.6), ("2", -8.0, 0.3))
    ]  # F0 not monotone
    rows += [
        row("2", "0", s, f, r, True) for s, f, r in (("1", 20.0, 0.2), ("0.5", 10.0, 0.6), ("2", 30.0, 0.1))
    ]  # bound
    pitch, rate = probe_tokens.graded_controls(rows, [1.0, 0.5, 2.0])
    assert pitch == "pitch: most graded control is head 0 token 1: -1.0, -3.0, -6.0 semitones at scales 0.5, 1, 2"
    # Rate: head 1 token 3 (steps ×0.75, ×0.67) beats head 1 token 2 (×1.09, ×1.25); head 0 token 1 is not monotone.
    assert rate == "rate: most graded control is head 1 token 3: 0.60, 0.45, 0.30 × neutral at scales 0.5, 1, 2"


@pytest.mark.parametrize(
    "args, message",
    [(["--scales", "a,b"], "--scales"), (["--tokens", "7"], "--tokens"), (["--text", "@@@"], "no symbol")],
)
def test_probe_tokens_bad_input(args, message, tiny_checkpoint, tmp_path, capsys):
    table = tmp_path / "tokens.csv"
    rc, _, err = run(capsys, "probe-tokens", "--checkpoint", str(tiny_checkpoint), "--csv", str(table), *args, *FAST)
    assert_one_line_error(rc, err, "probe-tokens")
    assert message in err and not table.exists()
