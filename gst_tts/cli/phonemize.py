"""Print the symbols the model reads for a text: espeak-ng phonemes (or a characters checkpoint's characters).

Examples::

    gst-tts phonemize "Hello world"
    gst-tts phonemize "Guten Tag, Welt!" --language de
    gst-tts phonemize --text "I met {ɡˈʊðrʌn} today." --checkpoint best.pt
    gst-tts phonemize --text-file lines.txt --language fr-fr
    gst-tts phonemize --list-languages

One line per text: the text given (positional or ``--text``), or each non-blank line of
``--text-file`` (``-``: standard input). Text inside ``{…}`` is taken as phonemes as written.
With ``--checkpoint`` the checkpoint's frontend, language and symbol table are used: the line is
what that model reads, and symbols it lacks are reported on standard error (an unknown phoneme in
``{…}`` is an error). Without one, nothing but espeak-ng is loaded (no torch).
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
import warnings

from gst_tts.cli.text_input import add_text_arguments, read_text_input
from gst_tts.errors import GstTtsError, TextError
from gst_tts.text.frontends import DEFAULT_LANGUAGE, PhonemeFrontend


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("positional_text", nargs="?", default=None, metavar="TEXT", help="the text (or give --text)")
    add_text_arguments(p, text_help="the text", file_help="a text per line, each printed on its own line")
    p.add_argument(
        "--language",
        default=None,
        metavar="L",
        help=f"an espeak-ng voice: en-us, en-gb, de, es, fr-fr, … (default {DEFAULT_LANGUAGE}; "
        "with --checkpoint, the checkpoint's)",
    )
    p.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        metavar="PATH",
        help="read the text as this acoustic checkpoint does (its frontend, language and symbols)",
    )
    p.add_argument("--list-languages", action="store_true", help="print espeak-ng's languages (code and name) and exit")


def run(args: argparse.Namespace) -> int:
    texts = _texts(args)
    if args.list_languages:
        if texts:
            raise GstTtsError("--list-languages takes no text")
        from gst_tts.text.phonemes import list_languages

        languages = list_languages()
        width = max(len(code) for code, _ in languages)
        for code, name in languages:
            print(f"{code:<{width}}  {name}")
        return 0
    if not texts:
        raise GstTtsError('give a text: gst-tts phonemize "TEXT" (or --text TEXT, --text-file PATH)')
    if args.checkpoint is not None:
        lines = _read_as_checkpoint(args.checkpoint, texts, args.language)
    else:
        frontend = PhonemeFrontend(args.language or DEFAULT_LANGUAGE)
        frontend.check()  # an unknown language fails before any text, not at the first one
        lines = [_nonempty(frontend.to_symbols(text), text) for text in texts]
    # Printed only once every text has passed: an error leaves no partial listing.
    for line in lines:
        print(line)
    return 0


def _texts(args: argparse.Namespace) -> list[str]:
    """The texts given: the positional one, ``--text`` or ``--text-file``'s non-blank lines."""
    given = [
        option
        for option, value in (("TEXT", args.positional_text), ("--text", args.text), ("--text-file", args.text_file))
        if value is not None
    ]
    if len(given) > 1:
        raise GstTtsError(f"give the text once: {' and '.join(given)} given")
    if args.text_file is not None:
        lines = [line.strip() for line in read_text_input(args.text_file).split("\n") if line.strip()]
        if not lines:
            raise TextError(f"--text-file {args.text_file}: no text (every line is blank)")
        return lines
    text = args.positional_text if args.positional_text is not None else args.text
    if text is None:
        return []
    if not text.strip():
        raise TextError("the text is empty")
    return [text]


def _nonempty(symbols: str, text: str) -> str:
    if not symbols.strip():
        raise TextError(f"{text[:40]!r} has nothing to read (no word and no clause punctuation)")
    return symbols


def _read_as_checkpoint(path: Path, texts: list[str], language: str | None) -> list[str]:
    """What the checkpoint's model reads for each text (its symbols, less those its table lacks, which
    are warned on standard error as synthesis warns them)."""
    from gst_tts.dependencies import require_dependencies

    require_dependencies()  # torch from here on: a broken install is one line, not a traceback
    from gst_tts.checkpoints.acoustic import checkpoint_parts, load_checkpoint
    from gst_tts.text.symbols import DroppedCharacterWarning

    table = checkpoint_parts(load_checkpoint(path), path)[0]
    if language is not None and language != table.language:
        reads = f"phonemes in {table.language}" if table.language else "characters"
        raise GstTtsError(f"--language {language}: {path} reads {reads}; leave --language out to use the checkpoint's")
    lines = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DroppedCharacterWarning)
        for text in texts:
            lines.append(table.decode(table.encode(text)))
    for warning in caught:
        if issubclass(warning.category, DroppedCharacterWarning):
            print(f"gst-tts phonemize: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn(warning.message, warning.category)
    return lines
