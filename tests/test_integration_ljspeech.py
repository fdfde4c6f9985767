"""Real speech from ../shared/data: LJSpeech-mini corpus reading and features, reference clips.

Skipped (by the ``shared_data`` fixture) when the shared data folder is absent.
"""

from __future__ import annotations

import shutil

import pytest
import soundfile as sf

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.io import load_audio, trim_silence
from gst_tts.data.cache import FeatureCache
from gst_tts.data.corpus import read_corpus

CFG = AudioConfig()


def test_read_ljspeech_mini(shared_data):
    utts = read_corpus(shared_data / "ljspeech-mini")
    assert len(utts) == 100
    assert len({u.id for u in utts}) == 100
    assert utts[0].id == "LJ001-0001" and utts[0].line == 1
    assert utts[0].text.startswith("Printing, in the only sense")
    assert all(u.audio_path.is_file() and u.text for u in utts)


def test_feature_cache_on_real_speech(shared_data, tmp_path):
    src = shared_data / "ljspeech-mini"
    # The six shortest clips keep the test fast.
    all_utts = sorted(read_corpus(src), key=lambda u: sf.info(u.audio_path).frames)[:6]
    root = tmp_path / "lj6"
    (root / "wavs").mkdir(parents=True)
    metadata = (src / "metadata.csv").read_text(encoding="utf-8").split("\n")
    wanted = {u.id for u in all_utts}
    kept = [line for line in metadata if line.split("|", 1)[0] in wanted]
    assert len(kept) == 6
    (root / "metadata.csv").write_text("\n".join(kept) + "\n", encoding="utf-8")
    for utt_id in wanted:
        shutil.copy(src / "wavs" / f"{utt_id}.wav", root / "wavs" / f"{utt_id}.wav")

    utts = read_corpus(root)
    assert {u.id for u in utts} == wanted
    cache = FeatureCache(tmp_path / "cache", CFG)
    frames = cache.prepare(utts, progress=False)
    assert set(frames) == wanted
    for u in utts:
        samples, rate = load_audio(u.audio_path, CFG.sample_rate)
        assert rate == 22050
        trimmed = trim_silence(samples, CFG.trim_top_db)
        expected = trimmed.size / 22050 * 22050 / CFG.hop_length
        assert frames[u.id] == pytest.approx(expected, rel=0.10)
        # Trimming only removes silence: never more frames than the untrimmed clip.
        assert frames[u.id] <= samples.size // CFG.hop_length + 1
        # LJSpeech clips are tightly cut: trimming removes well under half.
        assert frames[u.id] > 0.5 * samples.size / CFG.hop_length
        mel = cache.load(u.id)
        assert mel.shape == (frames[u.id], 80)
        assert float(mel.std()) > 0.5  # speech, not a flat floor


@pytest.mark.parametrize("name, native", [("vctk_p317_166.wav", 48000), ("librispeech_251-137823-0002.wav", 16000)])
def test_reference_clip_resampled(shared_data, name, native):
    path = shared_data / "reference-clips" / name
    info = sf.info(path)
    assert info.samplerate == native
    samples, rate = load_audio(path, 22050)
    assert rate == 22050 and samples.dtype.name == "float32" and samples.ndim == 1
    expected = info.frames * 22050 / native
    assert abs(samples.size - expected) <= 0.01 * expected
    assert 0.01 < float(abs(samples).max()) <= 1.0
