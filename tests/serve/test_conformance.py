"""The OpenAPI schema is true to what the server answers: every status an operation answers is one
its schema lists (schemathesis' ``status_code_conformance``, in process, valid and invalid data,
with the API key), the guard's answers (401, 413) and a body that is not JSON included; and data
the schema allows is data the server takes, but for state (a reference id that was never uploaded)
and what the schema cannot say (``stream=true`` with ``format=json`` or a ``tempo``). Bounded: a
fixed number of derandomised examples, a few seconds in all. ``st run`` against a live
``gst-tts serve`` does the same at length (docs/serving.md)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed: pip install 'gst-tts[serve]'")
schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (it comes with the dev extra)")
from conftest import seconds_for_steps, tone  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import status_code_conformance  # noqa: E402

from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder  # noqa: E402
from gst_tts.inference.decoding import DecodingConfig  # noqa: E402
from gst_tts.inference.synthesizer import Synthesizer  # noqa: E402
from gst_tts.serve.app import create_app  # noqa: E402
from gst_tts.serve.batching import BatchingQueue  # noqa: E402
from gst_tts.serve.limits import ServeLimits  # noqa: E402
from gst_tts.serve.models import ID_PATTERN, SchemaFacts, text_pattern  # noqa: E402

KEY = "conformance-key"
AUTH = {"X-API-Key": KEY}
# Refusals the schema cannot prevent: state, and stream=true with what a stream cannot give.
STATEFUL = ("is not an uploaded reference", "stream=true answers with WAV only", "streams keep the model's tempo")


@pytest.fixture(scope="module")
def app(tiny_checkpoint):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    synth.vocoder = GriffinLimVocoder(synth.audio_config, n_iter=2)
    queue = BatchingQueue(synth, decoding=DecodingConfig(max_seconds=seconds_for_steps(20)), max_chunk_chars=60)
    return create_app(queue, limits=ServeLimits(max_text_chars=120, request_timeout_s=10.0), api_key=KEY)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
def openapi(client) -> dict:
    return client.get("/openapi.json").json()


def listed(openapi: dict, method: str, path: str) -> set[int]:
    return {int(code) for code in openapi["paths"][path][method.lower()]["responses"]}


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
def test_every_answer_is_a_status_the_schema_lists(app, mode):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    refused: dict[str, list[str]] = {}

    @settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(case=schema.as_strategy(generation_mode=mode))
    def check(case):
        response = case.call(headers=AUTH)
        case.validate_response(response, checks=[not_a_server_error, status_code_conformance])
        if mode == GenerationMode.POSITIVE and response.status_code == 422:
            refused.setdefault(case.operation.label, []).append(response.json()["error"])

    check()
    if mode == GenerationMode.POSITIVE:
        # Data the schema allows is taken, but for what no schema can state: an upload that is not
        # audio, a reference id that was never uploaded, stream=true with format=json or a tempo.
        refused.pop("POST /api/references", None)
        unexplained = {
            label: [m for m in messages if not any(why in m for why in STATEFUL)] for label, messages in refused.items()
        }
        assert not any(unexplained.values()), unexplained


@pytest.mark.parametrize(
    "body",
    [b"\x37\xff\xfe\x01 \xc3\x01\x9c\x9d\x5a\x32", b'{"text": "unclosed', b"[1, 2", b"\xef\xbb\xbf{}"],
    ids=["not-utf8", "unclosed", "not-an-object", "bom"],
)
def test_a_malformed_json_body_gets_a_status_the_schema_lists(client, openapi, body):
    r = client.post("/api/synthesize", content=body, headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code in listed(openapi, "POST", "/api/synthesize"), (r.status_code, r.text)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert isinstance(error, str) and error and "\n" not in error


def test_the_guards_answers_are_listed_for_every_operation(client, openapi):
    for path, operations in openapi["paths"].items():
        concrete = path.replace("{syn_id}", "0123456789abcdef")
        for method in operations:
            codes = listed(openapi, method, path)
            if path != "/api/health":
                r = client.request(method.upper(), concrete)
                assert r.status_code == 401 and 401 in codes, (method, path, r.status_code, codes)
            r = client.request(method.upper(), concrete, headers={**AUTH, "Content-Length": str(64 << 20)})
            assert r.status_code == 413 and 413 in codes, (method, path, r.status_code, codes)


def test_the_schema_states_the_models_tokens_texts_ids_and_vocoders(client, openapi):
    body = openapi["components"]["schemas"]["SynthesizeRequest"]
    weights = body["properties"]["style_weights"]["anyOf"][0]
    # The tiny model: 5 tokens, 2 heads; no other key, at least one.
    assert weights["patternProperties"].keys() == {"^(?:[0-1]:)?[0-4]$"}
    assert weights["additionalProperties"] is False and weights["minProperties"] == 1
    assert body["properties"]["vocoder"]["anyOf"][0]["enum"] == ["griffin-lim"]
    assert body["dependentSchemas"]["style_weights"]["properties"]["mix"] == {"type": "null"}
    ref = client.post("/api/references", files={"file": ("r.wav", _wav(tone(1.0)), "audio/wav")}, headers=AUTH).json()
    assert re.fullmatch(ID_PATTERN.strip("^$"), ref["id"])
    text = openapi["paths"]["/api/tts"]["get"]["parameters"]
    assert [p["required"] for p in text if p["name"] == "text"] == [True]
    # Coqui's clients send the text in a header: the server still takes it.
    assert client.get("/api/tts", headers={**AUTH, "text": "From a header."}).status_code == 200


def test_text_pattern_allows_only_what_the_model_reads():
    pattern = text_pattern("!'\"(),-.:;? abcdefghijklmnopqrstuvwxyz", phonemes=False)
    assert re.fullmatch(pattern, "Hello, (there) - 'you'?") and not re.fullmatch(pattern, "?!")
    assert re.fullmatch(pattern, "3 apples") and re.fullmatch(pattern, "911")  # digits are spelled out
    for bad in ("a{b}", "café", "a#b"):
        assert not re.fullmatch(pattern, bad), bad
    assert text_pattern("ab-", phonemes=False) == r"^[\-abAB0-9]*[abAB0-9][\-abAB0-9]*$"
    assert text_pattern("0123", phonemes=False) is None
    assert SchemaFacts(n_tokens=12, n_heads=4).token_key() == "(?:[0-3]:)?(?:11|10|9|8|7|6|5|4|3|2|1|0)"


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_style_wav_the_schema_allows_is_taken(data, client, openapi):
    (style_wav,) = [p for p in openapi["paths"]["/api/tts"]["get"]["parameters"] if p["name"] == "style_wav"]
    value = data.draw(st.from_regex(style_wav["schema"]["pattern"], fullmatch=True).filter(lambda v: len(v) <= 2000))
    r = client.get("/api/tts", params={"text": "Hi.", "style_wav": value}, headers=AUTH)
    assert r.status_code == 200, (value, r.text)


def _wav(samples) -> bytes:
    import io

    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, samples, 22050, format="WAV", subtype="PCM_16")
    return buffer.getvalue()
