"""``gst-tts dump-gta-mels``: one teacher-forced, denormalised mel per utterance (whole decoder
steps, aligned with the recording's frames) and a manifest; bad input is one line, exit 2."""

from __future__ import annotations

import json
import shutil

from conftest import write_corpus
import numpy as np
import pytest
import torch

from gst_tts.cli import main
from gst_tts.data.batching import Collate, TTSDataset, encode_texts
from gst_tts.data.cache import FeatureCache
from gst_tts.data.corpus import read_corpus
from gst_tts.data.gta import GtaMels
from gst_tts.checkpoints.acoustic import checkpoint_parts, load_checkpoint, model_from_checkpoint


def test_writes_teacher_forced_mels_and_a_manifest(tiny_checkpoint, tmp_path, capsys):
    corpus, cache, out = write_corpus(tmp_path / "corpus", n=3), tmp_path / "cache", tmp_path / "gta"
    args = [
        "dump-gta-mels",
        "--checkpoint",
        str(tiny_checkpoint),
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--cache-dir",
        str(cache),
        "--batch-size",
        "1",
        "--device",
        "cpu",
    ]
    assert main(args) == 0, capsys.readouterr().err
    ckpt = load_checkpoint(tiny_checkpoint)
    symbols, audio_config, stats = checkpoint_parts(ckpt)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "gst-tts-gta-mels" and manifest["reduction_factor"] == 2
    assert manifest["checkpoint"] == str(tiny_checkpoint) and manifest["audio_config"]["hop_length"] == 256
    features = FeatureCache(cache, audio_config)
    for utt_id, frames in manifest["entries"].items():
        cached = len(features.load(utt_id))
        assert frames == cached - cached % 2  # whole decoder steps of the recording's frames
    gta = GtaMels(out, audio_config)
    assert sorted(p.name for p in out.iterdir()) == ["UT-000.npy", "UT-001.npy", "UT-002.npy", "manifest.json"]

    # The shortest utterance goes first, with the seed fresh: recompute it teacher-forced.
    utterances = read_corpus(corpus)
    dataset = TTSDataset(
        utterances, encode_texts(utterances, symbols), features.prepare(utterances, progress=False), features, stats
    )
    first = min(range(3), key=lambda i: dataset.lengths[i])
    batch = Collate(2, symbols.pad_id)([dataset[first]])
    model = model_from_checkpoint(ckpt).eval()
    torch.manual_seed(0)  # --seed's default
    with torch.no_grad():
        expected = stats.denormalize(
            model(batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"]).mel_postnet[0]
        )
    np.testing.assert_allclose(gta.load(utterances[first].id), expected.numpy(), atol=1e-5)

    # The same seed gives the same mels.
    before = {p.name: np.load(p) for p in out.glob("*.npy")}
    assert main(args) == 0
    for name, mel in before.items():
        np.testing.assert_array_equal(np.load(out / name), mel)


@pytest.mark.parametrize("case", ["no corpus", "out is a file", "bad checkpoint", "batch size", "id naming a path"])
def test_bad_input_is_one_line_exit_2(case, tiny_checkpoint, tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus", n=2)
    if case == "id naming a path":  # <id>.npy would land beside --out; a wav where the id points
        (corpus / "metadata.csv").write_text("../evil|Sentence zero.|sentence zero.\n")
        shutil.copy(corpus / "wavs" / "UT-000.wav", corpus / "evil.wav")
    (tmp_path / "file").write_text("x")
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    args = {
        "--checkpoint": str(tiny_checkpoint),
        "--corpus": str(corpus),
        "--out": str(tmp_path / "gta"),
        "--cache-dir": str(tmp_path / "cache"),
        "--device": "cpu",
    }
    changed, expected = {
        "no corpus": ({"--corpus": str(tmp_path / "missing")}, "corpus folder not found"),
        "out is a file": ({"--out": str(tmp_path / "file")}, "is a file"),
        "bad checkpoint": ({"--checkpoint": str(tmp_path / "bad.pt")}, "not a gst-tts checkpoint"),
        "batch size": ({"--batch-size": "0"}, "--batch-size must be at least 1"),
        "id naming a path": ({}, f"{corpus / 'metadata.csv'}:1: id '../evil' holds a path separator"),
    }[case]
    args.update(changed)
    assert main(["dump-gta-mels", *[x for kv in args.items() for x in kv]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gst-tts dump-gta-mels: error:") and err.count("\n") == 1 and expected in err, err
    assert not (tmp_path / "gta").exists() and not list(tmp_path.rglob("evil.npy"))
