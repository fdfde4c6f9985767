"""Corpus reading, feature cache, split, length-bucket sampler and collate."""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
import random

from conftest import tone, write_corpus
import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.data.batching import Collate, LengthBucketSampler, encode_texts
from gst_tts.data.cache import FeatureCache
import gst_tts.data.cache as data_mod
from gst_tts.data.corpus import read_corpus
from gst_tts.data.split import split_train_val
from gst_tts.errors import DataError
from gst_tts.text.symbols import SymbolTable

CFG = AudioConfig()


def _lines(root: Path) -> list[str]:
    return (root / "metadata.csv").read_text().splitlines()


def _write_lines(root: Path, lines: list[str]) -> None:
    (root / "metadata.csv").write_text("\n".join(lines) + "\n")


def _error(root) -> str:
    with pytest.raises(DataError) as info:
        read_corpus(root)
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# read_corpus


def test_read_corpus_happy_path(corpus):
    utts = read_corpus(corpus)
    assert [u.id for u in utts] == [f"UT-{i:03d}" for i in range(6)]
    # The third (normalised) column is used, not the raw second one.
    assert [u.text for u in utts] == [f"sentence number {i}." for i in range(6)]
    assert [u.line for u in utts] == list(range(1, 7))
    assert all(u.audio_path == corpus / "wavs" / f"{u.id}.wav" for u in utts)
    assert all(u.style is None for u in utts)
    assert utts[2].where == f"{corpus / 'metadata.csv'}:3"


def test_read_corpus_two_columns_and_blank_lines(corpus):
    _write_lines(corpus, ["UT-000|Raw Text Zero", "", "UT-001|  Raw Text One  |", "UT-002|raw two|norm two"])
    utts = read_corpus(corpus)
    assert [(u.id, u.text, u.line) for u in utts] == [
        ("UT-000", "Raw Text Zero", 1),
        ("UT-001", "Raw Text One", 3),  # an empty third column falls back to the raw text
        ("UT-002", "norm two", 4),
    ]


def test_read_corpus_styles(tmp_path):
    root = write_corpus(tmp_path / "c", n=4, styles=True)
    utts = read_corpus(root)
    assert [u.style for u in utts] == ["high", "low", "high", "low"]


def test_read_corpus_partial_styles(corpus):
    (corpus / "styles.csv").write_text("UT-001|angry\n\nUT-004| calm \n")
    styles = {u.id: u.style for u in read_corpus(corpus)}
    assert styles == {
        "UT-000": None,
        "UT-001": "angry",
        "UT-002": None,
        "UT-003": None,
        "UT-004": "calm",
        "UT-005": None,
    }


@pytest.mark.parametrize(
    "line_no, bad_line, phrase",
    [
        (3, "UT-002|only|three|four", "columns"),
        (2, "UT-001", "columns"),
        (4, "UT-000|again|again", "duplicate"),
        (5, "UT-004|   |   ", "empty text"),
        (6, "UT-999|some text|some text", "not found"),
    ],
)
def test_read_corpus_errors_name_file_and_line(corpus, line_no, bad_line, phrase):
    lines = _lines(corpus)
    lines[line_no - 1] = bad_line
    _write_lines(corpus, lines)
    message = _error(corpus)
    assert message.startswith(f"{corpus / 'metadata.csv'}:{line_no}:"), message
    assert phrase in message
    assert "\n" not in message


def test_duplicate_id_mentions_first_line(corpus):
    lines = _lines(corpus)
    lines[4] = lines[1]
    _write_lines(corpus, lines)
    message = _error(corpus)
    assert message.startswith(f"{corpus / 'metadata.csv'}:5:")
    assert "UT-001" in message and "line 2" in message


def test_missing_audio_names_wav(corpus):
    (corpus / "wavs" / "UT-003.wav").unlink()
    message = _error(corpus)
    assert message.startswith(f"{corpus / 'metadata.csv'}:4:")
    assert str(corpus / "wavs" / "UT-003.wav") in message


def test_line_numbers_count_blank_lines(corpus):
    lines = _lines(corpus)
    _write_lines(corpus, [lines[0], "", "", lines[1], "UT-bad"])
    assert _error(corpus).startswith(f"{corpus / 'metadata.csv'}:5:")


@pytest.mark.parametrize(
    "styles, line_no, phrase",
    [
        ("UT-000|high\nUT-001\n", 2, "id|style"),
        ("UT-000|high\n\nUT-001|\n", 3, "id|style"),
        ("UT-000|a|b\n", 1, "id|style"),
        ("UT-000|high\nUT-001|low\nUT-777|low\n", 3, "not in metadata.csv"),
        ("UT-000|high\nUT-000|low\n", 2, "duplicate"),
    ],
)
def test_styles_errors(corpus, styles, line_no, phrase):
    (corpus / "styles.csv").write_text(styles)
    message = _error(corpus)
    assert message.startswith(f"{corpus / 'styles.csv'}:{line_no}:"), message
    assert phrase in message


def test_unicode_line_separator_inside_text_keeps_line_numbers(corpus):
    lines = _lines(corpus)
    lines[1] = "UT-001|first part\u2028second part|first part\u2028second part"
    lines[3] = "UT-003|x|y|z"
    _write_lines(corpus, lines)
    # The only bad line is line 4 (four columns); line 2 is one entry whose text holds U+2028.
    assert _error(corpus).startswith(f"{corpus / 'metadata.csv'}:4:")


def test_crlf_line_endings(corpus):
    (corpus / "metadata.csv").write_bytes(b"UT-000|a|b\r\nUT-001|c|d\r\nUT-002|e\r\nbad\r\n")
    assert _error(corpus).startswith(f"{corpus / 'metadata.csv'}:4:")
    (corpus / "metadata.csv").write_bytes(b"UT-000|a|b\r\nUT-001|c|d\r\n")
    assert [u.text for u in read_corpus(corpus)] == ["b", "d"]


def test_invalid_utf8_names_line(corpus):
    raw = (corpus / "metadata.csv").read_bytes().split(b"\n")
    raw[3] = b"UT-003|caf\xe9 au lait|caf\xe9 au lait"  # latin-1, not UTF-8
    (corpus / "metadata.csv").write_bytes(b"\n".join(raw))
    message = _error(corpus)
    assert message.startswith(f"{corpus / 'metadata.csv'}:4:")
    assert "UTF-8" in message


def test_invalid_utf8_in_styles(corpus):
    (corpus / "styles.csv").write_bytes(b"UT-000|high\nUT-001|\xff\xfe\n")
    assert _error(corpus).startswith(f"{corpus / 'styles.csv'}:2:")


def test_missing_metadata_and_folder(tmp_path, corpus):
    (corpus / "metadata.csv").unlink()
    message = _error(corpus)
    assert message.startswith(str(corpus / "metadata.csv"))
    assert "not found" in message
    missing = tmp_path / "no-such-corpus"
    assert str(missing) in _error(missing)


def test_empty_metadata(corpus):
    (corpus / "metadata.csv").write_text("\n\n")
    assert "no utterances" in _error(corpus)


def test_encode_texts_no_usable_symbol(corpus):
    lines = _lines(corpus)
    lines[2] = "UT-002|###|###"
    _write_lines(corpus, lines)
    utts = read_corpus(corpus)
    with pytest.raises(DataError) as info:
        encode_texts(utts, SymbolTable())
    assert str(info.value).startswith(f"{corpus / 'metadata.csv'}:3:")


def test_encode_texts_happy(corpus):
    utts = read_corpus(corpus)
    symbols = SymbolTable()
    encoded = encode_texts(utts, symbols)
    assert len(encoded) == len(utts)
    assert all(t.dtype == torch.long and int(t[-1]) == symbols.eos_id for t in encoded)
    assert symbols.decode(encoded[0]) == "sentence number zero."


# ---------------------------------------------------------------------------------------------
# FeatureCache


@pytest.fixture
def counting(monkeypatch):
    """Counts wav_to_logmel calls by utterance length (ids are not passed, so count calls)."""
    calls: list[int] = []
    real = data_mod.wav_to_logmel

    def wrapped(samples, config, extractor=None):
        calls.append(samples.size)
        return real(samples, config, extractor)

    monkeypatch.setattr(data_mod, "wav_to_logmel", wrapped)
    return calls


def test_prepare_writes_features_and_manifest(corpus, tmp_path, counting):
    utts = read_corpus(corpus)
    cache = FeatureCache(tmp_path / "cache", CFG)
    frames = cache.prepare(utts, progress=False)
    assert len(counting) == 6
    assert cache.dir == tmp_path / "cache" / f"mels-{CFG.fingerprint()}"
    assert sorted(p.name for p in cache.dir.glob("*.npy")) == [f"{u.id}.npy" for u in utts]
    assert (cache.dir / "manifest.json").is_file()
    assert not list(cache.dir.glob(".*"))  # no leftover temp files
    assert set(frames) == {u.id for u in utts}
    for u in utts:
        mel = cache.load(u.id)
        assert mel.dtype == np.float32 and mel.shape == (frames[u.id], 80)
    # Longer tones give more frames (tones are 0.6 s + 0.1 s * i, no silence to trim).
    counts = [frames[u.id] for u in utts]
    assert counts == sorted(counts) and counts[0] < counts[-1]
    assert abs(counts[0] - int(0.6 * 22050) // 256) <= 3


def test_prepare_second_run_recomputes_nothing(corpus, tmp_path, counting):
    utts = read_corpus(corpus)
    first = FeatureCache(tmp_path / "cache", CFG).prepare(utts, progress=False)
    counting.clear()
    second = FeatureCache(tmp_path / "cache", CFG).prepare(utts, progress=False)
    assert counting == []
    assert second == first


def test_prepare_recomputes_only_changed_wav(corpus, tmp_path, counting):
    utts = read_corpus(corpus)
    cache = FeatureCache(tmp_path / "cache", CFG)
    cache.prepare(utts, progress=False)
    unchanged = {u.id: cache.path(u.id).stat().st_mtime_ns for u in utts}

    # Touch: same content, newer mtime.
    wav = corpus / "wavs" / "UT-002.wav"
    st = wav.stat()
    os.utime(wav, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    counting.clear()
    cache.prepare(utts, progress=False)
    assert len(counting) == 1

    # Rewrite with a longer file: the new frame count is picked up.
    sf.write(corpus / "wavs" / "UT-004.wav", tone(2.0, 22050), 22050, subtype="PCM_16")
    counting.clear()
    frames = cache.prepare(utts, progress=False)
    assert counting == [2 * 22050]  # only UT-004, at its new length
    assert abs(frames["UT-004"] - 2 * 22050 // 256) <= 3
    assert cache.load("UT-004").shape[0] == frames["UT-004"]
    for utt_id in ("UT-000", "UT-001", "UT-003", "UT-005"):
        assert cache.path(utt_id).stat().st_mtime_ns == unchanged[utt_id]


def test_prepare_recomputes_deleted_feature(corpus, tmp_path, counting):
    utts = read_corpus(corpus)
    cache = FeatureCache(tmp_path / "cache", CFG)
    cache.prepare(utts, progress=False)
    cache.path("UT-001").unlink()
    counting.clear()
    cache.prepare(utts, progress=False)
    assert len(counting) == 1 and cache.path("UT-001").is_file()


def test_prepare_corrupt_manifest_recomputes(corpus, tmp_path, counting):
    utts = read_corpus(corpus)
    cache = FeatureCache(tmp_path / "cache", CFG)
    cache.prepare(utts, progress=False)
    cache.manifest_path.write_text("{not json")
    counting.clear()
    cache.prepare(utts, progress=False)
    assert len(counting) == 6


def test_different_config_uses_different_folder(corpus, tmp_path, counting):
    utts = read_corpus(corpus)
    a = FeatureCache(tmp_path / "cache", CFG)
    b = FeatureCache(tmp_path / "cache", dataclasses.replace(CFG, n_mels=40))
    assert a.dir != b.dir and a.dir.parent == b.dir.parent
    a.prepare(utts, progress=False)
    counting.clear()
    frames = b.prepare(utts, progress=False)
    assert len(counting) == 6
    assert b.load("UT-000").shape == (frames["UT-000"], 40)
    assert a.load("UT-000").shape[1] == 80


def test_prepare_unreadable_audio_is_data_error(corpus, tmp_path):
    (corpus / "wavs" / "UT-003.wav").write_text("not a wav file\n")
    utts = read_corpus(corpus)  # the file exists, so reading the corpus passes
    with pytest.raises(DataError) as info:
        FeatureCache(tmp_path / "cache", CFG).prepare(utts, progress=False)
    message = str(info.value)
    assert message.startswith(f"{corpus / 'metadata.csv'}:4:")
    assert "UT-003.wav" in message and "\n" not in message


@pytest.mark.parametrize("n_samples", [0, 100])
def test_prepare_too_short_audio_is_data_error(corpus, tmp_path, n_samples):
    sf.write(corpus / "wavs" / "UT-001.wav", tone(1.0, 22050)[:n_samples], 22050, subtype="PCM_16")
    with pytest.raises(DataError) as info:
        FeatureCache(tmp_path / "cache", CFG).prepare(read_corpus(corpus), progress=False)
    assert str(info.value).startswith(f"{corpus / 'metadata.csv'}:2:")


def test_stats_shape_values_and_cache(corpus, tmp_path, monkeypatch):
    utts = read_corpus(corpus)
    cache = FeatureCache(tmp_path / "cache", CFG)
    cache.prepare(utts, progress=False)
    ids = [u.id for u in utts[:4]]
    stats = cache.stats(ids)
    assert tuple(stats.mean.shape) == (80,) and tuple(stats.std.shape) == (80,)
    assert stats.mean.dtype == torch.float32
    allmel = np.concatenate([cache.load(i) for i in ids]).astype(np.float64)
    np.testing.assert_allclose(stats.mean.numpy(), allmel.mean(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(stats.std.numpy(), allmel.std(0), rtol=1e-3, atol=1e-4)
    assert len(list(cache.dir.glob("stats-*.npz"))) == 1

    def no_load(utt_id):
        raise AssertionError("stats recomputed instead of read from the cache")

    monkeypatch.setattr(cache, "load", no_load)
    again = cache.stats(list(reversed(ids)))  # same set, any order
    torch.testing.assert_close(again.mean, stats.mean)
    torch.testing.assert_close(again.std, stats.std)
    with pytest.raises(AssertionError):
        cache.stats(ids[:3])  # a different id set is computed afresh


def test_stats_follow_an_edited_wav(corpus, tmp_path):
    cache = FeatureCache(tmp_path / "cache", CFG)
    cache.prepare(read_corpus(corpus), progress=False)
    ids = [f"UT-{i:03d}" for i in range(6)]
    before = cache.stats(ids)
    # Same length (same file size), a tenth of the level: only the content and mtime change.
    sf.write(corpus / "wavs" / "UT-002.wav", tone(0.8, 22050, 190.0, amplitude=0.03), 22050, subtype="PCM_16")
    cache.prepare(read_corpus(corpus), progress=False)
    after = cache.stats(ids)
    fresh = FeatureCache(tmp_path / "fresh", CFG)
    fresh.prepare(read_corpus(corpus), progress=False)
    expected = fresh.stats(ids)
    torch.testing.assert_close(after.mean, expected.mean)
    torch.testing.assert_close(after.std, expected.std)
    assert (after.mean - before.mean).abs().max() > 0.1


# ---------------------------------------------------------------------------------------------
# split_train_val


IDS = [f"LJ{i:03d}" for i in range(50)]


def test_split_deterministic_disjoint_int():
    train, val = split_train_val(IDS, 7, seed=3)
    assert len(val) == 7 and len(train) == 43
    assert not set(train) & set(val)
    assert sorted(train + val) == sorted(IDS)
    assert split_train_val(list(reversed(IDS)), 7, seed=3) == (train, val)  # input order does not matter
    assert split_train_val(IDS, 7, seed=4)[1] != val


def test_split_float_fraction():
    train, val = split_train_val(IDS, 0.1, seed=0)
    assert len(val) == 5 and len(train) == 45
    assert not set(train) & set(val)
    train2, val2 = split_train_val(IDS, 0.5, seed=0)
    assert len(val2) == 25


def test_split_edge_sizes():
    assert len(split_train_val(IDS, 0.001, seed=0)[1]) == 1  # at least one
    train, val = split_train_val(IDS, 500, seed=0)
    assert len(train) == 1 and len(val) == 49  # at least one left to train on
    assert split_train_val(["only"], 0.1, seed=0) == (["only"], [])


# ---------------------------------------------------------------------------------------------
# LengthBucketSampler


def _lengths(n=200, seed=0):
    rng = random.Random(seed)
    return [rng.randint(20, 800) for _ in range(n)]


def test_sampler_covers_every_index_once():
    lengths = _lengths()
    sampler = LengthBucketSampler(lengths, batch_size=16, seed=1, bucket_batches=4)
    batches = list(sampler)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert len(batches) == len(sampler) == 13  # ceil(200 / 16)
    assert all(1 <= len(b) <= 16 for b in batches)


def test_sampler_low_length_spread():
    lengths = _lengths()
    sampler = LengthBucketSampler(lengths, batch_size=16, seed=1, bucket_batches=4)

    def spread(batches):
        return np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches])

    rng = random.Random(9)
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    random_batches = [idx[i : i + 16] for i in range(0, len(idx), 16)]
    assert spread(list(sampler)) < 0.35 * spread(random_batches)


def test_sampler_reproducible_and_epoch_dependent():
    lengths = _lengths()
    a = LengthBucketSampler(lengths, batch_size=8, seed=5, bucket_batches=4)
    b = LengthBucketSampler(lengths, batch_size=8, seed=5, bucket_batches=4)
    a.set_epoch(3)
    b.set_epoch(3)
    assert list(a) == list(b)
    epoch3 = list(a)
    a.set_epoch(4)
    assert list(a) != epoch3
    c = LengthBucketSampler(lengths, batch_size=8, seed=6, bucket_batches=4)
    c.set_epoch(3)
    assert list(c) != epoch3


def test_sampler_resume_skips_batches():
    lengths = _lengths()
    sampler = LengthBucketSampler(lengths, batch_size=8, seed=5, bucket_batches=4)
    sampler.set_epoch(2)
    full = list(sampler)
    sampler.set_epoch(2, start=5)
    assert list(sampler) == full[5:]
    assert len(sampler) == len(full) - 5
    sampler.set_epoch(2, start=len(full) + 3)
    assert list(sampler) == [] and len(sampler) == 0


def test_sampler_two_replicas_disjoint_equal():
    lengths = _lengths(203)
    shards = []
    for rank in (0, 1):
        s = LengthBucketSampler(lengths, batch_size=8, seed=2, bucket_batches=4, num_replicas=2, rank=rank)
        s.set_epoch(1)
        shards.append(list(s))
        assert len(s) == len(shards[-1])
    assert len(shards[0]) == len(shards[1]) > 0
    flat0 = {i for b in shards[0] for i in b}
    flat1 = {i for b in shards[1] for i in b}
    assert not flat0 & flat1
    # 203 / 8 = 26 batches: all of them are used, split 13 + 13.
    assert len(shards[0]) == 13
    assert len(flat0 | flat1) == 203


def test_sampler_no_shuffle_is_sorted_within_window():
    lengths = [5, 3, 9, 1, 7, 2]
    sampler = LengthBucketSampler(lengths, batch_size=2, shuffle=False, bucket_batches=3)
    assert list(sampler) == [[3, 5], [1, 0], [4, 2]]


def test_sampler_bad_batch_size():
    with pytest.raises(ValueError):
        LengthBucketSampler([1, 2, 3], batch_size=0)


# ---------------------------------------------------------------------------------------------
# Collate


def _item(n_text, n_frames, name, fill=1.0):
    return {
        "id": name,
        "text": torch.arange(2, 2 + n_text),
        "mel": torch.full((n_frames, 80), fill),
        "style": f"s-{name}",
    }


def _frames(n_frames, name):
    """An item whose frame ``t`` holds the value ``t`` (so trimming shows which frames stayed)."""
    return {
        "id": name,
        "text": torch.arange(2, 5),
        "mel": torch.arange(n_frames).float()[:, None].expand(-1, 80),
        "style": None,
    }


@pytest.mark.parametrize("r", [1, 2, 3])
def test_collate_padding_and_stop_targets(r):
    items = [_item(5, 7, "a", 1.0), _item(3, 4, "b", 2.0), _item(9, 5, "c", 3.0)]
    batch = Collate(r, pad_id=0)(items)
    lengths = [n - n % r for n in (7, 4, 5)]  # trimmed to whole decoder steps
    max_frames = max(lengths)
    assert batch["mel"].shape == (3, max_frames, 80)
    assert batch["mel"].shape[1] % r == 0
    assert batch["mel_lengths"].tolist() == lengths
    assert batch["text_lengths"].tolist() == [5, 3, 9]
    assert batch["text"].shape == (3, 9)
    assert batch["ids"] == ["a", "b", "c"] and batch["styles"] == ["s-a", "s-b", "s-c"]
    for i, (n, fill) in enumerate(zip(lengths, [1.0, 2.0, 3.0])):
        assert bool((batch["mel"][i, :n] == fill).all())
        assert bool((batch["mel"][i, n:] == 0).all())
    assert batch["stop_targets"].shape == (3, max_frames // r)
    for i, n in enumerate(lengths):
        last_step = n // r - 1  # the step holding the last kept frame
        stop = batch["stop_targets"][i].tolist()
        assert stop == [0.0] * last_step + [1.0] * (max_frames // r - last_step)


def test_collate_trims_targets_to_whole_steps_and_moves_the_stop_label():
    # r=3, lengths 7, 5, 9: kept 6, 3, 9 frames (the first ones), i.e. 2, 1, 3 whole steps.
    batch = Collate(3)([_frames(7, "x"), _frames(5, "y"), _frames(9, "z")])
    assert batch["mel_lengths"].tolist() == [6, 3, 9]
    assert batch["mel"].shape == (3, 9, 80)
    assert batch["mel"][0, :, 0].tolist() == [0, 1, 2, 3, 4, 5, 0, 0, 0]  # frame 6 dropped, not kept as step 2
    assert batch["mel"][1, :, 0].tolist() == [0, 1, 2, 0, 0, 0, 0, 0, 0]
    assert batch["mel"][2, :, 0].tolist() == list(range(9))
    assert batch["stop_targets"].tolist() == [[0.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    # r=2, lengths 6 and 3: 6 and 2 frames, 3 and 1 steps.
    batch = Collate(2)([_frames(6, "x"), _frames(3, "y")])
    assert batch["mel_lengths"].tolist() == [6, 2]
    assert batch["stop_targets"].tolist() == [[0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]


def test_collate_refuses_an_item_shorter_than_one_step():
    with pytest.raises(DataError, match="short-one"):
        Collate(3)([_frames(7, "fine"), _frames(2, "short-one")])
    assert Collate(1)([_frames(2, "short-one")])["mel_lengths"].tolist() == [2]


def test_collate_text_pad_id():
    items = [_item(4, 3, "a"), _item(2, 3, "b")]
    batch = Collate(1, pad_id=99)(items)
    assert batch["text"].dtype == torch.long
    assert batch["text"][0].tolist() == [2, 3, 4, 5]
    assert batch["text"][1].tolist() == [2, 3, 99, 99]
    assert batch["mel_lengths"].dtype == torch.long and batch["text_lengths"].dtype == torch.long


def test_collate_stacks_prosody_targets_when_items_carry_them():
    items = [
        {
            "id": i,
            "text": torch.tensor([3, 4]),
            "mel": torch.randn(6, 4),
            "style": None,
            "prosody": torch.tensor([float(n), -float(n)]),
        }
        for n, i in enumerate("ab")
    ]
    batch = Collate(2)(items)
    assert torch.equal(batch["prosody"], torch.tensor([[0.0, -0.0], [1.0, -1.0]]))
    assert "prosody" not in Collate(2)([{k: v for k, v in x.items() if k != "prosody"} for x in items])


def test_collate_gives_training_references_a_random_stretch_and_tilt():
    torch.manual_seed(0)
    items = [
        {
            "id": i,
            "text": torch.tensor([3, 4]),
            "mel": torch.arange(n * 4, dtype=torch.float32).reshape(n, 4),
            "style": None,
        }
        for i, n in (("a", 200), ("b", 40))
    ]
    assert "reference_mel" not in Collate(2)(items)
    batch = Collate(2, reference_crop=0.5)(items)
    long, short = batch["reference_lengths"].tolist()
    assert 100 <= long <= 200 and short == 40  # never under 64 frames unless the utterance is shorter
    # A contiguous stretch of the utterance itself, padding after it.
    ref = batch["reference_mel"][0, :long]
    start = int(ref[0, 0]) // 4
    assert torch.equal(ref, items[0]["mel"][start : start + long])
    assert torch.all(batch["reference_mel"][1, short:] == 0)
    draws = {tuple(Collate(2, reference_crop=0.5)(items)["reference_lengths"].tolist()) for _ in range(20)}
    assert len(draws) > 5
    tilted = Collate(2, reference_tilt=2.0)(items)
    offset = tilted["reference_mel"][0, :200] - items[0]["mel"]
    assert torch.allclose(offset, offset[0].expand_as(offset), atol=1e-3)  # the same line in every frame
    assert torch.allclose(offset[0], torch.linspace(-1, 1, 4) * (offset[0, -1] - offset[0, 0]) / 2, atol=1e-3)
    assert 0 < abs(float(offset[0, -1] - offset[0, 0])) <= 2.0
    with pytest.raises(ValueError, match="reference_crop must be in"):
        Collate(2, reference_crop=0.0)
    with pytest.raises(ValueError, match="reference_eq must be >= 0"):
        Collate(2, reference_eq=-0.1)


def test_collate_reference_lengths_can_be_drawn_whatever_the_utterance_length():
    torch.manual_seed(0)
    items = [
        {
            "id": i,
            "text": torch.tensor([3, 4]),
            "mel": torch.arange(n * 4, dtype=torch.float32).reshape(n, 4),
            "style": None,
        }
        for i, n in (("a", 400), ("b", 200), ("c", 30))
    ]
    lengths = torch.tensor(
        [Collate(2, reference_frames=(50, 80))(items)["reference_lengths"].tolist() for _ in range(40)]
    )
    assert lengths[:, :2].min() >= 50 and lengths[:, :2].max() <= 80 and bool((lengths[:, 2] == 30).all())
    # The long and the short utterance draw from the same range: their references' lengths tell them apart no more.
    assert (
        abs(lengths[:, 0].float().mean() - lengths[:, 1].float().mean()) < 8 and len(set(lengths[:, 0].tolist())) > 10
    )
    batch = Collate(2, reference_frames=(50, 80))(items)
    ref, n = batch["reference_mel"][0], int(batch["reference_lengths"][0])
    start = int(ref[0, 0]) // 4
    assert torch.equal(ref[:n], items[0]["mel"][start : start + n])  # a contiguous stretch
    for bad in ((0, 10), (20, 10)):
        with pytest.raises(ValueError, match="reference_frames must be"):
            Collate(2, reference_frames=bad)


def test_collate_pads_every_utterance_with_stop_steps_past_its_end():
    items = [
        {"id": "a", "text": torch.tensor([3, 4]), "mel": torch.randn(13, 4), "style": None},
        {"id": "b", "text": torch.tensor([3]), "mel": torch.randn(20, 4), "style": None},
    ]
    plain, padded = Collate(3)(items), Collate(3, stop_steps_past_end=2)(items)
    assert plain["stop_lengths"].tolist() == [4, 6]  # whole steps: 12 and 18 frames
    assert padded["mel"].shape == (2, 24, 4) and padded["mel_lengths"].tolist() == [12, 18]
    assert padded["stop_lengths"].tolist() == [6, 8]
    assert padded["stop_targets"].tolist() == [[0, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1, 1, 1]]
    assert torch.all(padded["mel"][1, 18:] == 0) and torch.equal(padded["mel"][:, :18], plain["mel"])
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="stop_steps_past_end must be an integer >= 0"):
            Collate(3, stop_steps_past_end=bad)


def test_collate_gives_training_references_a_smooth_random_eq():
    torch.manual_seed(0)
    n_mels = 80
    items = [{"id": "a", "text": torch.tensor([3, 4]), "mel": torch.randn(120, n_mels), "style": None}]
    curves = []
    for _ in range(50):
        batch = Collate(2, reference_eq=0.3)(items)
        offset = batch["reference_mel"][0] - items[0]["mel"]
        assert torch.allclose(offset, offset[0].expand_as(offset), atol=1e-5)  # one curve for every frame
        curves.append(offset[0])
    curves = torch.stack(curves)
    # Each of the 6 components is at most 0.3: the curve stays within 1.8, and it is smooth (a
    # sum of half-cosines up to 6 half-periods over 80 channels moves little from channel to channel).
    assert float(curves.abs().max()) <= 6 * 0.3 + 1e-5
    assert float(curves.diff(dim=1).abs().max()) <= 6 * 0.3 * math.pi * 6 / (n_mels - 1) + 1e-5
    # Random: curves differ between draws, and in shape, not only in level or tilt.
    assert float(curves.std(dim=0).mean()) > 0.1
    residual = curves - curves.mean(dim=1, keepdim=True)
    line = torch.linspace(-1, 1, n_mels)
    residual = residual - (residual @ line)[:, None] * line / (line @ line)
    assert float(residual.abs().max()) > 0.2
