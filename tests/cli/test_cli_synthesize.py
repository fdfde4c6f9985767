"""``gst-tts synthesize`` in-process: outputs, numbering, seeds, long text, and every bad input.

Bad input must end as one stderr line and exit code 2, with no traceback and no file written.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
import pickle

from conftest import seconds_for_steps, tone, write_tiny_checkpoint
import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.cli import main
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.model import int8_weight
from gst_tts.checkpoints.acoustic import save_checkpoint

FAST = ["--max-seconds", str(seconds_for_steps(8)), "--griffin-lim-iters", "4"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["synthesize", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


@pytest.fixture
def refs(tmp_path) -> dict[str, Path]:
    d = tmp_path / "refs"
    d.mkdir()
    paths = {name: d / f"{name}.wav" for name in ("good", "stereo48k", "silent", "short", "text")}
    sf.write(paths["good"], tone(1.0, 16000, 200.0), 16000, subtype="PCM_16")
    sf.write(paths["stereo48k"], np.stack([tone(1.2, 48000), tone(1.2, 48000, 300.0)], 1), 48000)
    sf.write(paths["silent"], np.zeros(22050, dtype=np.float32), 22050)
    sf.write(paths["short"], tone(0.3), 22050)
    paths["text"].write_text("this is not audio\n")
    return paths


# ------------------------------------------------------------------ outputs


def test_text_writes_wav_sidecar_alignment_and_plot(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "out" / "hello.wav"
    rc, stdout, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Hello world.",
        "--out",
        str(out),
        "--plot",
        "--save-alignment",
        "--seed",
        "1",
        *FAST,
    )
    assert rc == 0, err
    names = sorted(p.name for p in files_under(out.parent))
    assert names == ["hello.alignment.npy", "hello.alignment.png", "hello.json", "hello.wav"]  # no temp files left
    audio, rate = sf.read(out)
    assert rate == 22050 and audio.size > 0
    side = json.loads((out.parent / "hello.json").read_text())
    assert side["text"] == "Hello world." and side["cleaned_text"] == "hello world."
    assert side["stop_reason"] == "max_steps" and side["n_frames"] == 16
    assert side["duration_s"] == pytest.approx(audio.size / rate, abs=1e-3)
    assert np.asarray(side["style_weights"]).shape == (2, 5)
    assert {"focus", "coverage", "backward_jumps", "reached_end"} <= side["health"].keys()
    assert len(side["chunks"]) == 1 and side["style"]["source"] == "neutral" and side["seed"] == 1
    assert side["decoding"] == {
        "stop_threshold": 0.5,
        "max_frames_per_symbol": 20.0,
        "max_seconds": seconds_for_steps(8),
        "attention_window": None,
        "stop_end_tolerance": 3,
    }
    alignment = np.load(out.parent / "hello.alignment.npy")
    assert alignment.dtype == np.float32 and alignment.shape == (8, len("hello world.") + 1)
    assert "1 stopped on the step bound" in stdout


def test_text_file_numbered_by_line_with_progress_and_summary(tiny_checkpoint, tmp_path, capsys, caplog):
    lines = tmp_path / "lines.txt"
    lines.write_text("First line.\n\nThird line, after a blank one!\nFourth.\n")
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING):
        rc, stdout, err = run(
            capsys, "--checkpoint", str(tiny_checkpoint), "--text-file", str(lines), "--out", str(out), *FAST
        )
    assert rc == 0, err
    assert sorted(p.name for p in files_under(out)) == [
        "0001.json",
        "0001.wav",
        "0003.json",
        "0003.wav",
        "0004.json",
        "0004.wav",
    ]
    assert json.loads((out / "0003.json").read_text())["line"] == 3
    assert "wrote 3 utterances" in stdout and "3 stopped on the step bound" in stdout
    assert "3/3" in err  # the progress bar
    # Attention failures are surfaced, naming the utterance.
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "attention problem in lines.txt:3" in warned and "hit the step bound" in warned


def test_seed_makes_output_repeatable(tiny_checkpoint, tmp_path, capsys, refs):
    common = [
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Repeat me.",
        "--reference",
        str(refs["stereo48k"]),
        *FAST,
    ]
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        assert run(capsys, *common, "--out", str(tmp_path / f"{name}.wav"), "--seed", seed)[0] == 0
    a, b, c = (sf.read(tmp_path / f"{n}.wav")[0] for n in "abc")
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_style_weights_per_head_and_style_mix_are_recorded(tiny_checkpoint, tmp_path, capsys, refs):
    out = tmp_path / "w.wav"
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Styled.",
        "--out",
        str(out),
        "--style-weights",
        "3=0.4, 1:2=-0.2",
        *FAST,
    )
    assert rc == 0, err
    side = json.loads(out.with_suffix(".json").read_text())
    assert side["style_weights"] == [[0.0, 0.0, 0.0, 0.4, 0.0], [0.0, 0.0, -0.2, 0.4, 0.0]]
    # Griffin-Lim sets no F0 spread, and token weights have no tempo: the model's own are recorded.
    assert side["style"] == {
        "source": "style_weights",
        "spec": "3=0.4, 1:2=-0.2",
        "f0_range": {"source": "decoded"},
        "tempo": {"source": "decoded"},
    }

    out = tmp_path / "d.wav"
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Dialled.",
        "--out",
        str(out),
        "--style-dials",
        "1:3=0.5",
        *FAST,
    )
    assert rc == 0, err
    side = json.loads(out.with_suffix(".json").read_text())
    np.testing.assert_allclose(side["style_weights"], [[0.2] * 5, [0.1, 0.1, 0.1, 0.6, 0.1]], atol=1e-6)
    assert side["style"] == {
        "source": "style_dials",
        "spec": "1:3=0.5",
        "f0_range": {"source": "decoded"},
        "tempo": {"source": "decoded"},
    }

    out = tmp_path / "m.wav"
    mix = f"{refs['good']}=0.5,{refs['stereo48k']}=0.5"
    rc, _, err = run(
        capsys, "--checkpoint", str(tiny_checkpoint), "--text", "Mixed.", "--out", str(out), "--style-mix", mix, *FAST
    )
    assert rc == 0, err
    weights = np.asarray(json.loads(out.with_suffix(".json").read_text())["style_weights"])
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-4)  # a mix of softmax weights


def test_two_thousand_character_paragraph_comes_out_whole(tiny_checkpoint, tmp_path, capsys):
    sentence = "The old house on the hill, which nobody had visited for years, stood silent; its windows were dark. "
    paragraph = (sentence * 21)[:2000]
    out = tmp_path / "long.wav"
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        paragraph,
        "--out",
        str(out),
        "--max-seconds",
        str(seconds_for_steps(3)),
        "--griffin-lim-iters",
        "2",
        "--save-alignment",
    )
    assert rc == 0, err
    side = json.loads(out.with_suffix(".json").read_text())
    assert len(side["chunks"]) > 10
    assert " ".join(c["text"] for c in side["chunks"]) == side["cleaned_text"]
    assert all({"focus", "coverage", "backward_jumps", "reached_end"} <= c["health"].keys() for c in side["chunks"])
    alignment = np.load(tmp_path / "long.alignment.npy")
    assert alignment.shape == (3 * len(side["chunks"]), len(side["input_symbols"]))


def test_no_split_reads_a_long_paragraph_as_one_utterance_past_the_default_step_bound(
    tiny_checkpoint, tmp_path, capsys
):
    paragraph = ("The old house on the hill stood silent, and its windows were dark. " * 18)[:1200]
    out = tmp_path / "whole.wav"
    # The random model never stops: it runs to ceil(min(max_frames, 3 * symbols) / r) steps.
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        paragraph,
        "--out",
        str(out),
        "--no-split",
        "--max-frames-per-symbol",
        "3",
        "--griffin-lim-iters",
        "1",
        "--save-alignment",
    )
    assert rc == 0, err
    side = json.loads(out.with_suffix(".json").read_text())
    assert len(side["chunks"]) == 1
    symbols = len(side["input_symbols"])
    alignment = np.load(tmp_path / "whole.alignment.npy")
    steps = -(-3 * symbols // side["frames_per_step"])  # the per-symbol bound, ceil(3 * symbols / r)
    assert alignment.shape == (steps, symbols) and steps > 1000  # past the default absolute bound of 1000

    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        paragraph,
        "--out",
        str(out),
        "--no-split",
        "--max-seconds",
        str(seconds_for_steps(7)),
        "--griffin-lim-iters",
        "1",
        "--save-alignment",
    )
    assert rc == 0, err
    assert len(json.loads(out.with_suffix(".json").read_text())["chunks"]) == 1
    assert np.load(tmp_path / "whole.alignment.npy").shape == (7, symbols)  # an explicit bound still holds


def test_no_split_and_max_chunk_chars_exclude_each_other(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "x.wav"
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "synthesize",
                "--checkpoint",
                str(tiny_checkpoint),
                "--text",
                "Hi.",
                "--out",
                str(out),
                "--no-split",
                "--max-chunk-chars",
                "50",
            ]
        )
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert not out.exists()


# ------------------------------------------------------------------ bad input


def _bad_checkpoints(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "ckpts"
    d.mkdir()
    random_bytes = d / "random.pt"
    random_bytes.write_bytes(os.urandom(4096))
    good = write_tiny_checkpoint(d / "good.pt")
    ckpt = torch.load(good, weights_only=True)
    out = {"random bytes": random_bytes}
    wrong_symbols = dict(ckpt, model_config=dict(ckpt["model_config"], n_symbols=99))
    out["config says another symbol count"] = save_checkpoint(d / "symbols.pt", wrong_symbols)
    other_table = dict(ckpt, symbols={"symbols": ["_", "~", "a", "b"], "cleaner": "basic"})
    out["symbol table does not match"] = save_checkpoint(d / "table.pt", other_table)
    wrong_dims = dict(ckpt, model_config=dict(ckpt["model_config"], encoder_dim=48))
    out["weights do not match config"] = save_checkpoint(d / "dims.pt", wrong_dims)
    no_marker = d / "plain.pt"
    torch.save({"model": {}}, no_marker)
    out["not a gst-tts checkpoint"] = no_marker
    return out


class _Payload:
    """A pickle that runs a shell command when unpickled (what a hostile checkpoint would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("fmt", ["torch.save zip", "raw pickle"])
def test_checkpoint_carrying_code_is_refused_not_executed(tmp_path, capsys, fmt):
    marker = tmp_path / "PWNED"
    # Sanity: this payload really runs when unpickled normally.
    pickle.loads(pickle.dumps(_Payload(tmp_path / "sanity")))
    assert (tmp_path / "sanity").exists()
    evil = tmp_path / "evil.pt"
    if fmt == "raw pickle":
        evil.write_bytes(pickle.dumps({"format": "gst-tts-checkpoint", "model": _Payload(marker)}))
    else:
        torch.save({"format": "gst-tts-checkpoint", "model": _Payload(marker)}, evil)
    out = tmp_path / "out"
    rc, stdout, err = run(capsys, "--checkpoint", str(evil), "--text", "Hello.", "--out", str(out / "x.wav"))
    assert rc == 2
    assert not marker.exists()
    assert err.startswith("gst-tts synthesize: error:") and err.count("\n") == 1 and "Traceback" not in err
    assert "refused" in err or "not a gst-tts checkpoint" in err
    assert files_under(out) == []


def _bad_cases(tmp_path: Path, refs: dict[str, Path], ckpt: Path) -> dict[str, tuple[list[str], str]]:
    """name → (arguments after --checkpoint/--out, text expected in the message)."""
    empty_file, blank_file, bad_line_file = tmp_path / "empty.txt", tmp_path / "blank.txt", tmp_path / "badline.txt"
    empty_file.write_text("")
    blank_file.write_text("\n   \n\n")
    bad_line_file.write_text("Fine line.\n@@@ ###\n")
    cases = {
        "empty text": (["--text", ""], "empty"),
        "blank text": (["--text", "   "], "empty"),
        "no usable symbol": (["--text", "@@@ ### %%%"], "no symbol"),
        "punctuation only": (["--text", "... !?"], "nothing to speak"),
        "empty text file": (["--text-file", str(empty_file)], "no text"),
        "blank text file": (["--text-file", str(blank_file)], "no text"),
        "text file with a bad line": (["--text-file", str(bad_line_file)], "badline.txt:2"),
        "missing text file": (["--text-file", str(tmp_path / "nope.txt")], "not found"),
        "missing reference": (["--text", "Hi there.", "--reference", str(tmp_path / "missing.wav")], "not found"),
        "non-audio reference": (["--text", "Hi there.", "--reference", str(refs["text"])], "not readable as audio"),
        "silent reference": (["--text", "Hi there.", "--reference", str(refs["silent"])], "silent"),
        "short reference": (["--text", "Hi there.", "--reference", str(refs["short"])], "at least 0.5 s"),
        "bad reference in a mix": (
            ["--text", "Hi.", "--style-mix", f"{refs['good']}=0.5,{refs['short']}=0.5"],
            "at least 0.5 s",
        ),
        "malformed mix": (["--text", "Hi.", "--style-mix", str(refs["good"])], "FILE=WEIGHT"),
        "mix weight not a number": (["--text", "Hi.", "--style-mix", f"{refs['good']}=lots"], "not a number"),
        "unknown token index": (["--text", "Hi.", "--style-weights", "7=0.4"], "not in 0..4"),
        "negative token index": (["--text", "Hi.", "--style-weights=-1=0.4"], "not in 0..4"),
        "unknown head": (["--text", "Hi.", "--style-weights", "5:1=0.4"], "head"),
        "weight not a number": (["--text", "Hi.", "--style-weights", "3=abc"], "not a number"),
        "token not a number": (["--text", "Hi.", "--style-weights", "x=0.4"], "not a token index"),
        "missing weight": (["--text", "Hi.", "--style-weights", "3"], "TOKEN=WEIGHT"),
        "empty weights": (["--text", "Hi.", "--style-weights", ""], "empty"),
        "nan weight": (["--text", "Hi.", "--style-weights", "2=nan"], "finite"),
        "unknown dial head": (["--text", "Hi.", "--style-dials", "5:1=0.4"], "--style-dials: style head 5"),
        "out not a wav": (["--text", "Hi.", "--out-override", str(tmp_path / "out" / "x.mp3")], ".wav"),
        "griffin-lim iterations": (["--text", "Hi.", "--griffin-lim-iters", "0"], "griffin-lim-iters"),
        "stop threshold out of range": (
            ["--text", "Hi.", "--stop-threshold", "1.5"],
            "--stop-threshold must be in (0, 1]",
        ),
        "zero frames per symbol": (
            ["--text", "Hi.", "--max-frames-per-symbol", "0"],
            "--max-frames-per-symbol must be positive",
        ),
        "unknown device": (["--text", "Hi.", "--device", "tpu"], "unknown device"),
        "cuda without cuda": (["--text", "Hi.", "--device", "cuda"], "CUDA"),
    }
    if torch.cuda.is_available():
        del cases["cuda without cuda"]
    for name, path in _bad_checkpoints(tmp_path).items():
        cases[f"checkpoint: {name}"] = (["--text", "Hi.", "--checkpoint-override", str(path)], "")
    return cases


BAD_CASE_NAMES = [
    "empty text",
    "blank text",
    "no usable symbol",
    "punctuation only",
    "empty text file",
    "blank text file",
    "text file with a bad line",
    "missing text file",
    "missing reference",
    "non-audio reference",
    "silent reference",
    "short reference",
    "bad reference in a mix",
    "malformed mix",
    "mix weight not a number",
    "unknown token index",
    "negative token index",
    "unknown head",
    "weight not a number",
    "token not a number",
    "missing weight",
    "empty weights",
    "nan weight",
    "unknown dial head",
    "out not a wav",
    "griffin-lim iterations",
    "stop threshold out of range",
    "zero frames per symbol",
    "unknown device",
    "cuda without cuda",
    "checkpoint: random bytes",
    "checkpoint: config says another symbol count",
    "checkpoint: symbol table does not match",
    "checkpoint: weights do not match config",
    "checkpoint: not a gst-tts checkpoint",
]


@pytest.mark.parametrize("case", BAD_CASE_NAMES)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(case, tiny_checkpoint, tmp_path, refs, capsys):
    cases = _bad_cases(tmp_path, refs, tiny_checkpoint)
    if case not in cases:
        pytest.skip("not applicable on this machine")
    extra, expected = cases[case]
    out_dir = tmp_path / "out"
    checkpoint, out = str(tiny_checkpoint), str(out_dir / "x.wav")
    args = list(extra)
    if "--checkpoint-override" in args:
        i = args.index("--checkpoint-override")
        checkpoint = args[i + 1]
        del args[i : i + 2]
    if "--out-override" in args:
        i = args.index("--out-override")
        out = args[i + 1]
        del args[i : i + 2]
    elif "--text-file" in args:
        out = str(out_dir)
    rc, stdout, err = run(capsys, "--checkpoint", checkpoint, "--out", out, *FAST, *args)
    assert rc == 2, (stdout, err)
    assert err.startswith("gst-tts synthesize: error:"), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert expected in err, err
    assert files_under(out_dir) == []
    assert not any(p.name.endswith(".tmp") for p in tmp_path.rglob("*"))


def test_style_strength_scales_the_reference_and_is_recorded(tiny_checkpoint, tmp_path, capsys, refs):
    sides = {}
    for strength in ("0", "1", "0.5"):
        out = tmp_path / f"s{strength}.wav"
        rc, _, err = run(
            capsys,
            "--checkpoint",
            str(tiny_checkpoint),
            "--text",
            "Strong.",
            "--out",
            str(out),
            "--reference",
            str(refs["good"]),
            "--style-strength",
            strength,
            *FAST,
        )
        assert rc == 0, err
        sides[strength] = json.loads(out.with_suffix(".json").read_text())
    assert sides["0.5"]["style"]["strength"] == 0.5
    neutral = np.full((2, 5), 0.2)  # the tiny checkpoint stores no neutral style: uniform
    np.testing.assert_allclose(sides["0"]["style_weights"], neutral, atol=1e-6)
    reference = np.asarray(sides["1"]["style_weights"])
    assert not np.allclose(reference, neutral, atol=1e-3)
    np.testing.assert_allclose(sides["0.5"]["style_weights"], (reference + neutral) / 2, atol=1e-6)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--reference", "REF", "--style-strength", "3.5"], "style strength must lie in 0..3"),
        (["--reference", "REF", "--style-strength", "nan"], "style strength must be finite"),
        (["--reference", "REF", "--style-strength", "loud"], "style strength is not a finite number"),
        (["--style-dials", "1=0.4", "--style-strength", "0.5"], "--style-strength needs --reference or --style-mix"),
        (["--style-strength", "0.5"], "--style-strength needs --reference or --style-mix"),
        (["--f0-range", "loud"], "F0 range is not a finite number"),
        (["--f0-range", "30"], "F0 range must lie in 0..24"),
        (["--tempo", "fast"], "argument --tempo: invalid choice: 'fast'"),
    ],
)
def test_bad_style_strength_is_one_line_and_exit_2(tiny_checkpoint, tmp_path, capsys, refs, args, expected):
    out = tmp_path / "out" / "x.wav"
    args = [str(refs["good"]) if a == "REF" else a for a in args]
    try:
        rc = main(
            ["synthesize", "--checkpoint", str(tiny_checkpoint), "--text", "Hi.", "--out", str(out), *args, *FAST]
        )
    except SystemExit as exit_info:  # argparse's own refusal of the value
        rc = exit_info.code
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err and expected in err, err
    assert files_under(out.parent) == []


def test_two_style_options_are_an_argparse_error(tiny_checkpoint, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run(
            capsys,
            "--checkpoint",
            str(tiny_checkpoint),
            "--text",
            "Hi.",
            "--out",
            str(tmp_path / "x.wav"),
            "--style-dials",
            "1=0.4",
            "--style-weights",
            "1=0.4",
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "not allowed with" in err, err
    assert not (tmp_path / "x.wav").exists()


def test_int8_runs_on_cpu_and_needs_a_quantized_engine(tiny_checkpoint, tmp_path, capsys, monkeypatch):
    out = tmp_path / "int8.wav"
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Hello world.",
        "--out",
        str(out),
        "--int8",
        "--device",
        "cpu",
        "--seed",
        "1",
        *FAST,
    )
    assert rc == 0, err
    assert sf.read(out)[0].size > 0
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu", int8=True)
    assert synth.model.decoder.int8_inference
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Hello world.",
        "--out",
        str(tmp_path / "fp32.wav"),
        "--no-int8",
        "--device",
        "cpu",
        "--seed",
        "1",
        *FAST,
    )
    assert rc == 0, err
    assert not np.array_equal(sf.read(tmp_path / "fp32.wav")[0], sf.read(out)[0])
    monkeypatch.setattr(int8_weight, "_quantized_engine", lambda: "none")
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Hello world.",
        "--out",
        str(tmp_path / "no.wav"),
        "--int8",
        "--device",
        "cpu",
        *FAST,
    )
    assert rc == 2 and "quantized" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "no.wav").exists()


def test_the_f0_range_asked_of_a_spectral_vocoder_is_recorded(tiny_checkpoint, tmp_path, capsys):
    from conftest import write_spectral_vocoder

    vocoder = write_spectral_vocoder(tmp_path / "spectral.pt", pitch_head=True)
    t = np.arange(int(1.5 * 22050)) / 22050
    hz = 120.0 * 2.0 ** (0.5 - 0.5 * np.cos(2 * np.pi * t / 1.5))  # one octave up and back
    voice = tmp_path / "glide.wav"
    sf.write(voice, (0.3 * np.sin(2 * np.pi * np.cumsum(hz) / 22050)).astype(np.float32), 22050)
    recorded = {}
    copy = ["--f0-range", "reference"]
    for name, extra in (
        ("default", []),
        ("reference", copy),
        ("decoded", ["--f0-range", "decoded"]),
        ("given", ["--f0-range", "4.5"]),
        ("strong", [*copy, "--style-strength", "1.5"]),
        ("given-strong", ["--f0-range", "4.5", "--style-strength", "1.5"]),
    ):
        out = tmp_path / f"{name}.wav"
        rc, _, err = run(
            capsys,
            "--checkpoint",
            str(tiny_checkpoint),
            "--vocoder",
            str(vocoder),
            "--text",
            "Hi.",
            "--out",
            str(out),
            "--reference",
            str(voice),
            *extra,
            *FAST,
        )
        assert rc == 0, err
        recorded[name] = json.loads(out.with_suffix(".json").read_text())["style"]["f0_range"]
    assert recorded["reference"]["source"] == "reference" and 9.0 < recorded["reference"]["semitones"] < 11.5
    assert recorded["decoded"] == recorded["default"] == {"source": "decoded"}  # the model's own unless asked
    assert recorded["given"] == recorded["given-strong"] == {"source": "given", "semitones": 4.5}  # outright
    assert recorded["strong"] == {**recorded["reference"], "strength": 1.5} and recorded["reference"]["strength"] == 1.0


def test_the_tempo_of_a_reference_is_recorded_and_sets_the_length(tiny_checkpoint, tmp_path, capsys):
    t = np.arange(3 * 22050) / 22050
    voice = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 16))
    lengths, recorded = {}, {}
    for per_second in (3.0, 6.0):  # syllables a second
        swells = tmp_path / f"swells{per_second:g}.wav"
        sf.write(
            swells,
            (0.2 * voice * (0.05 + 0.95 * (0.5 - 0.5 * np.cos(2 * np.pi * per_second * t)))).astype(np.float32),
            22050,
        )
        for tempo in ("reference", "decoded"):
            out = tmp_path / f"{tempo}{per_second:g}.wav"
            rc, _, err = run(
                capsys,
                "--checkpoint",
                str(tiny_checkpoint),
                "--text",
                "Hello there, my friend.",
                "--out",
                str(out),
                "--reference",
                str(swells),
                "--tempo",
                tempo,
                "--seed",
                "0",
                "--max-seconds",
                str(seconds_for_steps(96)),
                "--griffin-lim-iters",
                "2",
            )
            assert rc == 0, err
            lengths[tempo, per_second] = sf.info(out).frames
            recorded[tempo, per_second] = json.loads(out.with_suffix(".json").read_text())["style"]["tempo"]
    assert recorded["decoded", 3.0] == recorded["decoded", 6.0] == {"source": "decoded"}
    slow, fast = recorded["reference", 3.0], recorded["reference", 6.0]
    assert slow["source"] == fast["source"] == "reference" and slow["strength"] == 1.0
    assert fast["letters_per_s"] == pytest.approx(2 * slow["letters_per_s"], rel=0.15)
    assert lengths["decoded", 3.0] == lengths["decoded", 6.0]
    assert lengths["reference", 6.0] < lengths["reference", 3.0]  # the faster reference, the shorter output


def test_synthesize_reads_the_reference_file_once(tiny_checkpoint, tmp_path, capsys, monkeypatch):
    """Its token weights, its tempo and its F0 spread come from one decoding of the file, for
    every line of a text file."""
    reference = tmp_path / "ref.wav"
    sf.write(reference, tone(1.5), 22050)
    texts = tmp_path / "lines.txt"
    texts.write_text("One line.\nAnother line.\nA third.\n")
    decoded, read = [], sf.read
    monkeypatch.setattr(sf, "read", lambda path, *a, **k: decoded.append(str(path)) or read(path, *a, **k))
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--text-file",
        str(texts),
        "--out",
        str(tmp_path / "out"),
        "--reference",
        str(reference),
        "--tempo",
        "reference",
        "--f0-range",
        "reference",
        "--batch-size",
        "2",
        "--max-seconds",
        str(seconds_for_steps(24)),
        "--griffin-lim-iters",
        "2",
    )
    assert rc == 0, err
    assert decoded.count(str(reference)) == 1
