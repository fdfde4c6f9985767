"""The HTTP API through FastAPI's test client: synthesis with every style source, the Coqui-style
GET, references, the model and health endpoints, the API key, and every kind of bad input (each a
4xx JSON error that names the problem, nothing written to disk)."""

from __future__ import annotations

import io
import json
import math
import tempfile
import threading

import numpy as np
import pytest
import soundfile as sf
import torch

pytest.importorskip("fastapi", reason="the serve extra is not installed: pip install 'gst-tts[serve]'")
from fastapi.testclient import TestClient  # noqa: E402

from conftest import TINY_MODEL, seconds_for_steps, tone  # noqa: E402
from gst_tts.audio.features import AudioConfig, MelStats  # noqa: E402
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder  # noqa: E402
from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator  # noqa: E402
from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder  # noqa: E402
from gst_tts.checkpoints.acoustic import checkpoint_payload, save_checkpoint  # noqa: E402
from gst_tts.inference.decoding import DecodingConfig  # noqa: E402
from gst_tts.inference.dial_names import NamedDial  # noqa: E402
from gst_tts.inference.synthesizer import Synthesizer  # noqa: E402
from gst_tts.serve.app import STATIC_DIR, create_app  # noqa: E402
from gst_tts.serve.batching import BatchingQueue  # noqa: E402
from gst_tts.serve.limits import ServeLimits  # noqa: E402
from gst_tts.model import GSTTacotron  # noqa: E402
from gst_tts.text.frontends import PhonemeFrontend  # noqa: E402
from gst_tts.text.phonemes import espeak_version, phonemize  # noqa: E402
from gst_tts.text.symbols import SymbolTable  # noqa: E402

# The random tiny model never emits its stop token: a low step bound keeps every synthesis short.
DECODING = DecodingConfig(max_seconds=seconds_for_steps(40))


@pytest.fixture(scope="module")
def synth(tiny_checkpoint) -> Synthesizer:
    s = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    s.vocoder = GriffinLimVocoder(s.audio_config, n_iter=4)
    return s


def make_client(
    synth: Synthesizer, *, limits: ServeLimits = ServeLimits(), api_key: str | None = None, **queue_options
) -> TestClient:
    queue = BatchingQueue(synth, decoding=DECODING, **queue_options)
    return TestClient(create_app(queue, limits=limits, api_key=api_key))


@pytest.fixture
def client(synth):
    with make_client(synth) as c:
        yield c


def wav(samples: np.ndarray, rate: int = 22050, fmt: str = "WAV") -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, samples, rate, format=fmt, subtype="PCM_16" if fmt == "WAV" else None)
    return buffer.getvalue()


def upload(client: TestClient, data: bytes, name: str = "clip.wav", **kwargs):
    return client.post("/api/references", files={"file": (name, data, "audio/wav")}, **kwargs)


def assert_error(response, status: int, *words: str) -> str:
    """A 4xx answer {"error": one line} that contains ``words``."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert isinstance(body, dict) and isinstance(body["error"], str), body
    message = body["error"]
    assert "\n" not in message and message.strip()
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    return message


def read_wav(content: bytes) -> tuple[np.ndarray, int]:
    samples, rate = sf.read(io.BytesIO(content), dtype="float32")
    return samples, rate


# ---------------------------------------------------------------- synthesis


def test_synthesize_returns_wav_with_health_and_weights_in_headers(client, synth):
    r = client.post("/api/synthesize", json={"text": "Hello there.", "style_weights": {"1": 0.7, "1:2": -0.3}})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "audio/wav"
    samples, rate = read_wav(r.content)
    assert rate == synth.sample_rate and samples.size > 0
    assert r.headers["x-stop-reason"] in ("stop_token", "max_steps")
    health = json.loads(r.headers["x-alignment-health"])
    assert 0.0 <= health["focus"] <= 1.0 and health["verdict"]
    assert isinstance(json.loads(r.headers["x-alignment-problems"]), list)
    weights = np.array(json.loads(r.headers["x-style-weights"]))
    expected = np.zeros((synth.n_heads, synth.n_tokens))
    expected[:, 1] = 0.7
    expected[1, 2] = -0.3
    np.testing.assert_allclose(weights, expected, atol=1e-4)
    assert math.isclose(float(r.headers["x-duration-s"]), samples.size / rate, abs_tol=1e-3)


def test_style_dials_move_a_head_from_neutral(client, synth):
    r = client.post("/api/synthesize?format=json", json={"text": "Dialled.", "style_dials": {"1:2": 0.5}, "seed": 1})
    assert r.status_code == 200, r.text
    expected = np.full((synth.n_heads, synth.n_tokens), 1 / synth.n_tokens)
    expected[1] *= 0.5
    expected[1, 2] += 0.5
    np.testing.assert_allclose(r.json()["style_weights"], expected, atol=1e-4)


def test_json_variant_links_audio_and_alignment_png(client, synth):
    r = client.post("/api/synthesize?format=json", json={"text": "Good morning.", "seed": 3})
    assert r.status_code == 200, r.text
    summary = r.json()
    assert summary["seed"] == 3 and summary["vocoder"] == "griffin-lim"
    assert summary["stop_reason"] in ("stop_token", "max_steps") and "coverage" in summary["health"]
    np.testing.assert_allclose(
        summary["style_weights"], np.full((synth.n_heads, synth.n_tokens), 1 / synth.n_tokens), atol=1e-6
    )
    audio = client.get(summary["audio_url"])
    assert audio.status_code == 200 and audio.headers["content-type"] == "audio/wav"
    assert read_wav(audio.content)[0].size / synth.sample_rate == pytest.approx(summary["duration_s"], abs=1e-3)
    png = client.get(summary["alignment_url"])
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(b"\x89PNG\r\n\x1a\n") and len(png.content) > 2000
    assert client.get(f"/api/syntheses/{summary['id']}").json()["id"] == summary["id"]


def test_same_seed_gives_the_same_audio(client):
    first = client.post("/api/synthesize", json={"text": "Again and again.", "seed": 11})
    second = client.post("/api/synthesize", json={"text": "Again and again.", "seed": 11})
    assert first.status_code == second.status_code == 200
    assert first.content == second.content


def test_coqui_style_get(client, synth):
    r = client.get(
        "/api/tts", params={"text": "Hello from the old client.", "speaker_id": "", "style_wav": "", "language_id": ""}
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "audio/wav"
    assert read_wav(r.content)[1] == synth.sample_rate
    # Coqui's server also reads the text from a header.
    assert client.get("/api/tts", headers={"text": "Header text."}).status_code == 200


def test_model_and_health(client, synth):
    m = client.get("/api/model").json()
    assert (m["sample_rate"], m["n_tokens"], m["n_heads"]) == (synth.sample_rate, synth.n_tokens, synth.n_heads)
    assert m["tokens"] == list(range(synth.n_tokens)) and m["heads"] == list(range(synth.n_heads))
    assert m["vocoders"] == ["griffin-lim"] and m["frontend"]["cleaner"] == synth.symbols.cleaner
    assert "a" in m["frontend"]["characters"] and m["limits"]["max_text_chars"] == 500
    assert (m["frontend"]["frontend"], m["frontend"]["language"], m["frontend"]["espeak_version"]) == (
        "characters",
        None,
        None,
    )
    h = client.get("/api/health").json()
    assert h["status"] == "ok" and h["queue"]["max_queue"] == 32


def test_model_says_which_vocoder_speaks_and_why(client, synth):
    assert client.get("/api/model").json()["vocoder"] == "Griffin-Lim"  # none described: the default vocoder's name
    line = (
        "HiFi-GAN run/vocoder/generator.pt (recorded beside the checkpoint; --vocoder griffin-lim to use Griffin-Lim)"
    )
    with TestClient(create_app(BatchingQueue(synth, decoding=DECODING), vocoder_description=line)) as described:
        assert described.get("/api/model").json()["vocoder"] == line


def test_model_offers_the_named_dials_strongest_first(client, synth):
    assert client.get("/api/model").json()["dials"] == []  # no dials file: none
    dials = [NamedDial(1, 3, "lower pitch", 1.0, -2.5, 1.0, 0.2), NamedDial(0, 2, "faster", 1.0, 0.1, 1.3, None)]
    with TestClient(create_app(BatchingQueue(synth, decoding=DECODING), dials=dials)) as named:
        got = named.get("/api/model").json()["dials"]
    assert [(d["head"], d["token"], d["name"]) for d in got] == [(1, 3, "lower pitch"), (0, 2, "faster")]
    assert got[0]["d_f0_semitones"] == -2.5 and got[1]["d_energy_db"] is None
    assert got[0]["effect"] == pytest.approx(2.5) and got[1]["effect"] > 3


def test_openapi_documents_the_request_fields(client):
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    for path in (
        "/api/synthesize",
        "/api/tts",
        "/api/references",
        "/api/model",
        "/api/health",
        "/api/syntheses/{syn_id}/alignment.png",
    ):
        assert path in paths, path
    body = schema["components"]["schemas"]["SynthesizeRequest"]
    assert set(body["properties"]) == {
        "text",
        "style_weights",
        "style_dials",
        "reference_id",
        "mix",
        "seed",
        "vocoder",
        "style_strength",
        "tempo",
        "f0_range",
    }
    assert body["additionalProperties"] is False
    # The copies after the model: off (the model's own) unless asked for, as the schema says.
    tempo, f0_range = body["properties"]["tempo"], body["properties"]["f0_range"]
    assert tempo["default"] == f0_range["default"] == "decoded" and "tempo" not in body.get("required", [])
    assert tempo["enum"] == ["decoded", "reference"] and "after the model" in tempo["description"]
    number = [branch for branch in f0_range["anyOf"] if branch.get("type") == "number"]
    assert number == [{"type": "number", "minimum": 0, "maximum": 24.0}]
    assert {"decoded", "reference"} <= {v for branch in f0_range["anyOf"] for v in branch.get("enum", [])}
    assert body["properties"]["text"]["maxLength"] == 500
    assert (
        "file"
        in paths["/api/references"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    )


# ---------------------------------------------------------------- references and mixes


def test_reference_upload_then_synthesis_in_its_style_and_mixes(client, synth):
    low = upload(client, wav(tone(1.5, 22050, 140.0)), "low.wav")
    assert low.status_code == 200, low.text
    ref = low.json()
    assert ref["name"] == "low.wav" and ref["duration_s"] == pytest.approx(1.5, abs=0.01)
    weights = np.array(ref["weights"])
    assert weights.shape == (synth.n_heads, synth.n_tokens)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-4)  # softmax attention per head
    # Another rate and stereo, as the CLI takes them.
    stereo = np.stack([tone(1.2, 16000, 300.0), tone(1.2, 16000, 310.0)], axis=1)
    high = upload(client, wav(stereo, 16000), "high.flac")
    assert high.status_code == 200, high.text
    listed = [r["id"] for r in client.get("/api/references").json()]
    assert listed[-2:] == [ref["id"], high.json()["id"]]

    r = client.post("/api/synthesize", json={"text": "In that style.", "reference_id": ref["id"]})
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(json.loads(r.headers["x-style-weights"]), weights, atol=1e-4)

    mix = client.post("/api/synthesize", json={"text": "Mixed.", "mix": {ref["id"]: 3.0, high.json()["id"]: 1.0}})
    assert mix.status_code == 200, mix.text
    expected = 0.75 * weights + 0.25 * np.array(high.json()["weights"])
    np.testing.assert_allclose(json.loads(mix.headers["x-style-weights"]), expected, atol=1e-4)


def test_style_strength_moves_a_reference_from_neutral_and_bad_strengths_are_refused(client, synth):
    ref = upload(client, wav(tone(1.5, 22050, 140.0)), "low.wav").json()
    weights, neutral = np.array(ref["weights"]), synth.styles.neutral().numpy()
    model = client.get("/api/model").json()
    np.testing.assert_allclose(model["neutral_weights"], neutral)
    for strength, expected in (
        (0.0, neutral),
        (1.0, weights),
        (0.5, (weights + neutral) / 2),
        (1.5, neutral + 1.5 * (weights - neutral)),
    ):
        for style in ({"reference_id": ref["id"]}, {"mix": {ref["id"]: 1.0}}):
            r = client.post("/api/synthesize", json={"text": "Scaled.", **style, "style_strength": strength})
            assert r.status_code == 200, r.text
            np.testing.assert_allclose(json.loads(r.headers["x-style-weights"]), expected, atol=1e-4)
    for bad in (-0.5, 3.5, "loud", None, float("inf")):
        body = {"text": "Hi.", "reference_id": ref["id"], "style_strength": bad}
        r = client.post(
            "/api/synthesize", content=json.dumps(body, allow_nan=True), headers={"content-type": "application/json"}
        )
        if bad is None:  # null: no strength given, the reference as it is
            assert r.status_code == 200, r.text
            continue
        assert_error(r, 422, "style_strength")
    assert_error(
        client.post("/api/synthesize", json={"text": "Hi.", "style_strength": 0.5}),
        422,
        "style_strength needs reference_id or mix",
    )


# ---------------------------------------------------------------- bad input

BAD_SYNTHESIS = {
    "empty text": ({"text": ""}, "text"),
    "blank text": ({"text": "   \n"}, "text is empty"),
    "text too long": ({"text": "a" * 501}, "text"),
    "unknown characters": ({"text": "Mail me @ home [now]"}, "cannot read: '@', '[', ']'"),
    "control character": ({"text": "a\x00b"}, "cannot read: '\\x00'"),
    "only punctuation": ({"text": "?!..."}, "nothing to speak"),
    "text not a string": ({"text": 5}, "text"),
    "missing text": ({"style_weights": {"1": 0.5}}, "text"),
    "unknown field": ({"text": "Hi.", "speed": 2}, "unknown field 'speed'"),
    "weight out of range": ({"text": "Hi.", "style_weights": {"1": 99}}, "style_weights"),
    "too many weights": ({"text": "Hi.", "style_weights": {str(i): 0.1 for i in range(65)}}, "style_weights"),
    "bad token key": ({"text": "Hi.", "style_weights": {"x": 0.1}}, "style_weights"),
    "token out of range": ({"text": "Hi.", "style_weights": {"99": 0.1}}, "style token 99"),
    "head out of range": ({"text": "Hi.", "style_weights": {"9:0": 0.1}}, "style head 9"),
    "no token named": ({"text": "Hi.", "style_weights": {}}, "name no token"),
    "weight not a number": ({"text": "Hi.", "style_weights": {"1": "loud"}}, "style_weights"),
    "a path as reference": ({"text": "Hi.", "reference_id": "/etc/passwd"}, "not an uploaded reference"),
    "a path in a mix": ({"text": "Hi.", "mix": {"../ref.wav": 1.0}}, "not an uploaded reference"),
    "negative mix weight": ({"text": "Hi.", "mix": {"abc": -1.0}}, "mix"),
    "empty mix": ({"text": "Hi.", "mix": {}}, "mix"),
    "two style sources": ({"text": "Hi.", "style_weights": {"1": 0.1}, "reference_id": "abc"}, "at most one"),
    "weights and dials": ({"text": "Hi.", "style_weights": {"1": 0.1}, "style_dials": {"1": 0.1}}, "at most one"),
    "dial head out of range": ({"text": "Hi.", "style_dials": {"9:0": 0.1}}, "style_dials: style head 9"),
    "unknown vocoder": ({"text": "Hi.", "vocoder": "wavenet"}, "not one of griffin-lim"),
    "negative seed": ({"text": "Hi.", "seed": -1}, "seed"),
    "huge seed": ({"text": "Hi.", "seed": 2**40}, "seed"),
    "body not an object": (["Hi."], "body"),
}


@pytest.mark.parametrize("case", list(BAD_SYNTHESIS))
def test_bad_synthesis_requests_are_named_4xx(client, case):
    body, words = BAD_SYNTHESIS[case]
    assert_error(client.post("/api/synthesize", json=body), 422, words)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_weights_are_refused(client, literal):
    raw = '{"text": "Hi.", "style_weights": {"1": %s}}' % literal
    r = client.post("/api/synthesize", content=raw, headers={"content-type": "application/json"})
    assert_error(r, 422, "style_weights.1")


def test_malformed_json_and_wrong_content_type(client):
    assert_error(
        client.post("/api/synthesize", content="{not json", headers={"content-type": "application/json"}), 422, "JSON"
    )
    r = client.post("/api/synthesize", content="text=Hi", headers={"content-type": "application/x-www-form-urlencoded"})
    assert 400 <= r.status_code < 500 and "error" in r.json()


def test_coqui_get_refuses_a_server_path_and_empty_text(client):
    assert_error(
        client.get("/api/tts", params={"text": "Hi.", "style_wav": "/etc/passwd"}), 422, "style_wav", "never read"
    )
    assert_error(client.get("/api/tts"), 422, "text")
    assert_error(client.get("/api/tts", params={"text": ""}), 422, "text is empty")


def test_unknown_synthesis_id_is_404(client):
    assert_error(client.get("/api/syntheses/0123456789abcdef/alignment.png"), 404, "not kept")
    assert_error(client.get("/api/nothing"), 404)


@pytest.fixture
def no_disk_writes(tmp_path, monkeypatch):
    """Temp files go to a folder of our own (so any would be seen) and the working folder is empty."""
    tmp, cwd = tmp_path / "tmp", tmp_path / "cwd"
    tmp.mkdir(), cwd.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.chdir(cwd)
    yield
    assert not list(tmp.iterdir()) and not list(cwd.iterdir())


def test_bad_uploads_are_named_4xx_and_nothing_is_written(synth, no_disk_writes):
    limits = ServeLimits(max_upload_bytes=200_000, max_reference_s=3.0)
    with make_client(synth, limits=limits) as client:
        assert_error(
            upload(client, b"this is not audio at all" * 20, "notes.txt"), 422, "notes.txt", "not readable as audio"
        )
        assert_error(upload(client, wav(np.zeros(22050, dtype=np.float32))), 422, "silent")
        assert_error(upload(client, wav(tone(0.1))), 422, "at least 0.5 s")
        assert_error(upload(client, wav(tone(4.0, 8000), 8000)), 422, "4.0 s long", "limit is 3 s")
        assert_error(upload(client, wav(tone(4.6))), 413, "the limit is 200000")
        assert_error(upload(client, b""), 422, "empty")
        nan = np.full(22050, np.nan, dtype=np.float32)
        buffer = io.BytesIO()
        sf.write(buffer, nan, 22050, format="WAV", subtype="FLOAT")
        assert_error(upload(client, buffer.getvalue()), 422, "NaN")
        # A path instead of an upload: the field is text, and the server never opens it.
        assert_error(client.post("/api/references", files={"file": (None, b"/etc/hostname")}), 422, "not a file")
        assert_error(client.post("/api/references", data={"file": "/etc/hostname"}), 415, "multipart/form-data")
        assert_error(
            client.post("/api/references", files={"other": ("a.wav", wav(tone(1.0)), "audio/wav")}),
            422,
            "file: missing",
        )
        assert_error(client.post("/api/references", json={"file": "/etc/hostname"}), 415, "multipart/form-data")
        assert_error(
            client.post("/api/references", content=b"--x\r\n", headers={"content-type": "multipart/form-data"}),
            422,
            "multipart",
        )
        # A good upload (over Starlette's 1 MiB spooling size would be the same code path) writes nothing either.
        assert upload(client, wav(tone(2.0))).status_code == 200


def test_too_large_bodies_are_refused_from_their_declared_length(synth):
    with make_client(synth, limits=ServeLimits(max_upload_bytes=1000)) as client:
        r = client.post(
            "/api/references", content=b"x" * 100_000, headers={"content-type": "multipart/form-data; boundary=b"}
        )
        assert_error(r, 413, "100000 bytes")
        r = client.post("/api/synthesize", content=b" " * 300_000, headers={"content-type": "application/json"})
        assert_error(r, 413, "300000 bytes")


# ---------------------------------------------------------------- queue, time limit, batching


class Gate:
    """Holds the worker inside ``synthesize`` until released; records each call's texts."""

    def __init__(self, synth: Synthesizer, monkeypatch) -> None:
        self.entered, self.release, self.calls = threading.Event(), threading.Event(), []
        real = synth.synthesize

        def held(texts, **kwargs):
            self.calls.append(list(texts))
            self.entered.set()
            assert self.release.wait(30), "the test never released the worker"
            return real(texts, **kwargs)

        monkeypatch.setattr(synth, "synthesize", held)


def _post_in_thread(client: TestClient, text: str, out: dict) -> threading.Thread:
    thread = threading.Thread(target=lambda: out.__setitem__(text, client.post("/api/synthesize", json={"text": text})))
    thread.start()
    return thread


def _wait_for(condition, seconds: float = 10.0) -> None:
    import time

    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_requests_that_arrive_together_are_decoded_in_one_batch(synth, monkeypatch):
    gate = Gate(synth, monkeypatch)
    with make_client(synth, max_batch=8) as client:
        answers: dict = {}
        threads = [_post_in_thread(client, "First one.", answers)]
        assert gate.entered.wait(10)
        queue = client.app.state.queue
        threads += [_post_in_thread(client, t, answers) for t in ("Second one.", "Third one.", "Fourth one.")]
        _wait_for(lambda: queue.pending == 3)
        gate.release.set()
        for t in threads:
            t.join(30)
    assert [r.status_code for r in answers.values()] == [200] * 4
    assert gate.calls[0] == ["First one."]
    assert sorted(gate.calls[1]) == ["Fourth one.", "Second one.", "Third one."]  # one batch of three
    assert queue.stats()["largest_batch"] == 3


def test_full_queue_answers_503_with_retry_after(synth, monkeypatch):
    gate = Gate(synth, monkeypatch)
    with make_client(synth, max_batch=1, max_queue=1) as client:
        answers: dict = {}
        first = _post_in_thread(client, "Running.", answers)
        assert gate.entered.wait(10)
        second = _post_in_thread(client, "Waiting.", answers)
        _wait_for(lambda: client.app.state.queue.pending == 1)
        r = client.post("/api/synthesize", json={"text": "No room."})
        assert_error(r, 503, "queue is full")
        assert int(r.headers["retry-after"]) >= 1
        gate.release.set()
        first.join(30), second.join(30)
    assert answers["Running."].status_code == answers["Waiting."].status_code == 200


def test_request_time_limit_is_408_and_a_dropped_request_never_runs(synth, monkeypatch):
    gate = Gate(synth, monkeypatch)
    with make_client(synth, max_batch=1, limits=ServeLimits(request_timeout_s=0.5)) as client:
        answers: dict = {}
        first = _post_in_thread(client, "Slow.", answers)
        assert gate.entered.wait(10)
        late = client.post("/api/synthesize", json={"text": "Given up."})
        assert_error(late, 408, "request time limit of 0.5 s")
        first.join(30)
        gate.release.set()
        assert_error(answers["Slow."], 408)
        assert client.get("/api/health").status_code == 200
        _wait_for(lambda: client.app.state.queue.stats()["requests"] == 1)
    assert gate.calls == [["Slow."]]  # "Given up." was dropped before it started


# ---------------------------------------------------------------- API key and the page


def test_api_key(synth):
    with make_client(synth, api_key="s3cret") as client:
        assert_error(client.get("/api/model"), 401, "X-API-Key")
        assert_error(client.get("/api/model", headers={"X-API-Key": "wrong"}), 401, "wrong")
        assert client.get("/api/model", headers={"X-API-Key": "s3cret"}).status_code == 200
        assert client.get("/api/model", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert_error(client.get("/api/tts", params={"text": "Hi."}), 401)
        assert client.get("/api/health").status_code == 200
        assert client.get("/").status_code == 200


def test_page_and_its_files_are_local(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    for path in STATIC_DIR.iterdir():
        text = path.read_text(encoding="utf-8")
        # Offline: nothing is loaded from another origin.
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, path.name
    assert client.get("/docs").status_code == 404  # FastAPI's docs page loads from a CDN: off


# --------------------------------------------------------------- the guard: key and body limits before the body is read


def asgi_post(
    app, path: str, chunks: list[bytes], *, headers: dict[str, str], delay_s: float = 0.0
) -> tuple[int, dict, int]:
    """POST ``chunks`` as a chunked body (no Content-Length unless in ``headers``) straight to the
    ASGI app, ``delay_s`` before each → (status, answer (parsed when JSON), body bytes the app pulled)."""
    import asyncio

    pulled, answer = 0, {"status": None, "body": b""}
    pending = list(chunks)

    async def receive():
        nonlocal pulled
        if not pending:
            await asyncio.sleep(3600)  # the client has nothing more to say (only a disconnect would come)
        await asyncio.sleep(delay_s)
        chunk = pending.pop(0)
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
            answer["headers"] = {k.decode().lower(): v.decode() for k, v in message["headers"]}
        else:
            answer["body"] += message.get("body", b"")

    raw = [(k.lower().encode(), v.encode()) for k, v in {"content-type": "application/json", **headers}.items()]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": raw,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 30))
    if answer["status"] in (401, 408, 413):  # the guard's answers close the connection: the rest is never read
        assert answer["headers"]["connection"] == "close", answer
    is_json = answer["headers"].get("content-type") == "application/json"
    return answer["status"], json.loads(answer["body"]) if is_json else answer["body"], pulled


def test_without_the_key_not_a_byte_of_the_body_is_read(synth):
    app = create_app(BatchingQueue(synth, decoding=DECODING), api_key="s3cret")
    piece = [b"x" * 65536] * 64
    for path in ("/api/synthesize", "/api/references"):
        for headers in ({}, {"x-api-key": "wrong"}, {"authorization": "Bearer nope"}):
            status, body, pulled = asgi_post(app, path, piece, headers=headers)
            assert (status, pulled) == (401, 0), (path, headers, body)
            assert "API key" in body["error"]
    # With the key the body is read (and then refused for what it is).
    status, body, pulled = asgi_post(app, "/api/synthesize", [b'{"text": 5}'], headers={"x-api-key": "s3cret"})
    assert (status, pulled) == (422, 11) and "text" in body["error"]


def test_a_chunked_body_is_cut_once_it_passes_the_limit(synth):
    app = create_app(BatchingQueue(synth, decoding=DECODING), limits=ServeLimits(max_upload_bytes=100_000))
    piece = 65536
    for path, limit in (("/api/synthesize", 256 * 1024), ("/api/references", 100_000 + 64 * 1024)):
        status, body, pulled = asgi_post(
            app, path, [b"x" * piece] * 1000, headers={"content-type": "multipart/form-data; boundary=b"}
        )
        assert status == 413 and f"larger than the limit of {limit} bytes" in body["error"], body
        assert limit < pulled <= limit + piece  # not one piece more than it took to pass the limit
    # A Content-Length past the limit is refused before anything is read, and so is one that lies.
    status, body, pulled = asgi_post(
        app, "/api/synthesize", [b"x" * piece] * 10, headers={"content-length": str(10**9)}
    )
    assert (status, pulled) == (413, 0) and "1000000000 bytes" in body["error"]
    status, body, pulled = asgi_post(app, "/api/synthesize", [b"x" * piece] * 10, headers={"content-length": "10"})
    assert status == 413 and pulled == 5 * piece  # declared 10, counted as it came


def test_a_body_slower_than_the_body_timeout_is_408(synth):
    app = create_app(BatchingQueue(synth, decoding=DECODING), limits=ServeLimits(body_timeout_s=1.0))
    status, body, pulled = asgi_post(
        app, "/api/synthesize", [b'{"text": '] + [b" "] * 100 + [b'"Hi."}'], headers={}, delay_s=0.1
    )
    assert status == 408 and "within 1 s" in body["error"], body
    assert pulled < 60  # about 1 s of 0.1 s pieces, not the 10 s the whole body takes
    status, audio, _ = asgi_post(app, "/api/synthesize", [b'{"text": ', b'"Hi."}'], headers={}, delay_s=0.05)
    app.state.queue.close()
    assert status == 200 and read_wav(audio)[0].size > 0


# ---------------------------------------------------------------- references go through the queue's worker


def test_references_are_encoded_on_the_worker_and_a_full_queue_is_503(synth, monkeypatch):
    threads = []
    real = synth.styles.read_reference

    def recorded(reference, **asked):
        threads.append(threading.current_thread().name)
        return real(reference, **asked)

    monkeypatch.setattr(synth.styles, "read_reference", recorded)
    gate = Gate(synth, monkeypatch)
    gate.release.set()
    with make_client(synth, max_batch=1, max_queue=1) as client:
        assert upload(client, wav(tone(1.0))).status_code == 200
        assert threads == ["gst-tts-synthesis"]  # the queue's worker, the model's only caller
        assert client.app.state.queue.stats()["references"] == 1
        gate.release.clear()
        gate.entered.clear()
        answers: dict = {}
        first = _post_in_thread(client, "Running.", answers)
        assert gate.entered.wait(10)
        second = _post_in_thread(client, "Waiting.", answers)
        _wait_for(lambda: client.app.state.queue.pending == 1)
        r = upload(client, wav(tone(1.0)))
        assert_error(r, 503, "queue is full")
        assert int(r.headers["retry-after"]) >= 1
        gate.release.set()
        first.join(30), second.join(30)
    assert answers["Running."].status_code == answers["Waiting."].status_code == 200
    assert threads == ["gst-tts-synthesis"]  # the refused upload never reached the model


# ---------------------------------------------------------------- a phoneme checkpoint

PHONEME_CORPUS = ["Hello, world!", "The quick brown fox jumps over the lazy dog."]


@pytest.fixture(scope="module")
def phoneme_synth(tmp_path_factory) -> Synthesizer:
    """An untrained tiny model reading en-us phonemes of :data:`PHONEME_CORPUS`."""
    symbols = SymbolTable.for_corpus(PhonemeFrontend("en-us"), PHONEME_CORPUS)
    config = dict(TINY_MODEL, n_symbols=len(symbols), n_mels=80)
    path = save_checkpoint(
        tmp_path_factory.mktemp("phonemes") / "phonemes.pt",
        checkpoint_payload(
            model_state=GSTTacotron(**config).state_dict(),
            model_config=config,
            symbols=symbols,
            audio_config=AudioConfig(),
            mel_stats=MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)),
            step=0,
        ),
    )
    s = Synthesizer.from_checkpoint(path, device="cpu")
    s.vocoder = GriffinLimVocoder(s.audio_config, n_iter=4)
    return s


def test_a_phoneme_model_reports_its_language(phoneme_synth):
    with make_client(phoneme_synth) as client:
        frontend = client.get("/api/model").json()["frontend"]
    assert (frontend["frontend"], frontend["language"], frontend["espeak_version"]) == (
        "phonemes",
        "en-us",
        espeak_version(),
    )
    assert frontend["characters"] == "".join(phoneme_synth.symbols.symbols[2:]) and "ˈ" in frontend["characters"]


def test_a_phoneme_model_speaks_a_pronunciation_override(phoneme_synth):
    # Spelled with this corpus's phonemes ("brown" + "dog"), not a word espeak-ng would give them for.
    override = "bɹˈaʊn dˈɑːɡ"
    assert set(override) <= set(phoneme_synth.symbols.symbols)
    with make_client(phoneme_synth) as client:
        r = client.post("/api/synthesize?format=json", json={"text": f"Hello, {{{override}}}!"})
        assert r.status_code == 200, r.text
        assert r.json()["cleaned_text"] == f"hello, {{{override}}}!"  # the words, the pronunciation as written
        assert client.get("/api/tts", params={"text": f"The {{{override}}}."}).status_code == 200


def test_a_phoneme_model_names_what_it_cannot_read(phoneme_synth):
    assert "ʃ" in phonemize("shush", "en-us") and "ʃ" not in phoneme_synth.symbols.symbols
    with make_client(phoneme_synth) as client:
        assert_error(
            client.post("/api/synthesize", json={"text": "I met {ʃ} today."}),
            422,
            "unknown phoneme 'ʃ' in {ʃ}",
            "phonemes (en-us)",
        )
        assert_error(client.post("/api/synthesize", json={"text": "Hello {wˈɜːld"}), 422, "unmatched '{'")
        # A word whose phonemes the corpus lacks is refused as characters are, naming the phoneme.
        assert_error(client.post("/api/synthesize", json={"text": "shush"}), 422, "phonemes the model cannot read: 'ʃ'")


def _small_hifigan() -> HiFiGANVocoder:
    """A small random HiFi-GAN (hop 256): deterministic, so a stream can be compared sample for sample."""
    torch.manual_seed(0)
    return HiFiGANVocoder(
        HiFiGANGenerator(upsample_rates=(8, 8, 4), upsample_kernel_sizes=(16, 16, 8), upsample_initial_channel=32),
        sample_rate=22050,
    )


def test_streamed_wav_has_streaming_sizes_and_decodes_to_the_one_shot_audio(synth, monkeypatch):
    monkeypatch.setattr(synth, "vocoder", synth.vocoder)  # the worker sets the synthesizer's vocoder: put back after
    with TestClient(
        create_app(BatchingQueue(synth, decoding=DECODING, vocoders={"hifigan": _small_hifigan()}))
    ) as client:
        request = {"text": "Streamed over HTTP.", "seed": 5}
        with client.stream("POST", "/api/synthesize?stream=true", json=request) as r:
            assert r.status_code == 200 and r.headers["content-type"] == "audio/wav"
            assert "content-length" not in r.headers and r.headers["x-stream"] == "true"
            parts = list(r.iter_bytes())
        body = b"".join(parts)
        assert body[:4] == b"RIFF" and body[4:8] == b"\xff\xff\xff\xff" and body[40:44] == b"\xff\xff\xff\xff"
        streamed, rate = read_wav(body)
        one_shot, _ = read_wav(client.post("/api/synthesize", json=request).content)
        assert client.app.state.queue.stats()["streams"] == 1
    assert rate == 22050 and streamed.shape == one_shot.shape and streamed.size > 0
    # Both 16-bit: the samples agree to the last bit or so (the stream is HiFi-GAN's within 1e-5).
    assert np.abs(streamed - one_shot).max() <= 2 / 32768


@pytest.mark.parametrize(
    "query, request_body, words",
    [
        ("stream=true&format=json", {"text": "Hi."}, ["WAV only"]),
        ("stream=true", {"text": "Mail me @ home"}, ["cannot read", "'@'"]),
        ("stream=true", {"text": "Hi.", "vocoder": "wavenet"}, ["vocoder", "wavenet"]),
        ("stream=true", {"text": "Hi.", "reference_id": "nope"}, ["reference_id", "not an uploaded reference"]),
        # A stream keeps the model's tempo and F0 range: asking for a copy after the model is refused.
        (
            "stream=true",
            {"text": "Hi.", "reference_id": "nope", "tempo": "reference"},
            ["streams keep the model's tempo and F0 range"],
        ),
        (
            "stream=true",
            {"text": "Hi.", "mix": {"nope": 1.0}, "f0_range": "reference"},
            ["streams keep", "without stream=true"],
        ),
        ("stream=true", {"text": "Hi.", "f0_range": 6}, ["streams keep the model's tempo and F0 range"]),
    ],
)
def test_a_bad_streamed_request_is_a_4xx_before_any_audio(client, query, request_body, words):
    assert_error(client.post(f"/api/synthesize?{query}", json=request_body), 422, *words)
    assert client.app.state.queue.stats()["streams"] == 0  # refused before it reached the worker


class _SpreadRecordingVocoder(GriffinLimVocoder):
    """Griffin-Lim that says it can set an F0 spread, and records what each output asks for."""

    sets_f0_range = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.asked: list = []

    def __call__(self, log_mel, *, f0_range_st=None, f0_range_strength=1.0):
        self.asked.append(None if f0_range_st is None else (round(f0_range_st, 6), f0_range_strength))
        return super().__call__(log_mel)


def test_an_uploaded_references_f0_spread_goes_to_a_vocoder_that_can_set_it_when_asked(tiny_checkpoint):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    said = []
    vocoder = synth.vocoder = _SpreadRecordingVocoder(synth.audio_config, n_iter=2)
    t = np.arange(int(1.5 * 22050)) / 22050
    hz = 120.0 * 2.0 ** (0.5 - 0.5 * np.cos(2 * np.pi * t / 1.5))  # one octave up and back: about 10 st
    glide = (0.3 * np.sin(2 * np.pi * np.cumsum(hz) / 22050)).astype(np.float32)
    with make_client(synth) as client:
        lively, flat = (
            upload(client, wav(x), name).json()["id"]
            for x, name in ((glide, "lively.wav"), (tone(1.5, 22050, 140.0), "flat.wav"))
        )
        for body in (
            {"reference_id": lively, "style_strength": 0.5, "f0_range": "reference"},
            {"mix": {lively: 1.0, flat: 3.0}, "f0_range": "reference"},
            {"style_dials": {"1": 0.5}},
        ):
            r = client.post("/api/synthesize?format=json", json={"text": "In that style.", **body})
            assert r.status_code == 200, r.text
            said.append(r.json()["f0_range"])
    (spread, strength), (mixed, one), dials = vocoder.asked
    assert said[0] == {"source": "reference", "semitones": round(spread, 2), "strength": 0.5}
    assert said[1]["source"] == "reference" and said[2] == {"source": "decoded"}
    assert 9.0 < spread < 11.5 and strength == 0.5
    assert mixed < spread / 2 and one == 1.0  # a steady tone's spread is about 0, weighted 3 to 1
    assert dials is None  # token styles keep the model's spread


def test_an_uploaded_references_tempo_retimes_one_shot_outputs_when_asked(tiny_checkpoint, monkeypatch):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    asked = []
    said = []
    synthesize = synth.synthesize
    monkeypatch.setattr(
        synth, "synthesize", lambda *a, **k: asked.append([s.tempo_target for s in k["styles"]]) or synthesize(*a, **k)
    )
    t = np.arange(3 * 22050) / 22050
    voice = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 16))
    fast, slow = (
        (0.2 * voice * (0.05 + 0.95 * (0.5 - 0.5 * np.cos(2 * np.pi * hz * t)))).astype(np.float32) for hz in (5.0, 2.5)
    )  # syllables a second
    with make_client(synth) as client:
        fast_id, slow_id = (
            upload(client, wav(x), name).json()["id"] for x, name in ((fast, "fast.wav"), (slow, "slow.wav"))
        )
        for body in (
            {"reference_id": fast_id, "style_strength": 0.5, "tempo": "reference"},
            {"mix": {fast_id: 1.0, slow_id: 3.0}, "tempo": "reference"},
            {"style_dials": {"1": 0.5}},
        ):
            r = client.post("/api/synthesize?format=json", json={"text": "In that style.", **body})
            assert r.status_code == 200, r.text
            said.append(r.json()["tempo"])
    (one,), (mixed,), (dials,) = asked
    fast_rate, slow_rate = synth.reference_tempo((fast, 22050)), synth.reference_tempo((slow, 22050))
    assert one.letters_per_s == pytest.approx(fast_rate, rel=1e-6) and one.strength == 0.5
    # A mix: the geometric mean of its references' rates, weighted 1 to 3.
    assert mixed.letters_per_s == pytest.approx(fast_rate**0.25 * slow_rate**0.75, rel=1e-6) and mixed.strength == 1.0
    assert slow_rate < 0.6 * fast_rate
    assert dials is None  # token styles keep the model's tempo
    assert said[0] == {"source": "reference", "letters_per_s": round(one.letters_per_s, 2), "strength": 0.5}
    assert said[1]["source"] == "reference" and said[2] == {"source": "decoded"}


# ---------------------------------------------------------------- tempo and F0 range: the model's own unless asked for


def _voiced(syllables_per_s: float, seconds: float = 3.0) -> np.ndarray:
    """A buzz at 150 Hz whose loudness beats ``syllables_per_s`` times a second: a tempo can be read off it."""
    t = np.arange(int(seconds * 22050)) / 22050
    voice = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 16))
    return (0.2 * voice * (0.05 + 0.95 * (0.5 - 0.5 * np.cos(2 * np.pi * syllables_per_s * t)))).astype(np.float32)


@pytest.fixture
def spread_synth(tiny_checkpoint, monkeypatch):
    """A synthesizer whose vocoder can set an F0 spread (and records what it is asked for); its
    ``calls`` record the keyword arguments of every ``synthesize`` the worker makes."""
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    synth.vocoder = _SpreadRecordingVocoder(synth.audio_config, n_iter=2)
    synth.calls = []
    synthesize = synth.synthesize
    monkeypatch.setattr(synth, "synthesize", lambda *a, **k: synth.calls.append(k) or synthesize(*a, **k))
    return synth


def test_by_default_a_reference_keeps_the_models_tempo_and_f0_range(spread_synth):
    synth, fast = spread_synth, _voiced(5.0)
    assert synth.reference_tempo((fast, 22050)) is not None and synth.reference_f0_range((fast, 22050)) is not None
    with make_client(synth) as client:
        ref = upload(client, wav(fast), "fast.wav").json()["id"]
        for style in ({"reference_id": ref}, {"mix": {ref: 1.0}, "style_strength": 0.5}):
            r = client.post("/api/synthesize?format=json", json={"text": "In that style.", **style})
            assert r.status_code == 200, r.text
            summary = r.json()
            assert summary["tempo"] == summary["f0_range"] == {"source": "decoded"}
            assert client.get(f"/api/syntheses/{summary['id']}").json()["tempo"] == {"source": "decoded"}
            audio = client.get(summary["audio_url"])
            assert (
                json.loads(audio.headers["x-tempo"]) == json.loads(audio.headers["x-f0-range"]) == {"source": "decoded"}
            )
        # Said in the plain WAV answer's headers too; "decoded" given explicitly is the same.
        r = client.post(
            "/api/synthesize", json={"text": "Plain.", "reference_id": ref, "tempo": "decoded", "f0_range": "decoded"}
        )
        assert r.status_code == 200 and json.loads(r.headers["x-tempo"]) == {"source": "decoded"}
    # What reached the model: no target (given targets are applied as given), so the output is the model's own.
    assert len(synth.calls) == 3
    for call in synth.calls:
        assert [(s.tempo_target, s.f0_target) for s in call["styles"]] == [(None, None)]
    assert synth.vocoder.asked == [None, None, None]


def test_tempo_reference_retimes_to_the_references_letter_rate(spread_synth):
    synth, fast = spread_synth, _voiced(5.0)
    with make_client(synth) as client:
        ref = upload(client, wav(fast), "fast.wav").json()["id"]
        r = client.post(
            "/api/synthesize?format=json", json={"text": "In that tempo.", "reference_id": ref, "tempo": "reference"}
        )
        assert r.status_code == 200, r.text
        summary = r.json()
        assert_error(
            client.post("/api/synthesize", json={"text": "Hi.", "style_weights": {"1": 0.5}, "tempo": "reference"}),
            422,
            "tempo: 'reference' needs reference_id or mix",
        )
        assert_error(
            client.post("/api/synthesize", json={"text": "Hi.", "reference_id": ref, "tempo": "fast"}), 422, "tempo"
        )
    rate = synth.reference_tempo((fast, 22050))
    (style,) = synth.calls[0]["styles"]
    target = style.tempo_target
    assert target.letters_per_s == pytest.approx(rate, rel=1e-6) and target.strength == 1.0
    assert style.f0_target is None  # the F0 range: the model's
    assert summary["tempo"] == {"source": "reference", "letters_per_s": round(rate, 2), "strength": 1.0}
    assert summary["f0_range"] == {"source": "decoded"}
    assert len(synth.calls) == 1  # the refused requests never reached the model


def test_f0_range_reference_or_semitones_and_bad_values(spread_synth, client):
    synth, fast = spread_synth, _voiced(5.0)
    with make_client(synth) as spread_client:
        ref = upload(spread_client, wav(fast), "fast.wav").json()["id"]
        given = spread_client.post(
            "/api/synthesize?format=json", json={"text": "Wide.", "style_dials": {"1": 0.5}, "f0_range": 6}
        )
        assert given.status_code == 200, given.text
        assert given.json()["f0_range"] == {"source": "given", "semitones": 6.0} and given.json()["tempo"] == {
            "source": "decoded"
        }
        copied = spread_client.post(
            "/api/synthesize",
            json={"text": "Copied.", "reference_id": ref, "f0_range": "reference", "style_strength": 0.5},
        )
        assert copied.status_code == 200, copied.text
        assert_error(
            spread_client.post("/api/synthesize", json={"text": "Hi.", "f0_range": "reference"}),
            422,
            "f0_range: 'reference' needs reference_id or mix",
        )
    (wide, one), (spread, half) = synth.vocoder.asked
    assert (wide, one, half) == (6.0, 1.0, 0.5)
    assert spread == pytest.approx(synth.reference_f0_range(read_wav(wav(fast))), abs=1e-5)  # the clip as uploaded
    assert json.loads(copied.headers["x-f0-range"]) == {
        "source": "reference",
        "semitones": round(spread, 2),
        "strength": 0.5,
    }
    # Griffin-Lim cannot set an F0 spread: a number is taken, and the answer says the model's was kept.
    r = client.post("/api/synthesize?format=json", json={"text": "Narrow.", "f0_range": 2.5})
    assert r.status_code == 200 and r.json()["f0_range"] == {"source": "decoded"}
    for bad, words in (
        (30, "F0 range must lie in 0..24 semitones, got 30"),
        (-1, "must lie in 0..24"),
        ("loud", "'loud' is not 'decoded', 'reference' or a number of semitones"),
        ("6", "not 'decoded'"),
        (True, "not 'decoded'"),
        (None, "not 'decoded'"),
        ([6], "not 'decoded'"),
        (float("nan"), "F0 range"),
    ):
        raw = json.dumps({"text": "Hi.", "f0_range": bad}, allow_nan=True)
        message = assert_error(
            client.post("/api/synthesize", content=raw, headers={"content-type": "application/json"}),
            422,
            "f0_range: ",
            words,
        )
        assert len(message) < 200


def test_the_words_are_the_clis(client):
    from gst_tts.cli.args import F0_RANGE_DECODED, F0_RANGE_REFERENCE, TEMPO_DECODED, TEMPO_REFERENCE
    from gst_tts.serve.models import DECODED, REFERENCE

    assert (DECODED, REFERENCE) == (TEMPO_DECODED, TEMPO_REFERENCE) == (F0_RANGE_DECODED, F0_RANGE_REFERENCE)


def test_coqui_style_wav_of_json_token_weights_is_spoken_as_style_weights(client, synth):
    r = client.get("/api/tts", params={"text": "hi", "style_wav": '{"0": 0.3, "1:2": -0.2}'})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "audio/wav" and read_wav(r.content)[0].size > 0
    posted = client.post("/api/synthesize", json={"text": "hi", "style_weights": {"0": 0.3, "1:2": -0.2}})
    assert posted.status_code == 200, posted.text
    weights = np.array(json.loads(r.headers["x-style-weights"]))
    np.testing.assert_array_equal(weights, json.loads(posted.headers["x-style-weights"]))
    expected = np.zeros((synth.n_heads, synth.n_tokens))
    expected[:, 0], expected[1, 2] = 0.3, -0.2
    np.testing.assert_allclose(weights, expected, atol=1e-4)
    assert client.get('/api/tts?text=hi&style_wav={"0":0.3}').status_code == 200  # as a client writes it in a URL


@pytest.mark.parametrize(
    "style_wav, words",
    [
        ("/path/x.wav", ["style_wav", "never read"]),
        ("[1,2]", ["style_wav", "must be an object", "got a list"]),
        ("3", ["style_wav", "must be an object", "got a number"]),
        ('"x.wav"', ["style_wav", "must be an object", "got a string"]),
        ("{bad", ["style_wav is not valid JSON"]),
        ('{"99": 0.1}', ["style_wav: style token 99"]),
        ('{"9:0": 0.1}', ["style_wav: style head 9"]),
        ('{"0": "loud"}', ["style_wav.0", "must be a number", "a string"]),
        ('{"0": true}', ["style_wav.0", "must be a number"]),
        ('{"0": 99}', ["style_wav.0"]),
        ('{"0": NaN}', ["style_wav.0"]),
        ('{"x": 0.1}', ["style_wav.x"]),
        ("{}", ["style_wav: ", "name no token"]),
    ],
)
def test_coqui_style_wav_that_is_not_token_weights_is_a_named_422(client, style_wav, words):
    message = assert_error(client.get("/api/tts", params={"text": "hi", "style_wav": style_wav}), 422, *words)
    assert len(message) < 300
    assert client.app.state.queue.stats()["requests"] == 0  # refused before the model
