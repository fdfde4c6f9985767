"""Tests for the espeak-ng demo corpus: files, determinism, sentences, independent per-utterance
styles, the pitch calibration and unseen voices."""

from __future__ import annotations

import csv
import json
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
from gst_tts.demo.corpus import (
    CORPUS_FORMANT_SCALE_RANGE,
    CORPUS_VARIANTS,
    F0_RANGE_HZ,
    FORMANT_SCALE_RANGE,
    INTONATION_RANGE,
    LABELS,
    PROSODY_COLUMNS,
    RATE_RANGE_WPM,
    SAMPLE_RATE,
    UNSEEN_VARIANTS,
    UNSEEN_VOICES,
    VETTED_VARIANTS,
    WORD_GAP_RANGE,
    SpeechSettings,
    coarse_label,
    draw_settings,
    make_demo_corpus,
    render_sentence,
    render_sentences,
    unseen_settings,
)
from gst_tts.demo.espeak import SHARED_SYNTH, EspeakSynth, builtin_variant
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
        assert 0.5 < info.duration < 12.0
    assert sorted(p.name for p in (corpus / "wavs").iterdir()) == sorted(f"{row[0]}.wav" for row in rows)
    readme = (corpus / "README.txt").read_text(encoding="utf-8")
    assert "low_slow" in readme and "90-260 Hz" in readme and "110-200 wpm" in readme


def _read_prosody(corpus: Path) -> list[dict[str, str]]:
    with open(corpus / "prosody.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_styles_and_prosody_files_describe_every_utterance(corpus: Path) -> None:
    ids = [row[0] for row in _read_rows(corpus / "metadata.csv")]
    labels = _read_rows(corpus / "styles.csv")
    assert [row[0] for row in labels] == ids and {label for _, label in labels} <= set(LABELS)
    prosody = _read_prosody(corpus)
    assert list(prosody[0]) == list(PROSODY_COLUMNS)
    assert [row["id"] for row in prosody] == ids
    expected = draw_settings(N_UTTERANCES, seed=3)
    for row, (_, label), settings in zip(prosody, labels, expected):
        assert row["label"] == label == settings.label == coarse_label(float(row["f0_hz"]), int(row["rate_wpm"]))
        assert (row["variant"], float(row["f0_hz"]), int(row["rate_wpm"]), int(row["word_gap"])) == (
            settings.variant,
            settings.f0_hz,
            settings.rate_wpm,
            settings.word_gap,
        )
        assert (int(row["pitch_base_hz"]), int(row["pitch_top_hz"])) == settings.pitch_line


def test_silence_is_trimmed(corpus: Path) -> None:
    audio, _ = sf.read(str(corpus / "wavs" / "DEMO-0001.wav"))
    loud = np.flatnonzero(np.abs(audio) > 0.01)
    keep = int(demo_corpus.KEEP_SILENCE_S * SAMPLE_RATE)
    assert loud[0] <= keep + 1 and len(audio) - 1 - loud[-1] <= keep + 1


def test_same_seed_gives_identical_bytes(corpus: Path, tmp_path: Path) -> None:
    # Rendering other text first must not change the result (espeak keeps internal state).
    render_sentences(generate_sentences(3, 99), unseen_settings(1, 5)[0])
    again = make_demo_corpus(tmp_path / "again", utterances=N_UTTERANCES, seed=3, progress=False)
    for name in ("metadata.csv", "styles.csv", "prosody.csv", "README.txt"):
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
    settings = draw_settings(1, seed=0)[0]
    clips = render_sentences(["Hello there.", "Where is the station?"], settings)
    assert len(clips) == 2
    assert all(clip.dtype == np.float32 and clip.ndim == 1 and clip.size > SAMPLE_RATE // 4 for clip in clips)
    assert np.array_equal(clips[0], render_sentence("Hello there.", settings))


# ------------------------------------------------------------------ per-utterance settings


def test_settings_are_deterministic_per_seed() -> None:
    assert draw_settings(50, seed=4) == draw_settings(50, seed=4)
    assert draw_settings(50, seed=4) != draw_settings(50, seed=5)
    assert draw_settings(20, seed=4) == draw_settings(50, seed=4)[:20]  # a longer corpus extends a shorter one
    assert unseen_settings(12, seed=4) == unseen_settings(12, seed=4) != unseen_settings(12, seed=5)


def _columns(settings: list[SpeechSettings]) -> dict[str, np.ndarray]:
    return {
        "log_f0": np.log([s.f0_hz for s in settings]),
        "log_rate": np.log([s.rate_wpm for s in settings]),
        "log_intonation": np.log([s.intonation for s in settings]),
        "word_gap": np.array([s.word_gap for s in settings], dtype=float),
        "log_formant": np.log([s.formant_scale for s in settings]),
    }


def test_settings_cover_their_ranges() -> None:
    settings = draw_settings(200, seed=0)
    f0 = [s.f0_hz for s in settings]
    rate = [s.rate_wpm for s in settings]
    assert F0_RANGE_HZ[0] <= min(f0) < 100 and 240 < max(f0) <= F0_RANGE_HZ[1]
    assert RATE_RANGE_WPM[0] <= min(rate) < 115 and 190 < max(rate) <= RATE_RANGE_WPM[1]
    assert INTONATION_RANGE[0] <= min(s.intonation for s in settings) < 1.25
    assert 1.9 < max(s.intonation for s in settings) <= INTONATION_RANGE[1]
    assert {s.word_gap for s in settings} == set(range(WORD_GAP_RANGE[0], WORD_GAP_RANGE[1] + 1))
    assert {s.formant_scale for s in settings} == {1.0} and CORPUS_FORMANT_SCALE_RANGE == (1.0, 1.0)
    assert {s.variant for s in settings} == set(CORPUS_VARIANTS) == {"m3"}
    timbres = draw_settings(200, seed=0, variants=VETTED_VARIANTS, formant_scale_range=FORMANT_SCALE_RANGE)
    assert {s.variant for s in timbres} == set(VETTED_VARIANTS)
    assert all(FORMANT_SCALE_RANGE[0] <= s.formant_scale <= FORMANT_SCALE_RANGE[1] for s in timbres)
    assert len({s.formant_scale for s in timbres}) > 100
    # The other quantities do not depend on the timbres drawn.
    assert [(s.f0_hz, s.rate_wpm, s.intonation, s.word_gap) for s in timbres] == [
        (s.f0_hz, s.rate_wpm, s.intonation, s.word_gap) for s in settings
    ]
    assert {s.label for s in settings} == set(LABELS)
    # Log-uniform: the geometric middle splits the draws about evenly.
    assert 0.4 < np.mean([s.label.startswith("low") for s in settings]) < 0.6


def test_settings_are_drawn_independently() -> None:
    settings = draw_settings(200, seed=0, variants=VETTED_VARIANTS, formant_scale_range=FORMANT_SCALE_RANGE)
    columns = _columns(settings)
    names = list(columns)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert abs(np.corrcoef(columns[a], columns[b])[0, 1]) < 0.2, (a, b)
    # No variant goes with a pitch or a rate: each variant's share of high and fast utterances is
    # near the overall one (the timbre shortcut of the old four-style corpus).
    variants = np.array([s.variant for s in settings])
    for name in ("log_f0", "log_rate"):
        for variant in VETTED_VARIANTS:
            assert abs(np.corrcoef(variants == variant, columns[name])[0, 1]) < 0.25, (variant, name)


def test_unseen_variants_and_voices_never_appear_in_the_corpus(corpus: Path) -> None:
    assert not set(UNSEEN_VARIANTS) & set(VETTED_VARIANTS) and set(CORPUS_VARIANTS) <= set(VETTED_VARIANTS)
    assert "f2" not in VETTED_VARIANTS + UNSEEN_VARIANTS  # reads uninitialised memory
    drawn = draw_settings(1000, seed=0)
    assert not {s.variant for s in drawn} & set(UNSEEN_VARIANTS)
    assert {s.voice for s in drawn} == {"en-us"}
    assert not {row["variant"] for row in _read_prosody(corpus)} & set(UNSEEN_VARIANTS)
    unseen = unseen_settings(20, seed=0)
    assert {s.variant for s in unseen} == set(UNSEEN_VARIANTS)
    assert {s.voice for s in unseen} <= set(UNSEEN_VOICES) and len({s.voice for s in unseen}) > 1


def test_no_corpus_variant_copies_an_unseen_variants_formants() -> None:
    # iven2-4 share iven's formant lines (only their voicing differs): a corpus with them would
    # have heard the "unseen" timbre.
    def formants(variant: str) -> frozenset[tuple[str, ...]]:
        return frozenset(
            tuple(line.split()) for line in builtin_variant(variant).splitlines() if line.split()[:1] == ["formant"]
        )

    unseen = {variant: formants(variant) for variant in UNSEEN_VARIANTS}
    for variant in VETTED_VARIANTS:
        assert formants(variant) not in unseen.values(), variant
    assert formants("iven2") == unseen["iven"]  # the check can fail


def test_unseen_settings_are_stratified_inside_the_ranges() -> None:
    n = 12
    settings = unseen_settings(n, seed=3)
    columns = _columns(settings)
    for name, bounds in (("log_f0", F0_RANGE_HZ), ("log_rate", RATE_RANGE_WPM), ("log_intonation", INTONATION_RANGE)):
        low, high = np.log(bounds)
        slices = np.floor((columns[name] - low) / (high - low) * n).astype(int)
        # Rounding to stored precision may push a value over a slice edge by a hair.
        assert len(set(np.clip(slices, 0, n - 1))) >= n - 2, name
    assert abs(np.corrcoef(columns["log_f0"], columns["log_rate"])[0, 1]) < 0.5


def test_pitch_line_follows_the_calibration() -> None:
    low, high = SpeechSettings("m3", 100.0, 1.5, 175, 0, 1.0), SpeechSettings("m3", 200.0, 1.5, 175, 0, 1.0)
    (low_base, low_top), (high_base, high_top) = low.pitch_line, high.pitch_line
    assert high_base == pytest.approx(2 * low_base, rel=0.05)
    assert abs(low_top - low_base * 1.5) <= 1 and abs(high_top - high_base * 1.5) <= 1
    # Wider intonation raises the median for the same base, so the base must come down.
    assert SpeechSettings("m3", 100.0, 2.0, 175, 0, 1.0).pitch_line[0] < low_base


def test_variant_text_scales_formants_and_replaces_the_pitch_line() -> None:
    settings = SpeechSettings("m3", 150.0, 1.5, 175, 0, 1.05)
    text = settings.variant_text()
    lines = text.splitlines()
    assert lines[-1] == "pitch {} {}".format(*settings.pitch_line)
    assert "formant 1 101 97 100" in lines  # m3's "formant 1  96  97 100", 96 x 1.05
    assert sum(line.startswith("formant ") for line in lines) == 9  # every formant, set or not
    # A variant given as text renders like the bundled variant of the same text.
    plain = SHARED_SYNTH.synthesize("Hello there.", "en-us+m3", 175, 50, 50)
    assert np.array_equal(
        SHARED_SYNTH.synthesize("Hello there.", "en-us", 175, 50, 50, variant=builtin_variant("m3")), plain
    )


def test_unloadable_library_raises_gst_tts_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import espeakng_loader

    from gst_tts.text import espeak

    monkeypatch.setattr(espeak, "_folder", None)  # a new private folder: the library is copied again
    monkeypatch.setattr(espeakng_loader, "get_library_path", lambda: "/nonexistent/libespeak-ng.so")
    with pytest.raises(GstTtsError, match="espeak-ng"):
        EspeakSynth().synthesize("Hello.", "en-us", 175, 50)


def _median_f0(clips: list[np.ndarray]) -> float:
    f0, _, _ = librosa.pyin(np.concatenate(clips), fmin=50, fmax=500, sr=SAMPLE_RATE)
    return float(np.nanmedian(f0))


def test_settings_set_pitch_and_rate_whatever_the_variant() -> None:
    texts = generate_sentences(2, seed=12345)  # held-out text, not corpus text
    # A male and a female timbre, each at both ends of the pitch range: the calibrated pitch line
    # puts the median F0 where it was asked for, whichever the variant.
    for variant in ("m3", "linda"):
        for f0 in (95.0, 240.0):
            measured = _median_f0(render_sentences(texts, SpeechSettings(variant, f0, 1.5, 175, 0, 1.0)))
            assert abs(12 * np.log2(measured / f0)) < 1.5, (variant, f0, measured)
    slow = render_sentences(texts, SpeechSettings("m6", 150.0, 1.5, 115, 0, 1.0))
    fast = render_sentences(texts, SpeechSettings("m6", 150.0, 1.5, 230, 0, 1.0))
    assert sum(map(len, slow)) / sum(map(len, fast)) > 1.6
    # The word gap lengthens the clip, the formant scale does not.
    gaps = render_sentences(texts, SpeechSettings("m6", 150.0, 1.5, 175, 6, 1.0))
    plain = render_sentences(texts, SpeechSettings("m6", 150.0, 1.5, 175, 0, 1.0))
    shifted = render_sentences(texts, SpeechSettings("m6", 150.0, 1.5, 175, 0, 1.08))
    assert sum(map(len, gaps)) > 1.1 * sum(map(len, plain))
    assert sum(map(len, shifted)) == pytest.approx(sum(map(len, plain)), rel=0.02)
    assert not np.array_equal(shifted[0][: len(plain[0])], plain[0][: len(shifted[0])])


def _determinism_settings() -> list[SpeechSettings]:
    """Every corpus and unseen variant once (and every unseen voice), with varied settings."""
    drawn = draw_settings(len(VETTED_VARIANTS), 3, formant_scale_range=FORMANT_SCALE_RANGE) + unseen_settings(
        len(UNSEEN_VARIANTS) * 2, 3
    )
    variants = VETTED_VARIANTS + UNSEEN_VARIANTS * 2
    voices = ("en-us",) * len(VETTED_VARIANTS) + UNSEEN_VOICES * len(UNSEEN_VARIANTS)
    return [
        SpeechSettings(v, s.f0_hz, s.intonation, s.rate_wpm, s.word_gap, s.formant_scale, voice)
        for v, voice, s in zip(variants, voices, drawn)
    ]


def test_rendering_is_the_same_in_other_processes() -> None:
    # Some espeak voice variants (f2: breath noise, echo) read uninitialised memory, so their
    # samples change with the address layout of the process. Fresh processes (new layouts, one with
    # a filled heap) must render exactly what this one does, for every variant in use.
    script = (
        "import sys, numpy as np\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from test_demo_corpus import _determinism_settings\n"
        "from gst_tts.demo.corpus import render_sentence\n"
        "np.savez(sys.argv[1], *[render_sentence('Where is the old station?', s) for s in _determinism_settings()])\n"
    )
    settings = _determinism_settings()
    assert {s.variant for s in settings} == set(VETTED_VARIANTS + UNSEEN_VARIANTS)
    assert {s.voice for s in settings} == set(UNSEEN_VOICES)
    expected = [render_sentence("Where is the old station?", s) for s in settings]
    with tempfile.TemporaryDirectory() as tmp:
        for run, perturb in enumerate(("", "77", "")):
            out = Path(tmp) / f"clips{run}.npz"
            env = {**os.environ, "MALLOC_PERTURB_": perturb}
            subprocess.run(
                [sys.executable, "-c", script, str(out), str(Path(__file__).parent)], env=env, check=True, timeout=120
            )
            with np.load(out) as saved:
                for index, clip in enumerate(expected):
                    assert np.array_equal(saved[f"arr_{index}"], clip), (run, settings[index])


def test_new_word_sentences_use_no_content_word_of_the_templates_or_the_read_sentences():
    from gst_tts.demo.sentences import (
        NEW_WORD_SENTENCES,
        SHARED_FUNCTION_WORDS,
        generate_sentences,
        read_sentences,
        words_of,
    )

    template_words = set().union(*(words_of(s) for seed in range(3) for s in generate_sentences(20000, seed)))
    read_words = set().union(*map(words_of, read_sentences()))
    new_words = set().union(*map(words_of, NEW_WORD_SENTENCES))
    assert len(NEW_WORD_SENTENCES) >= 24 and len(set(NEW_WORD_SENTENCES)) == len(NEW_WORD_SENTENCES)
    assert new_words & (template_words | read_words) <= SHARED_FUNCTION_WORDS
    assert len(read_words - template_words) > 2000  # what the read sentences are for: words the templates lack


def test_read_sentences_are_clean_and_distinct() -> None:
    from gst_tts.demo.sentences import is_corpus_sentence, read_sentences

    sentences = read_sentences()
    assert len(sentences) >= 1200 and len(set(sentences)) == len(sentences)
    assert all(is_corpus_sentence(s) and len(s) <= 60 and s[-1] in ".?!" for s in sentences), [
        s for s in sentences if not is_corpus_sentence(s)
    ][:3]


def test_demo_sentences_interleave_read_sentences_at_their_share() -> None:
    from gst_tts.demo.sentences import demo_sentences, read_sentences

    bundled = set(read_sentences())
    half = demo_sentences(400, seed=0, read_share=0.5)
    assert half == demo_sentences(400, seed=0, read_share=0.5) and len(set(half)) == 400
    assert [s in bundled for s in half] == [i % 2 == 1 for i in range(400)]
    assert [s for s in half if s not in bundled] == generate_sentences(200, seed=0)
    quarter = demo_sentences(400, seed=0, read_share=0.25)
    assert sum(s in bundled for s in quarter) == 100
    assert demo_sentences(50, seed=0, read_share=0.0) == generate_sentences(50, seed=0)
    other_seed = demo_sentences(400, seed=1, read_share=0.5)
    assert {s for s in other_seed if s in bundled} != {s for s in half if s in bundled}
    with pytest.raises(GstTtsError, match="between 0 and 1, got 1.5"):
        demo_sentences(10, seed=0, read_share=1.5)
    with pytest.raises(GstTtsError, match="need 5000 read sentences"):
        demo_sentences(5000, seed=0, read_share=1.0)


def test_a_corpus_of_other_timbres_and_a_sentence_file(corpus: Path, tmp_path: Path) -> None:
    texts = tmp_path / "sentences.txt"
    texts.write_text("The first line is read.\nA second  one, with a comma.\nNot this one.\n", encoding="utf-8")
    made = make_demo_corpus(
        tmp_path / "one",
        utterances=2,
        seed=3,
        progress=False,
        variants=["m2"],
        formant_scale_range=(0.95, 1.05),
        texts=texts,
    )
    assert [row[1] for row in _read_rows(made / "metadata.csv")] == [
        "The first line is read.",
        "A second one, with a comma.",
    ]
    with open(made / demo_corpus.PROSODY_NAME, newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["variant"] for r in rows} == {"m2"} and all(0.95 <= float(r["formant_scale"]) <= 1.05 for r in rows)
    assert {r["formant_scale"] for r in rows} != {"1.000"}
    # The other draws are those of the default corpus of the same seed.
    default = draw_settings(2, seed=3)
    assert [float(r["f0_hz"]) for r in rows] == [s.f0_hz for s in default]
    assert [int(r["rate_wpm"]) for r in rows] == [s.rate_wpm for s in default]
    # Another file is another corpus: reusing the folder is refused.
    texts.write_text("Something else entirely.\nAnd more.\n", encoding="utf-8")
    with pytest.raises(GstTtsError, match="is not a demo corpus"):
        make_demo_corpus(
            made, utterances=2, seed=3, progress=False, variants=["m2"], formant_scale_range=(0.95, 1.05), texts=texts
        )


@pytest.mark.parametrize(
    "content, message",
    [
        ("One.\n", "1 sentences, fewer than the 2"),
        ("One.\n\nThree.\n", ":2: the sentence is empty"),
        ("One.\nI have 3 cats.\n", ":2: the sentence holds a digit"),
        ("One.\nA|B\n", ":2: the sentence holds '|'"),
    ],
)
def test_a_bad_sentence_file_is_refused_with_its_line(tmp_path: Path, content: str, message: str) -> None:
    texts = tmp_path / "sentences.txt"
    texts.write_text(content, encoding="utf-8")
    with pytest.raises(GstTtsError, match=re.escape(message)):
        make_demo_corpus(tmp_path / "c", utterances=2, progress=False, texts=texts)
    assert not (tmp_path / "c").exists()


def test_unknown_variants_and_bad_formant_ranges_are_refused(tmp_path: Path) -> None:
    with pytest.raises(GstTtsError, match="no espeak-ng variant 'nosuch'"):
        make_demo_corpus(tmp_path / "c", utterances=2, progress=False, variants=["nosuch"])
    with pytest.raises(GstTtsError, match="formant scale range"):
        make_demo_corpus(tmp_path / "c", utterances=2, progress=False, formant_scale_range=(1.1, 0.9))
    assert not (tmp_path / "c").exists()


def test_make_demo_corpus_command_takes_variants_formant_scale_and_a_text_file(tmp_path: Path, capsys) -> None:
    from gst_tts.cli import main

    texts = tmp_path / "sentences.txt"
    texts.write_text("The first line is read.\nThe second line.\n", encoding="utf-8")
    out = tmp_path / "corpus"
    assert (
        main(
            [
                "make-demo-corpus",
                "--out",
                str(out),
                "--utterances",
                "2",
                "--variants",
                "m3,m2",
                "--formant-scale",
                "1,1",
                "--text-file",
                str(texts),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "2 voice variants" in capsys.readouterr().out
    assert (out / "README.txt").read_text().count("m3, m2") == 1
    assert (
        main(
            [
                "make-demo-corpus",
                "--out",
                str(tmp_path / "vetted"),
                "--utterances",
                "2",
                "--variants",
                "vetted",
                "--formant-scale",
                "0.92,1.08",
                "--no-progress",
            ]
        )
        == 0
    )
    assert f"{len(VETTED_VARIANTS)} voice variants" in capsys.readouterr().out
    assert main(["make-demo-corpus", "--out", str(tmp_path / "c2"), "--formant-scale", "1", "--no-progress"]) == 2
    assert "--formant-scale: expected LOW,HIGH" in capsys.readouterr().err


def test_make_demo_corpus_command_takes_a_read_share(tmp_path: Path, capsys) -> None:
    from gst_tts.cli import main
    from gst_tts.demo.sentences import demo_sentences

    out = tmp_path / "templates"
    assert main(["make-demo-corpus", "--out", str(out), "--utterances", "2", "--read-share", "0", "--no-progress"]) == 0
    assert [row[1] for row in _read_rows(out / "metadata.csv")] == generate_sentences(2, seed=0)
    assert json.loads((out / "demo_corpus.json").read_text())["read_share"] == 0.0
    assert "LJ Speech" not in (out / "README.txt").read_text()
    default = tmp_path / "default"
    assert main(["make-demo-corpus", "--out", str(default), "--utterances", "2", "--no-progress"]) == 0
    assert [row[1] for row in _read_rows(default / "metadata.csv")] == demo_sentences(2, seed=0)
    assert "LJ Speech transcripts" in (default / "README.txt").read_text()
    texts = tmp_path / "sentences.txt"
    texts.write_text("One line.\nTwo lines.\n", encoding="utf-8")
    args = ["make-demo-corpus", "--out", str(tmp_path / "c"), "--text-file", str(texts), "--read-share", "0.5"]
    assert main([*args, "--no-progress"]) == 2
    assert "--read-share: the sentences of a --text-file are read as they are" in capsys.readouterr().err
    assert main(["make-demo-corpus", "--out", str(tmp_path / "c"), "--read-share", "2", "--no-progress"]) == 2
    assert "between 0 and 1, got 2" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
