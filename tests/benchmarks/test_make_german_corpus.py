"""benchmarks/make_german_corpus.py: a small German corpus in LJSpeech format, rendered with
espeak-ng's German voice; byte-identical for the same arguments; held-out sentences outside it;
bad arguments and a filled folder refused in one line."""

from __future__ import annotations

import csv
from pathlib import Path
import subprocess
import sys

import pytest
import soundfile as sf

from gst_tts.demo.corpus import PROSODY_COLUMNS, SAMPLE_RATE, VETTED_VARIANTS
from gst_tts.errors import GstTtsError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import make_german_corpus  # noqa: E402

N = 6


@pytest.fixture(scope="module")
def german(tmp_path_factory) -> Path:
    return make_german_corpus.make_german_corpus(
        tmp_path_factory.mktemp("de") / "corpus", utterances=N, seed=3, held_out=4
    )


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_corpus_is_ljspeech_with_german_text_prosody_and_held_out_sentences(german):
    rows = [line.split("|") for line in (german / "metadata.csv").read_text(encoding="utf-8").splitlines()]
    assert [r[0] for r in rows] == [f"DE-{i:04d}" for i in range(1, N + 1)]
    assert all(len(r) == 3 and r[1] == r[2] and r[1][-1] in ".?!" for r in rows)
    texts = [r[1] for r in rows]
    assert len(set(texts)) == N
    for utt in (r[0] for r in rows):
        audio, rate = sf.read(german / "wavs" / f"{utt}.wav")
        assert rate == SAMPLE_RATE and audio.ndim == 1 and 0.5 < len(audio) / rate < 15
    with open(german / "prosody.csv", encoding="utf-8", newline="") as f:
        prosody = list(csv.DictReader(f))
    assert tuple(prosody[0]) == PROSODY_COLUMNS and [p["id"] for p in prosody] == [r[0] for r in rows]
    assert {p["voice"] for p in prosody} == {"de"} and {p["variant"] for p in prosody} <= set(VETTED_VARIANTS)
    styles = dict(line.split("|") for line in (german / "styles.csv").read_text().splitlines())
    assert styles == {p["id"]: p["label"] for p in prosody}
    held = (german / "heldout.txt").read_text(encoding="utf-8").splitlines()
    assert len(held) == 4 and not set(held) & set(texts)
    assert "German" in (german / "README.txt").read_text()
    assert not list(german.parent.glob(".corpus.partial-*"))


def test_sentences_are_german_with_umlauts_digits_and_each_kind_of_sentence():
    sentences = make_german_corpus.german_sentences(400, seed=0)
    assert len(set(sentences)) == 400
    text = " ".join(sentences)
    assert set("äöüÄÖÜß") & set(text) >= set("äöü")
    assert any(c.isdigit() for c in text) and ", " in text
    assert {s[-1] for s in sentences} == {".", "?", "!"}
    assert sentences[:50] == make_german_corpus.german_sentences(50, seed=0)  # the first k of n are those of k
    assert make_german_corpus.german_sentences(50, seed=1) != sentences[:50]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "make_german_corpus.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_same_arguments_give_byte_identical_files_in_another_process(german, tmp_path):
    """The command, in a process of its own (another address layout for espeak-ng), writes the
    same bytes as the function did here."""
    result = _run(
        "--out", str(tmp_path / "again"), "--utterances", str(N), "--seed", "3", "--held-out", "4", "--no-progress"
    )
    assert result.returncode == 0, result.stderr
    first, second = _files(german), _files(tmp_path / "again")
    assert sorted(first) == sorted(second) and first == second
    assert len([name for name in first if name.startswith("wavs/")]) == N


def test_a_filled_folder_and_bad_counts_are_one_line_exit_2(tmp_path):
    filled = tmp_path / "filled"
    filled.mkdir()
    (filled / "keep.txt").write_text("mine")
    result = _run("--out", str(filled), "--utterances", "2", "--no-progress")
    assert result.returncode == 2 and "not empty" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert [p.name for p in filled.iterdir()] == ["keep.txt"]
    assert not list(tmp_path.glob(".filled.partial-*"))
    with pytest.raises(GstTtsError, match="at least 1"):
        make_german_corpus.make_german_corpus(tmp_path / "none", utterances=0)
    with pytest.raises(GstTtsError, match="held-out"):
        make_german_corpus.make_german_corpus(tmp_path / "none", utterances=1, held_out=-1)
    assert not (tmp_path / "none").exists()
