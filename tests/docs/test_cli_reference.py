"""docs/cli.md is what docs/make_cli_reference.py writes from the argparse definitions today."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("make_cli_reference", ROOT / "docs" / "make_cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_up_to_date():
    stored = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert stored == _generator().reference(), "docs/cli.md is stale: regenerate it with `make docs`"


def test_cli_reference_has_every_command_and_no_hidden_spelling():
    from gst_tts.cli import COMMANDS, RENAMED_COMMANDS

    text = _generator().reference()
    assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == list(COMMANDS)
    for hidden in [*RENAMED_COMMANDS, "--wav", "--sentence", "--texts", "_deprecated_"]:
        assert not re.search(rf"(?<![\w-]){re.escape(hidden)}(?![\w-])", text), hidden
    assert "| `--seed N` | seed of the prenet dropout (default 0) |" in text  # a flag, its meaning and its default
