"""A corpus's phonemes: made once, cached beside the features, made again when what they depend on
changes; a bad transcript names its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gst_tts.data import batching
from gst_tts.data.batching import corpus_symbol_table, encode_texts
from gst_tts.data.cache import PhonemeCache
from gst_tts.data.corpus import Utterance
from gst_tts.errors import DataError, GstTtsError
from gst_tts.text import frontends
from gst_tts.text.frontends import PhonemeFrontend, make_frontend
from gst_tts.text.symbols import DEFAULT_SYMBOLS

pytest.importorskip("espeakng_loader")

TEXTS = [
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well, isn't it?",
]


def utterances(root: Path, texts: list[str]) -> list[Utterance]:
    return [Utterance(f"U{i}", text, root / "wavs" / f"U{i}.wav", i + 1) for i, text in enumerate(texts)]


def test_phonemes_are_cached_and_read_back_without_espeak(tmp_path: Path, monkeypatch) -> None:
    utts = utterances(tmp_path, TEXTS)
    table = corpus_symbol_table(utts, PhonemeFrontend("en-us"), tmp_path / "cache")
    files = list((tmp_path / "cache").glob("phonemes-*.json"))
    assert len(files) == 1
    cached = json.loads(files[0].read_text(encoding="utf-8"))
    assert sorted(cached) == sorted(PhonemeFrontend("en-us").clean(t) for t in TEXTS)

    def refuse(*args, **kwargs):
        raise AssertionError("espeak-ng asked again")

    monkeypatch.setattr(frontends, "phonemize", refuse)
    again = corpus_symbol_table(utts, PhonemeFrontend("en-us"), tmp_path / "cache")
    assert again == table
    assert [t.tolist() for t in encode_texts(utts, again)] == [t.tolist() for t in encode_texts(utts, table)]


def test_another_language_cleaner_or_espeak_version_reads_another_file(tmp_path: Path) -> None:
    names = {
        PhonemeCache(tmp_path, f).path.name
        for f in (
            PhonemeFrontend("en-us"),
            PhonemeFrontend("en-gb"),
            PhonemeFrontend("en-us", "basic"),
            PhonemeFrontend("en-us", espeak_version="1.48.0"),
            PhonemeFrontend("de"),
        )
    }
    assert len(names) == 5
    assert PhonemeCache(tmp_path, PhonemeFrontend("de")).path == PhonemeCache(tmp_path, PhonemeFrontend("de")).path


def test_a_damaged_cache_is_made_again(tmp_path: Path, caplog) -> None:
    utts = utterances(tmp_path, TEXTS)
    frontend = PhonemeFrontend("en-us")
    path = PhonemeCache(tmp_path, frontend).path
    path.write_text("{not json", encoding="utf-8")
    table = corpus_symbol_table(utts, frontend, tmp_path)
    assert "unreadable phoneme cache" in caplog.text
    assert json.loads(path.read_text(encoding="utf-8"))  # written afresh
    assert "ð" in table.symbols


def test_a_bad_transcript_names_its_line(tmp_path: Path) -> None:
    utts = utterances(tmp_path, [TEXTS[0], "Say {hˈɛloʊ to me."])
    with pytest.raises(DataError, match=r"metadata.csv:2: unmatched '\{'"):
        corpus_symbol_table(utts, PhonemeFrontend("en-us"), tmp_path)
    with pytest.raises(GstTtsError, match="no language 'qq'"):
        corpus_symbol_table(utts[:1], PhonemeFrontend("qq"), tmp_path)


def test_characters_need_no_espeak_and_no_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(batching, "PhonemeCache", None)  # never reached for characters
    table = corpus_symbol_table(utterances(tmp_path, TEXTS), make_frontend("characters"), tmp_path)
    assert table.symbols == DEFAULT_SYMBOLS and not list(tmp_path.glob("phonemes-*"))
