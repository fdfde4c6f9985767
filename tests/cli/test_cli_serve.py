"""``gst-tts serve``: one-line errors without the extra or with an exposed host and no key, and a
real server on loopback answering Coqui's GET to a plain ``curl``."""

from __future__ import annotations

import json
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import sys
import time

from conftest import seconds_for_steps
import pytest
import soundfile as sf

from gst_tts.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_without_the_extra_it_names_the_install_command(tiny_checkpoint, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "fastapi", None)  # import fastapi now raises ImportError
    assert main(["serve", "--checkpoint", str(tiny_checkpoint)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gst-tts serve: error: ")
    assert "pip install 'gst-tts[serve]'" in err[0] and "fastapi" in err[0]


def test_an_exposed_host_needs_an_api_key(monkeypatch, capsys):
    pytest.importorskip("fastapi")
    monkeypatch.delenv("GST_TTS_API_KEY", raising=False)
    # Refused before the (missing) checkpoint is read.
    assert main(["serve", "--checkpoint", "/nonexistent.pt", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--host 0.0.0.0 is reachable from other machines" in err and "--api-key" in err


def test_bad_serving_options_are_one_line(tiny_checkpoint, capsys):
    pytest.importorskip("fastapi")
    assert main(["serve", "--checkpoint", str(tiny_checkpoint), "--max-text-chars", "0"]) == 2
    assert "max_text_chars must be a positive whole number" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_served_checkpoint_answers_coqui_get_to_plain_curl(tiny_checkpoint, tmp_path):
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("GST_TTS_API_KEY", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gst_tts.cli",
            "serve",
            "--checkpoint",
            str(tiny_checkpoint),
            "--port",
            "0",
            "--max-seconds",
            str(seconds_for_steps(30)),
            "--griffin-lim-iters",
            "4",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        port, seen, deadline = None, [], time.monotonic() + 90
        while port is None:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, "".join(seen)
            assert time.monotonic() < deadline, "".join(seen)
            seen.append(line)
            match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            port = int(match.group(1)) if match else None
        out = tmp_path / "hello.wav"
        curl = subprocess.run(
            [
                "curl",
                "-sS",
                "--max-time",
                "60",
                "-o",
                str(out),
                "-w",
                "%{http_code} %{content_type}",
                f"http://127.0.0.1:{port}/api/tts?text=Hello%20there.",
            ],
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert curl.stdout == "200 audio/wav", curl.stdout + curl.stderr
        info = sf.info(str(out))
        assert info.samplerate == 22050 and info.frames > 0
        # --vocoder auto with nothing recorded beside the checkpoint: Griffin-Lim, said first in the log and by the API.
        why = (
            "Griffin-Lim (no vocoder recorded beside the checkpoint (vocoder.json); --vocoder PATH to use a trained "
            "one)"
        )
        assert seen[0] == f"INFO gst_tts.cli: vocoder: {why}\n", "".join(seen)
        model = subprocess.run(
            ["curl", "-sS", "--max-time", "30", f"http://127.0.0.1:{port}/api/model"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert json.loads(model.stdout)["vocoder"] == why, model.stdout + model.stderr
    finally:
        proc.terminate()
        rest = proc.communicate(timeout=30)[0]
    # uvicorn shuts down cleanly on SIGTERM, then re-raises it (so the exit status is the signal's).
    assert proc.returncode in (0, -signal.SIGTERM) and "Application shutdown complete" in rest, rest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hello.wav"]  # the server wrote nothing
