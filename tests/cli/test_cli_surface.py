"""The command line's surface (issue 26): old names and flags still work with one deprecation line,
--version, --text-file - reads standard input, one default per shared flag, --no-progress on every long
command, and a top-level --help that imports neither torch nor any command module."""

from __future__ import annotations

import io
import os
from pathlib import Path
import subprocess
import sys

import pytest

from gst_tts.cli import COMMANDS, RENAMED_COMMANDS, build_parser, main, version
from gst_tts.cli.args import DEFAULT_BATCH_SIZE, DEFAULT_SEED, one_text

# Each command with the least it needs to parse.
MINIMAL = {
    "demo": [],
    "make-demo-corpus": ["--out", "corpus"],
    "prepare": ["--corpus", "corpus"],
    "phonemize": ["Hi."],
    "info": ["c.pt"],
    "synthesize": ["--checkpoint", "c.pt", "--text", "Hi.", "--out", "x.wav"],
    "vocode": ["--reference", "r.wav", "--out", "x.wav"],
    "plot-alignment": ["--out", "x.png"],
    "plot-style": ["--checkpoint", "c.pt", "--references", "r.wav", "--out", "x.png"],
    "probe-tokens": ["--checkpoint", "c.pt"],
    "check-alignment": ["--checkpoint", "c.pt", "--corpus", "corpus"],
    "measure-transfer": ["--checkpoint", "c.pt", "--out", "out"],
    "measure-parallel": ["--checkpoint", "c.pt", "--corpus", "corpus"],
    "measure-intelligibility": ["--checkpoint", "c.pt", "--corpus", "corpus"],
    "select-checkpoint": ["--checkpoints", "c.pt", "--out", "best.pt"],
    "dump-gta-mels": ["--checkpoint", "c.pt", "--corpus", "corpus", "--out", "gta"],
    "demo-report": ["--checkpoint", "c.pt", "--corpus", "corpus", "--out", "out"],
    "export": ["--checkpoint", "c.pt", "--out", "exported"],
    "serve": ["--checkpoint", "c.pt"],
}
LONG_COMMANDS = [
    "demo",
    "make-demo-corpus",
    "prepare",
    "synthesize",
    "check-alignment",
    "measure-transfer",
    "measure-intelligibility",
    "select-checkpoint",
    "dump-gta-mels",
    "demo-report",
    "probe-tokens",
    "plot-style",
    "vocode",
]

# Old spelling → (argv with it, attribute, value it must give).
OLD_SPELLINGS = {
    "evaluate": (["evaluate", *MINIMAL["check-alignment"]], "command", "check-alignment"),
    "style-transfer": (["style-transfer", *MINIMAL["measure-transfer"]], "command", "measure-transfer"),
    "--wav": (["vocode", "--wav", "r.wav", "--out", "x.wav"], "reference", Path("r.wav")),
    "--sentence": (["probe-tokens", "--checkpoint", "c.pt", "--sentence", "Hi."], "text", "Hi."),
    "probe-tokens --out": (["probe-tokens", "--checkpoint", "c.pt", "--out", "t.csv"], "csv", Path("t.csv")),
    "--texts": (["measure-transfer", *MINIMAL["measure-transfer"], "--texts", "t.txt"], "text_file", Path("t.txt")),
    "prepare ROOT": (["prepare", "corpus"], "corpus", Path("corpus")),
    "make-demo-corpus OUT_DIR": (["make-demo-corpus", "corpus"], "out", Path("corpus")),
    "plot-style REFERENCE...": (
        ["plot-style", "--checkpoint", "c.pt", "a.wav", "b.wav", "--out", "x.png"],
        "references",
        [Path("a.wav"), Path("b.wav")],
    ),
}


def parse(argv: list[str]):
    return build_parser().parse_args(argv)


def test_every_command_is_listed_in_workflow_order_and_parses():
    assert (
        list(COMMANDS)[:5] == ["demo", "make-demo-corpus", "prepare", "phonemize", "info"]
        and list(COMMANDS)[-1] == "serve"
    )
    assert set(MINIMAL) == set(COMMANDS)
    for command, argv in MINIMAL.items():
        assert parse([command, *argv]).command == command


@pytest.mark.parametrize("old", sorted(OLD_SPELLINGS))
def test_an_old_spelling_works_and_says_once_that_it_is_deprecated(old, capsys):
    argv, attribute, value = OLD_SPELLINGS[old]
    assert getattr(parse(argv), attribute) == value
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and " is deprecated; use '" in err, err
    if old in RENAMED_COMMANDS:
        assert err == f"gst-tts: '{old}' is deprecated; use '{RENAMED_COMMANDS[old]}'\n"


def test_old_names_are_hidden_from_help(capsys):
    with pytest.raises(SystemExit):
        parse(["--help"])
    out = capsys.readouterr().out
    assert "check-alignment" in out and "measure-transfer" in out
    assert "evaluate" not in out and "style-transfer" not in out
    for command, hidden in (("vocode", "--wav"), ("probe-tokens", "--sentence"), ("measure-transfer", "--texts")):
        with pytest.raises(SystemExit):
            parse([command, "--help"])
        assert hidden not in capsys.readouterr().out


def test_a_positional_and_its_new_flag_together_are_refused(capsys):
    with pytest.raises(SystemExit) as exit:
        parse(["prepare", "a", "--corpus", "b"])
    assert exit.value.code == 2 and "give --corpus only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse(["prepare"])
    assert "required: --corpus" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0 and capsys.readouterr().out == f"gst-tts {version()}\n"
    assert version()[0].isdigit()


def test_text_file_dash_reads_standard_input(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("First line,\r\n\n  and the second.\n".encode())))
    args = parse(["probe-tokens", "--checkpoint", "c.pt", "--text-file", "-"])
    assert one_text(args) == "First line, and the second."


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_every_long_command_takes_no_progress(command):
    assert parse([command, *MINIMAL[command]]).no_progress is False
    assert parse([command, *MINIMAL[command], "--no-progress"]).no_progress is True


def test_seed_and_batch_size_have_one_default_everywhere():
    seeded = batched = 0
    for command, argv in MINIMAL.items():
        args = parse([command, *argv])
        if hasattr(args, "seed"):
            seeded += 1
            assert args.seed == DEFAULT_SEED == 0, command
        if hasattr(args, "batch_size"):
            batched += 1
            assert args.batch_size == DEFAULT_BATCH_SIZE == 16, command
    assert seeded >= 8 and batched >= 8  # the check saw the commands that have them


def modules_after(argv: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Runs ``python -m gst_tts.cli ARGV`` as the gst-tts command runs; returns it and the modules it had
    imported when it exited (reported by an exit hook that a sitecustomize on PYTHONPATH installs)."""
    (tmp_path / "sitecustomize.py").write_text(
        "import atexit, sys\n"
        "atexit.register(lambda: print('MODULES ' + ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "gst_tts.cli", *argv], capture_output=True, text=True, timeout=120, env=env
    )
    lines = [line for line in result.stderr.splitlines() if line.startswith("MODULES ")]
    assert len(lines) == 1, result.stderr  # the hook ran
    return result, set(lines[0].split()[1:])


COMMAND_MODULES = {f"gst_tts.cli.{module}" for module, _ in COMMANDS.values()}


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_top_level_help_imports_no_torch_and_no_command(argv, tmp_path):
    result, modules = modules_after(argv, tmp_path)
    assert result.returncode == 0 and "gst-tts" in result.stdout, result.stderr
    assert "gst_tts.cli" in modules
    assert "torch" not in modules and not modules & (COMMAND_MODULES | {"gst_tts.cli.args"})


def test_a_commands_help_imports_that_command_only(tmp_path):
    result, modules = modules_after(["synthesize", "--help"], tmp_path)
    assert result.returncode == 0 and "--text-file" in result.stdout, result.stderr
    assert modules & COMMAND_MODULES == {"gst_tts.cli.synthesize"}
