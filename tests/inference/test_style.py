"""The neutral style a checkpoint stores (mean token weights of its training references), the
style strength of a reference, and the F0 spread a style asks the vocoder for
(gst_tts.inference.style / style_spec), on a tiny random-weight model."""

from __future__ import annotations

import logging
import math

from conftest import seconds_for_steps, tone, write_tiny_checkpoint
import numpy as np
import pytest
import torch

from gst_tts.checkpoints.acoustic import load_checkpoint, save_checkpoint
from gst_tts.errors import CheckpointError, GstTtsError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.style import MAX_STYLE_STRENGTH, Style
from gst_tts.inference.style_spec import MAX_F0_RANGE_ST, once_per_reference, style_f0_range
from gst_tts.inference.synthesizer import Synthesizer

FAST = DecodingConfig(max_seconds=seconds_for_steps(8))
NOTICE = "stores no neutral style"


def _stored_neutral(n_heads: int, n_tokens: int) -> torch.Tensor:
    """Token weights a trained model's references could average to: a softmax per head, far from uniform."""
    return torch.softmax(torch.arange(n_heads * n_tokens, dtype=torch.float32).reshape(n_heads, n_tokens) * 0.7, -1)


@pytest.fixture(scope="module")
def old_path(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("style") / "old.pt")


@pytest.fixture(scope="module")
def new_path(old_path):
    ckpt = load_checkpoint(old_path)
    heads, tokens = ckpt["model_config"]["gst_n_heads"], ckpt["model_config"]["gst_n_tokens"]
    ckpt["neutral_style"] = _stored_neutral(heads, tokens)
    return save_checkpoint(old_path.with_name("new.pt"), ckpt)


@pytest.fixture(scope="module")
def synth(new_path):
    return Synthesizer.from_checkpoint(new_path, device="cpu")


@pytest.fixture(scope="module")
def reference():
    return tone(1.0, 16000, 180.0), 16000


def test_synthesis_without_a_style_uses_the_checkpoints_stored_neutral(synth, new_path, caplog):
    stored = load_checkpoint(new_path)["neutral_style"]
    assert torch.equal(synth.styles.neutral(), stored)
    neutral = synth.synthesize("Hello there.", seed=3, decoding=FAST, vocode=False)
    as_weights = synth.synthesize("Hello there.", seed=3, decoding=FAST, vocode=False, style_weights=stored)
    uniform = synth.synthesize(
        "Hello there.",
        seed=3,
        decoding=FAST,
        vocode=False,
        style_weights=np.full(tuple(stored.shape), 1 / stored.shape[1], np.float32),
    )
    np.testing.assert_array_equal(neutral.mel, as_weights.mel)
    assert not np.allclose(neutral.mel, uniform.mel)  # the stored neutral is not the uniform one under another name
    # Dials start from the stored neutral: a dial of 0 is it.
    assert torch.allclose(synth.styles.resolve(Style(dials={0: 0.0})), stored)
    with caplog.at_level(logging.INFO):
        Synthesizer.from_checkpoint(new_path, device="cpu")
    assert NOTICE not in caplog.text


def test_an_old_checkpoint_keeps_uniform_weights_with_one_line_of_notice(old_path, caplog):
    with caplog.at_level(logging.INFO):
        old = Synthesizer.from_checkpoint(old_path, device="cpu")
        # Said when the uniform neutral is first used, not on load: a request refused before any
        # style is resolved stays one line.
        assert NOTICE not in caplog.text
        old.synthesize(["One.", "Two."], decoding=FAST, vocode=False)
    assert torch.equal(old.styles.neutral(), torch.full((old.n_heads, old.n_tokens), 1 / old.n_tokens))
    notices = [r for r in caplog.records if NOTICE in r.getMessage()]
    assert len(notices) == 1 and "\n" not in notices[0].getMessage() and str(old_path) in notices[0].getMessage()


@pytest.mark.parametrize("bad", [torch.zeros(3, 3), torch.full((2, 5), math.nan), [[0.2] * 5] * 2])
def test_a_malformed_stored_neutral_is_a_one_line_checkpoint_error(old_path, tmp_path, bad):
    ckpt = load_checkpoint(old_path)
    ckpt["neutral_style"] = bad
    path = save_checkpoint(tmp_path / "bad.pt", ckpt)
    with pytest.raises(CheckpointError, match="neutral_style") as err:
        Synthesizer.from_checkpoint(path, device="cpu")
    assert "\n" not in str(err.value)


def test_style_strength_moves_the_embedding_from_neutral_to_the_reference(synth, reference):
    neutral, ref = synth.styles.neutral(), synth.styles.resolve(Style(reference=reference))

    def embedding(strength):
        weights = synth.styles.resolve(Style(reference=reference, strength=strength))
        return synth.model.gst.style_from_weights(weights[None])[0]

    e_neutral, e_ref = (synth.model.gst.style_from_weights(w[None])[0] for w in (neutral, ref))
    assert not torch.allclose(e_neutral, e_ref, atol=1e-3)
    torch.testing.assert_close(embedding(0.0), e_neutral, rtol=0, atol=1e-6)
    torch.testing.assert_close(embedding(1.0), e_ref, rtol=0, atol=1e-6)
    torch.testing.assert_close(embedding(0.5), (e_neutral + e_ref) / 2, rtol=0, atol=1e-6)
    torch.testing.assert_close(embedding(1.5), e_neutral + 1.5 * (e_ref - e_neutral), rtol=0, atol=1e-6)
    # The synthesize keyword is the same rule: strength 0 speaks the neutral style.
    at_zero = synth.synthesize("Hi there.", reference=reference, style_strength=0, seed=1, decoding=FAST, vocode=False)
    plain = synth.synthesize("Hi there.", seed=1, decoding=FAST, vocode=False)
    np.testing.assert_array_equal(at_zero.mel, plain.mel)
    # A mix takes a strength too.
    mixed = synth.styles.resolve(Style(mix=[(reference, 1.0)], strength=0.0))
    torch.testing.assert_close(mixed, neutral)


@pytest.mark.parametrize("bad", [-0.1, MAX_STYLE_STRENGTH + 0.01, math.nan, math.inf, "strong", True, None])
def test_bad_style_strengths_are_refused_in_one_line(synth, reference, bad):
    if bad is None:  # a strength without a reference to scale
        with pytest.raises(GstTtsError, match="needs a reference"):
            synth.synthesize("Hi.", style_weights={0: 0.5}, style_strength=0.5, decoding=FAST)
        return
    with pytest.raises(GstTtsError, match="style strength") as err:
        synth.synthesize("Hi.", reference=reference, style_strength=bad, decoding=FAST)
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------- F0 spread (intonation width)


def glide(seconds: float, rate: int, low: float, high: float) -> np.ndarray:
    """A voice gliding from ``low`` to ``high`` Hz (evenly in log F0) and back."""
    t = np.arange(int(seconds * rate)) / rate
    hz = low * (high / low) ** (0.5 - 0.5 * np.cos(2 * np.pi * t / seconds))
    phase = 2 * np.pi * np.cumsum(hz) / rate
    return (0.3 * sum(np.sin(k * phase) / k for k in range(1, 6))).astype(np.float32)


@pytest.mark.parametrize("bad", [-0.5, MAX_F0_RANGE_ST + 1, math.nan, "wide", True])
def test_bad_f0_ranges_are_refused_in_one_line(bad):
    with pytest.raises(GstTtsError, match="F0 range") as err:
        Style(f0_range=bad)
    assert "\n" not in str(err.value)


def test_a_given_f0_range_is_set_outright_whatever_the_strength():
    assert style_f0_range(Style(weights={1: 1.0}, f0_range=6), lambda ref: 1 / 0) == (6.0, 1.0)
    assert style_f0_range(Style(reference="a.wav", strength=2.0, f0_range=6.0), lambda ref: 4.0) == (6.0, 1.0)
    with pytest.raises(GstTtsError, match="needs a reference"):
        Style(f0_range=6.0, strength=0.5)


def test_whose_f0_spread_a_style_asks_for():
    read = {"a.wav": 4.0, "b.wav": 10.0, "whisper.wav": None}.get
    assert style_f0_range(Style(reference="a.wav"), read) == (4.0, 1.0)
    assert style_f0_range(Style(reference="a.wav", strength=1.5), read) == (4.0, 1.5)
    assert style_f0_range(Style(reference="a.wav", f0_range=8.0), read) == (8.0, 1.0)  # given, it wins
    # A mix: its references' spreads by their shares, over those measured.
    assert style_f0_range(Style(mix={"a.wav": 3.0, "b.wav": 1.0}), read) == (pytest.approx(5.5), 1.0)
    assert style_f0_range(Style(mix={"a.wav": 1.0, "whisper.wav": 3.0}), read) == (4.0, 1.0)
    for style in (None, Style(), Style(weights={1: 1.0}), Style(dials={1: 0.5}), Style(reference="whisper.wav")):
        assert style_f0_range(style, read) is None  # the spread as decoded


def test_a_reference_is_read_once_per_path_or_samples_object():
    calls = []
    read = once_per_reference(lambda ref: calls.append(ref) or len(calls))
    samples = (np.zeros(10), 16000)
    assert [read("a.wav"), read("a.wav"), read(samples), read(samples), read((np.zeros(10), 16000))] == [1, 1, 2, 2, 3]


class _SpreadVocoder:
    """A vocoder that can set an F0 spread, and records what it is asked for."""

    sets_f0_range = True

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.asked: list[tuple[float, float] | None] = []

    def __call__(self, log_mel, *, f0_range_st=None, f0_range_strength=1.0):
        self.asked.append(None if f0_range_st is None else (f0_range_st, f0_range_strength))
        return np.zeros((log_mel.shape[0] - 1) * 256, dtype=np.float32)


def test_synthesis_asks_the_vocoder_for_the_references_yin_spread(new_path, tmp_path, monkeypatch):
    import soundfile as sf

    synth = Synthesizer.from_checkpoint(new_path, device="cpu")
    voice = tmp_path / "glide.wav"
    sf.write(voice, glide(2.0, 16000, 120.0, 240.0), 16000)  # one octave: 10-90 percentile about 10 st
    vocoder = synth.vocoder = _SpreadVocoder(synth.sample_rate)
    reads = []
    read = synth.styles.read_reference
    monkeypatch.setattr(  # the readings that track the F0 spread
        synth.styles,
        "read_reference",
        lambda ref, **asked: asked.get("f0_range") and reads.append(ref) or read(ref, **asked),
    )

    synth.synthesize(
        ["One.", "Two."], reference=voice, style_strength=0.5, transfer_f0_range=True, decoding=FAST, seed=0
    )
    assert len(reads) == 1 and len(vocoder.asked) == 2 and vocoder.asked[0] == vocoder.asked[1]
    spread, strength = vocoder.asked[0]
    assert 9.0 < spread < 11.5 and strength == 0.5

    vocoder.asked.clear()
    synth.synthesize(
        ["One.", "Two.", "Three."],
        styles=[Style(reference=voice), Style(weights={0: 1.0}), Style(dials={0: 0.5}, f0_range=3.0)],
        transfer_f0_range=True,
        decoding=FAST,
        seed=0,
    )
    assert vocoder.asked == [(spread, 1.0), None, (3.0, 1.0)]

    vocoder.asked.clear()  # by default the reference's spread is not copied; a spread given outright still applies
    synth.synthesize(
        ["One.", "Two."], styles=[Style(reference=voice), Style(dials={0: 0.5}, f0_range=3.0)], decoding=FAST, seed=0
    )
    synth.synthesize("One.", reference=voice, decoding=FAST, seed=0)
    assert vocoder.asked == [None, (3.0, 1.0), None] and len(reads) == 2  # no reading without the copy


def test_a_stream_says_it_keeps_the_models_f0_spread(new_path, caplog):
    synth = Synthesizer.from_checkpoint(new_path, device="cpu")
    with caplog.at_level(logging.WARNING):
        synth.stream("Hi.", style=Style(f0_range=5.0), decoding=FAST, seed=0)
    assert "a stream keeps the model's F0 spread" in caplog.text


def test_a_reference_without_voice_has_no_spread_and_another_vocoder_warns(new_path, tmp_path, caplog):
    import soundfile as sf

    synth = Synthesizer.from_checkpoint(new_path, device="cpu")
    noise = tmp_path / "noise.wav"
    sf.write(noise, (0.1 * np.random.default_rng(0).standard_normal(22050)).astype(np.float32), 22050)
    assert synth.reference_f0_range(noise) is None  # nothing voiced: the spread stays as decoded
    # Griffin-Lim (the default vocoder) cannot set a spread: a given one is warned about, not silently dropped.
    with caplog.at_level(logging.WARNING):
        synth.synthesize("Hi.", styles=[Style(f0_range=5.0)], decoding=FAST, seed=0)
    assert "GriffinLimVocoder) keeps the model's F0 spread" in caplog.text
