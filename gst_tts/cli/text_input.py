"""``--text`` / ``--text-file`` and reading them: the one part of the shared options that needs no torch,
so that a command loading no model (``phonemize``) uses it without importing torch.
:mod:`gst_tts.cli.args` re-exports these names; commands import them from there or from here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys

from gst_tts.errors import GstTtsError

__all__ = ["STDIN", "add_text_arguments", "read_text_input", "one_text"]

#: ``--text-file``'s name for standard input.
STDIN = "-"


def add_text_arguments(
    p: argparse.ArgumentParser, *, text_help: str, file_help: str, required: bool = False, default: str | None = None
) -> argparse._MutuallyExclusiveGroup:
    """``--text TEXT`` or ``--text-file PATH`` (``-``: standard input), at most one. Returns the group,
    for a hidden deprecated alias of either.

    Args:
        text_help, file_help: what the text is to this command.
        required: one of them must be given. Default False.
        default: ``--text``'s default. Default None.
    """
    g = p.add_mutually_exclusive_group(required=required)
    g.add_argument("--text", default=default, help=text_help)
    g.add_argument("--text-file", type=Path, default=None, metavar="PATH", help=f"{file_help}; - reads standard input")
    return g


def read_text_input(path: Path, option: str = "--text-file") -> str:
    """The UTF-8 text of ``path``, or of standard input when ``path`` is ``-``; line ends as ``\n``.

    Raises:
        GstTtsError: missing or unreadable (one line naming the file and the option).
    """
    if str(path) == STDIN:
        try:
            return sys.stdin.buffer.read().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise GstTtsError(
                f"{option} -: standard input is not readable as UTF-8 text ({type(exc).__name__})"
            ) from None
    if not Path(path).is_file():
        raise GstTtsError(f"{option} {path}: text file not found")
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GstTtsError(f"{option} {path}: not readable as UTF-8 text ({type(exc).__name__})") from None


def one_text(args: argparse.Namespace) -> str | None:
    """The one text of :func:`add_text_arguments`' options: ``--text``, or ``--text-file``'s non-blank
    lines joined by spaces; None when neither is given.

    Raises:
        GstTtsError: a text file that is unreadable or blank.
    """
    if args.text_file is None:
        return args.text
    text = " ".join(line.strip() for line in read_text_input(args.text_file).split("\n") if line.strip())
    if not text:
        raise GstTtsError(f"--text-file {args.text_file}: no text (every line is blank)")
    return text
