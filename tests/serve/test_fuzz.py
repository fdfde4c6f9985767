"""Property-based fuzz of the API from its own OpenAPI schema (schemathesis + hypothesis): valid
and invalid requests to every operation, none answered 5xx, every 4xx a one-line JSON error,
none slow. Bounded: a fixed number of derandomised examples, a few seconds in all."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed: pip install 'gst-tts[serve]'")
schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (it comes with the dev extra)")
from conftest import seconds_for_steps  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.generation import GenerationMode  # noqa: E402

from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder  # noqa: E402
from gst_tts.inference.decoding import DecodingConfig  # noqa: E402
from gst_tts.inference.synthesizer import Synthesizer  # noqa: E402
from gst_tts.serve.app import create_app  # noqa: E402
from gst_tts.serve.batching import BatchingQueue  # noqa: E402
from gst_tts.serve.limits import ServeLimits  # noqa: E402

# Each answer, a synthesis included, takes well under this with the tiny model and its step bound.
SLOW_S = 10.0


@pytest.fixture(scope="module")
def app(tiny_checkpoint):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    synth.vocoder = GriffinLimVocoder(synth.audio_config, n_iter=2)
    # Short bounds keep the many valid syntheses cheap; the limits are what the schema documents.
    queue = BatchingQueue(synth, decoding=DecodingConfig(max_seconds=seconds_for_steps(20)), max_chunk_chars=60)
    return create_app(queue, limits=ServeLimits(max_text_chars=120, request_timeout_s=SLOW_S))


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
def test_fuzz_from_the_openapi_schema_finds_no_5xx(app, mode):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    answered: dict[int, int] = {}

    @settings(max_examples=200, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(case=schema.as_strategy(generation_mode=mode))
    def check(case):
        started = time.monotonic()
        response = case.call()
        elapsed = time.monotonic() - started
        answered[response.status_code] = answered.get(response.status_code, 0) + 1
        where = f"{case.method} {case.formatted_path} -> {response.status_code}"
        assert response.status_code < 500, f"{where}: {response.text[:300]}"
        assert elapsed < SLOW_S, f"{where} took {elapsed:.1f} s"
        if response.status_code >= 400:
            error = response.json()["error"]
            assert isinstance(error, str) and error and "\n" not in error, where

    check()
    # Valid requests got past validation (some synthesized), invalid ones were refused.
    if mode == GenerationMode.POSITIVE:
        assert any(code < 300 for code in answered), answered
    else:
        assert any(400 <= code < 500 for code in answered), answered
