"""The style-transfer run (gst_tts.inference.transfer): bad reference sets and texts fail before decoding."""

from __future__ import annotations

from conftest import tone
import pytest

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
