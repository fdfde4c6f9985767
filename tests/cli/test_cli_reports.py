"""``gst-tts demo-report`` and ``check-alignment`` in-process on a tiny random model."""

from __future__ import annotations

from dataclasses import asdict
import json

from conftest import seconds_for_steps, tone, write_corpus, write_tiny_checkpoint
import numpy as np
import pytest
import soundfile as sf

from gst_tts.analysis import alignment, intelligibility, style_transfer
from gst_tts.audio.features import AudioConfig
from gst_tts.cli import main
from gst_tts.demo import corpus as demo_corpus
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.checkpoints.acoustic import load_checkpoint, save_checkpoint


class CountingASR:
    """A stand-in ASR that hears nothing and counts the clips (the real one: tests/analysis/test_intelligibility.py)."""

    clips = 0

    def __init__(self, model=None, **_):
        CountingASR.clips = 0

    def transcribe(self, samples, sample_rate):
        CountingASR.clips += 1
        return ""

    def describe(self):
        return "counting"


MODEL_RATE = 16000  # anything but espeak's rate, so that mixing the two up shows
REFERENCE_SECONDS = 1.0
N_REFERENCES = 3


def fake_espeak_clip(text, settings):
    """What render_sentence returns (a clip at espeak's rate), without espeak: the pitch asked for, a known length."""
    return tone(REFERENCE_SECONDS, demo_corpus.SAMPLE_RATE, settings.f0_hz)


@pytest.fixture(scope="module")
def checkpoint_16k(tmp_path_factory):
    path = write_tiny_checkpoint(tmp_path_factory.mktemp("ckpt16k") / "tiny16k.pt")
    ckpt = load_checkpoint(path)
    ckpt["audio_config"] = asdict(AudioConfig(sample_rate=MODEL_RATE))
    return save_checkpoint(path, ckpt)


@pytest.fixture(scope="module")
def demo_report(checkpoint_16k, tmp_path_factory):
    """One demo-report run on the 16 kHz model, shared by the tests below (it takes seconds)."""
    root = tmp_path_factory.mktemp("demo_report")
    corpus = write_corpus(root / "corpus")
    out = root / "samples"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(demo_corpus, "render_sentence", fake_espeak_clip)
        mp.setattr(intelligibility, "WhisperTranscriber", CountingASR)
        mp.setattr(intelligibility, "asr_available", lambda: True)
        # An untrained model rarely stops on its own; a short bound keeps the run fast.
        rc = main(
            [
                "demo-report",
                "--checkpoint",
                str(checkpoint_16k),
                "--corpus",
                str(corpus),
                "--out",
                str(out),
                "--sentences",
                "1",
                "--espeak",
                str(N_REFERENCES),
                "--device",
                "cpu",
                "--max-seconds",
                str(seconds_for_steps(8, sample_rate=MODEL_RATE)),
                "--griffin-lim-iters",
                "2",
            ]
        )
    assert rc == 0
    return out


def test_demo_report_scores_new_word_sentences_neutral_and_in_reference_styles(demo_report):
    from gst_tts.demo.sentences import NEW_WORD_SENTENCES

    report = json.loads((demo_report / "summary.json").read_text())
    sets = report["intelligibility"]["sets"]
    # The tiny checkpoint records no validation ids: no teacher-forced figure; the new sentences read by the
    # corpus's synthesizer (the floor), then by the model in every style.
    assert list(sets) == ["corpus voices, new words", "neutral", *[r["name"] for r in report["references"]]]
    assert all(s["summary"] == {"count": len(NEW_WORD_SENTENCES), "cer": 1.0, "wer": 1.0} for s in sets.values())
    assert CountingASR.clips == len(NEW_WORD_SENTENCES) * (2 + N_REFERENCES)
    summary = (demo_report / "summary.txt").read_text()
    assert "CER 1.000   WER 1.000   28 sentences of new words, neutral" in summary
    assert "28 sentences of new words read by espeak-ng in corpus styles (not the model)" in summary
    assert (demo_report / "intelligibility" / "neutral" / "s001.wav").is_file()
    assert not (demo_report / "intelligibility" / "corpus-voices,-new-words").exists()


def test_demo_report_references_keep_espeak_rate_with_a_16k_model(demo_report):
    report = json.loads((demo_report / "summary.json").read_text())
    assert len(report["references"]) == N_REFERENCES
    for ref in report["references"]:
        info = sf.info(str(demo_report / "references" / f"{ref['name']}.wav"))
        assert info.samplerate == demo_corpus.SAMPLE_RATE
        assert info.duration == pytest.approx(REFERENCE_SECONDS, abs=0.01)
        assert ref["reference"]["duration_s"] == pytest.approx(REFERENCE_SECONDS, abs=0.01)
        assert ref["reference"]["f0_hz"] == pytest.approx(ref["info"]["f0_hz"], rel=0.03)
        assert ref["info"]["variant"] in demo_corpus.UNSEEN_VARIANTS


def test_demo_report_reference_reaches_the_model_resampled(demo_report, checkpoint_16k):
    synth = Synthesizer.from_checkpoint(checkpoint_16k, device="cpu")
    ref = json.loads((demo_report / "summary.json").read_text())["references"][0]
    from_file = synth.styles.reference_mel(demo_report / "references" / f"{ref['name']}.wav")
    clip = tone(REFERENCE_SECONDS, demo_corpus.SAMPLE_RATE, ref["info"]["f0_hz"])
    from_clip = synth.styles.reference_mel((clip, demo_corpus.SAMPLE_RATE))
    assert from_file.shape == from_clip.shape
    assert float((from_file - from_clip).abs().mean()) < 0.05


def test_demo_report_states_the_aligned_definition(demo_report):
    report = json.loads((demo_report / "summary.json").read_text())
    summary = report["alignment"]
    assert summary["aligned_criteria"] == alignment.ALIGNED_CRITERIA
    text = (demo_report / "summary.txt").read_text()
    assert f"aligned {summary['ok_rate']:.0%} ({alignment.ALIGNED_CRITERIA})" in text


def test_demo_report_summarises_style_transfer_from_unseen_references(demo_report):
    report = json.loads((demo_report / "summary.json").read_text())
    fits = report["fits"][style_transfer.ESPEAK_GROUP]
    assert set(fits) == set(style_transfer.MEASURES) and fits["f0_hz"]["n"] <= N_REFERENCES
    text = (demo_report / "summary.txt").read_text()
    assert f"Style transfer from {N_REFERENCES} unseen references, the model alone" in text
    # the copies after the model come after the model's own figures, labelled, and apart in the JSON
    assert text.index("the model alone") < text.index("Post-processed, not the model: the reference's tempo copied")
    assert report["tempo"] == "decoded" and report["post_processed"]["copied"] == "tempo"
    assert set(report["post_processed"]["fits"][style_transfer.ESPEAK_GROUP]) == set(style_transfer.MEASURES)
    for name, (_, label) in style_transfer.MEASURES.items():
        line = next(line for line in text.splitlines() if line.strip().startswith(label))
        assert " r " in line and " slope " in line, line
    for ref in report["references"]:
        assert (demo_report / ref["name"] / "01.wav").is_file() and (
            demo_report / ref["name"] / "01.alignment.png"
        ).is_file()
        assert ref["info"]["label"] in text


def test_check_alignment_states_the_aligned_definition(checkpoint_16k, tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus", n=2, rate=demo_corpus.SAMPLE_RATE)
    out = tmp_path / "eval"
    rc = main(
        [
            "check-alignment",
            "--checkpoint",
            str(checkpoint_16k),
            "--corpus",
            str(corpus),
            "--split",
            "train",
            "--out",
            str(out),
            "--device",
            "cpu",
            "--max-seconds",
            str(seconds_for_steps(8, sample_rate=MODEL_RATE)),
        ]
    )
    stdout, err = capsys.readouterr()
    assert rc == 0, err
    summary = json.loads((out / "summary.json").read_text())["train"]["summary"]
    assert summary["aligned_criteria"] == alignment.ALIGNED_CRITERIA
    assert f"aligned {summary['ok_rate']:.0%}" in stdout and f"aligned: {alignment.ALIGNED_CRITERIA}" in stdout
    assert summary["count"] == 2 and np.isfinite(summary["focus"])


def test_check_alignment_decodes_in_batches_each_sentence_with_its_own_reference(
    checkpoint_16k, tmp_path, capsys, monkeypatch
):
    corpus = write_corpus(tmp_path / "corpus", n=5)
    calls = []
    synthesize = Synthesizer.synthesize

    def recording(self, texts, **kwargs):
        calls.append(
            (list(texts), [str(s.reference) for s in kwargs["styles"]], kwargs["batch_size"], kwargs["vocode"])
        )
        return synthesize(self, texts, **kwargs)

    monkeypatch.setattr(Synthesizer, "synthesize", recording)
    rc = main(
        [
            "check-alignment",
            "--checkpoint",
            str(checkpoint_16k),
            "--corpus",
            str(corpus),
            "--split",
            "train",
            "--device",
            "cpu",
            "--max-seconds",
            str(seconds_for_steps(4, sample_rate=MODEL_RATE)),
            "--batch-size",
            "2",
            "--out",
            str(tmp_path / "eval"),
        ]
    )
    assert rc == 0, capsys.readouterr().err
    assert [len(texts) for texts, *_ in calls] == [2, 2, 1]
    for texts, references, batch_size, vocode in calls:
        assert batch_size == 2 and vocode is False  # grading needs no waveform
        for text, reference in zip(texts, references):  # each sentence read in the style of its own recording
            assert reference.endswith(f"UT-{int(text.split()[-1].rstrip('.')):03d}.wav")
    rows = json.loads((tmp_path / "eval" / "summary.json").read_text())["train"]["utterances"]
    assert [r["id"] for r in rows] == [f"UT-{i:03d}" for i in range(5)]
    assert all(r["decoder_steps"] == 4 for r in rows)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--batch-size", "0"], "--batch-size"),
        (["--stop-threshold", "2"], "--stop-threshold"),
        (["--max-seconds", "0"], "--max-seconds must be positive"),
    ],
)
def test_check_alignment_bad_decoding_options_are_one_line_errors(checkpoint_16k, tmp_path, capsys, args, message):
    corpus = write_corpus(tmp_path / "corpus", n=1)
    rc = main(
        ["check-alignment", "--checkpoint", str(checkpoint_16k), "--corpus", str(corpus), "--split", "train", *args]
    )
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("gst-tts check-alignment: error: " + message) and err.count("\n") == 1


@pytest.mark.parametrize("command", ["check-alignment", "demo-report"])
def test_an_out_that_is_a_file_is_refused_before_any_decoding(checkpoint_16k, tmp_path, capsys, monkeypatch, command):
    corpus = write_corpus(tmp_path / "corpus", n=1)
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder")
    monkeypatch.setattr(Synthesizer, "synthesize", lambda *a, **k: pytest.fail("decoded before checking --out"))
    extra = ["--split", "train"] if command == "check-alignment" else []
    rc = main(
        [
            command,
            "--checkpoint",
            str(checkpoint_16k),
            "--corpus",
            str(corpus),
            "--device",
            "cpu",
            "--out",
            str(blocker),
            *extra,
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"gst-tts {command}: error: --out") and err.count("\n") == 1
    assert blocker.read_text() == "a file, not a folder"
