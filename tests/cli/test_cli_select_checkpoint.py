"""``gst-tts select-checkpoint`` in-process on tiny random models: the choice, the files, errors."""

from __future__ import annotations

import json

from conftest import seconds_for_steps, write_corpus, write_tiny_checkpoint
import pytest

from gst_tts.analysis import intelligibility, style_transfer
from gst_tts.cli import main

# An untrained model rarely stops on its own; a short bound and few Griffin-Lim iterations keep it fast.
FAST = [
    "--device",
    "cpu",
    "--max-seconds",
    str(seconds_for_steps(8)),
    "--griffin-lim-iters",
    "2",
    "--no-progress",
    "--espeak",
    "2",
    "--sentences",
    "1",
]


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["select-checkpoint", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc: int, err: str, contains: str) -> None:
    assert rc == 2, err
    assert err.startswith("gst-tts select-checkpoint: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert contains in err, err


@pytest.fixture(autouse=True)
def no_asr(monkeypatch):
    """Style and alignment alone, unless a test gives an ASR (the words figure has a test of its own)."""
    monkeypatch.setattr(intelligibility, "asr_available", lambda: False)


class ScriptedASR:
    """Hears what ``script`` says for each clip in turn (the real ASR: tests/analysis/test_intelligibility.py)."""

    script: list[str] = []

    def __init__(self, model=None, **_):
        pass

    def transcribe(self, samples, sample_rate):
        return ScriptedASR.script.pop(0)

    def describe(self):
        return "scripted"


def test_a_candidate_that_mumbles_is_not_chosen(candidates, tmp_path, capsys, monkeypatch):
    early, late, _ = candidates
    perfect = {"log F0 r": 1.0, "log F0 slope": 1.0, "log rate r": 1.0, "log rate slope": 1.0, "aligned": 1.0}
    monkeypatch.setattr(style_transfer, "selection_figures", lambda report: dict(perfect))
    monkeypatch.setattr(intelligibility, "asr_available", lambda: True)
    monkeypatch.setattr(intelligibility, "WhisperTranscriber", ScriptedASR)
    sentence = style_transfer.held_out_sentences(1, style_transfer.TEXT_SEED)[0]
    # Step 250 speaks its sentence for both references; step 500 follows every style perfectly but says other words.
    ScriptedASR.script = [sentence, sentence, "thank you very much", "thank you very much"]
    out = tmp_path / "best.pt"
    rc, stdout, err = run(capsys, "--checkpoints", str(early), str(late), "--out", str(out), *FAST)
    assert rc == 0, err
    record = json.loads(out.with_suffix(".json").read_text())
    assert [(c["step"], c["weakest"], c["cer"] == 0) for c in record["candidates"]] == [
        (250, "log F0 r", True),
        (500, "words (1-CER)", False),
    ]
    assert record["step"] == 250 and out.read_bytes() == early.read_bytes()
    assert "words: 1 - CER (scripted)" in stdout and not ScriptedASR.script


def test_words_come_first_within_the_margin(tmp_path, capsys, monkeypatch):
    """Three candidates: the best style speaks worse than the margin allows; of the two that speak
    about equally well, the better weakest figure wins, though it is not the lowest CER."""
    paths = [write_tiny_checkpoint(tmp_path / f"step_{s:07d}.pt", seed=s, step=s) for s in (250, 500, 750)]
    figures = iter(
        [
            {"log F0 r": 1.0, "log F0 slope": 1.0, "log rate r": 1.0, "log rate slope": 1.0, "aligned": 1.0},
            {"log F0 r": 0.9, "log F0 slope": 0.8, "log rate r": 0.9, "log rate slope": 0.9, "aligned": 1.0},
            {"log F0 r": 0.9, "log F0 slope": 0.6, "log rate r": 0.9, "log rate slope": 0.9, "aligned": 1.0},
        ]
    )
    monkeypatch.setattr(style_transfer, "selection_figures", lambda report: next(figures))
    monkeypatch.setattr(intelligibility, "asr_available", lambda: True)
    monkeypatch.setattr(intelligibility, "WhisperTranscriber", ScriptedASR)
    sentence = style_transfer.held_out_sentences(1, style_transfer.TEXT_SEED)[0]
    words = sentence.lower().split()

    def dropping(n):  # the sentence with its first n words left out: a CER of about n words' share
        return " ".join(words[n:])

    ScriptedASR.script = [dropping(2)] * 2 + [dropping(1)] * 2 + [sentence] * 2
    cer = {n: intelligibility.score_utterance("x", sentence, dropping(n)).cer for n in (1, 2)}
    margin = (cer[1] + cer[2]) / 2  # step 500 (one word dropped) within it of step 750's 0, step 250 (two) not
    out = tmp_path / "best.pt"
    rc, stdout, err = run(
        capsys, "--checkpoints", *map(str, paths), "--out", str(out), "--words-margin", f"{margin:.6f}", *FAST
    )
    assert rc == 0, err
    record = json.loads(out.with_suffix(".json").read_text())
    assert [(c["step"], c["speaks_best"]) for c in record["candidates"]] == [(250, False), (500, True), (750, True)]
    assert record["step"] == 500, record  # step 250's weakest figure is the highest, but it speaks worse
    assert "(words: CER above the margin)" in stdout and "<- chosen" in stdout.splitlines()[2]
    ScriptedASR.script = [dropping(2)] * 2 + [dropping(1)] * 2 + [sentence] * 2
    figures = iter(
        [{"log F0 r": 1.0, "log F0 slope": 1.0, "log rate r": 1.0, "log rate slope": 1.0, "aligned": 1.0}] * 3
    )
    rc, _, err = run(capsys, "--checkpoints", *map(str, paths), "--out", str(out), "--words-margin", "0", *FAST)
    assert rc == 0 and json.loads(out.with_suffix(".json").read_text())["step"] == 750, err


@pytest.fixture
def candidates(tmp_path):
    """Checkpoints of steps 250 and 500, and a last.pt repeating step 500."""
    early = write_tiny_checkpoint(tmp_path / "step_0000250.pt", seed=1, step=250)
    late = write_tiny_checkpoint(tmp_path / "step_0000500.pt", seed=2, step=500)
    last = write_tiny_checkpoint(tmp_path / "last.pt", seed=3, step=500)
    return early, late, last


def test_the_candidate_with_the_strongest_weakest_figure_is_copied(candidates, tmp_path, capsys, monkeypatch):
    early, late, last = candidates
    # Figures by step order: the early checkpoint's weakest figure (rate slope 0.5) is below the
    # late one's weakest (aligned 0.7), though the early one is better on every other figure.
    figures = iter(
        [
            {"log F0 r": 1.0, "log F0 slope": 1.0, "log rate r": 1.0, "log rate slope": 0.5, "aligned": 1.0},
            {"log F0 r": 0.9, "log F0 slope": 0.9, "log rate r": 0.9, "log rate slope": 0.8, "aligned": 0.7},
        ]
    )
    monkeypatch.setattr(style_transfer, "selection_figures", lambda report: next(figures))
    out = tmp_path / "chosen" / "best.pt"
    rc, stdout, err = run(capsys, "--checkpoints", str(early), str(late), str(last), "--out", str(out), *FAST)
    assert rc == 0, err
    assert out.read_bytes() == late.read_bytes()  # last.pt repeats step 500 and comes later: not measured
    record = json.loads(out.with_suffix(".json").read_text())
    assert (
        record["chosen"] == str(late) and record["step"] == 500 and record["seed"] == 0
    )  # the default; the demo passes SELECTION_SEED itself
    assert [(c["step"], c["weakest"], c["score"]) for c in record["candidates"]] == [
        (250, "log rate slope", 0.5),
        (500, "aligned", 0.7),
    ]
    assert "chose step 500" in stdout and stdout.count("<- chosen") == 1
    assert sorted(p.name for p in out.parent.iterdir()) == ["best.json", "best.pt"]  # no temporary file left


def test_real_figures_end_to_end(candidates, tmp_path, capsys):
    early, late, _ = candidates
    out = tmp_path / "best.pt"
    rc, stdout, err = run(capsys, "--checkpoints", str(late), str(early), "--out", str(out), "--seed", "7", *FAST)
    assert rc == 0, err
    record = json.loads(out.with_suffix(".json").read_text())
    assert [c["step"] for c in record["candidates"]] == [250, 500]  # measured in step order
    assert record["seed"] == 7 and record["references"] == 2 and len(record["sentences"]) == 1
    for c in record["candidates"]:
        assert set(c["figures"]) == {"log F0 r", "log F0 slope", "log rate r", "log rate slope", "aligned"}
        scores = [v for v in c["figures"].values() if v is not None]
        assert c["score"] == (min(scores) if len(scores) == 5 else None)
    assert out.read_bytes() == {250: early, 500: late}[record["step"]].read_bytes()


def test_errors_are_one_line_and_write_nothing(candidates, tmp_path, capsys):
    early, late, _ = candidates
    out = tmp_path / "out" / "best.pt"
    rc, _, err = run(capsys, "--checkpoints", str(early), str(tmp_path / "missing.pt"), "--out", str(out), *FAST)
    assert_one_line_error(rc, err, "missing.pt")
    rc, _, err = run(capsys, "--checkpoints", str(early), str(late), "--out", str(late), *FAST)
    assert_one_line_error(rc, err, "is one of the candidates")
    rc, _, err = run(capsys, "--checkpoints", str(early), "--out", str(out.with_suffix(".json")), *FAST)
    assert_one_line_error(rc, err, "give the checkpoint a .pt name")
    rc, _, err = run(
        capsys, "--checkpoints", str(early), "--out", str(out), *FAST[:-4], "--espeak", "1", "--sentences", "1"
    )
    assert_one_line_error(rc, err, "--espeak must be at least 2")
    assert not out.parent.exists()


def test_held_out_judges_the_corpus_validation_utterances_by_words_and_alignment(tmp_path, capsys, monkeypatch):
    """A one-speaker corpus: the candidates speak its validation utterances in their own recordings'
    styles; no espeak-ng reference is made, and the one that speaks them is chosen."""
    from gst_tts.checkpoints.acoustic import load_checkpoint, save_checkpoint

    corpus = write_corpus(tmp_path / "corpus", n=5)
    paths = []
    for step in (250, 500):
        path = write_tiny_checkpoint(tmp_path / f"step_{step:07d}.pt", seed=step, step=step)
        ckpt = load_checkpoint(path)
        ckpt["val_ids"] = ["UT-001", "UT-003"]
        paths.append(save_checkpoint(path, ckpt))
    monkeypatch.setattr(style_transfer, "espeak_references", lambda *a, **k: pytest.fail("no references needed"))
    monkeypatch.setattr(intelligibility, "asr_available", lambda: True)
    monkeypatch.setattr(intelligibility, "WhisperTranscriber", ScriptedASR)
    ScriptedASR.script = ["thank you", "thank you", "sentence number 1", "sentence number 3"]
    out = tmp_path / "best.pt"
    rc, stdout, err = run(
        capsys, "--checkpoints", *map(str, paths), "--out", str(out), "--corpus", str(corpus), "--held-out", "4", *FAST
    )
    assert rc == 0, err
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["held_out"] == ["UT-001", "UT-003"] and record["references"] == 0
    assert record["sentences"] == ["sentence number 1.", "sentence number 3."]  # the normalised text
    assert [(c["step"], set(c["figures"]), c["cer"] == 0) for c in record["candidates"]] == [
        (250, {"aligned", "words (1-CER)"}, False),
        (500, {"aligned", "words (1-CER)"}, True),
    ]
    assert record["step"] == 500 and out.read_bytes() == paths[1].read_bytes() and not ScriptedASR.script
    assert "2 validation utterances of" in stdout
    rc, _, err = run(capsys, "--checkpoints", str(paths[0]), "--out", str(tmp_path / "x.pt"), "--held-out", "2", *FAST)
    assert_one_line_error(rc, err, "give --corpus")
    rc, _, err = run(
        capsys,
        "--checkpoints",
        str(paths[0]),
        "--out",
        str(tmp_path / "x.pt"),
        "--corpus",
        str(corpus),
        "--held-out",
        "-1",
        *FAST,
    )
    assert_one_line_error(rc, err, "--held-out must be at least 0")
