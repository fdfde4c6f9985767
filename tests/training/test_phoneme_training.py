"""Training on a non-English corpus with phonemes: a tiny German corpus rendered with espeak-ng
(benchmarks/make_german_corpus.py), a few steps of the tiny model with ``data.text.frontend=phonemes
data.text.language=de``, and what the checkpoint, the synthesizer and the phoneme cache make of it."""

from __future__ import annotations

import json
import math
from pathlib import Path
import sys

import pytest
import torch

from gst_tts.checkpoints.acoustic import load_checkpoint
from gst_tts.data.cache import PhonemeCache
from gst_tts.errors import GstTtsError
from gst_tts.demo.sentences import generate_sentences
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.text.frontends import make_frontend
from gst_tts.text.phonemes import espeak_version
from gst_tts.text.symbols import SymbolTable
from gst_tts.training.data_builders import build_corpus
from gst_tts.training.trainer import Trainer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from make_german_corpus import german_sentences, make_german_corpus  # noqa: E402

STEPS = 2


def _german_cfg(make_cfg, root: Path, cache: Path, language: str = "de"):
    # One thread: a second only waits on a busy machine.
    cfg = make_cfg(root, cache, max_steps=STEPS, val_inference_utterances=1, threads=1)
    cfg.data.text.frontend, cfg.data.text.language = "phonemes", language
    return cfg


def test_a_german_corpus_trains_with_phonemes_and_the_checkpoint_reads_german(make_cfg, tmp_path, monkeypatch):
    corpus = make_german_corpus(tmp_path / "german", utterances=10, seed=5)
    texts = [line.split("|")[1] for line in (corpus / "metadata.csv").read_text(encoding="utf-8").splitlines()]
    cache = tmp_path / "cache"
    torch.manual_seed(0)
    trainer = Trainer(_german_cfg(make_cfg, corpus, cache), tmp_path / "run")
    logged: list[dict[str, float]] = []
    log_training = trainer.logger.log_training
    monkeypatch.setattr(
        trainer.logger,
        "log_training",
        lambda step, terms, *rest: (logged.append(dict(terms)), log_training(step, terms, *rest)),
    )
    state = trainer.fit()
    assert state.step == STEPS and state.skipped_batches == 0
    assert len(logged) == STEPS and all(math.isfinite(v) for terms in logged for v in terms.values())

    ckpt = load_checkpoint(tmp_path / "run" / "checkpoints" / "last.pt")
    stored = ckpt["symbols"]
    assert (stored["frontend"], stored["language"], stored["espeak_version"]) == ("phonemes", "de", espeak_version())
    expected = SymbolTable.for_corpus(make_frontend("phonemes", "de", "english"), texts)
    assert stored["symbols"] == list(expected.symbols)
    # Symbols German has and English lacks: the corpus's own, absent from the English demo
    # sentences read by en-us.
    english = SymbolTable.for_corpus(make_frontend("phonemes", "en-us", "english"), generate_sentences(200, seed=0))
    german_only = set(expected.symbols) - set(english.symbols)
    assert german_only and german_only <= set(stored["symbols"])

    synthesizer = Synthesizer.from_checkpoint(tmp_path / "run" / "checkpoints" / "last.pt", device="cpu")
    assert synthesizer.symbols.language == "de"
    # Sentences of the held-out stream (not trained on, same vocabulary); the first that holds a
    # German-only symbol.
    sentence = next(
        s
        for s in german_sentences(50, seed=5, exclude=texts, stream="heldout")
        if set(expected.to_symbols(s)) & german_only
    )
    ids = synthesizer.symbols.encode(sentence)
    assert torch.equal(ids, expected.encode(sentence))
    assert set(synthesizer.symbols.decode(ids)) & german_only

    german_cache = PhonemeCache(cache, make_frontend("phonemes", "de", "english")).path
    assert german_cache.is_file() and set(texts) <= set(json.loads(german_cache.read_text(encoding="utf-8")))
    english_corpus = build_corpus(_german_cfg(make_cfg, corpus, cache, language="en-us").data)
    assert english_corpus.symbols.language == "en-us"
    english_cache = PhonemeCache(cache, make_frontend("phonemes", "en-us", "english")).path
    assert english_cache.is_file() and english_cache != german_cache
    assert sorted(p.name for p in cache.glob("phonemes-*.json")) == sorted({german_cache.name, english_cache.name})

    # Fine-tuning on another German corpus reads it with the starting checkpoint's table, whose
    # embeddings it inherits, whatever phonemes the new corpus holds; another language is refused.
    other = make_german_corpus(tmp_path / "german2", utterances=6, seed=11)
    tuned_cfg = _german_cfg(make_cfg, other, cache)
    tuned_cfg.trainer.init_from = str(tmp_path / "run" / "checkpoints" / "last.pt")
    tuned = Trainer(tuned_cfg, tmp_path / "tuned")
    assert tuned.symbols.to_dict() == stored
    other_texts = [line.split("|")[1] for line in (other / "metadata.csv").read_text(encoding="utf-8").splitlines()]
    assert (
        SymbolTable.for_corpus(make_frontend("phonemes", "de", "english"), other_texts) != expected
    )  # a table of its own
    tuned.fit()
    # Resumed, it keeps reading with that table, not the new corpus's own.
    tuned_cfg.trainer.max_steps = STEPS + 1
    resumed = Trainer(tuned_cfg, tmp_path / "tuned")
    assert resumed.state.step == STEPS and resumed.symbols.to_dict() == stored
    assert resumed.fit().step == STEPS + 1
    english_cfg = _german_cfg(make_cfg, other, cache, language="en-us")
    english_cfg.trainer.init_from = tuned_cfg.trainer.init_from
    with pytest.raises(GstTtsError, match="starting checkpoint reads phonemes in de; this run reads phonemes in en-us"):
        Trainer(english_cfg, tmp_path / "english")
