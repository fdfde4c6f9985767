"""``gst-tts measure-intelligibility`` in-process on a tiny random model, with a stand-in ASR (the
real one is tested in tests/analysis/test_intelligibility.py): which clips are spoken, what is
written, and bad input as one line with exit code 2."""

from __future__ import annotations

import json

from conftest import seconds_for_steps, tone, write_corpus
import numpy as np
import pytest
import soundfile as sf

from gst_tts.analysis import intelligibility
from gst_tts.cli import main

SHORT = ["--max-seconds", str(seconds_for_steps(6)), "--griffin-lim-iters", "2", "--device", "cpu", "--no-progress"]


class EchoASR:
    """Hears the first sentence of the corpus in every clip, and records each clip's length."""

    heard: list[int] = []

    def __init__(self, model=None, **_):
        EchoASR.heard = []

    def transcribe(self, samples, sample_rate):
        assert sample_rate == 22050 and np.isfinite(samples).all()
        EchoASR.heard.append(len(samples))
        return "Sentence number 0."

    def describe(self):
        return "echo"


@pytest.fixture
def echo_asr(monkeypatch):
    monkeypatch.setattr(intelligibility, "WhisperTranscriber", EchoASR)
    return EchoASR


def test_teacher_forced_clips_have_the_recordings_length(tiny_checkpoint, tmp_path, echo_asr, capsys):
    corpus = write_corpus(tmp_path / "corpus", n=3)
    out = tmp_path / "asr"
    rc = main(
        [
            "measure-intelligibility",
            "--checkpoint",
            str(tiny_checkpoint),
            "--corpus",
            str(corpus),
            "--split",
            "train",
            "--mode",
            "teacher-forced",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--vocoder",
            "griffin-lim",
            "--out",
            str(out),
            *SHORT,
        ]
    )
    assert rc == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    report = json.loads((out / "intelligibility.json").read_text())
    rows = report["sets"]["teacher-forced-train"]["utterances"]
    assert [r["id"] for r in rows] == ["UT-000", "UT-001", "UT-002"]
    assert rows[0]["cer"] == 0 and rows[1]["cer"] > 0  # "sentence number 0" heard for "sentence number 1"
    assert "teacher-forced-train: CER" in printed and "scored after: English cleaner" in printed
    # A teacher-forced clip is as long as its recording (whole decoder steps of it), not a free-running length.
    for row, length in zip(rows, echo_asr.heard):
        recording = sf.info(str(corpus / "wavs" / f"{row['id']}.wav")).frames
        assert abs(length - recording) < 3 * 256 + 1024
        assert sf.info(str(out / "teacher-forced-train" / f"{row['id']}.wav")).frames == length


def test_text_file_is_spoken_neutral_and_in_each_reference_style(tiny_checkpoint, tmp_path, echo_asr, capsys):
    texts = tmp_path / "texts.txt"
    texts.write_text("Sentence number 0.\n\nA second one.\n")
    reference = tmp_path / "calm.wav"
    sf.write(reference, tone(1.0), 22050)
    rc = main(
        [
            "measure-intelligibility",
            "--checkpoint",
            str(tiny_checkpoint),
            "--text-file",
            str(texts),
            "--references",
            str(reference),
            "--vocoder",
            "griffin-lim",
            *SHORT,
        ]
    )
    assert rc == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "neutral: CER" in printed and "calm: CER" in printed and "(2 utterances)" in printed
    assert len(echo_asr.heard) == 4


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--limit", "0"], "--limit must be at least 1"),
        (["--references", "x.wav"], "--references goes with --text-file"),
    ],
)
def test_bad_arguments_are_one_line(tiny_checkpoint, tmp_path, echo_asr, capsys, extra, message):
    corpus = write_corpus(tmp_path / "corpus", n=2)
    rc = main(
        ["measure-intelligibility", "--checkpoint", str(tiny_checkpoint), "--corpus", str(corpus), *extra, *SHORT]
    )
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_a_checkpoint_without_validation_ids_names_the_fix(tiny_checkpoint, tmp_path, echo_asr, capsys):
    corpus = write_corpus(tmp_path / "corpus", n=2)
    rc = main(["measure-intelligibility", "--checkpoint", str(tiny_checkpoint), "--corpus", str(corpus), *SHORT])
    assert rc == 2 and "use --split train" in capsys.readouterr().err


def test_no_asr_installed_is_one_line(tiny_checkpoint, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(intelligibility, "asr_available", lambda: False)
    corpus = write_corpus(tmp_path / "corpus", n=2)
    rc = main(["measure-intelligibility", "--checkpoint", str(tiny_checkpoint), "--corpus", str(corpus), *SHORT])
    assert rc == 2 and "pip install 'gst-tts[asr]'" in capsys.readouterr().err
