"""``gst-tts prepare`` and ``python -m gst_tts.training.train`` on bad corpora: exit 2, one line, no traceback;
``gst-tts prepare`` killed at random moments, then run again, ends with the cache a clean run makes."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
import random
import signal
import subprocess
import sys
import time
from typing import Callable

from conftest import tone, write_corpus
import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.cli import main
from gst_tts.data.cache import STALE_TEMPORARY_SECONDS, FeatureCache

REPO = Path(__file__).resolve().parents[2]


def _set_line(root: Path, line_no: int, text: str) -> None:
    lines = (root / "metadata.csv").read_text().splitlines()
    lines[line_no - 1] = text
    (root / "metadata.csv").write_text("\n".join(lines) + "\n")


def _columns(root):
    _set_line(root, 3, "UT-002|a|b|c")
    return 3


def _duplicate(root):
    _set_line(root, 5, "UT-001|dup|dup")
    return 5


def _empty_text(root):
    _set_line(root, 2, "UT-001| | ")
    return 2


def _missing_audio(root):
    (root / "wavs" / "UT-003.wav").unlink()
    return 4


def _bad_utf8(root):
    raw = (root / "metadata.csv").read_bytes().split(b"\n")
    raw[5] = b"UT-005|na\xefve|na\xefve"
    (root / "metadata.csv").write_bytes(b"\n".join(raw))
    return 6


def _no_symbol(root):
    _set_line(root, 4, "UT-003|###|###")
    return 4


def _unreadable_audio(root):
    (root / "wavs" / "UT-004.wav").write_text("definitely not RIFF\n")
    return 5


BEFORE_FEATURES = [_columns, _duplicate, _empty_text, _missing_audio, _bad_utf8, _no_symbol]


def _prepare(capsys, root: Path, cache: Path) -> tuple[int, str, str]:
    code = main(["prepare", "--corpus", str(root), "--cache-dir", str(cache)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("breaker", BEFORE_FEATURES, ids=lambda f: f.__name__.strip("_"))
def test_prepare_bad_corpus_one_line(tmp_path, capsys, breaker):
    root = write_corpus(tmp_path / "corpus")
    line_no = breaker(root)
    code, out, err = _prepare(capsys, root, tmp_path / "cache")
    assert code == 2
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert err.startswith("gst-tts prepare: error: ")
    assert f"{root / 'metadata.csv'}:{line_no}:" in err
    assert "Traceback" not in err and "Traceback" not in out
    assert not (tmp_path / "cache").exists()  # failed before any feature was computed


def test_prepare_unreadable_audio(tmp_path, capsys):
    root = write_corpus(tmp_path / "corpus")
    line_no = _unreadable_audio(root)
    code, out, err = _prepare(capsys, root, tmp_path / "cache")
    assert code == 2
    assert "Traceback" not in err and "Traceback" not in out
    error_lines = [line for line in err.splitlines() if "error" in line]
    assert len(error_lines) == 1, repr(err)
    assert error_lines[0] == err.rstrip("\n").splitlines()[-1]  # the error is the last line
    assert f"{root / 'metadata.csv'}:{line_no}:" in error_lines[0]
    assert "UT-004.wav" in error_lines[0]
    # Anything before it is the feature progress bar (tqdm writes to stderr).
    others = [line for line in err.splitlines()[:-1] if line.strip()]
    assert all(line.startswith("features:") for line in others), repr(err)


def test_prepare_bad_styles(tmp_path, capsys):
    root = write_corpus(tmp_path / "corpus", styles=True)
    (root / "styles.csv").write_text("UT-000|high\nUT-042|low\n")
    code, _, err = _prepare(capsys, root, tmp_path / "cache")
    assert code == 2 and err.count("\n") == 1
    assert f"{root / 'styles.csv'}:2:" in err


def test_prepare_missing_metadata(tmp_path, capsys):
    root = write_corpus(tmp_path / "corpus")
    (root / "metadata.csv").unlink()
    code, _, err = _prepare(capsys, root, tmp_path / "cache")
    assert code == 2 and err.count("\n") == 1
    assert str(root / "metadata.csv") in err and "Traceback" not in err


def test_prepare_empty_wav_exit_2(tmp_path, capsys):
    root = write_corpus(tmp_path / "corpus")
    sf.write(root / "wavs" / "UT-002.wav", np.zeros(0, np.float32), 22050, subtype="PCM_16")
    code, _, err = _prepare(capsys, root, tmp_path / "cache")
    assert code == 2 and f"{root / 'metadata.csv'}:3:" in err


def test_prepare_happy_path(tmp_path, capsys):
    root = write_corpus(tmp_path / "corpus", n=3)
    cache = tmp_path / "cache"
    code, out, err = _prepare(capsys, root, cache)
    assert code == 0
    assert "Traceback" not in err and "error" not in err
    assert out.startswith("3 utterances")
    feature_dir = cache / f"mels-{AudioConfig().fingerprint()}"
    assert str(feature_dir) in out
    assert sorted(p.name for p in feature_dir.glob("*.npy")) == ["UT-000.npy", "UT-001.npy", "UT-002.npy"]
    # A second run finds everything cached and reports the same.
    code, out2, _ = _prepare(capsys, root, cache)
    assert code == 0 and out2 == out


def test_prepare_bad_arguments_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["prepare", "--corpus", str(tmp_path), "--sample-rate", "fast"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--sample-rate" in err


# ---------------------------------------------------------------------------------------------
# Real processes


def _env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def test_prepare_subprocess_bad_corpus(tmp_path):
    root = write_corpus(tmp_path / "corpus", n=3)
    line_no = _duplicate_small(root)
    proc = subprocess.run(
        [sys.executable, "-m", "gst_tts.cli", "prepare", "--corpus", str(root), "--cache-dir", str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, repr(proc.stderr)
    assert proc.stderr.startswith("gst-tts prepare: error: ")
    assert f"{root / 'metadata.csv'}:{line_no}:" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def _duplicate_small(root):
    _set_line(root, 3, "UT-000|dup|dup")
    return 3


def test_train_subprocess_bad_corpus(tmp_path):
    root = write_corpus(tmp_path / "corpus", n=3)
    _set_line(root, 2, "UT-001|a|b|c|d")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gst_tts.training.train",
            f"data.root={root}",
            f"data.cache_dir={tmp_path / 'cache'}",
            f"hydra.run.dir={tmp_path / 'run'}",
            "model=tiny",
            "trainer.device=cpu",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=_env(),
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, repr(proc.stderr)
    assert f"{root / 'metadata.csv'}:2:" in lines[0]
    assert "error" in lines[0]


# ---------------------------------------------------------------------------------------------
# Killed while preparing


class _Forked:
    """``gst-tts prepare``'s main() in a forked child: a real process to SIGKILL, without the
    seconds a fresh interpreter takes to import torch. Answers as subprocess.Popen does."""

    def __init__(self, argv: list[str]) -> None:
        self.process = multiprocessing.get_context("fork").Process(target=_main_and_exit, args=(argv,))
        self.process.start()

    def poll(self) -> int | None:
        return None if self.process.is_alive() else self.process.exitcode

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)

    def wait(self, timeout: float) -> int | None:
        self.process.join(timeout)
        return self.process.exitcode


def _main_and_exit(argv: list[str]) -> None:
    os._exit(main(argv))


def _forked(root: Path, cache: Path) -> _Forked:
    return _Forked(["prepare", "--corpus", str(root), "--cache-dir", str(cache), "--threads", "1"])


def _interpreter(root: Path, cache: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gst_tts.cli",
            "prepare",
            "--corpus",
            str(root),
            "--cache-dir",
            str(cache),
            "--threads",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
        cwd=root.parent,
    )


def _kill_at(launch: Callable, root: Path, cache: Path, *, features: int, delay: float) -> tuple[int, bool]:
    """Start ``gst-tts prepare`` with ``launch(root, cache)`` and SIGKILL it ``delay`` seconds
    after it has written ``features`` feature files (0: ``delay`` seconds after its start).

    Returns how many files it had written when killed and whether it had already finished.
    """
    folder = cache / f"mels-{AudioConfig().fingerprint()}"
    start = time.time_ns()
    run = launch(root, cache)

    def written() -> int:  # by this run: earlier runs' files are there too
        try:
            with os.scandir(folder) as entries:
                return sum(1 for e in entries if e.name.endswith(".npy") and e.stat().st_mtime_ns >= start)
        except FileNotFoundError:
            return 0

    deadline = time.monotonic() + 300  # a guard against a hang, not a measurement
    while features and written() < features and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(delay)
    finished = run.poll() is not None
    run.kill()
    assert run.wait(timeout=60) in (0, -signal.SIGKILL)
    return written(), finished


def _features(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.glob("*.npy")}


def _killed_then_finished(
    tmp_path: Path, launch: Callable, *, kills: int, seed: int
) -> list[tuple[int, float, int, bool]]:
    """Kills ``gst-tts prepare`` of a 30-clip corpus ``kills`` times at seeded random moments, each
    time checking that every feature file in sight is whole (bit-equal to a clean run's), then
    runs it to the end: the cache must be the clean run's, stray temporary files of killed writes
    ignored, and removed once stale. Returns (features, delay, written, finished) per kill."""
    root = write_corpus(tmp_path / "corpus", n=30)
    for i in range(30):  # 2 s each: a run's writes take long enough for kills to fall among them
        sf.write(root / "wavs" / f"UT-{i:03d}.wav", tone(2.0 + 0.02 * i, 22050, 150 + 10 * i), 22050, subtype="PCM_16")
    clean = FeatureCache(tmp_path / "clean", AudioConfig())
    threads = torch.get_num_threads()
    try:  # here, the same command with the same threads: it also imports what a forked run needs
        assert main(["prepare", "--corpus", str(root), "--cache-dir", str(clean.dir.parent), "--threads", "1"]) == 0
    finally:
        torch.set_num_threads(threads)
    expected, expected_manifest = _features(clean.dir), json.loads(clean.manifest_path.read_text())
    assert len(expected) == 30

    cache = tmp_path / "cache"
    folder = cache / clean.dir.name
    rng = random.Random(seed)
    moments = []
    for _ in range(kills):
        features = rng.randrange(0, 25)  # 25 of 30 at the most: the run must not end before the kill
        delay = rng.uniform(0, 0.3) if features == 0 else rng.uniform(0, 0.01)
        written, finished = _kill_at(launch, root, cache, features=features, delay=delay)
        moments.append((features, round(delay, 3), written, finished))
        for name, data in _features(folder).items():  # no half-written feature under a feature's name
            assert data == expected[name], name
        if (folder / "manifest.json").is_file():
            manifest = json.loads((folder / "manifest.json").read_text())
            assert manifest["entries"].items() <= expected_manifest["entries"].items()

    # Temporary files of killed writes: a fresh one may be a live writer's and is left alone (and
    # never read); a stale one is removed.
    folder.mkdir(parents=True, exist_ok=True)
    fresh, stale = folder / ".UT-003.npy.live1234.tmp", folder / ".UT-004.npy.dead1234.tmp"
    fresh.write_bytes(b"\x93NUMPY half a feature")
    stale.write_bytes(b"\x93NUMPY half a feature")
    killed_leftovers = [p for p in folder.glob(".*.tmp") if p not in (fresh, stale)]
    old = time.time() - 2 * STALE_TEMPORARY_SECONDS
    for p in [stale, *killed_leftovers]:
        os.utime(p, (old, old))
    assert launch(root, cache).wait(timeout=300) == 0
    assert _features(folder) == expected
    assert json.loads((folder / "manifest.json").read_text()) == expected_manifest
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [fresh.name]
    print(
        f"kills (after features, delay s, features written, had finished): {moments}; "
        f"temporary files they left: {len(killed_leftovers)}"
    )
    return moments


def test_prepare_killed_at_random_moments_then_rerun_equals_a_clean_run(tmp_path):
    moments = _killed_then_finished(tmp_path, _forked, kills=8, seed=0)
    assert sum(1 for _, _, written, finished in moments if written and not finished) >= 4  # kills among the writes


@pytest.mark.slow(
    reason="test_prepare_killed_at_random_moments_then_rerun_equals_a_clean_run kills the same "
    "command, forked from the test rather than started afresh"
)
def test_prepare_started_afresh_killed_at_random_moments(tmp_path):
    moments = _killed_then_finished(tmp_path, _interpreter, kills=6, seed=1)
    assert sum(1 for _, _, written, finished in moments if written and not finished) >= 3
