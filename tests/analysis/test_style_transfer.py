"""The style-transfer evaluation (gst_tts.analysis.style_transfer): reference sets, measures, fits."""

from __future__ import annotations

import math

from conftest import tone
import numpy as np
import pytest
import soundfile as sf

from gst_tts.analysis.prosody import Fit
from gst_tts.analysis.style_transfer import (
    AUGMENTED_GROUP,
    ESPEAK_GROUP,
    REAL_GROUP,
    ClipMeasures,
    ReferenceClip,
    StyleTransferReport,
    augmented_references,
    espeak_references,
    folder_references,
    held_out_sentences,
    MIN_VOICED_SHARE,
    measure_clip,
    selection_figures,
    transfer_fits,
)
from gst_tts.audio.features import AudioConfig
from gst_tts.demo import corpus as demo_corpus
from gst_tts.errors import AudioError, GstTtsError


def measures(f0: float, range_st: float = 3.0, rate: float = 12.0) -> ClipMeasures:
    return ClipMeasures(f0_hz=f0, f0_range_st=range_st, voiced_share=0.9, rate_letters_per_s=rate, duration_s=2.0)


def test_fits_compare_outputs_with_references_in_the_log_domain():
    refs = [measures(100.0, 2.0, 10.0), measures(200.0, 4.0, 20.0), measures(400.0, 6.0, 40.0)]
    # Outputs carry half of each F0 ratio (square root), a third of the range, all of the rate ratio.
    outs = [measures(math.sqrt(r.f0_hz) * 10, r.f0_range_st / 3 + 1, r.rate_letters_per_s * 1.5) for r in refs]
    fits = transfer_fits(refs, outs)
    assert fits["f0_hz"].slope == pytest.approx(0.5) and fits["f0_hz"].r == pytest.approx(1.0)
    assert fits["f0_range_st"].slope == pytest.approx(1 / 3)
    assert fits["rate_letters_per_s"].slope == pytest.approx(1.0) and fits["rate_letters_per_s"].n == 3
    # An unmeasured rate (no transcript) drops that reference from the rate fit only.
    refs[0] = measures(100.0, 2.0, float("nan"))
    fits = transfer_fits(refs, outs)
    assert fits["rate_letters_per_s"].n == 2 and fits["f0_hz"].n == 3


def test_measure_clip_resamples_and_reads_the_rate_off_the_mel():
    config = AudioConfig()
    clip = np.concatenate([tone(0.8, 16000, 150.0), np.zeros(8000, np.float32), tone(0.8, 16000, 150.0)])
    m = measure_clip(clip, 16000, "abcdefghijklmnop", config)
    assert m.f0_hz == pytest.approx(150.0, rel=0.03) and m.duration_s == pytest.approx(2.1, abs=0.01)
    # 16 letters over 1.6 s of sound: the 0.5 s silence in the middle is a pause.
    assert m.rate_letters_per_s == pytest.approx(10.0, rel=0.08)
    assert math.isnan(measure_clip(clip, 16000, None, config).rate_letters_per_s)


def test_a_clip_voiced_on_few_frames_has_no_f0():
    config = AudioConfig()
    rng = np.random.default_rng(0)
    noise = (0.1 * rng.standard_normal(32000)).astype(np.float32)
    # 2 s of noise with 0.15 s of tone: pyin finds a few voiced frames, under MIN_VOICED_SHARE.
    clip = noise.copy()
    clip[:2400] += tone(0.15, 16000, 150.0)
    m = measure_clip(clip, 16000, "abc", config)
    assert 0 < m.voiced_share < MIN_VOICED_SHARE
    assert math.isnan(m.f0_hz) and math.isnan(m.f0_range_st) and math.isfinite(m.rate_letters_per_s)


def test_held_out_sentences_exclude_the_given_ones():
    first = held_out_sentences(5)
    assert len(set(first)) == 5 and held_out_sentences(5) == first
    others = held_out_sentences(5, exclude=first[:2])
    assert not set(others) & set(first[:2]) and others[:3] == first[2:]


def write_wav(path, seconds, rate, freq):
    sf.write(path, tone(seconds, rate, freq), rate, subtype="PCM_16")
    return path


def test_folder_references_read_an_ljspeech_corpus_and_text_files(tmp_path):
    root = tmp_path / "lj"
    (root / "wavs").mkdir(parents=True)
    write_wav(root / "wavs" / "B-2.wav", 1.0, 22050, 150.0)
    write_wav(root / "wavs" / "A-1.wav", 1.2, 22050, 200.0)
    (root / "metadata.csv").write_text(
        "A-1|Dr. Smith paid 5 dollars.|Doctor Smith paid five dollars.\nB-2|Hello there.\n"
    )
    clips = folder_references(root)  # no recording at the top: its wavs/ folder
    assert [c.name for c in clips] == ["A-1", "B-2"]
    assert [c.text for c in clips] == ["Doctor Smith paid five dollars.", "Hello there."]
    assert all(c.groups == (REAL_GROUP,) and c.sample_rate == 22050 for c in clips)

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_wav(mixed / "x.wav", 1.0, 48000, 120.0)
    write_wav(mixed / "y.flac", 1.0, 16000, 220.0)
    (mixed / "x.txt").write_text("  Spoken   words \n")
    (mixed / "notes.md").write_text("not audio")
    clips = folder_references(mixed)
    assert [(c.name, c.sample_rate, c.text) for c in clips] == [("x", 48000, "Spoken words"), ("y", 16000, None)]
    assert clips[0].path == mixed / "x.wav"


def test_folder_references_errors(tmp_path):
    with pytest.raises(GstTtsError, match="does not exist"):
        folder_references(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "a.txt").write_text("text")
    with pytest.raises(GstTtsError, match="no .wav or .flac"):
        folder_references(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "a.wav").write_bytes(b"not a wav")
    with pytest.raises(AudioError):
        folder_references(tmp_path / "bad")


def test_augmented_references_add_copies_to_a_set_of_their_own(tmp_path):
    config = AudioConfig()
    clip = ReferenceClip("lj", tone(1.0, 22050, 150.0), 22050, "Some text.", (REAL_GROUP,), tmp_path / "lj.wav")
    out = augmented_references([clip], semitones=(4.0,), speeds=(0.8,))
    assert [c.name for c in out] == ["lj", "lj-pitch+4", "lj-speed0.8"]
    assert out[0].groups == (REAL_GROUP, AUGMENTED_GROUP) and out[0].path == clip.path
    assert all(c.groups == (AUGMENTED_GROUP,) and c.path is None and c.text == "Some text." for c in out[1:])
    assert out[1].info["semitones"] == 4.0 and out[2].info["speed"] == 0.8 and out[1].info["of"] == "lj"
    assert measure_clip(out[1].audio, 22050, None, config).f0_hz == pytest.approx(150.0 * 2 ** (4 / 12), rel=0.03)
    assert len(out[2].audio) / 22050 == pytest.approx(1.25, abs=0.02)
    assert len(augmented_references([clip])) == 5  # the defaults: two shifts, two speeds


def test_espeak_references_are_unseen_and_repeatable():
    clips = espeak_references(3, seed=2)
    assert [c.name for c in clips] == [f"espeak-{i:02d}-{c.info['variant']}" for i, c in enumerate(clips, 1)]
    assert all(c.groups == (ESPEAK_GROUP,) and c.sample_rate == demo_corpus.SAMPLE_RATE for c in clips)
    assert {c.info["variant"] for c in clips} <= set(demo_corpus.UNSEEN_VARIANTS)
    assert all(c.text.count(".") + c.text.count("?") + c.text.count("!") >= 2 for c in clips)  # two sentences
    again = espeak_references(3, seed=2)
    assert all(np.array_equal(a.audio, b.audio) and a.text == b.text for a, b in zip(clips, again))
    config = AudioConfig()
    for clip in clips:  # the calibrated pitch reaches the unseen voices too
        measured = measure_clip(clip.audio, clip.sample_rate, clip.text, config)
        assert abs(12 * np.log2(measured.f0_hz / clip.info["f0_hz"])) < 2.0, clip.info


def test_espeak_references_read_the_sentences_asked():
    def ends(text: str) -> int:
        return text.count(".") + text.count("?") + text.count("!")

    two, four = espeak_references(2, seed=2), espeak_references(2, seed=2, sentences=4)
    assert [c.info for c in four] == [c.info for c in two]  # the same voices and settings, longer texts
    assert all(ends(c.text) == 4 and len(c.audio) > len(s.audio) for c, s in zip(four, two))
    assert ends(espeak_references(2, seed=2, sentences=1)[0].text) == 1
    with pytest.raises(GstTtsError, match="at least one sentence"):
        espeak_references(2, sentences=0)


def test_selection_figures_count_over_and_undershoot_alike_and_nan_as_worst():
    def report(f0_slope: float, rate_r: float, aligned: list[bool]) -> StyleTransferReport:
        fits = {
            ESPEAK_GROUP: {
                "f0_hz": Fit(0.99, 0.98, f0_slope, 24),
                "f0_range_st": Fit(0.1, 0.1, 0.1, 24),
                "rate_letters_per_s": Fit(rate_r, 0.9, 0.8, 24),
            }
        }
        rows = [{"groups": (ESPEAK_GROUP,), "outputs": [{"aligned": a} for a in aligned]}]
        return StyleTransferReport(texts=["Hi."], rows=rows, fits=fits, healths=[], stop_reasons=[])

    figures = selection_figures(report(1.2, 0.93, [True, True, True, False]))
    assert figures == pytest.approx(
        {"log F0 r": 0.99, "log F0 slope": 0.8, "log rate r": 0.93, "log rate slope": 0.8, "aligned": 0.75}
    )
    assert selection_figures(report(0.8, 0.93, [True]))["log F0 slope"] == pytest.approx(0.8)  # same as 1.2
    assert selection_figures(report(1.0, float("nan"), [True]))["log rate r"] == -math.inf  # F0 range never counts
    with pytest.raises(GstTtsError, match="no reference set 'real'"):
        selection_figures(report(1.0, 0.9, [True]), REAL_GROUP)
