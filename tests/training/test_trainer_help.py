"""The trainers' ``--help`` lists only each trainer's own config groups, and every key of every
config file under conf/ carries a comment free of dated run notes."""

from __future__ import annotations

from pathlib import Path
import re
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf"
BIN = Path(sys.executable).parent

# Each trainer's own groups; the override proves that a group choice still composes under the help
# template, and the marker is a value only that choice puts in the printed config.
TRAINERS = {
    "gst-tts-train": ({"data", "loss", "model", "trainer"}, "model=tiny", "decoder_rnn_dim: 256"),
    "gst-tts-train-vocoder": ({"vocoder"}, "vocoder=cpu_small", "generator_kind: spectral"),
}

# A YAML key at any depth, also as a list item (``- model: tiny``).
KEY = re.compile(r"^(?P<indent>\s*)(?:-\s+)?[A-Za-z_][\w.]*\s*:(?:\s|$)")
# A value that opens a block scalar (``header: |``): the lines indented below it are text, not keys.
BLOCK_SCALAR = re.compile(r":\s*[|>][-+]?\s*(?:#.*)?$")
# Dated run notes and internal labels that belong in docs/results/, not in a config's comments.
FORBIDDEN = re.compile(r"\b20\d\d-\d\d|ablation|format \d|measured", re.IGNORECASE)


def _help(command: str, override: str) -> str:
    result = subprocess.run(
        [str(BIN / command), "--help", override], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _listed_groups(help_text: str) -> dict[str, list[str]]:
    """``{group: options}`` from the lines between ``== Configuration groups ==`` and ``== Config ==``,
    after the section's one line of instructions."""
    section = help_text.split("== Configuration groups ==", 1)[1].split("== Config ==", 1)[0]
    lines = [line for line in section.splitlines() if line.strip()][1:]
    return {group: options.split(", ") for group, options in (line.split(": ", 1) for line in lines)}


@pytest.mark.parametrize("command", list(TRAINERS))
def test_help_lists_only_the_trainers_own_groups(command):
    own, override, marker = TRAINERS[command]
    text = _help(command, override)
    groups = _listed_groups(text)
    assert set(groups) == own
    for group, options in groups.items():
        assert options == sorted(path.stem for path in (CONF / group).glob("*.yaml"))
    first, second = text.splitlines()[:2]
    assert first.startswith(f"{command}: trains ")
    assert second.startswith(f"Example: {command} ")
    assert marker in text.split("== Config ==", 1)[1]


def uncommented_keys(text: str) -> list[int]:
    """Line numbers (from 1) of the keys in YAML ``text`` with neither an inline comment nor a
    comment line right above them."""
    missing, previous, block_indent = [], "", None
    for number, line in enumerate(text.splitlines(), start=1):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                continue
            block_indent = None
        match = KEY.match(line)
        if match and " #" not in line and not previous.lstrip().startswith("#"):
            missing.append(number)
        if match and BLOCK_SCALAR.search(line):
            block_indent = len(match.group("indent"))
        previous = line
    return missing


def comments(text: str) -> list[str]:
    """The comment text of each line of YAML ``text`` (line comments and inline ones)."""
    return [line.split("#", 1)[1] for line in text.splitlines() if line.lstrip().startswith("#") or " #" in line]


def test_the_comment_check_sees_a_bare_key_and_skips_block_text():
    text = (
        "# header\nroot: null\n\nbare: 1\nnested:  # why\n  inner: 2\n"
        "help: |  # text\n  looks_like_a_key: but is text\nafter: 3  # why\n"
    )
    assert uncommented_keys(text) == [4, 6]


@pytest.mark.parametrize("path", sorted(CONF.rglob("*.yaml")), ids=lambda p: str(p.relative_to(CONF)))
def test_every_config_key_has_a_comment_without_run_notes(path):
    text = path.read_text(encoding="utf-8")
    assert uncommented_keys(text) == []
    assert [c for c in comments(text) if FORBIDDEN.search(c)] == []
