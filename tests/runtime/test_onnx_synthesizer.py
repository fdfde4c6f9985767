"""The torch-free runtime: it synthesizes with torch not importable, resolves styles by the torch
path's rules, keeps its limits, and refuses what is not an export in one line."""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from gst_tts.errors import ExportError, GstTtsError, TextError
from gst_tts.export import export_checkpoint
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.runtime import OnnxSynthesizer, Style

from conftest import write_spectral_vocoder

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
    spectral_dir = export_checkpoint(tiny_checkpoint, tmp_path / "spectral", vocoder=write_spectral_vocoder(
        tmp_path / "spectral.pt", pitch_head=True))
    run = subprocess.run([sys.executable, "-c", _TORCH_FREE_RUN, str(export_dir), str(reference), str(spectral_dir)],
                         env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
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
    # The spectral vocoder spoke too: hop samples a frame (less one), in range, not silent.
    assert out["spectral_kind"] == "spectral" and out["spectral_dtype"] == "float32"
    assert out["spectral_samples"] == (out["spectral_frames"] - 1) * 256 and 0.0 < out["spectral_peak"] <= 1.0


def test_styles_follow_the_torch_paths_rules(runtime, tiny_checkpoint):
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    for style in [None, Style(weights={1: 0.4, (0, 2): -0.2}), Style(weights=np.arange(5) / 10), Style(dials={(1, 3): 0.7})]:
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


def test_a_broken_vocoder_entry_is_refused_in_one_line(tmp_path, export_dir):
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(export_dir, folder)
    shutil.copy(folder / "postnet.onnx", folder / "vocoder.onnx")  # any file: the entry is checked first
    manifest = json.loads((folder / "model.json").read_text())
    manifest["files"]["vocoder"] = "vocoder.onnx"
    for entry, message in [({"kind": "wavenet"}, "vocoder must name its kind, one of hifigan, spectral"),
                           ({"kind": "spectral", "pitch_head": True, "magnitude_power": 1.15, "n_iter": "16",
                             "momentum": 0.99}, "spectral vocoder's n_iter is missing or not valid"),
                           ({"kind": "spectral", "pitch_head": 1, "magnitude_power": 1.15, "n_iter": 16},
                            "spectral vocoder's pitch_head, momentum is missing or not valid")]:
        (folder / "model.json").write_text(json.dumps({**manifest, "vocoder": entry}))
        with pytest.raises(ExportError) as caught:
            OnnxSynthesizer.from_dir(folder)
        assert message in str(caught.value) and "\n" not in str(caught.value)
