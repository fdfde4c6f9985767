"""Atomic writes: a failed write leaves the old file and no temporary file behind; a full disk or
an unwritable folder is one line naming the file and the reason."""

import errno
import os

import numpy as np
import pytest
import torch

from gst_tts.errors import GstTtsError, OutputError
import gst_tts.files
from gst_tts.files import atomic_directory, atomic_write, remove_temporaries, write_json, write_npy, write_text


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


class _FullDisk:
    """A file on a disk that fills after ``room`` bytes, failing as the OS does (ENOSPC)."""

    def __init__(self, file, room: int) -> None:
        self._file, self._room = file, room

    def write(self, data) -> int:
        self._room -= len(data)
        if self._room < 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self._file.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()

    def __getattr__(self, name: str):
        return getattr(self._file, name)


@pytest.mark.parametrize("writer", ["torch.save", "np.save", "bytes"])
def test_a_full_disk_is_one_line_naming_the_file_and_the_reason(tmp_path, monkeypatch, writer):
    # torch.save reports a failed write as RuntimeError("unexpected pos ..."); numpy writes a real
    # file past Python ("N requested and M written"): both come out as the reason the OS gave.
    path = write_text(tmp_path / "last.pt", "old\n")
    fdopen = os.fdopen
    monkeypatch.setattr(gst_tts.files.os, "fdopen", lambda fd, *a, **k: _FullDisk(fdopen(fd, *a, **k), room=100))
    write = {
        "torch.save": lambda f: torch.save({"w": torch.zeros(10_000)}, f),
        "np.save": lambda f: np.save(f, np.zeros(10_000)),
        "bytes": lambda f: f.write(b"x" * 10_000),
    }[writer]
    with pytest.raises(OutputError) as info:
        atomic_write(path, write)
    assert str(info.value) == f"{path}: cannot write: no space left on device"
    assert info.value.errno == errno.ENOSPC and isinstance(info.value, GstTtsError)
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["last.pt"]


def test_an_unwritable_folder_is_one_line(tmp_path, monkeypatch):
    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(gst_tts.files.tempfile, "mkstemp", read_only)
    with pytest.raises(OutputError, match=r"out\.wav: cannot write: read-only file system$"):
        write_text(tmp_path / "out.wav", "x")
    if os.geteuid() != 0:  # root writes into a read-only folder anyway
        monkeypatch.undo()
        (tmp_path / "ro").mkdir(mode=0o555)
        with pytest.raises(OutputError, match="cannot write: permission denied"):
            write_text(tmp_path / "ro" / "out.wav", "x")


def test_remove_temporaries_clears_what_killed_writes_left(tmp_path):
    (tmp_path / ".last.pt.abc123.tmp").write_bytes(b"half")
    (tmp_path / "last.pt").write_bytes(b"whole")
    assert remove_temporaries(tmp_path) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]


def test_a_folder_is_written_whole_or_not_at_all(tmp_path):
    out = tmp_path / "export"
    with atomic_directory(out) as staging:
        write_text(staging / "a.txt", "first")
        assert not out.exists()  # nothing at the destination while the block runs
    assert [p.name for p in out.iterdir()] == ["a.txt"] and oct(out.stat().st_mode & 0o777) == "0o755"
    with pytest.raises(RuntimeError, match="interrupted"):
        with atomic_directory(out) as staging:
            write_text(staging / "b.txt", "second")
            raise RuntimeError("interrupted")
    assert [p.name for p in out.iterdir()] == ["a.txt"]  # the old folder stands
    with atomic_directory(out) as staging:
        write_text(staging / "c.txt", "third")
    assert [p.name for p in out.iterdir()] == ["c.txt"]  # replaced whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]  # no staging or old folder left


def test_a_refused_folder_write_is_one_line_and_leaves_nothing(tmp_path):
    with pytest.raises(OutputError) as caught:
        with atomic_directory(tmp_path / "corpus") as staging:
            write_text(staging / "half.txt", "half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert str(caught.value) == f"{tmp_path / 'corpus'}: cannot write: no space left on device"
    assert list(tmp_path.iterdir()) == []
