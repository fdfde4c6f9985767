"""Style transfer measured in validation: outputs that follow their references fit with slope 1,
outputs that ignore them with slope 0; a reference is measured once."""

from conftest import tone
import numpy as np
import pytest

from gst_tts.audio.features import AudioConfig, wav_to_logmel
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.training.transfer_validation import TransferValidation

CONFIG = AudioConfig()
FREQUENCIES = (110.0, 150.0, 200.0, 260.0)


def _log_mel(freq: float, seconds: float = 1.0) -> np.ndarray:
    return wav_to_logmel(tone(seconds, CONFIG.sample_rate, freq), CONFIG)


@pytest.fixture(scope="module")
def validation():
    return TransferValidation(CONFIG, GriffinLimVocoder(CONFIG, n_iter=16))


def test_outputs_at_their_references_pitch_fit_with_slope_one(validation):
    references = [validation.reference(f"u{i}", _log_mel(f), "a b c") for i, f in enumerate(FREQUENCIES)]
    outputs = [validation.measure(_log_mel(f), "a b c") for f in FREQUENCIES]
    figures = validation.figures(references, outputs)
    assert set(figures) == {f"{m}_{k}" for m in ("log_f0", "f0_range", "log_rate") for k in ("r", "slope")}
    assert figures["log_f0_r"] > 0.99 and figures["log_f0_slope"] == pytest.approx(1.0, abs=0.05)


def test_outputs_that_ignore_their_references_fit_with_slope_zero(validation):
    references = [validation.reference(f"v{i}", _log_mel(f), "a b c") for i, f in enumerate(FREQUENCIES)]
    output = validation.measure(_log_mel(150.0), "a b c")
    figures = validation.figures(references, [output] * len(FREQUENCIES))
    assert figures["log_f0_slope"] == pytest.approx(0.0, abs=1e-9)
    assert np.isnan(figures["log_f0_r"])  # no spread in the outputs: no correlation to speak of


def test_a_reference_is_measured_once():
    calls = []
    vocoder = GriffinLimVocoder(CONFIG, n_iter=4)
    validation = TransferValidation(CONFIG, lambda m: calls.append(1) or vocoder(m))
    first = validation.reference("u0", _log_mel(150.0), "a b c")
    again = validation.reference("u0", _log_mel(150.0), "a b c")
    assert again is first and len(calls) == 1
