"""Hostile LJSpeech-format corpora: each case breaks a valid 3-utterance corpus one way, and is fed
to the corpus reader and to ``gst-tts prepare``. Each ends in a one-line ``file:line`` error, exit
code 2, or is accepted as documented (gst_tts.data.corpus, gst_tts.data.cache): a byte-order mark
dropped, other rates, channel counts and 8-bit samples converted with one warning. No case reads
or writes a file outside the corpus and cache folders (an audit hook and soundfile's opens record
every file touched).

Covered elsewhere, not repeated here: CRLF line ends, latin-1 bytes in a line, a text file named
.wav, a wav of no samples, a silent one, missing audio (tests/data/test_data.py,
tests/cli/test_cli_prepare.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
import logging
import os
from pathlib import Path
import shutil
import struct
import subprocess
import sys
from typing import Callable

from conftest import tone, write_corpus
import numpy as np
import pytest
import soundfile as sf

from gst_tts.audio.features import AudioConfig
from gst_tts.cli import main
from gst_tts.data.cache import MAX_CLIP_SECONDS, FeatureCache
from gst_tts.data.corpus import MAX_ID_CHARS, MAX_LINE_CHARS, id_file, read_corpus
from gst_tts.data.gta import GtaMels, write_gta_manifest
from gst_tts.errors import DataError

REPO = Path(__file__).resolve().parents[2]
RATE = AudioConfig().sample_rate
TEXT_CATEGORY, ID_CATEGORY, LINK_CATEGORY, AUDIO_CATEGORY = (
    "metadata text",
    "ids and paths",
    "links and special files",
    "audio formats",
)


@dataclass(frozen=True)
class Case:
    """One way to break the corpus ``write_corpus(root, n=3)`` (ids UT-000..UT-002 on lines 1-3).

    ``build(root, outside)`` breaks it; ``outside`` is a folder beside the corpus that nothing may
    read or write. Refused cases name ``where`` (``metadata.csv:2``), relative to the corpus, and
    hold ``phrase``; ``stage`` says who refuses: ``reader`` (read_corpus) or ``features`` (the
    cache, reading audio). Accepted cases (``stage`` ``accepted``) warn with ``phrase`` when one is
    given, and ``frames_of`` names an utterance whose features must be as long as its 0.7 s tone.
    """

    category: str
    name: str
    build: Callable[[Path, Path], None]
    stage: str
    where: str = ""
    phrase: str = ""
    frames_of: str = ""

    @property
    def id(self) -> str:
        return f"{self.category.split()[0]}-{self.name}"


# ---------------------------------------------------------------------------------------------
# Builders


def _metadata(root: Path) -> Path:
    return root / "metadata.csv"


def _set_line(root: Path, line_no: int, text: str) -> None:
    lines = _metadata(root).read_text().splitlines()
    lines[line_no - 1] = text
    _metadata(root).write_text("\n".join(lines) + "\n")


def _rewrite(transform: Callable[[bytes], bytes]) -> Callable[[Path, Path], None]:
    return lambda root, outside: _metadata(root).write_bytes(transform(_metadata(root).read_bytes()))


def _line(line_no: int, text: str) -> Callable[[Path, Path], None]:
    return lambda root, outside: _set_line(root, line_no, text)


def _id_with_wav(utt_id: str) -> Callable[[Path, Path], None]:
    """Line 2 gets ``utt_id``; a wav at the path the id names, wherever that is, so that only the
    id's check can refuse it."""

    def build(root: Path, outside: Path) -> None:
        _set_line(root, 2, f"{utt_id}|Sentence one.|sentence one.")
        target = root / "wavs" / f"{utt_id}.wav"
        if "/" not in utt_id and "\\" not in utt_id and len(utt_id.encode()) < 240 and utt_id not in ("", ".", ".."):
            shutil.copy(root / "wavs" / "UT-001.wav", target)
        elif utt_id.startswith("../../outside/"):
            shutil.copy(root / "wavs" / "UT-001.wav", outside / f"{utt_id.rsplit('/', 1)[1]}.wav")

    return build


def _link(target: Callable[[Path, Path], Path | str]) -> Callable[[Path, Path], None]:
    """wavs/UT-001.wav becomes a symbolic link to ``target(root, outside)``."""

    def build(root: Path, outside: Path) -> None:
        wav = root / "wavs" / "UT-001.wav"
        destination = target(root, outside)
        wav.unlink()
        wav.symlink_to(destination)

    return build


def _outside_wav(root: Path, outside: Path) -> Path:
    shutil.copy(root / "wavs" / "UT-001.wav", outside / "real.wav")
    return outside / "real.wav"


def _chain_out(root: Path, outside: Path) -> str:
    (root / "inner.wav").symlink_to(_outside_wav(root, outside))
    return "../inner.wav"


def _wavs_folder_elsewhere(root: Path, outside: Path) -> None:
    shutil.move(root / "wavs", outside / "recordings")
    (root / "wavs").symlink_to(outside / "recordings")


def _replace_wav(kind: str) -> Callable[[Path, Path], None]:
    def build(root: Path, outside: Path) -> None:
        wav = root / "wavs" / "UT-001.wav"
        samples = tone(0.7, RATE, 170)
        if kind == "zero bytes":
            wav.write_bytes(b"")
        elif kind == "truncated header":
            wav.write_bytes(wav.read_bytes()[:20])
        elif kind in ("nan", "inf"):
            samples[1000] = np.nan if kind == "nan" else np.inf
            sf.write(wav, samples, RATE, subtype="FLOAT")
        elif kind == "8-bit":
            sf.write(wav, samples, RATE, subtype="PCM_U8")
        elif kind == "24-bit":
            sf.write(wav, samples, RATE, subtype="PCM_24")
        elif kind == "96 kHz":
            sf.write(wav, tone(0.7, 96000, 170), 96000, subtype="PCM_16")
        elif kind == "6 channels":
            sf.write(wav, np.stack([samples * (0.5 + 0.1 * c) for c in range(6)], axis=1), RATE, subtype="PCM_16")
        elif kind == "2 hours":
            _sparse_wav(wav, seconds=2 * 3600)
        elif kind == "mp3":  # an ID3 tag and MPEG-1 layer III frames, as a renamed .mp3 starts
            wav.write_bytes(
                b"ID3\x03\x00\x00\x00\x00\x00\x0a" + b"\x00" * 10 + (b"\xff\xfb\x90\x64" + b"\x00" * 413) * 8
            )
        elif kind == "flac":
            sf.write(wav, samples, RATE, format="FLAC", subtype="PCM_16")
        else:
            raise AssertionError(kind)

    return build


def _sparse_wav(path: Path, *, seconds: int) -> None:
    """A 16-bit mono WAV of ``seconds`` of silence whose samples are a hole in the file: the file
    system stores the header only, so a 2-hour file costs nothing to make."""
    data_bytes = seconds * RATE * 2
    header = (
        b"RIFF"
        + struct.pack("<I", 36 + data_bytes)
        + b"WAVE"
        + b"fmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, RATE, RATE * 2, 2, 16)
        + b"data"
        + struct.pack("<I", data_bytes)
    )
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(len(header) + data_bytes)


def _styles_with_bom(root: Path, outside: Path) -> None:
    (root / "styles.csv").write_bytes(b"\xef\xbb\xbfUT-000|high\r\nUT-002|low\r\n")


def _fifo(root: Path, outside: Path) -> None:
    (root / "wavs" / "UT-001.wav").unlink()
    os.mkfifo(root / "wavs" / "UT-001.wav")  # opening it to read would wait for a writer forever


def _folder(root: Path, outside: Path) -> None:
    (root / "wavs" / "UT-001.wav").unlink()
    (root / "wavs" / "UT-001.wav").mkdir()


BOM = b"\xef\xbb\xbf"
CASES = [
    # Text of metadata.csv / styles.csv.
    Case(TEXT_CATEGORY, "bom", _rewrite(lambda b: BOM + b), "accepted"),
    Case(TEXT_CATEGORY, "bom_and_crlf", _rewrite(lambda b: BOM + b.replace(b"\n", b"\r\n")), "accepted"),
    Case(TEXT_CATEGORY, "bom_in_styles", _styles_with_bom, "accepted"),
    Case(
        TEXT_CATEGORY,
        "bom_mid_file",
        _rewrite(lambda b: b.replace(b"UT-002", BOM + b"UT-002", 1)),
        "reader",
        "metadata.csv:3",
        "holds the character '\\ufeff'",
    ),
    Case(TEXT_CATEGORY, "utf16", _rewrite(lambda b: b.decode().encode("utf-16")), "reader", "metadata.csv:1", "UTF-16"),
    Case(
        TEXT_CATEGORY,
        "utf16_without_bom",
        _rewrite(lambda b: b.decode().encode("utf-16-le")),
        "reader",
        "metadata.csv:1",
        "control character '\\x00' at column 2",
    ),
    Case(
        TEXT_CATEGORY,
        "nul_in_text",
        _line(2, "UT-001|Sentence\x00one.|sentence\x00one."),
        "reader",
        "metadata.csv:2",
        "control character '\\x00' at column 16",
    ),
    Case(
        TEXT_CATEGORY,
        "terminal_escape",
        _line(2, "UT-001|\x1b[2JSentence one.|sentence one."),
        "reader",
        "metadata.csv:2",
        "control character '\\x1b'",
    ),
    Case(
        TEXT_CATEGORY,
        "cr_only_line_ends",
        _rewrite(lambda b: b.replace(b"\n", b"\r")),
        "reader",
        "metadata.csv:1",
        "control character '\\r'",
    ),
    Case(
        TEXT_CATEGORY,
        "line_of_100k_characters",
        _line(2, "UT-001|" + "a" * 100_000 + "|" + "a" * 100),
        "reader",
        "metadata.csv:2",
        f"line of 100108 characters; a line holds at most {MAX_LINE_CHARS}",
    ),
    # Ids, which name files.
    Case(
        ID_CATEGORY,
        "parent_folders",
        _id_with_wav("../../outside/evil"),
        "reader",
        "metadata.csv:2",
        "id '../../outside/evil' holds a path separator",
    ),
    Case(
        ID_CATEGORY,
        "backslashes",
        _id_with_wav("..\\..\\outside\\evil"),
        "reader",
        "metadata.csv:2",
        "a path separator",
    ),
    Case(ID_CATEGORY, "absolute", _id_with_wav("/etc/passwd"), "reader", "metadata.csv:2", "a path separator"),
    Case(ID_CATEGORY, "dot_dot", _id_with_wav(".."), "reader", "metadata.csv:2", "starts with '.' or holds '..'"),
    Case(ID_CATEGORY, "hidden", _id_with_wav(".UT-001"), "reader", "metadata.csv:2", "starts with '.'"),
    Case(ID_CATEGORY, "dots_inside", _id_with_wav("UT..001"), "reader", "metadata.csv:2", "holds '..'"),
    Case(ID_CATEGORY, "empty", _line(2, "|Sentence one.|sentence one."), "reader", "metadata.csv:2", "empty id"),
    Case(
        ID_CATEGORY,
        "too_long",
        _id_with_wav("U" * (MAX_ID_CHARS + 1)),
        "reader",
        "metadata.csv:2",
        f"id of {MAX_ID_CHARS + 1} characters",
    ),
    Case(ID_CATEGORY, "too_many_bytes", _id_with_wav("語" * 100), "reader", "metadata.csv:2", "300 bytes in UTF-8"),
    Case(ID_CATEGORY, "space", _id_with_wav("UT 001"), "reader", "metadata.csv:2", "the character ' '"),
    Case(
        ID_CATEGORY, "delete_character", _id_with_wav("UT\x7f001"), "reader", "metadata.csv:2", "the character '\\x7f'"
    ),
    Case(ID_CATEGORY, "drive_colon", _id_with_wav("C:evil"), "reader", "metadata.csv:2", "the character ':'"),
    Case(ID_CATEGORY, "any_script", _id_with_wav("Ünï-日本語_001.a"), "accepted", frames_of="Ünï-日本語_001.a"),
    # Symbolic links and files that are not regular files.
    Case(
        LINK_CATEGORY,
        "to_etc_passwd",
        _link(lambda root, outside: "/etc/passwd"),
        "reader",
        "metadata.csv:2",
        "links to /etc/passwd, outside the corpus folder",
    ),
    Case(
        LINK_CATEGORY,
        "to_dev_zero",
        _link(lambda root, outside: "/dev/zero"),
        "reader",
        "metadata.csv:2",
        "outside the corpus folder",
    ),
    Case(LINK_CATEGORY, "to_wav_outside", _link(_outside_wav), "reader", "metadata.csv:2", "outside the corpus folder"),
    Case(
        LINK_CATEGORY,
        "relative_to_wav_outside",
        _link(lambda root, outside: Path("../..") / outside.name / _outside_wav(root, outside).name),
        "reader",
        "metadata.csv:2",
        "outside the corpus folder",
    ),
    Case(
        LINK_CATEGORY,
        "chain_leaving_the_corpus",
        _link(_chain_out),
        "reader",
        "metadata.csv:2",
        "outside the corpus folder",
    ),
    Case(
        LINK_CATEGORY,
        "dangling_outside",
        _link(lambda root, outside: outside / "missing.wav"),
        "reader",
        "metadata.csv:2",
        "outside the corpus folder",
    ),
    Case(LINK_CATEGORY, "fifo", _fifo, "reader", "metadata.csv:2", "audio file not found"),
    Case(LINK_CATEGORY, "folder", _folder, "reader", "metadata.csv:2", "audio file not found"),
    Case(LINK_CATEGORY, "to_wav_inside", _link(lambda root, outside: "UT-000.wav"), "accepted"),
    Case(LINK_CATEGORY, "wavs_folder_elsewhere", _wavs_folder_elsewhere, "accepted"),
    # Audio formats (the reader only checks that the file is there).
    Case(
        AUDIO_CATEGORY, "zero_bytes", _replace_wav("zero bytes"), "features", "metadata.csv:2", "not readable as audio"
    ),
    Case(
        AUDIO_CATEGORY,
        "truncated_header",
        _replace_wav("truncated header"),
        "features",
        "metadata.csv:2",
        "not readable as audio",
    ),
    Case(
        AUDIO_CATEGORY,
        "nan_samples",
        _replace_wav("nan"),
        "features",
        "metadata.csv:2",
        "1 NaN or infinite samples (the first at 0.045 s)",
    ),
    Case(AUDIO_CATEGORY, "inf_samples", _replace_wav("inf"), "features", "metadata.csv:2", "1 NaN or infinite samples"),
    Case(
        AUDIO_CATEGORY,
        "two_hours",
        _replace_wav("2 hours"),
        "features",
        "metadata.csv:2",
        f"7200.0 s long; clips are at most {MAX_CLIP_SECONDS:.0f} s",
    ),
    Case(AUDIO_CATEGORY, "mp3_named_wav", _replace_wav("mp3"), "features", "metadata.csv:2", "MP3 data, not WAV"),
    Case(AUDIO_CATEGORY, "flac_named_wav", _replace_wav("flac"), "features", "metadata.csv:2", "FLAC data, not WAV"),
    Case(
        AUDIO_CATEGORY,
        "8_bit",
        _replace_wav("8-bit"),
        "accepted",
        phrase="8-bit samples in 1 of 3 files",
        frames_of="UT-001",
    ),
    Case(AUDIO_CATEGORY, "24_bit", _replace_wav("24-bit"), "accepted", frames_of="UT-001"),
    Case(
        AUDIO_CATEGORY,
        "96_khz",
        _replace_wav("96 kHz"),
        "accepted",
        phrase="96000 Hz resampled in 1 of 3 files",
        frames_of="UT-001",
    ),
    Case(
        AUDIO_CATEGORY,
        "6_channels",
        _replace_wav("6 channels"),
        "accepted",
        phrase="6 channels averaged in 1 of 3 files",
        frames_of="UT-001",
    ),
]
CASES_PER_CATEGORY = Counter(case.category for case in CASES)


def test_every_category_has_its_cases():
    assert len({case.id for case in CASES}) == len(CASES)
    assert CASES_PER_CATEGORY == {TEXT_CATEGORY: 10, ID_CATEGORY: 13, LINK_CATEGORY: 10, AUDIO_CATEGORY: 11}
    assert {case.stage for case in CASES} == {"reader", "features", "accepted"}


# ---------------------------------------------------------------------------------------------
# What a run touches


_TOUCHED: list[tuple[str, str]] | None = None  # (event, path) while a test audits, else None


def _audit(event: str, args: tuple) -> None:
    if _TOUCHED is None or event not in ("open", "os.rename", "os.remove", "os.mkdir", "os.truncate"):
        return
    path = args[1] if event == "os.rename" else args[0]  # a rename writes its destination
    if not isinstance(path, (str, bytes, os.PathLike)):
        return  # a file descriptor: its opening was recorded
    if event == "open":
        mode, flags = args[1], args[2]
        writes = (mode is not None and any(c in mode for c in "wax+")) or (
            mode is None and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC)
        )
        event = "write" if writes else "read"
    else:
        event = "write"
    _TOUCHED.append((event, os.fsdecode(path)))


sys.addaudithook(_audit)  # hooks cannot be removed; it records only while _TOUCHED is a list


@pytest.fixture
def touched(monkeypatch):
    """Every file a test reads or writes: Python's own opens, renames and removals (audit events)
    and libsndfile's opens (soundfile.SoundFile, which info() and read() use); paths as given."""
    global _TOUCHED
    _TOUCHED = []
    real_init = sf.SoundFile.__init__

    def recording_init(self, file, mode="r", *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)):
            _TOUCHED.append(("read" if mode == "r" else "write", os.fsdecode(file)))
        real_init(self, file, mode, *args, **kwargs)

    monkeypatch.setattr(sf.SoundFile, "__init__", recording_init)
    yield _TOUCHED
    _TOUCHED = None


def _inside(path: str, *folders: Path) -> bool:
    real = Path(os.path.realpath(path))  # through links: a link in the corpus may point anywhere
    return any(real.is_relative_to(os.path.realpath(folder)) for folder in folders)


def _check_confined(
    touched: list[tuple[str, str]], case: Case, *, tmp: Path, root: Path, cache: Path, outside: Path
) -> None:
    """Nothing was read outside the corpus (or, for a linked wavs folder, the recordings), nothing
    under ``tmp`` outside corpus and cache, and nothing written anywhere but the cache."""
    readable = [root, cache] + ([outside / "recordings"] if case.name == "wavs_folder_elsewhere" else [])
    for event, path in touched:
        if event == "write":  # (importing a module may write its bytecode: the interpreter's, not ours)
            assert _inside(path, cache) or "__pycache__" in Path(path).parts, f"{case.id} wrote {path}"
        else:
            assert not _inside(path, Path("/etc"), Path("/dev")), f"{case.id} read {path}"
            assert not _inside(path, tmp) or _inside(path, *readable), f"{case.id} read {path}"


# ---------------------------------------------------------------------------------------------
# The cases through the reader and through gst-tts prepare


def _broken(tmp_path: Path, case: Case) -> tuple[Path, Path]:
    root, outside = write_corpus(tmp_path / "corpus", n=3), tmp_path / "outside"
    outside.mkdir()
    case.build(root, outside)
    return root, outside


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reader(tmp_path, case, touched):
    root, outside = _broken(tmp_path, case)
    touched.clear()  # what building the case wrote
    if case.stage == "reader":
        with pytest.raises(DataError) as info:
            read_corpus(root)
        message = str(info.value)
        assert message.startswith(f"{root / case.where}: ") and case.phrase in message, message
        assert "\n" not in message and len(message) < 400, message
    else:
        utterances = read_corpus(root)
        assert len(utterances) == 3 and utterances[0].id == "UT-000"
        if case.name == "bom_in_styles":
            assert [u.style for u in utterances] == ["high", None, "low"]
    _check_confined(touched, case, tmp=tmp_path, root=root, cache=tmp_path / "cache", outside=outside)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_prepare(tmp_path, capsys, caplog, monkeypatch, case, touched):
    root, outside = _broken(tmp_path, case)
    outside_before = sorted(p.name for p in outside.rglob("*"))
    decoded: list[str] = []
    real_read = sf.read
    monkeypatch.setattr(sf, "read", lambda file, *a, **k: decoded.append(os.fsdecode(file)) or real_read(file, *a, **k))
    cache = tmp_path / "cache"
    touched.clear()
    with caplog.at_level(logging.WARNING, logger="gst_tts"):
        code = main(["prepare", "--corpus", str(root), "--cache-dir", str(cache)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("gst_tts")]
    if case.stage == "accepted":
        assert code == 0, err
        frames = FeatureCache(cache, AudioConfig()).prepare(read_corpus(root), progress=False)  # all cached by now
        if case.frames_of:
            assert abs(frames[case.frames_of] - int(0.7 * RATE) // 256) <= 3, frames
        if case.phrase:
            assert len(warnings) == 1 and case.phrase in warnings[0], warnings
        else:
            assert warnings == []
    else:
        assert code == 2
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines[-1].startswith(f"gst-tts prepare: error: {root / case.where}: ") and case.phrase in lines[-1], err
        assert all(line.startswith("features:") for line in lines[:-1]), err  # before it, progress only
        if case.stage == "reader":
            assert not cache.exists()  # refused before the cache was made
        assert not list(cache.rglob("*.npy")) or case.stage == "features"
    # A 2-hour file is refused from its header: no sample of it is decoded.
    assert all(not path.endswith("UT-001.wav") for path in decoded) or case.name != "two_hours"
    _check_confined(touched, case, tmp=tmp_path, root=root, cache=cache, outside=outside)
    assert sorted(p.name for p in outside.rglob("*")) == outside_before


def _env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


_IN_A_PROCESS = {"parent_folders"}
_AS_IN_PROCESS = pytest.mark.slow(reason="test_prepare runs the same case through gst-tts prepare's main() in-process")


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id, marks=() if c.name in _IN_A_PROCESS else _AS_IN_PROCESS) for c in CASES]
)
def test_prepare_in_a_process(tmp_path, case):
    """The real command: exit code 2 and one line on stderr for a refused case; for an accepted
    one, exit 0 and a single warning line where a conversion is documented."""
    root, _ = _broken(tmp_path, case)
    proc = subprocess.run(
        [sys.executable, "-m", "gst_tts.cli", "prepare", "--corpus", str(root), "--cache-dir", str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=tmp_path,
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("features:")]
    if case.stage == "accepted":
        assert proc.returncode == 0, proc.stderr
        assert len(lines) == (1 if case.phrase else 0), proc.stderr
        assert all(line.startswith("WARNING gst_tts.data.cache: ") and case.phrase in line for line in lines)
    else:
        assert proc.returncode == 2
        assert len(lines) == 1 and lines[0].startswith(f"gst-tts prepare: error: {root / case.where}: "), proc.stderr
        assert case.phrase in lines[0]


# ---------------------------------------------------------------------------------------------
# Every id that becomes a path goes through one check (a second line of defence)


@pytest.mark.parametrize("utt_id", ["../evil", "..", "a/../../b", "/abs", "x\\y", ".hidden", "", "a\x00b"])
def test_ids_never_name_files_outside_their_folder(tmp_path, utt_id):
    cache = FeatureCache(tmp_path / "cache", AudioConfig())
    # A GTA manifest is a file anyone can edit: its ids are checked where they become paths too.
    write_gta_manifest(
        tmp_path / "gta", audio_config=AudioConfig(), checkpoint="x.pt", step=0, reduction_factor=2, entries={utt_id: 4}
    )
    gta = GtaMels(tmp_path / "gta", AudioConfig())
    for where in (lambda: id_file(tmp_path, utt_id, ".npy"), lambda: cache.path(utt_id), lambda: gta.load(utt_id)):
        with pytest.raises(DataError) as info:
            where()
        assert "\n" not in str(info.value)
    assert cache.path("LJ001-0001") == cache.dir / "LJ001-0001.npy"
    assert id_file(tmp_path, "日本語_01", ".npy") == tmp_path / "日本語_01.npy"
    assert id_file(Path("."), "UT-001", ".npy") == Path("UT-001.npy")  # --out . names this folder
