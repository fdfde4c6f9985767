"""The style-transfer run (gst_tts.inference.transfer): bad reference sets and texts fail before
decoding; a style strength moves each reference's weights from neutral."""

from __future__ import annotations

from conftest import tone
import pytest
import torch

from gst_tts.analysis.style_transfer import REAL_GROUP, ReferenceClip
from gst_tts.errors import AudioError, GstTtsError
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.inference.transfer import evaluate_style_transfer


def test_evaluation_refuses_bad_sets(tiny_checkpoint):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    clip = ReferenceClip("a", tone(1.0, 22050, 150.0), 22050, None, (REAL_GROUP,))
    with pytest.raises(GstTtsError, match="at least 2 references"):
        evaluate_style_transfer(synth, [clip], ["Hello."], progress=False)
    with pytest.raises(GstTtsError, match="at least one sentence"):
        evaluate_style_transfer(synth, [clip, clip], [], progress=False)
    with pytest.raises(GstTtsError, match="unique"):
        evaluate_style_transfer(synth, [clip, clip], ["Hello."], progress=False)
    short = ReferenceClip("b", tone(0.2, 22050, 150.0), 22050, None, (REAL_GROUP,))
    with pytest.raises(AudioError):  # before any decoding
        evaluate_style_transfer(synth, [clip, short], ["Hello."], progress=False)


class _Captured(Exception):
    pass


@pytest.mark.parametrize("strength", [None, 0.0, 0.5, 1.5])
def test_a_style_strength_moves_each_references_weights_from_neutral(tiny_checkpoint, strength):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    clips = [
        ReferenceClip(name, tone(1.0, 22050, f0), 22050, None, (REAL_GROUP,))
        for name, f0 in (("a", 110.0), ("b", 260.0))
    ]
    seen = []

    def capture(texts, styles, **kwargs):
        seen.extend(styles)
        raise _Captured

    synth.synthesize = capture
    with pytest.raises(_Captured):
        evaluate_style_transfer(synth, clips, ["Hello."], progress=False, style_strength=strength)
    neutral = synth.styles.neutral()
    assert len(seen) == 2
    resolved = [synth.styles.resolve(style) for style in seen]
    for clip, style, weights in zip(clips, seen, resolved):
        assert style.strength == strength  # the reference's F0 spread is moved by it too (synthesize)
        own = synth.styles.reference_weights((clip.audio, clip.sample_rate))
        expected = own if strength is None else neutral + strength * (own - neutral)
        torch.testing.assert_close(weights, expected, rtol=1e-6, atol=1e-6)
    assert not torch.allclose(resolved[0], resolved[1]) or strength == 0.0


def test_an_untrained_model_scores_near_zero_on_every_default_figure(tiny_checkpoint):
    """By default the figures measure the model alone: random weights follow no reference. The
    tempo copied after the model gives the same model a rate correlation (it reads back the rate
    it wrote)."""
    import math

    from conftest import seconds_for_steps
    from gst_tts.analysis.style_transfer import ESPEAK_GROUP, espeak_references
    from gst_tts.inference.decoding import DecodingConfig

    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    references = espeak_references(6, seed=0, sentences=1)
    # long enough that the untrained model's speech is slower than every reference (110-200 wpm)
    decoding = DecodingConfig(max_seconds=seconds_for_steps(48))
    alone = evaluate_style_transfer(synth, references, ["Hello there."], progress=False, decoding=decoding)
    for name, fit in alone.fits[ESPEAK_GROUP].items():  # a fit of two or three points says nothing
        assert fit.n < 4 or (abs(fit.slope) < 0.2 and (math.isnan(fit.r) or abs(fit.r) < 0.6)), (name, fit)
    assert alone.fits[ESPEAK_GROUP]["rate_letters_per_s"].n >= 4
    copied = evaluate_style_transfer(
        synth, references, ["Hello there."], progress=False, decoding=decoding, transfer_tempo=True
    )
    # only shortened here (the untrained model runs to the decoding bound, which retiming never passes)
    assert copied.fits[ESPEAK_GROUP]["rate_letters_per_s"].r > 0.5
