"""Atomic writes: a failed write leaves the old file and no temporary file behind."""

import numpy as np
import pytest

from gst_tts.files import atomic_write, write_json, write_npy, write_text


def test_writes_create_folders_and_ordinary_files(tmp_path):
    json_path = write_json(tmp_path / "a" / "b.json", {"x": 1})
    npy_path = write_npy(tmp_path / "c.npy", np.arange(3))
    assert json_path.read_text() == '{\n  "x": 1\n}\n'
    assert np.load(npy_path).tolist() == [0, 1, 2]
    assert oct(json_path.stat().st_mode & 0o777) == "0o644"


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = write_text(tmp_path / "report.txt", "old\n")

    def half_then_fail(f):
        f.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, half_then_fail)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]
