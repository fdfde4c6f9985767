"""The CLI package's shape: thin command modules that share only gst_tts.cli.args / outputs, and
one decoding option group whose defaults are DecodingConfig's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gst_tts.cli
from gst_tts.cli import COMMANDS, build_parser
from gst_tts.cli.args import decoding_options
from gst_tts.errors import GstTtsError
from gst_tts.inference.decoding import UNSPLIT_MAX_SECONDS, DecodingConfig

CLI_DIR = Path(gst_tts.cli.__file__).parent
COMMAND_MODULES = {module for module, _ in COMMANDS.values()}


def imported_cli_modules(path: Path) -> set[str]:
    """Names ``X`` of every ``gst_tts.cli.X`` that ``path`` imports (absolute or relative, at any depth)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative to gst_tts.cli
                base = "gst_tts.cli" + (f".{base}" if base else "")
            modules = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in modules:
            parts = name.split(".")
            if parts[:2] == ["gst_tts", "cli"] and len(parts) > 2:
                found.add(parts[2])
    return found


def test_every_command_module_exists():
    assert COMMAND_MODULES <= {p.stem for p in CLI_DIR.glob("*.py")}


def test_the_scanner_sees_imports_of_every_form(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import gst_tts.cli.synthesize\nfrom gst_tts.cli import evaluate\nfrom . import probe_tokens\n"
        "from .plot_style import run\ndef f():\n    from gst_tts.cli.args import load_synthesizer\n"
    )
    assert imported_cli_modules(sample) == {"synthesize", "evaluate", "probe_tokens", "plot_style", "args"}


@pytest.mark.parametrize("path", sorted(CLI_DIR.glob("*.py")), ids=lambda p: p.name)
def test_no_cli_module_imports_a_command_module(path):
    assert not imported_cli_modules(path) & COMMAND_MODULES, (
        f"{path.name} imports another command; move the shared part to args.py or outputs.py"
    )


MINIMAL_ARGS = {
    "synthesize": ["--checkpoint", "c.pt", "--text", "Hi.", "--out", "x.wav"],
    "plot-alignment": ["--out", "x.png"],
    "probe-tokens": ["--checkpoint", "c.pt"],
    "check-alignment": ["--checkpoint", "c.pt", "--corpus", "corpus"],
    "demo-report": ["--checkpoint", "c.pt", "--corpus", "corpus", "--out", "out"],
    "serve": ["--checkpoint", "c.pt"],
    "measure-transfer": ["--checkpoint", "c.pt", "--out", "out"],
    "select-checkpoint": ["--checkpoints", "c.pt", "--out", "best.pt"],
}


@pytest.mark.parametrize("command", sorted(MINIMAL_ARGS))
def test_every_decoding_command_defaults_to_decoding_config(command):
    args = build_parser().parse_args([command, *MINIMAL_ARGS[command]])
    assert decoding_options(args)["decoding"] == DecodingConfig()
    args = build_parser().parse_args(
        [
            command,
            *MINIMAL_ARGS[command],
            "--stop-threshold",
            "0.7",
            "--max-seconds",
            "9",
            "--max-frames-per-symbol",
            "3",
        ]
    )
    assert decoding_options(args)["decoding"] == DecodingConfig(
        stop_threshold=0.7, max_frames_per_symbol=3.0, max_seconds=9.0
    )
    args = build_parser().parse_args([command, *MINIMAL_ARGS[command], "--no-split"])
    assert decoding_options(args)["decoding"] == DecodingConfig(max_seconds=UNSPLIT_MAX_SECONDS)


@pytest.mark.parametrize("command", sorted(MINIMAL_ARGS))
@pytest.mark.parametrize("spelling", [["--max-decoder-steps", "9"], ["--max-decoder-steps=9"], ["--max-decoder-steps"]])
def test_the_old_step_bound_option_is_one_line_naming_max_seconds(command, spelling, capsys):
    # The bound is in seconds of audio now: a step count would mean another length at each r.
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([command, *MINIMAL_ARGS[command], *spelling])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"gst-tts {command}: error: --max-decoder-steps is gone; use --max-seconds"), err


@pytest.mark.parametrize("value, window", [("none", None), ("1,3", (1, 3)), (" 0 , 2 ", (0, 2))])
def test_attention_window_option(value, window):
    args = build_parser().parse_args(
        ["measure-transfer", *MINIMAL_ARGS["measure-transfer"], "--attention-window", value]
    )
    assert decoding_options(args)["decoding"].attention_window == window


@pytest.mark.parametrize(
    "value, message",
    [
        ("3", "--attention-window must be BEHIND,AHEAD (two whole numbers) or none, got '3'"),
        ("a,b", "--attention-window must be BEHIND,AHEAD (two whole numbers) or none, got 'a,b'"),
        ("1,-2", "--attention-window must be None or (behind, ahead), two whole numbers >= 0, got (1, -2)"),
    ],
)
def test_bad_attention_window_is_a_one_line_error(value, message):
    args = build_parser().parse_args(
        ["measure-transfer", *MINIMAL_ARGS["measure-transfer"], "--attention-window", value]
    )
    with pytest.raises(GstTtsError) as info:
        decoding_options(args)
    assert str(info.value) == message


@pytest.mark.parametrize("value, tolerance", [("none", None), ("0", 0), (" 5 ", 5)])
def test_stop_end_tolerance_option(value, tolerance):
    args = build_parser().parse_args(
        ["measure-transfer", *MINIMAL_ARGS["measure-transfer"], "--stop-end-tolerance", value]
    )
    assert decoding_options(args)["decoding"].stop_end_tolerance == tolerance


@pytest.mark.parametrize(
    "value, message",
    [
        ("x", "--stop-end-tolerance must be a whole number or none, got 'x'"),
        ("-1", "--stop-end-tolerance must be None or a whole number >= 0, got -1"),
    ],
)
def test_bad_stop_end_tolerance_is_a_one_line_error(value, message):
    args = build_parser().parse_args(
        ["measure-transfer", *MINIMAL_ARGS["measure-transfer"], "--stop-end-tolerance", value]
    )
    with pytest.raises(GstTtsError) as info:
        decoding_options(args)
    assert str(info.value) == message


def test_decoding_help_shows_the_config_defaults(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["synthesize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    d = DecodingConfig()
    assert f"(default {d.stop_threshold:g})" in text
    assert f"(default {d.max_seconds:g}; {UNSPLIT_MAX_SECONDS:g} with --no-split" in text
    assert "--max-decoder-steps" not in text
    assert f"(default {d.max_frames_per_symbol:g})" in text


@pytest.mark.parametrize("command", sorted(MINIMAL_ARGS))
def test_every_command_takes_threads(command):
    assert build_parser().parse_args([command, *MINIMAL_ARGS[command], "--threads", "3"]).threads == 3


def test_threads_are_set_before_the_command_runs_and_a_bad_count_is_one_line(monkeypatch, capsys):
    import torch

    from gst_tts.cli import main

    seen = []
    monkeypatch.setattr("gst_tts.cli.vocode.run", lambda args: seen.append(torch.get_num_threads()) or 0)
    before = torch.get_num_threads()
    try:
        assert main(["vocode", "--reference", "x.wav", "--out", "y.wav", "--threads", "1"]) == 0 and seen == [1]
    finally:
        torch.set_num_threads(before)
    with pytest.raises(SystemExit) as exit:
        main(["vocode", "--reference", "x.wav", "--out", "y.wav", "--threads", "0"])
    err = capsys.readouterr().err
    assert (
        exit.value.code == 2
        and "--threads: must be a whole number >= 1, got '0'" in err
        and len(err.strip().splitlines()) == 1
    )
