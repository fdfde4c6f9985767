"""End to end in a real browser: Playwright drives Debian's Chromium (headless, no sandbox) against
a live server on loopback. The page loads, takes text, a token slider moved by keyboard, an
uploaded and a recorded reference; it plays the result, shows the alignment plot and its health,
asks for a reference's tempo only when told, and shows a server error readably. Skips with its
reason where Chromium or Playwright is missing."""

from __future__ import annotations

import contextlib
from pathlib import Path
import socket
import threading

import pytest
import soundfile as sf
import torch

pytest.importorskip("fastapi", reason="the serve extra is not installed: pip install 'gst-tts[serve]'")
uvicorn = pytest.importorskip("uvicorn", reason="the serve extra is not installed: pip install 'gst-tts[serve]'")
playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (it comes with the dev extra)"
)

from conftest import TINY_MODEL, seconds_for_steps, tone  # noqa: E402
from gst_tts.audio.features import AudioConfig, MelStats  # noqa: E402
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder  # noqa: E402
from gst_tts.inference.decoding import DecodingConfig  # noqa: E402
from gst_tts.inference.dial_names import NamedDial  # noqa: E402
from gst_tts.inference.synthesizer import Synthesizer  # noqa: E402
from gst_tts.serve.app import create_app  # noqa: E402
from gst_tts.serve.batching import BatchingQueue  # noqa: E402
from gst_tts.checkpoints.acoustic import checkpoint_payload, save_checkpoint  # noqa: E402
from gst_tts.model import GSTTacotron  # noqa: E402
from gst_tts.text.frontends import PhonemeFrontend  # noqa: E402
from gst_tts.text.symbols import SymbolTable  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} not found: apt-get install chromium (.ci/run does)"
)

BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
    # A fake microphone that needs no permission prompt, for the recording button.
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
]


@contextlib.contextmanager
def serving(synth: Synthesizer, vocoder=None, dials=()):
    """A live server of ``synth`` on a free loopback port, speaking with ``vocoder`` (default a fast
    Griffin-Lim) and offering ``dials``; yields its URL."""
    synth.vocoder = vocoder or GriffinLimVocoder(synth.audio_config, n_iter=4)
    app = create_app(BatchingQueue(synth, decoding=DecodingConfig(max_seconds=seconds_for_steps(60))), dials=dials)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        threading.Event().wait(0.02)
    assert server.started
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(30)


@pytest.fixture(scope="module")
def server(tiny_checkpoint):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    with serving(synth) as url:
        yield url, synth


@pytest.fixture(scope="module")
def phoneme_server(tmp_path_factory):
    """A server of an untrained tiny model reading en-us phonemes of two sentences."""
    symbols = SymbolTable.for_corpus(
        PhonemeFrontend("en-us"), ["Hello, world!", "The quick brown fox jumps over the lazy dog."]
    )
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
    with serving(Synthesizer.from_checkpoint(path, device="cpu")) as url:
        yield url


@pytest.fixture
def page(server, tmp_path):
    # The fake microphone plays this file (in a loop): a steady voiced tone, not the default beeps.
    microphone = tmp_path / "microphone.wav"
    sf.write(microphone, tone(3.0, 48000, 200.0), 48000, subtype="PCM_16")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[*BROWSER_ARGS, f"--use-file-for-fake-audio-capture={microphone}"],
        )
        try:
            context = browser.new_context(viewport={"width": 1100, "height": 900})
            yield context.new_page()
        finally:
            browser.close()


def test_page_speaks_with_a_slider_a_reference_and_shows_the_alignment(server, page, tmp_path):
    url, synth = server
    console_errors: list[str] = []
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    page.goto(url + "/")
    page.wait_for_function(f"document.querySelectorAll('#sliders input').length === {synth.n_tokens}")
    assert page.locator("#head-sliders input").count() == synth.n_heads * synth.n_tokens

    # A reference clip: its per-head token weights appear as a bar chart.
    clip = tmp_path / "reference.wav"
    sf.write(clip, tone(1.5, 22050, 180.0), 22050, subtype="PCM_16")
    page.set_input_files("#ref-file", str(clip))
    page.wait_for_selector("#ref-chart-box:not([hidden])")
    assert page.locator("#ref-chart .bar").count() == synth.n_heads * synth.n_tokens
    assert page.locator("input[name=source][value=reference]").is_checked()

    # Without a dials file the dials are off, with a hint; the raw token sliders are folded away.
    assert page.locator("#dials-radio").is_disabled() and "probe-tokens" in page.inner_text("#dials-hint")
    assert not page.locator("#token-1").is_visible()
    page.click("#raw-weights > summary")

    # Text and a token slider, by keyboard alone.
    page.fill("#text", "Hello from the browser.")
    page.focus("#token-1")
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    assert page.locator("input[name=source][value=sliders]").is_checked()
    moved = float(page.input_value("#token-1"))
    assert moved == pytest.approx(1 / synth.n_tokens + 0.10, abs=1e-6)

    page.uncheck("#stream")  # the whole synthesis at once: its alignment plot and health come with it
    page.focus("#text")
    with page.expect_request("**/api/synthesize*") as sent:
        page.keyboard.press("Control+Enter")
    body = sent.value.post_data_json
    assert body["text"] == "Hello from the browser." and body["style_weights"]["1"] == pytest.approx(moved)
    page.wait_for_selector("#alignment-box:not([hidden])")
    page.wait_for_function(
        "document.getElementById('alignment').complete && document.getElementById('alignment').naturalWidth > 100"
    )
    health = page.inner_text("#health")
    assert "Focus" in health and "Coverage" in health and "Stop" in health

    page.click("#play")
    page.wait_for_function(
        "(() => { const a = document.getElementById('audio'); return a.ended || a.currentTime > 0; })()", timeout=15000
    )
    download = page.get_attribute("#download", "href")
    assert download.startswith("blob:")

    # A recording from the (fake) microphone becomes a second reference: a mix is then possible.
    page.click("#record")
    page.wait_for_timeout(1500)
    page.click("#record")
    page.wait_for_function("document.querySelectorAll('#mix-a option').length === 2", timeout=15000)
    page.check("input[name=source][value=mix]")
    page.fill("#strength", "0.5")  # the style-strength slider beside the references
    assert page.inner_text("#strength-out") == "0.50"
    with page.expect_response("**/api/synthesize*") as answered:
        page.click("#speak")
    assert answered.value.status == 200, answered.value.text()
    sent_body = answered.value.request.post_data_json
    assert len(sent_body["mix"]) == 2 and sent_body["style_strength"] == 0.5

    # A server error reads as a sentence, not a stack trace or a status code alone.
    page.fill("#text", "Mail me @ home")
    page.click("#speak")
    page.wait_for_selector("#error:not([hidden])")
    assert "cannot read: '@'" in page.inner_text("#error")

    shot = tmp_path / "page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
    assert not console_errors, console_errors


def test_page_asks_for_a_references_tempo_only_when_told_and_then_synthesizes_whole(server, page, tmp_path):
    url, synth = server
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "/")
    page.wait_for_function("document.getElementById('vocoder-line').textContent !== ''")
    clip = tmp_path / "reference.wav"
    sf.write(clip, tone(1.5, 22050, 180.0), 22050, subtype="PCM_16")
    page.set_input_files("#ref-file", str(clip))
    page.wait_for_selector("#ref-chart-box:not([hidden])")
    # The model's own tempo and F0 range are the page's default, as they are the server's.
    assert page.is_checked("#stream") and page.input_value("#tempo") == page.input_value("#f0-range") == "decoded"
    assert page.is_disabled("#f0-semitones")
    page.fill("#text", "In its tempo.")
    page.select_option("#tempo", "reference")
    with page.expect_response("**/api/synthesize*") as answered:
        page.click("#speak")
    response = answered.value
    assert response.status == 200, response.text()
    # A stream keeps the model's tempo: with a copy asked for, the page asks for the whole output.
    assert "stream=true" not in response.url
    sent = response.request.post_data_json
    assert sent["tempo"] == "reference" and "f0_range" not in sent and sent["reference_id"]
    page.wait_for_selector("#alignment-box:not([hidden])")
    assert "Tempo" in page.inner_text("#health") and "F0 range" in page.inner_text("#health")
    page.select_option("#f0-range", "semitones")
    assert page.is_enabled("#f0-semitones")
    page.fill("#f0-semitones", "40")
    page.click("#speak")
    page.wait_for_selector("#error:not([hidden])")
    assert "from 0 to 24" in page.inner_text("#error")
    assert not errors, errors


def test_page_offers_named_dials_and_speaks_with_one(tiny_checkpoint, page):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    dials = [
        NamedDial(1, 3, "lower pitch", 1.0, -2.5, 1.0, 0.2),
        NamedDial(0, 2, "faster", 1.0, 0.1, 1.3, None),
        NamedDial(0, 1, "little change", 1.0, 0.1, 1.01, 0.0),
    ]
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    with serving(synth, dials=dials) as url:
        page.goto(url + "/")
        page.wait_for_function("document.querySelectorAll('#dials input').length === 2")  # the two with an effect
        labels = page.locator("#dials label").all_inner_texts()
        assert labels[0].startswith("lower pitch") and "head 1, token 3" in labels[0] and labels[1].startswith("faster")
        assert page.locator("#dials-radio").is_enabled() and not page.locator("#token-1").is_visible()
        page.fill("#text", "Turned by a dial.")
        page.focus("#dial-1-3")
        for _ in range(10):
            page.keyboard.press("ArrowRight")
        assert page.locator("input[name=source][value=dials]").is_checked()
        page.uncheck("#stream")
        with page.expect_response("**/api/synthesize*") as answered:
            page.click("#speak")
        assert answered.value.status == 200, answered.value.text()
        assert answered.value.request.post_data_json["style_dials"] == {"1:3": pytest.approx(0.1)}
        page.click("#reset-dials")
        assert page.input_value("#dial-1-3") == "0"
    assert not errors, errors


def test_page_says_which_vocoder_speaks(server, page):
    url, _ = server
    page.goto(url + "/")
    # The server was given no description: the line names its vocoder (the queue's default, Griffin-Lim).
    page.wait_for_function("document.getElementById('vocoder-line').textContent !== ''")
    assert page.locator("#vocoder-line").text_content() == "Vocoder: Griffin-Lim"
    assert "style tokens" in page.locator("#model-line").text_content()
    # A characters model: no word about pronunciations in braces.
    assert page.locator("#reads-line").text_content() == "This model reads characters"
    assert page.locator("#override-hint").is_hidden()


def test_page_of_a_phoneme_model_shows_its_language_and_speaks_a_pronunciation(phoneme_server, page):
    page.goto(phoneme_server + "/")
    page.wait_for_function("document.getElementById('reads-line').textContent !== ''")
    assert page.locator("#reads-line").text_content() == "This model reads phonemes (en-us)"
    assert page.locator("#override-hint").is_visible() and "{" in page.locator("#override-hint").text_content()
    page.fill("#text", "Hello, {bɹˈaʊn dˈɑːɡ}!")
    with page.expect_response("**/api/synthesize*") as answered:
        page.click("#speak")
    assert answered.value.status == 200, answered.value.text()
    # A phoneme the model lacks, in braces: the server's one line, shown as the page's error.
    page.fill("#text", "I met {ʃ} today.")
    page.click("#speak")
    page.wait_for_selector("#error:not([hidden])")
    assert "unknown phoneme 'ʃ' in {ʃ}" in page.inner_text("#error")


class _SlowVocoder:
    """Griffin-Lim that takes a while per call, as a large vocoder on a small machine would: a
    stream's pieces then reach the page one by one, well apart."""

    def __init__(self, inner: GriffinLimVocoder, seconds: float) -> None:
        self.inner, self.seconds, self.sample_rate = inner, seconds, inner.sample_rate

    def __call__(self, log_mel):
        threading.Event().wait(self.seconds)
        return self.inner(log_mel)


def test_page_plays_a_streamed_synthesis_before_its_answer_ends(tiny_checkpoint, page):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    with serving(synth, _SlowVocoder(GriffinLimVocoder(synth.audio_config, n_iter=4), 0.2)) as url:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        page.wait_for_function("document.getElementById('vocoder-line').textContent !== ''")
        assert page.is_checked("#stream")  # streaming is the page's default
        page.fill("#text", "Played while it is made.")
        with page.expect_response("**/api/synthesize?stream=true") as answered:
            page.click("#speak")
        assert answered.value.status == 200 and answered.value.headers["x-stream"] == "true"
        page.wait_for_function("document.getElementById('status').textContent.startsWith('Done')", timeout=30000)
        stream = page.evaluate("state.stream")
        # Several pieces, the first scheduled on the page's audio context before the answer had ended.
        assert stream["pieces"] >= 3 and stream["firstPlayedAt"] < stream["endedAt"]
        assert page.evaluate("state.audioContext.currentTime") > 0  # the context runs: it is playing
        # The whole stream then stands in the player and behind the download link, as a WAV it can play.
        assert page.get_attribute("#download", "href").startswith("blob:")
        page.wait_for_function("document.getElementById('audio').duration > 1", timeout=15000)
        assert page.locator("#alignment-box").is_hidden() and "played as it was made" in page.inner_text("#status")
        assert not errors, errors
