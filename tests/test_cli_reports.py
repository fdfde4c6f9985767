"""``gst-tts demo-report`` and ``evaluate`` in-process on a tiny random model."""

from __future__ import annotations

from dataclasses import asdict
from functools import partialmethod
import json

from conftest import tone, write_corpus, write_tiny_checkpoint
import numpy as np
import pytest
import soundfile as sf

from gst_tts.analysis import alignment
from gst_tts.audio.features import AudioConfig
from gst_tts.cli import main
from gst_tts.demo import corpus as demo_corpus
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.training.checkpoint import load_checkpoint, save_checkpoint

MODEL_RATE = 16000  # anything but espeak's rate, so that mixing the two up shows
REFERENCE_F0 = 200.0
REFERENCE_SECONDS = 1.0


def fake_espeak_clip(text, style):
    """What render_sentence returns (a clip at espeak's rate), without espeak: a known pitch and length."""
    return tone(REFERENCE_SECONDS, demo_corpus.SAMPLE_RATE, REFERENCE_F0)


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
        # An untrained model rarely stops on its own; a short bound keeps the run fast.
        mp.setattr(Synthesizer, "synthesize", partialmethod(Synthesizer.synthesize, max_decoder_steps=8))
        rc = main(["demo-report", "--checkpoint", str(checkpoint_16k), "--corpus", str(corpus), "--out", str(out),
                   "--sentences", "1", "--device", "cpu"])
    assert rc == 0
    return out


def test_demo_report_references_keep_espeak_rate_with_a_16k_model(demo_report):
    report = json.loads((demo_report / "summary.json").read_text())
    for style in demo_corpus.STYLES:
        info = sf.info(str(demo_report / "references" / f"{style.name}.wav"))
        assert info.samplerate == demo_corpus.SAMPLE_RATE
        assert info.duration == pytest.approx(REFERENCE_SECONDS, abs=0.01)
        ref = report["references"][style.name]
        assert ref["duration_s"] == pytest.approx(REFERENCE_SECONDS, abs=0.01)
        assert ref["median_f0_hz"] == pytest.approx(REFERENCE_F0, rel=0.03)


def test_demo_report_reference_reaches_the_model_resampled(demo_report, checkpoint_16k):
    synth = Synthesizer.from_checkpoint(checkpoint_16k, device="cpu")
    from_file = synth.reference_mel(demo_report / "references" / f"{demo_corpus.STYLES[0].name}.wav")
    from_clip = synth.reference_mel((fake_espeak_clip("", None), demo_corpus.SAMPLE_RATE))
    assert from_file.shape == from_clip.shape
    assert float((from_file - from_clip).abs().mean()) < 0.05


def test_demo_report_states_the_aligned_definition(demo_report):
    report = json.loads((demo_report / "summary.json").read_text())
    summary = report["alignment"]
    assert summary["aligned_criteria"] == alignment.ALIGNED_CRITERIA
    text = (demo_report / "summary.txt").read_text()
    assert f"aligned {summary['ok_rate']:.0%} ({alignment.ALIGNED_CRITERIA})" in text


def test_evaluate_states_the_aligned_definition(checkpoint_16k, tmp_path, capsys, monkeypatch):
    corpus = write_corpus(tmp_path / "corpus", n=2, rate=demo_corpus.SAMPLE_RATE)
    monkeypatch.setattr(Synthesizer, "synthesize", partialmethod(Synthesizer.synthesize, max_decoder_steps=8))
    out = tmp_path / "eval"
    rc = main(["evaluate", "--checkpoint", str(checkpoint_16k), "--corpus", str(corpus), "--split", "train",
               "--out", str(out), "--device", "cpu"])
    stdout, err = capsys.readouterr()
    assert rc == 0, err
    summary = json.loads((out / "summary.json").read_text())["train"]["summary"]
    assert summary["aligned_criteria"] == alignment.ALIGNED_CRITERIA
    assert f"aligned {summary['ok_rate']:.0%}" in stdout and f"aligned: {alignment.ALIGNED_CRITERIA}" in stdout
    assert summary["count"] == 2 and np.isfinite(summary["focus"])
