"""``gst-tts measure-transfer`` in-process on a tiny random model: espeak and folder references, files, errors."""

from __future__ import annotations

import csv
import json

from conftest import seconds_for_steps, tone
import numpy as np
import pytest
import soundfile as sf

from gst_tts.analysis import style_transfer
from gst_tts.cli import main
from gst_tts.demo import corpus as demo_corpus
from gst_tts.inference import transfer

# An untrained model rarely stops on its own; a short bound and few Griffin-Lim iterations keep it fast.
FAST = [
    "--device",
    "cpu",
    "--max-seconds",
    str(seconds_for_steps(8)),
    "--griffin-lim-iters",
    "2",
    "--no-progress",
    "--sentences",
    "2",
]


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["measure-transfer", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc: int, err: str, starts: str = "") -> None:
    assert rc == 2, err
    assert (
        err.startswith(f"gst-tts measure-transfer: error: {starts}") and err.count("\n") == 1 and "Traceback" not in err
    ), err


def hidden_files(root) -> list:
    """Files an atomic write would leave behind if interrupted (temporary names start with a dot)."""
    return [p for p in root.rglob(".*")]


def read_csv(path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_espeak_references_end_to_end(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "transfer"
    rc, stdout, err = run(
        capsys, "--checkpoint", str(tiny_checkpoint), "--out", str(out), "--espeak", "3", "--seed", "4", *FAST
    )
    assert rc == 0, err
    references = sorted(p.name for p in (out / "references").iterdir())
    assert len(references) == 3 and all(name.startswith("espeak-") for name in references)
    for name in references:
        info = sf.info(str(out / "references" / name))
        assert info.samplerate == demo_corpus.SAMPLE_RATE  # espeak's rate, whatever the model's
        assert sorted(p.name for p in (out / "outputs" / name[:-4]).iterdir()) == ["01.wav", "02.wav"]
    rows = read_csv(out / "transfer.csv")
    assert [r["name"] + ".wav" for r in rows] == references
    assert all(r["groups"] == style_transfer.ESPEAK_GROUP and r["label"] in demo_corpus.LABELS for r in rows)
    report = json.loads((out / "transfer.json").read_text())
    assert set(report["fits"]) == {style_transfer.ESPEAK_GROUP}
    assert set(report["fits"][style_transfer.ESPEAK_GROUP]) == set(style_transfer.MEASURES)
    # Pairs with both sides measured (a random model's output may have no voiced frame).
    measured = sum(
        r["reference"]["f0_hz"] is not None and r["output"]["f0_hz"] is not None for r in report["references"]
    )
    assert report["fits"][style_transfer.ESPEAK_GROUP]["f0_hz"]["n"] == measured
    # The references' measured F0 follows what they were rendered with (the wiring of the measures).
    ref_f0 = [r["reference"]["f0_hz"] for r in report["references"]]
    asked = [r["info"]["f0_hz"] for r in report["references"]]
    assert np.corrcoef(np.log(ref_f0), np.log(asked))[0, 1] > 0.95
    assert all(len(r["outputs"]) == 2 and r["reference"]["rate_letters_per_s"] > 0 for r in report["references"])
    summary = (out / "summary.txt").read_text()
    assert "Pearson r" in summary and "log F0" in summary and summary in stdout + "\n"
    assert not hidden_files(out)


def test_a_folder_of_recordings(tiny_checkpoint, tmp_path, capsys):
    folder = tmp_path / "clips"
    folder.mkdir()
    sf.write(folder / "low.wav", tone(1.2, 16000, 110.0), 16000)
    sf.write(folder / "high.wav", np.stack([tone(1.0, 44100, 240.0)] * 2, 1), 44100)  # stereo, another rate
    (folder / "low.txt").write_text("A short sentence.")
    out = tmp_path / "transfer"
    rc, stdout, err = run(
        capsys, "--checkpoint", str(tiny_checkpoint), "--out", str(out), "--references", str(folder), *FAST
    )
    assert rc == 0, err
    assert not (out / "references").exists()  # recordings are used where they are, not copied
    report = json.loads((out / "transfer.json").read_text())
    by_name = {r["name"]: r for r in report["references"]}
    assert set(by_name) == {"low", "high"} and set(report["fits"]) == {style_transfer.REAL_GROUP}
    assert by_name["low"]["reference"]["f0_hz"] == pytest.approx(110.0, rel=0.03)
    assert by_name["high"]["reference"]["f0_hz"] == pytest.approx(240.0, rel=0.03)
    assert by_name["low"]["reference"]["rate_letters_per_s"] > 0
    assert by_name["high"]["reference"]["rate_letters_per_s"] is None  # no transcript
    assert by_name["high"]["path"] == str(folder / "high.wav")
    assert sorted(p.name for p in (out / "outputs").iterdir()) == ["high", "low"]
    assert not hidden_files(out)


def test_augmented_recordings_and_texts_file(tiny_checkpoint, tmp_path, capsys):
    folder = tmp_path / "clips"
    folder.mkdir()
    sf.write(folder / "a.wav", tone(1.0, 22050, 150.0), 22050)
    sf.write(folder / "b.wav", tone(1.0, 22050, 200.0), 22050)  # left out by --max-per-folder 1
    texts = tmp_path / "texts.txt"
    texts.write_text("First sentence.\n\n   Second   one.  \n")
    out = tmp_path / "transfer"
    rc, _, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--out",
        str(out),
        "--references",
        str(folder),
        "--augment-real",
        "--max-per-folder",
        "1",
        "--text-file",
        str(texts),
        "--plots",
        *FAST,
    )
    assert rc == 0, err
    report = json.loads((out / "transfer.json").read_text())
    assert report["texts"] == ["First sentence.", "Second one."]
    assert [r["name"] for r in report["references"]] == ["a", "a-pitch-4", "a-pitch+4", "a-speed0.8", "a-speed1.25"]
    assert list(report["fits"]) == [style_transfer.REAL_GROUP, style_transfer.AUGMENTED_GROUP]
    assert [r["groups"] for r in report["references"]] == [
        [style_transfer.REAL_GROUP, style_transfer.AUGMENTED_GROUP]
    ] + [[style_transfer.AUGMENTED_GROUP]] * 4
    assert report["fits"][style_transfer.REAL_GROUP]["f0_hz"]["n"] <= 1  # one recording: no correlation
    assert sorted(p.name for p in (out / "references").iterdir()) == [
        "a-pitch+4.wav",
        "a-pitch-4.wav",
        "a-speed0.8.wav",
        "a-speed1.25.wav",
    ]
    assert (out / "outputs" / "a-pitch+4" / "01.alignment.png").is_file()


def test_an_interrupted_run_leaves_no_report(tiny_checkpoint, tmp_path, capsys, monkeypatch):
    calls = []

    def interrupt(*args, **kwargs):
        calls.append(1)
        if len(calls) > 2:
            raise KeyboardInterrupt
        return measure(*args, **kwargs)

    measure = style_transfer.measure_clip
    monkeypatch.setattr(style_transfer, "measure_clip", interrupt)
    out = tmp_path / "transfer"
    rc, _, err = run(capsys, "--checkpoint", str(tiny_checkpoint), "--out", str(out), "--espeak", "2", *FAST)
    assert rc == 130
    assert not (out / "transfer.json").exists() and not (out / "transfer.csv").exists()
    assert not hidden_files(out)


def test_the_style_strength_is_recorded(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "transfer"
    rc, stdout, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--out",
        str(out),
        "--espeak",
        "2",
        "--style-strength",
        "0.5",
        *FAST,
    )
    assert rc == 0, err
    report = json.loads((out / "transfer.json").read_text())
    assert report["style_strength"] == 0.5
    assert "style strength 0.5;" in stdout
    # By default the figures are the model's own: nothing is copied after it.
    assert report["f0_range"] == "decoded" and report["tempo"] == "decoded" and "post_processed" not in report
    assert stdout.startswith("The model alone (its own tempo and F0 range):") and "Post-processed" not in stdout


def test_a_copy_after_the_model_is_measured_apart(tiny_checkpoint, tmp_path, capsys, monkeypatch):
    from gst_tts.inference import transfer

    asked = []
    evaluate = transfer.evaluate_style_transfer
    monkeypatch.setattr(
        transfer,
        "evaluate_style_transfer",
        lambda *a, **k: (
            asked.append((k.get("transfer_tempo", False), k.get("transfer_f0_range", False))) or evaluate(*a, **k)
        ),
    )
    out = tmp_path / "transfer"
    rc, stdout, err = run(
        capsys,
        "--checkpoint",
        str(tiny_checkpoint),
        "--out",
        str(out),
        "--espeak",
        "2",
        "--tempo",
        "reference",
        "--f0-range",
        "reference",
        *FAST,
    )
    assert rc == 0, err
    # the model alone first, then the retimed outputs (Griffin-Lim cannot set an F0 spread: only the tempo is copied)
    assert asked == [(False, False), (True, False)]
    report = json.loads((out / "transfer.json").read_text())
    assert report["tempo"] == "decoded" and report["post_processed"]["copied"] == "tempo"
    assert len(report["post_processed"]["references"]) == len(report["references"]) == 2
    assert stdout.index("The model alone") < stdout.index(
        "Post-processed: the reference's tempo copied onto the output"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--espeak", "1"], "--espeak must be at least 2"),
        (["--espeak", "0"], "--espeak must be at least 2"),
        (["--references", "{tmp}/missing"], "reference folder"),
        (["--references", "{tmp}/empty"], "reference folder"),
        (["--augment-real"], "--augment-real needs --references"),
        (["--text-file", "{tmp}/no-texts.txt"], "--text-file"),
        (["--text-file", "{tmp}/blank.txt"], "--text-file"),
        (["--sentences", "0"], "--sentences"),
        (["--reference-sentences", "0"], "--reference-sentences must be at least 1"),
        (["--references", "{tmp}/empty", "--max-per-folder", "0"], "--max-per-folder"),
    ],
)
def test_bad_input_is_a_one_line_error(tiny_checkpoint, tmp_path, capsys, monkeypatch, args, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.txt").write_text("no audio here")
    (tmp_path / "blank.txt").write_text("\n  \n")
    monkeypatch.setattr(transfer, "evaluate_style_transfer", lambda *a, **k: pytest.fail("evaluated bad input"))
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    rc, _, err = run(capsys, "--checkpoint", str(tiny_checkpoint), "--out", str(tmp_path / "out"), *FAST, *args)
    assert_one_line_error(rc, err, message)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "value, message", [("4", "style strength must lie in 0..3"), ("much", "style strength is not a finite number")]
)
def test_a_bad_style_strength_is_argparses_one_line(tiny_checkpoint, tmp_path, capsys, value, message):
    with pytest.raises(SystemExit) as exit_info:
        run(
            capsys,
            "--checkpoint",
            str(tiny_checkpoint),
            "--out",
            str(tmp_path / "out"),
            "--style-strength",
            value,
            *FAST,
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_an_out_that_is_a_file_is_refused(tiny_checkpoint, tmp_path, capsys):
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    rc, _, err = run(capsys, "--checkpoint", str(tiny_checkpoint), "--out", str(blocker), "--espeak", "2", *FAST)
    assert_one_line_error(rc, err, "--out")
    assert blocker.read_text() == "a file"
