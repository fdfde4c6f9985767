"""The user documentation (README.md, docs/, the recipes' READMEs) against the code it describes.

Every fenced ``gst-tts …`` line names a command and flags that the CLI's own ``--help`` shows,
every trainer override names a config group option that exists, every relative link leads to a
file, the README's Python example runs, and no page names the project's private ``shared/`` data.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
import soundfile
import yaml

from conftest import seconds_for_steps, write_tiny_checkpoint

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CONF = REPO / "conf"
# The pages a user reads; docs/results/ records how runs were made and may name where their data was.
USER_PAGES = [README, *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "recipes").glob("*/README.md"))]
DOC_PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
LINKED_PAGES = [README, *sorted((REPO / "docs").rglob("*.md"))]
MAX_README_LINES = 320
TRAINERS = {"gst-tts-train": "config.yaml", "gst-tts-train-vocoder": "vocoder_train.yaml"}
TRAINER_MODULES = {"gst_tts.training.train": "gst-tts-train", "gst_tts.training.train_vocoder": "gst-tts-train-vocoder"}


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def _fenced_blocks(path: Path) -> list[tuple[str, int, list[str]]]:
    """``(language, first line number, lines)`` of every fenced code block of a markdown page."""
    blocks, current, language, start = [], None, "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            if current is None:
                current, language, start = [], stripped[3:].strip(), number + 1
            else:
                blocks.append((language, start, current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def _command_lines(path: Path) -> list[tuple[str, list[str]]]:
    """Every shell command in a page's fenced blocks, continuation lines joined, as
    ``("file:line", argv)`` with argv split as the shell would and comments dropped."""
    commands = []
    for _, start, lines in _fenced_blocks(path):
        pending, pending_at = "", 0
        for offset, line in enumerate(lines):
            if not pending:
                pending_at = start + offset
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            text, pending = (pending + line).strip(), ""
            try:
                argv = shlex.split(text, comments=True)
            except ValueError:  # not shell (a table, JSON): no command to check
                continue
            if argv:
                argv[0] = argv[0].removeprefix(".venv/bin/")
                commands.append((f"{_rel(path)}:{pending_at}", argv))
    return commands


def _gst_tts_commands() -> list[tuple[str, list[str]]]:
    return [(where, argv) for page in DOC_PAGES for where, argv in _command_lines(page) if argv[0] == "gst-tts"]


def _trainer_commands() -> list[tuple[str, str, list[str]]]:
    """``(where, trainer, overrides)`` of every documented trainer call, torchrun's ``-m`` included."""
    found = []
    for page in DOC_PAGES:
        for where, argv in _command_lines(page):
            if argv[0] in TRAINERS:
                found.append((where, argv[0], argv[1:]))
            elif argv[0] == "torchrun" and "-m" in argv:
                module = argv[argv.index("-m") + 1]
                found.append((where, TRAINER_MODULES[module], argv[argv.index("-m") + 2 :]))
    return found


@functools.cache
def _help(*args: str) -> tuple[int, str]:
    """Exit code and text of ``gst-tts ARGS --help``, run in-process."""
    from gst_tts.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([*args, "--help"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code or 0, out.getvalue() + err.getvalue()


def _shows_flag(help_text: str, flag: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", help_text) is not None


def _split_command(argv: list[str]) -> tuple[list[str], str | None, list[str]]:
    """``gst-tts [global flags] COMMAND ARGS`` → (global flags, command or None, ARGS)."""
    for index, token in enumerate(argv[1:], 1):
        if not token.startswith("-"):
            return argv[1:index], token, argv[index + 1 :]
    return argv[1:], None, []


def _flags(tokens: list[str]) -> list[str]:
    return [token.split("=", 1)[0] for token in tokens if re.fullmatch(r"--[a-z][a-z0-9-]*(=.*)?", token)]


# ---------------------------------------------------------------------------------------- pages


@pytest.mark.parametrize("page", USER_PAGES, ids=_rel)
def test_user_pages_name_no_private_shared_path(page):
    hits = [
        f"{_rel(page)}:{n}: {line.strip()}"
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"shared/", line)
    ]
    assert not hits, "a path under shared/ is the project's own data, not a user's:\n" + "\n".join(hits)


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines (at most {MAX_README_LINES})"


@pytest.mark.parametrize("page", LINKED_PAGES, ids=_rel)
def test_relative_links_resolve(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # code is not a link
    broken = []
    for target in re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor on the same page
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.is_file():
            broken.append(target)
    assert not broken, f"{_rel(page)} links to files that do not exist: {broken}"


# ------------------------------------------------------------------------------------- commands


def test_the_documented_command_lines_are_found():
    # The checks below pass trivially on nothing: the pages must hold the commands they teach.
    commands = {_split_command(argv)[1] for _, argv in _gst_tts_commands()}
    assert {"synthesize", "serve", "info", "check-alignment", "measure-transfer"} <= commands
    assert {trainer for _, trainer, _ in _trainer_commands()} == set(TRAINERS)


@pytest.mark.parametrize(("where", "argv"), _gst_tts_commands(), ids=[w for w, _ in _gst_tts_commands()])
def test_documented_gst_tts_line_names_a_command_and_flags_it_has(where, argv):
    global_flags, command, rest = _split_command(argv)
    code, top_help = _help()
    assert code == 0, top_help
    for flag in _flags(global_flags):
        assert _shows_flag(top_help, flag), f"{where}: gst-tts has no option {flag}"
    if command is None:
        return
    code, help_text = _help(command)
    assert code == 0 and "usage:" in help_text, f"{where}: gst-tts has no command {command!r}:\n{help_text}"
    assert _shows_flag(top_help, command), f"{where}: {command!r} is not listed in gst-tts --help (a hidden alias?)"
    unknown = [flag for flag in _flags(rest) if not _shows_flag(help_text, flag)]
    assert not unknown, f"{where}: gst-tts {command} --help shows no {', '.join(unknown)}"


def _config_keys(primary: str) -> set[str]:
    return set(yaml.safe_load((CONF / primary).read_text(encoding="utf-8")) or {})


@pytest.mark.parametrize(
    ("where", "trainer", "overrides"), _trainer_commands(), ids=[w for w, _, _ in _trainer_commands()]
)
def test_documented_trainer_overrides_name_existing_groups_and_keys(where, trainer, overrides):
    if "--config-dir" in overrides or any(o.startswith("hydra.searchpath") for o in overrides):
        pytest.skip("the user's own config folder defines its own groups")
    known = _config_keys(TRAINERS[trainer]) | {"hydra"}
    for override in overrides:
        if override.startswith("-") or "=" not in override:
            continue
        key, value = override.lstrip("+~").split("=", 1)
        group = key.split(".", 1)[0]
        if "." not in key and (CONF / key).is_dir():
            assert (CONF / key / f"{value}.yaml").is_file(), f"{where}: no config conf/{key}/{value}.yaml"
        else:
            assert group in known or (CONF / group).is_dir(), f"{where}: {trainer} has no config key {group!r}"


# --------------------------------------------------------------------------------------- python


def test_readme_python_example_runs(tmp_path, monkeypatch):
    (code,) = [lines for language, _, lines in _fenced_blocks(README) if language == "python"]
    source = "\n".join(code)
    assert "demo_out/checkpoints/best.pt" in source and "ref.wav" in source
    checkpoint = write_tiny_checkpoint(tmp_path / "tiny.pt")
    rng = np.random.default_rng(0)
    soundfile.write(tmp_path / "ref.wav", (0.1 * rng.standard_normal(16000)).astype(np.float32), 16000)
    monkeypatch.chdir(tmp_path)
    # An untrained model never stops on its own: bound its decoding so the example runs in seconds.
    from gst_tts import DecodingConfig, Synthesizer

    synthesize = Synthesizer.synthesize
    monkeypatch.setattr(
        Synthesizer,
        "synthesize",
        lambda self, texts, **kwargs: synthesize(
            self, texts, **{"decoding": DecodingConfig(max_seconds=seconds_for_steps(8)), **kwargs}
        ),
    )
    namespace: dict = {}
    exec(compile(source.replace("demo_out/checkpoints/best.pt", str(checkpoint)), "README.md", "exec"), namespace)
    audio, rate = soundfile.read(tmp_path / "out.wav")
    assert rate == namespace["result"].sample_rate and len(audio) == len(namespace["result"].audio) > 0
    assert namespace["result"].style_weights is not None  # the reference was encoded
    synth = namespace["synth"]
    assert namespace["dialled"].style_weights.shape == (synth.n_heads, synth.n_tokens)
    assert not np.allclose(namespace["dialled"].style_weights, 1 / synth.n_tokens)  # the dial moved off neutral
