"""A broken torch/torchaudio pair ends every entry point with one line and exit code 2."""

from __future__ import annotations

import importlib.metadata as metadata
import os
from pathlib import Path
import subprocess
import sys

import pytest

from gst_tts import dependencies

BIN = Path(sys.executable).parent
ENTRY_POINTS = {
    "import gst_tts": [sys.executable, "-c", "import gst_tts"],
    "gst-tts synthesize --help": [str(BIN / "gst-tts"), "synthesize", "--help"],
    "python -m gst_tts.cli": [sys.executable, "-m", "gst_tts.cli", "synthesize", "--help"],
    "gst-tts-train": [str(BIN / "gst-tts-train"), "--help"],
    "python -m gst_tts.training.train": [sys.executable, "-m", "gst_tts.training.train", "--help"],
}


@pytest.fixture(scope="module")
def mismatched_torchaudio(tmp_path_factory) -> Path:
    """A torchaudio that refuses to load, as a build for another torch's CUDA version does."""
    folder = tmp_path_factory.mktemp("broken")
    (folder / "torchaudio").mkdir()
    (folder / "torchaudio" / "__init__.py").write_text(
        "raise RuntimeError('Detected that PyTorch and TorchAudio were compiled with different CUDA versions.\\n"
        "PyTorch has CUDA version 13.2 whereas TorchAudio has CUDA version 13.0.')\n"
    )
    return folder


# ``python -m`` starts the same modules as the console scripts: make test-all checks them too.
_SAME_AS_A_SCRIPT = pytest.mark.slow(reason="the module that gst-tts / gst-tts-train run, started by python -m")


@pytest.mark.parametrize(
    "entry", [pytest.param(e, marks=_SAME_AS_A_SCRIPT) if e.startswith("python -m") else e for e in ENTRY_POINTS]
)
def test_broken_pair_gives_one_line_and_exit_2(entry, mismatched_torchaudio, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(mismatched_torchaudio)}
    result = subprocess.run(ENTRY_POINTS[entry], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("gst-tts: error: torch and torchaudio cannot be imported together")
    assert f"torch {metadata.version('torch')}" in line and f"torchaudio {metadata.version('torchaudio')}" in line
    assert "different CUDA versions" in line
    specs = dependencies.declared_requirements()
    assert "<2." in specs["torch"] and "<2." in specs["torchaudio"]  # the fix names bounded versions
    assert line.endswith(f"-m pip install '{specs['torch']}' '{specs['torchaudio']}'")
    assert result.stdout == "" and not list(tmp_path.iterdir())


def test_missing_package_is_named_with_its_install_command(monkeypatch):
    monkeypatch.setattr(dependencies, "_PRESENT", dependencies._PRESENT + ("espeakng_loader_gone",))
    monkeypatch.setattr(
        dependencies, "_DISTRIBUTIONS", {**dependencies._DISTRIBUTIONS, "espeakng_loader_gone": "espeakng-loader-gone"}
    )
    problem = dependencies.find_problem()
    assert problem.startswith("missing dependencies: espeakng-loader-gone;")
    assert problem.endswith("-m pip install 'espeakng-loader-gone'")


def test_working_environment_has_no_problem():
    assert dependencies.find_problem() is None


def test_the_torch_free_runtime_imports_beside_a_broken_pair_and_the_check_follows(mismatched_torchaudio, tmp_path):
    # This checkout first on the path (the console scripts above run the installed package).
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(mismatched_torchaudio), str(repo)])}
    runtime = subprocess.run(
        [sys.executable, "-c", "import gst_tts.runtime, sys; print('torch' in sys.modules)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert runtime.returncode == 0 and runtime.stdout.strip() == "False", runtime.stderr
    then_model = subprocess.run(
        [sys.executable, "-c", "import gst_tts.runtime; import gst_tts.model"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert then_model.returncode == 2
    lines = then_model.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gst-tts: error: torch and torchaudio cannot be imported together")
