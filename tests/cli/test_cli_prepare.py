"""``gst-tts prepare`` and ``python -m gst_tts.train`` on bad corpora: exit 2, one line, no traceback."""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys

from conftest import write_corpus
import numpy as np
import pytest
import soundfile as sf

from gst_tts.audio.features import AudioConfig
from gst_tts.cli import main

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
    code = main(["prepare", str(root), "--cache-dir", str(cache)])
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
        main(["prepare", str(tmp_path), "--sample-rate", "fast"])
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
        [sys.executable, "-m", "gst_tts.cli", "prepare", str(root), "--cache-dir", str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=120, env=_env(), cwd=tmp_path,
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
        [sys.executable, "-m", "gst_tts.train", f"data.root={root}", f"data.cache_dir={tmp_path / 'cache'}",
         f"hydra.run.dir={tmp_path / 'run'}", "trainer.device=cpu"],
        capture_output=True, text=True, timeout=180, env=_env(), cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, repr(proc.stderr)
    assert f"{root / 'metadata.csv'}:2:" in lines[0]
    assert "error" in lines[0]
