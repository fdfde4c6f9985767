"""The torch-free runtime: it synthesizes and streams with torch not importable, resolves styles by
the torch path's rules, keeps its limits, and refuses what is not an export in one line; its stream
joins to its one-shot output and starts before decoding ends."""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.checkpoints.acoustic import load_checkpoint, save_checkpoint
from gst_tts.errors import ExportError, GstTtsError, TextError
from gst_tts.export import export_checkpoint, export_synthesizer
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.runtime import OnnxSynthesizer, Style

from conftest import seconds_for_steps, write_spectral_vocoder

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter whose import system refuses torch, torchaudio and librosa.
_TORCH_FREE_RUN = r"""
import json, sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "torchaudio", "librosa"):
            raise ImportError(f"{name} is not importable here")
sys.meta_path.insert(0, Refuse())
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.runtime import OnnxSynthesizer, Style
import numpy as np
folder, reference = sys.argv[1], sys.argv[2]

def spectral(folder):
    # An export with a spectral vocoder: its estimator's graph, then harmonic restoration, PGHI and
    # fast Griffin-Lim in numpy (numba's PGHI kernel where numba is importable, as here).
    synth = OnnxSynthesizer.from_dir(folder)
    result = synth.synthesize(["Hello there."], seed=3, decoding=DecodingConfig(max_seconds=0.2))[0]
    return {"spectral_kind": synth.vocoder["kind"], "spectral_samples": int(result.audio.size),
            "spectral_frames": int(result.mel.shape[0]), "spectral_peak": float(abs(result.audio).max()),
            "spectral_dtype": str(result.audio.dtype)}

synth = OnnxSynthesizer.from_dir(folder)
bound = DecodingConfig(max_seconds=0.75)  # long enough for several chunks of 6 frames
long_text = "A first sentence to read. And a second one, after a pause; then a third."
# A random model never stops on its token: a short bound keeps the decoding (and Griffin-Lim) small.
results = synth.synthesize(["Hello there.", long_text, "Style from tokens."], seed=3, max_chunk_chars=30,
                           styles=[Style(reference=reference), None, Style(dials={(1, 2): 0.5})],
                           decoding=DecodingConfig(max_seconds=0.2))
print(json.dumps({
    "torch_loaded": [m for m in ("torch", "torchaudio", "librosa") if m in sys.modules],
    "rates": [r.sample_rate for r in results],
    "dtypes": [str(r.audio.dtype) for r in results],
    "samples": [int(r.audio.size) for r in results],
    "finite": [bool(abs(r.audio).max() <= 1.0) for r in results],
    "chunks": [len(r.chunks) for r in results],
    "frames": [int(r.mel.shape[0]) for r in results],
    "style_weights": [r.style_weights.tolist() for r in results],
    "stream_samples": [int(c.size) for c in synth.stream("Hello there.", seed=3, decoding=bound, chunk_frames=6)],
    "one_shot_samples": int(synth.synthesize("Hello there.", seed=3, decoding=bound).audio.size),
    "stream_mel_error": float(abs(
        np.concatenate(list(synth.stream("Hello there.", seed=3, decoding=bound, vocode=False)))
        - synth.synthesize("Hello there.", seed=3, decoding=bound, vocode=False).mel).max()),
    **spectral(sys.argv[3]),
}))
"""


@pytest.fixture(scope="module")
def export_dir(tiny_checkpoint, tmp_path_factory) -> Path:
    return export_checkpoint(tiny_checkpoint, tmp_path_factory.mktemp("export") / "tiny")


@pytest.fixture(scope="module")
def runtime(export_dir) -> OnnxSynthesizer:
    return OnnxSynthesizer.from_dir(export_dir, threads=1)


def _voice(path: Path, rate: int = 22050) -> Path:
    t = np.arange(int(1.2 * rate)) / rate
    sf.write(path, (0.3 * np.sin(2 * np.pi * (150 + 80 * t) * t)).astype(np.float32), rate)
    return path


def test_synthesizes_with_torch_not_importable(export_dir, runtime, tiny_checkpoint, tmp_path):
    reference = _voice(tmp_path / "voice.wav")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    spectral_dir = export_checkpoint(
        tiny_checkpoint,
        tmp_path / "spectral",
        vocoder=write_spectral_vocoder(tmp_path / "spectral.pt", pitch_head=True),
    )
    run = subprocess.run(
        [sys.executable, "-c", _TORCH_FREE_RUN, str(export_dir), str(reference), str(spectral_dir)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["torch_loaded"] == []
    assert out["rates"] == [22050] * 3 and out["dtypes"] == ["float32"] * 3 and all(out["finite"])
    assert out["chunks"][1] > 1 and out["chunks"][0] == out["chunks"][2] == 1  # the long text was split
    # Griffin-Lim gives hop samples a frame (less one frame); the split text has pauses on top.
    assert out["samples"][0] == (out["frames"][0] - 1) * 256 and out["samples"][1] > (out["frames"][1] - 1) * 256
    # The reference's weights are what this process gets for it too (same graphs, same numpy mel).
    np.testing.assert_allclose(out["style_weights"][0], runtime.reference_weights(reference), atol=1e-6)
    np.testing.assert_allclose(out["style_weights"][2], runtime.styles.dial_weights({(1, 2): 0.5}), atol=1e-7)
    # It streams too: chunks (a short first one), joined as long as the one-shot audio, the mel the one-shot mel.
    assert len(out["stream_samples"]) > 1 and sum(out["stream_samples"]) == out["one_shot_samples"]
    assert out["stream_mel_error"] <= STREAM_MEL_TOLERANCE
    # The spectral vocoder spoke too: hop samples a frame (less one), in range, not silent.
    assert out["spectral_kind"] == "spectral" and out["spectral_dtype"] == "float32"
    assert out["spectral_samples"] == (out["spectral_frames"] - 1) * 256 and 0.0 < out["spectral_peak"] <= 1.0


def test_styles_follow_the_torch_paths_rules(runtime, tiny_checkpoint):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    for style in [
        None,
        Style(weights={1: 0.4, (0, 2): -0.2}),
        Style(weights=np.arange(5) / 10),
        Style(dials={(1, 3): 0.7}),
    ]:
        np.testing.assert_allclose(runtime.styles.resolve(style), synth.styles.resolve(style).numpy(), atol=1e-7)
    # A mix of two references (as samples): the numpy mel and the style graphs against torchaudio and the model.
    rate = 22050
    t = np.arange(int(0.8 * rate)) / rate
    low, high = (0.3 * np.sin(2 * np.pi * f * t).astype(np.float32) for f in (140.0, 260.0))
    mix = Style(mix=[((low, rate), 1.0), ((high, rate), 3.0)])
    np.testing.assert_allclose(runtime.styles.resolve(mix), synth.styles.resolve(mix).numpy(), atol=1e-5)
    for bad in [{7: 0.1}, {1: float("nan")}, {1: 1e3}, np.zeros(4)]:
        with pytest.raises(GstTtsError) as theirs:
            synth.styles.resolve(Style(weights=bad))
        with pytest.raises(GstTtsError) as mine:
            runtime.styles.resolve(Style(weights=bad))
        assert str(mine.value) == str(theirs.value) and "\n" not in str(mine.value)


def test_outputs_are_retimed_to_a_references_tempo_as_the_torch_path_does(runtime, tiny_checkpoint):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    rate = 22050
    t = np.arange(3 * rate) / rate
    voice = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 16))
    fast, slow = (
        (0.2 * voice * (0.05 + 0.95 * (0.5 - 0.5 * np.cos(2 * np.pi * hz * t)))).astype(np.float32) for hz in (6.0, 2.5)
    )  # syllables a second
    for samples in (fast, slow):
        assert runtime.reference_tempo((samples, rate)) == pytest.approx(
            synth.reference_tempo((samples, rate)), rel=1e-3
        )
    bound = DecodingConfig(
        max_seconds=seconds_for_steps(96)
    )  # the random model's own rate is slow: references speed it up
    text = "Hello there, my friend."
    frames = {
        name: runtime.synthesize(
            text, reference=(samples, rate), seed=0, decoding=bound, vocode=False, transfer_tempo=True
        ).n_frames
        for name, samples in (("fast", fast), ("slow", slow))
    }
    own = runtime.synthesize(
        text, reference=(fast, rate), seed=0, decoding=bound, vocode=False
    )  # the model's by default
    assert frames["fast"] < frames["slow"] and own.n_frames == own.alignment.shape[0] * synth.model.reduction_factor


def test_a_request_reads_each_reference_file_once(runtime, tmp_path, monkeypatch):
    voice = _voice(tmp_path / "voice.wav")
    decoded, read = [], sf.read
    monkeypatch.setattr(sf, "read", lambda path, *a, **k: decoded.append(str(path)) or read(path, *a, **k))
    styles = [Style(reference=voice), Style(mix={voice: 1.0}), Style(reference=voice, strength=0.5)]
    bound = DecodingConfig(max_seconds=seconds_for_steps(24))
    runtime.synthesize(["One.", "Two.", "Three."], styles=styles, transfer_tempo=True, decoding=bound, vocode=False)
    assert decoded == [str(voice)]


def test_the_exports_neutral_style_and_style_strength_are_the_checkpoints(tiny_checkpoint, tmp_path):
    ckpt = load_checkpoint(tiny_checkpoint)
    stored = torch.softmax(
        torch.arange(10, dtype=torch.float32).reshape(2, 5) * 0.6, -1
    )  # a trained neutral, not uniform
    ckpt["neutral_style"] = stored
    path = save_checkpoint(tmp_path / "neutral.pt", ckpt)
    folder = export_checkpoint(path, tmp_path / "export")
    np.testing.assert_allclose(
        json.loads((folder / "model.json").read_text())["neutral_style"], stored.numpy(), atol=1e-7
    )
    runtime, synth = OnnxSynthesizer.from_dir(folder, threads=1), Synthesizer.from_checkpoint(path, device="cpu")
    np.testing.assert_allclose(runtime.styles.neutral(), stored.numpy(), atol=1e-7)
    rate = 22050
    voice = (0.3 * np.sin(2 * np.pi * 180.0 * np.arange(int(0.8 * rate)) / rate)).astype(np.float32)
    for style in [
        Style(dials={(1, 3): 0.7}),
        Style(reference=(voice, rate), strength=0.0),
        Style(reference=(voice, rate), strength=1.5),
    ]:
        np.testing.assert_allclose(runtime.styles.resolve(style), synth.styles.resolve(style).numpy(), atol=1e-5)
    np.testing.assert_allclose(
        runtime.styles.resolve(Style(reference=(voice, rate), strength=0.0)), stored.numpy(), atol=1e-6
    )
    with pytest.raises(GstTtsError, match="style strength must lie in 0..3"):
        runtime.synthesize("Hi.", reference=(voice, rate), style_strength=4.0)
    manifest = json.loads((folder / "model.json").read_text())
    manifest["neutral_style"] = [[0.2] * 4]
    (folder / "model.json").write_text(json.dumps(manifest))
    with pytest.raises(ExportError, match="neutral_style must be 2 rows of 5"):
        OnnxSynthesizer.from_dir(folder)


def test_bad_texts_and_options_are_one_line_errors(runtime):
    with pytest.raises(TextError, match="nothing to speak"):
        runtime.synthesize("?!", vocode=False)
    with pytest.raises(TextError, match="at most 10,000"):
        runtime.synthesize("a" * 10_001, vocode=False)
    with pytest.raises(GstTtsError, match="one style per text"):
        runtime.synthesize(["a", "b"], styles=[None], vocode=False)
    with pytest.raises(GstTtsError, match="batch_size"):
        runtime.synthesize("a", batch_size=0, vocode=False)


def test_a_folder_that_is_not_an_export_is_refused_in_one_line(tmp_path, export_dir):
    with pytest.raises(ExportError, match="not a gst-tts ONNX export"):
        OnnxSynthesizer.from_dir(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    manifest = json.loads((export_dir / "model.json").read_text())
    (broken / "model.json").write_text(json.dumps(manifest))
    with pytest.raises(ExportError) as caught:
        OnnxSynthesizer.from_dir(broken)
    assert "encoder file 'encoder.onnx' is not in the folder" in str(caught.value) and "\n" not in str(caught.value)


# ------------------------------------------------------------------ streaming

STEPS = 32
DECODING = DecodingConfig(max_seconds=seconds_for_steps(STEPS))
TEXT = "Streaming speech, one chunk at a time."
#: The joined stream's postnet mel against the one-shot mel: the postnet graph on windows with its
#: whole reach. Measured on CPU (float32, 2 to 32 steps): 0 to 5e-7, float rounding of other lengths' kernels.
STREAM_MEL_TOLERANCE = 1e-5
#: The exported HiFi-GAN on windows with its reach against one pass over the whole mel. Measured on
#: CPU with test_an_exported_hifigan_streams_the_one_shot_samples's generator (reach 7 frames, peak
#: 0.18), seeds 1, 3, 7 and chunks of 5, 10, 24 frames: 7e-8 to 8e-8.
HIFIGAN_STREAM_TOLERANCE = 1e-5


class _CountingSession:
    """The decoder step session, counting its runs."""

    def __init__(self, session) -> None:
        self.session, self.runs = session, 0

    def get_inputs(self):
        return self.session.get_inputs()

    def run(self, *args, **kwargs):
        self.runs += 1
        return self.session.run(*args, **kwargs)


@pytest.fixture
def counted_steps(runtime, monkeypatch) -> _CountingSession:
    counting = _CountingSession(runtime._sessions["decoder_step"])
    monkeypatch.setitem(runtime._sessions, "decoder_step", counting)
    return counting


def test_streamed_mel_is_the_one_shot_mel_and_audio_its_length_and_level(runtime):
    assert runtime.manifest["prenet_dropout_at_inference"]  # the seed, not a switched-off dropout, makes them equal
    blocks = list(runtime.stream(TEXT, seed=7, decoding=DECODING, vocode=False))
    one_shot = runtime.synthesize(TEXT, seed=7, decoding=DECODING)
    assert len(blocks) > 3  # windows, not one block at the end
    joined = np.concatenate(blocks)
    assert joined.dtype == np.float32 and joined.shape == one_shot.mel.shape == (STEPS * 2, 80)
    assert np.abs(joined - one_shot.mel).max() <= STREAM_MEL_TOLERANCE
    other_seed = np.concatenate(list(runtime.stream(TEXT, seed=8, decoding=DECODING, vocode=False)))
    assert np.abs(other_seed - one_shot.mel).max() > 1e-2  # the comparison can fail: dropout does change the mel
    # Griffin-Lim: window by window, crossfaded, the one-shot length; scaled by the loudest window so far.
    chunks = list(runtime.stream(TEXT, seed=7, decoding=DECODING, chunk_frames=12))
    audio = np.concatenate(chunks)
    assert len(chunks) >= 4 and all(c.dtype == np.float32 for c in chunks) and audio.shape == one_shot.audio.shape
    assert 0.5 < np.abs(audio).max() <= 0.95 + 1e-6

    def level(samples):  # frame energies in dB: the same spectrum, another phase
        return 10 * np.log10(np.square(samples[: len(samples) // 256 * 256].reshape(-1, 256)).mean(1) + 1e-8)

    assert np.median(np.abs(level(audio) - level(one_shot.audio))) < 2.0


def test_first_chunk_comes_before_decoding_ends(runtime, counted_steps):
    stream = runtime.stream(TEXT, seed=1, decoding=DECODING, chunk_frames=12)
    first = next(stream)
    at_first = counted_steps.runs
    rest = list(stream)
    assert first.dtype == np.float32 and first.size == 4 * 256
    # 4 frames, Griffin-Lim's 8 and the postnet's 4 of context (2 convolutions of kernel 5), 2 a step;
    # the postnet runs once 8 frames are ready: 20 frames, 10 of the 32 steps (as the torch path).
    assert runtime.manifest["postnet_context"] == 4
    assert counted_steps.runs == STEPS and at_first == 10
    assert len(rest) >= 3


def test_an_exported_hifigan_streams_the_one_shot_samples(tiny_checkpoint, tmp_path):
    from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator
    from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder
    import torch

    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    torch.manual_seed(0)
    generator = HiFiGANGenerator(
        upsample_rates=(8, 8, 4),
        upsample_kernel_sizes=(16, 16, 8),
        upsample_initial_channel=16,
        resblock_kernel_sizes=(3,),
        resblock_dilation_sizes=((1, 2),),
    )
    for module in generator.modules():  # torch's initialisation, so that far frames weigh enough to show
        if isinstance(module, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)):
            module.reset_parameters()
    synth.vocoder = HiFiGANVocoder(generator, sample_rate=22050)
    runtime = OnnxSynthesizer.from_dir(export_synthesizer(synth, tmp_path / "hifigan", vocoder=True), threads=1)
    assert runtime.manifest["vocoder_reach_frames"] == generator.reach_frames
    one_shot = runtime.synthesize(TEXT, seed=3, decoding=DECODING).audio
    chunks = list(runtime.stream(TEXT, seed=3, decoding=DECODING, chunk_frames=10))
    joined = np.concatenate(chunks)
    assert joined.shape == one_shot.shape == (STEPS * 2 * 256,)
    assert [c.size for c in chunks[:-1]] == [3 * 256] + [10 * 256] * (len(chunks) - 2)  # a short first one
    assert np.abs(joined - one_shot).max() <= HIFIGAN_STREAM_TOLERANCE < 0.01 * np.abs(one_shot).max()
    # Windows with less than its reach (1 frame) no longer give the whole mel's samples: the test can fail.
    runtime.manifest["vocoder_reach_frames"] = 1
    short = np.concatenate(list(runtime.stream(TEXT, seed=3, decoding=DECODING, chunk_frames=10)))
    assert (
        generator.reach_frames > 1
        and short.shape == one_shot.shape
        and np.abs(short - one_shot).max() > 10 * HIFIGAN_STREAM_TOLERANCE
    )


@pytest.mark.parametrize(
    "call, error, message",
    [
        (dict(text=""), TextError, "empty"),
        (dict(text="?!"), TextError, "nothing to speak"),
        (dict(text=["two", "texts"]), TextError, "one text"),
        (dict(text="ok", chunk_frames=0), GstTtsError, "chunk_frames"),
        (dict(text="ok", chunk_frames=2.5), GstTtsError, "chunk_frames"),
        (dict(text="ok", pause_s=-1), GstTtsError, "pause_s"),
        (dict(text="ok", seed=-1), GstTtsError, "seed"),
        (dict(text="ok", style=Style(weights={99: 1.0})), GstTtsError, "99"),
        (dict(text="ok", style={"weights": {0: 1.0}}), GstTtsError, "Style"),
    ],
)
def test_bad_stream_input_is_refused_when_the_stream_is_made(runtime, counted_steps, call, error, message):
    with pytest.raises(error, match=message) as caught:
        runtime.stream(**call)  # no iteration: refused before any chunk, as synthesize refuses it
    assert "\n" not in str(caught.value) and counted_steps.runs == 0


def test_an_export_from_before_streaming_is_refused_in_one_line(export_dir, tmp_path):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(export_dir, old)
    manifest = json.loads((old / "model.json").read_text())
    del manifest["postnet_context"]
    (old / "model.json").write_text(json.dumps(manifest))
    runtime = OnnxSynthesizer.from_dir(old, threads=1)
    with pytest.raises(ExportError, match="exported before streaming") as caught:
        runtime.stream("ok")
    assert "\n" not in str(caught.value)
    assert runtime.synthesize("ok", decoding=DecodingConfig(max_seconds=0.05), vocode=False).mel.shape[0] > 0


def test_a_broken_vocoder_entry_is_refused_in_one_line(tmp_path, export_dir):
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(export_dir, folder)
    shutil.copy(folder / "postnet.onnx", folder / "vocoder.onnx")  # any file: the entry is checked first
    manifest = json.loads((folder / "model.json").read_text())
    manifest["files"]["vocoder"] = "vocoder.onnx"
    for entry, message in [
        ({"kind": "wavenet"}, "vocoder must name its kind, one of hifigan, spectral"),
        (
            {"kind": "spectral", "pitch_head": True, "magnitude_power": 1.15, "n_iter": "16", "momentum": 0.99},
            "spectral vocoder's n_iter is missing or not valid",
        ),
        (
            {"kind": "spectral", "pitch_head": 1, "magnitude_power": 1.15, "n_iter": 16},
            "spectral vocoder's pitch_head, momentum is missing or not valid",
        ),
    ]:
        (folder / "model.json").write_text(json.dumps({**manifest, "vocoder": entry}))
        with pytest.raises(ExportError) as caught:
            OnnxSynthesizer.from_dir(folder)
        assert message in str(caught.value) and "\n" not in str(caught.value)
