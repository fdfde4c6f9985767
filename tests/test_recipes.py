"""The recipes' wiring, end to end on a few ljspeech-mini clips with CPU overrides and 2 steps."""

import os
from pathlib import Path
import shutil
import subprocess
import sys

from conftest import TINY_MODEL

REPO = Path(__file__).resolve().parents[1]
# The test-sized model: the recipes' wiring is under test, not the model, and its untrained
# decoding runs every sentence to its step bound.
MODEL_OVERRIDES = [f"model.{key}={list(value) if isinstance(value, tuple) else value}".replace(" ", "")
                   for key, value in TINY_MODEL.items() if key != "reduction_factor"]
OVERRIDES = ["model.reduction_factor=3", "trainer.max_steps=2", "trainer.val_every=1", "trainer.checkpoint_every=1",
             "trainer.device=cpu", "trainer.progress=false", "data.batch_size=2", "data.val_size=1",
             "trainer.val_inference_utterances=1", *MODEL_OVERRIDES]


def _small_copy(source: Path, dest: Path, n: int, styles: bool = False) -> Path:
    (dest / "wavs").mkdir(parents=True)
    lines = (source / "metadata.csv").read_text(encoding="utf-8").splitlines()[:n]
    for line in lines:
        shutil.copy(source / "wavs" / f"{line.split('|')[0]}.wav", dest / "wavs")
    (dest / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if styles:
        (dest / "styles.csv").write_text(
            "\n".join(f"{line.split('|')[0]}|{'a' if i % 2 else 'b'}" for i, line in enumerate(lines)) + "\n")
    return dest


def _run(script: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, BIN=str(Path(sys.executable).parent), OMP_NUM_THREADS="2", **env)
    return subprocess.run(["bash", str(REPO / "recipes" / script), *args], capture_output=True, text=True,
                          env=environment, timeout=600)


def test_ljspeech_recipe_runs_end_to_end(shared_data, tmp_path):
    data = _small_copy(shared_data / "ljspeech-mini", tmp_path / "lj", 4)
    run = tmp_path / "run"
    result = _run("ljspeech/run.sh", str(data), str(run), *OVERRIDES, MODEL="tiny", EVAL_LIMIT="1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "deprecated" not in result.stderr  # the recipe uses today's command names and flags
    assert (run / "checkpoints" / "last.pt").is_file()
    assert (run / "evaluation" / "summary.json").is_file()
    assert (run / "samples" / "example.wav").is_file() and (run / "samples" / "example.alignment.png").is_file()


def test_multistyle_recipe_runs_end_to_end(shared_data, tmp_path):
    data = _small_copy(shared_data / "ljspeech-mini", tmp_path / "styled", 4, styles=True)
    run = tmp_path / "run"
    result = _run("multistyle/run.sh", str(data), str(run), *OVERRIDES, MODEL="tiny",
                  TEXT="A short test.")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "deprecated" not in result.stderr
    assert (run / "samples" / "a.wav").is_file() and (run / "samples" / "b.wav").is_file()
    assert (run / "samples" / "style_weights.png").is_file()


def test_recipe_without_corpus_is_a_clear_error(tmp_path):
    result = _run("ljspeech/run.sh", str(tmp_path / "missing"), str(tmp_path / "run"))
    assert result.returncode == 2 and "metadata.csv not found" in result.stderr
