"""Tests for the espeak-ng demo corpus: files, determinism, sentences and style separation."""

from __future__ import annotations

from collections import Counter
import os
from pathlib import Path
import re
import subprocess
import sys
import tempfile

import librosa
import numpy as np
import pytest
import soundfile as sf

from gst_tts.demo import corpus as demo_corpus
from gst_tts.demo.corpus import SAMPLE_RATE, STYLES, get_style, make_demo_corpus, render_sentence, render_sentences
from gst_tts.demo.espeak import EspeakSynth
from gst_tts.demo.sentences import generate_sentences
from gst_tts.errors import GstTtsError

N_UTTERANCES = 12
ID_RE = re.compile(r"^DEMO-\d{4}$")
SENTENCE_RE = re.compile(r"^[A-Z][A-Za-z ,'\-]*[A-Za-z][.?!]$")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_demo_corpus(tmp_path_factory.mktemp("demo") / "corpus", utterances=N_UTTERANCES, seed=3, progress=False)


def _read_rows(path: Path) -> list[list[str]]:
    return [line.split("|") for line in path.read_text(encoding="utf-8").splitlines()]


def test_corpus_has_ljspeech_layout(corpus: Path) -> None:
    rows = _read_rows(corpus / "metadata.csv")
    assert len(rows) == N_UTTERANCES
    assert [row[0] for row in rows] == [f"DEMO-{i:04d}" for i in range(1, N_UTTERANCES + 1)]
    for utterance_id, raw, normalized in rows:
        assert ID_RE.match(utterance_id)
        assert SENTENCE_RE.match(raw) and normalized == raw
        info = sf.info(str(corpus / "wavs" / f"{utterance_id}.wav"))
        assert (info.samplerate, info.channels, info.subtype, info.format) == (SAMPLE_RATE, 1, "PCM_16", "WAV")
        assert 0.5 < info.duration < 10.0
    assert sorted(p.name for p in (corpus / "wavs").iterdir()) == sorted(f"{row[0]}.wav" for row in rows)
    assert "low_slow" in (corpus / "README.txt").read_text(encoding="utf-8")


def test_styles_are_balanced_and_cover_all(corpus: Path) -> None:
    rows = _read_rows(corpus / "styles.csv")
    assert [row[0] for row in rows] == [row[0] for row in _read_rows(corpus / "metadata.csv")]
    counts = Counter(style for _, style in rows)
    assert set(counts) == {style.name for style in STYLES}
    assert max(counts.values()) - min(counts.values()) <= 1


def test_silence_is_trimmed(corpus: Path) -> None:
    audio, _ = sf.read(str(corpus / "wavs" / "DEMO-0001.wav"))
    loud = np.flatnonzero(np.abs(audio) > 0.01)
    keep = int(demo_corpus.KEEP_SILENCE_S * SAMPLE_RATE)
    assert loud[0] <= keep + 1 and len(audio) - 1 - loud[-1] <= keep + 1


def test_same_seed_gives_identical_bytes(corpus: Path, tmp_path: Path) -> None:
    # Rendering other text first must not change the result (espeak keeps internal state).
    render_sentences(generate_sentences(3, 99), STYLES[2])
    again = make_demo_corpus(tmp_path / "again", utterances=N_UTTERANCES, seed=3, progress=False)
    for name in ("metadata.csv", "styles.csv", "README.txt"):
        assert (again / name).read_bytes() == (corpus / name).read_bytes()
    for wav in sorted((corpus / "wavs").iterdir()):
        assert (again / "wavs" / wav.name).read_bytes() == wav.read_bytes(), wav.name


def test_existing_directories(corpus: Path, tmp_path: Path) -> None:
    before = (corpus / "metadata.csv").stat().st_mtime_ns
    assert make_demo_corpus(corpus, utterances=N_UTTERANCES, seed=3, progress=False) == corpus
    assert (corpus / "metadata.csv").stat().st_mtime_ns == before  # reused, not rebuilt
    with pytest.raises(GstTtsError):
        make_demo_corpus(corpus, utterances=N_UTTERANCES, seed=4, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(GstTtsError):
        make_demo_corpus(other, utterances=2, progress=False)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    make_demo_corpus(empty, utterances=2, progress=False)
    assert len(_read_rows(empty / "metadata.csv")) == 2
    # No staging directory is left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "other"]


def test_sentences_are_deterministic_distinct_and_clean() -> None:
    sentences = generate_sentences(400, seed=0)
    assert sentences == generate_sentences(400, seed=0)
    assert len(set(sentences)) == 400
    for sentence in sentences:
        assert SENTENCE_RE.match(sentence), sentence
        assert 4 <= len(sentence.split()) <= 12 and 20 <= len(sentence) <= 80, sentence
    assert {sentence[-1] for sentence in sentences} == {".", "?", "!"}
    assert sum("," in sentence for sentence in sentences) > 40
    assert len({sentence.split()[0] for sentence in sentences}) > 15  # varied openings


def test_held_out_seed_gives_new_sentences() -> None:
    training = set(generate_sentences(2000, seed=0))
    held_out = generate_sentences(200, seed=1)
    assert sum(sentence in training for sentence in held_out) <= 10


def test_render_sentences_returns_clips() -> None:
    clips = render_sentences(["Hello there.", "Where is the station?"], "low_fast")
    assert len(clips) == 2
    assert all(clip.dtype == np.float32 and clip.ndim == 1 and clip.size > SAMPLE_RATE // 4 for clip in clips)
    assert np.array_equal(clips[0], render_sentence("Hello there.", get_style("low_fast")))
    with pytest.raises(GstTtsError):
        get_style("whisper")


def test_unloadable_library_raises_gst_tts_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import espeakng_loader

    monkeypatch.setattr(EspeakSynth, "_library_path", None)
    monkeypatch.setattr(espeakng_loader, "get_library_path", lambda: "/nonexistent/libespeak-ng.so")
    with pytest.raises(GstTtsError, match="espeak-ng"):
        EspeakSynth().synthesize("Hello.", "en-us", 175, 50)


def _median_f0(clips: list[np.ndarray]) -> float:
    f0, _, _ = librosa.pyin(np.concatenate(clips), fmin=50, fmax=500, sr=SAMPLE_RATE)
    return float(np.nanmedian(f0))


def test_styles_separate_pitch_and_rate() -> None:
    texts = generate_sentences(2, seed=12345)  # held-out text, not corpus text
    clips = {style.name: render_sentences(texts, style) for style in STYLES}
    f0 = {name: _median_f0(style_clips) for name, style_clips in clips.items()}
    duration = {name: sum(len(clip) for clip in style_clips) / SAMPLE_RATE for name, style_clips in clips.items()}

    low = [f0[name] for name in f0 if name.startswith("low_")]
    high = [f0[name] for name in f0 if name.startswith("high_")]
    gap_semitones = 12 * np.log2(min(high) / max(low))
    assert gap_semitones >= 6, f0

    for level in ("low", "high"):
        ratio = duration[f"{level}_slow"] / duration[f"{level}_fast"]
        assert ratio >= 1.5, duration


def test_rendering_is_the_same_in_other_processes() -> None:
    # Some espeak voice variants (f2: breath noise, echo) read uninitialised memory, so their
    # samples change with the address layout of the process. Fresh processes (new layouts, one with
    # a filled heap) must render exactly what this one does.
    script = (
        "import sys, numpy as np\n"
        "from gst_tts.demo.corpus import STYLES, generate_sentences, render_sentence\n"
        "texts = generate_sentences(8, 3)\n"
        "np.savez(sys.argv[1], *[render_sentence(t, STYLES[i % len(STYLES)]) for i, t in enumerate(texts)])\n"
    )
    texts = generate_sentences(8, 3)
    expected = [render_sentence(text, STYLES[index % len(STYLES)]) for index, text in enumerate(texts)]
    with tempfile.TemporaryDirectory() as tmp:
        for run, perturb in enumerate(("", "77", "")):
            out = Path(tmp) / f"clips{run}.npz"
            env = {**os.environ, "MALLOC_PERTURB_": perturb}
            subprocess.run([sys.executable, "-c", script, str(out)], env=env, check=True, timeout=120)
            with np.load(out) as saved:
                for index, clip in enumerate(expected):
                    assert np.array_equal(saved[f"arr_{index}"], clip), (run, STYLES[index % len(STYLES)].name)
