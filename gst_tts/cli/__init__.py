"""The ``gst-tts`` command: one subcommand per command module in this package.

Every user-facing error (bad corpus, bad audio, bad checkpoint, bad arguments) ends as one
line on stderr and exit code 2, never a traceback.

The top-level parser knows the commands from :data:`COMMANDS` alone: ``gst-tts --help`` and
``--version`` import no command module and no torch (seconds on a small machine). A command's
module, and with it torch, is imported only once that command is chosen.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import logging
import sys
import warnings

from gst_tts.errors import GstTtsError

# Subcommand name → (module in gst_tts.cli providing ``add_arguments(parser)`` and ``run(args)``, one-line
# description), in the order a user meets them: make data, inspect, synthesize, analyse, choose, export, serve.
COMMANDS = {
    "demo": ("demo", "run the whole demo (make demo): corpus, training, vocoders, checkpoint selection, report"),
    "make-demo-corpus": ("demo_corpus", "render the built-in many-style espeak-ng demo corpus"),
    "prepare": ("prepare", "compute and cache log-mel features of a corpus"),
    "phonemize": ("phonemize", "print the symbols the model reads for a text: espeak-ng phonemes (or characters)"),
    "info": (
        "info",
        "print what a checkpoint holds: model, sizes, audio settings, tokens and heads, vocoders that fit",
    ),
    "synthesize": ("synthesize", "speak text with a reference style, token weights or the neutral style"),
    "vocode": ("vocode", "copy synthesis: a recording's log-mel through a vocoder (Griffin-Lim or HiFi-GAN)"),
    "plot-alignment": ("plot_alignment", "plot attention, stop token and mel for a text or a saved alignment"),
    "plot-style": ("plot_style", "plot per-head style token weights of reference recordings"),
    "probe-tokens": ("probe_tokens", "measure what each style token does to pitch, rate and energy"),
    "check-alignment": ("check_alignment", "synthesize corpus sentences and grade the alignments of a checkpoint"),
    "measure-transfer": (
        "measure_transfer",
        "measure how outputs follow unseen references' pitch, pitch range and rate",
    ),
    "measure-parallel": (
        "measure_parallel",
        "measure parallel prosody transfer on held-out utterances: MCD13-DTW, FFE, GPE, VDE, F0 RMSE",
    ),
    "measure-intelligibility": (
        "measure_intelligibility",
        "transcribe a checkpoint's speech with an ASR: CER and WER against the texts",
    ),
    "select-checkpoint": (
        "select_checkpoint",
        "choose the checkpoint of a run whose outputs follow unseen references best",
    ),
    "dump-gta-mels": ("dump_gta_mels", "write a checkpoint's teacher-forced mels of a corpus, for vocoder fine-tuning"),
    "demo-report": (
        "demo_report",
        "synthesize held-out sentences in unseen styles; summarise alignment and style transfer",
    ),
    "export": ("export", "export a checkpoint to ONNX for the torch-free runtime (gst_tts.runtime)"),
    "serve": ("serve", "serve a checkpoint over HTTP: a synthesis API and a web page with style controls"),
}

#: Commands whose module imports no torch (nor gst_tts.cli.args): no environment check and no --threads.
TORCH_FREE_COMMANDS = frozenset({"phonemize"})

#: Old command name → its new name. The old ones still work, hidden from --help, with one deprecation line.
RENAMED_COMMANDS = {"evaluate": "check-alignment", "style-transfer": "measure-transfer"}


def version() -> str:
    """The installed distribution's version (``gst_tts.__version__`` in a source tree)."""
    try:
        return importlib.metadata.version("gst-tts")
    except importlib.metadata.PackageNotFoundError:
        import gst_tts

        return gst_tts.__version__


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        # Actions that settle after the whole line is read (a deprecated positional and its new flag).
        for action in self._actions:
            settle = getattr(action, "settle", None)
            if settle is not None:
                settle(namespace, self)
        return namespace, extras


class _VersionAction(argparse.Action):
    """``--version``: the version looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"gst-tts {version()}")  # on stdout, as --help is
        parser.exit(0)


class _TopParser(_Parser):
    """The ``gst-tts`` parser: renames an old command name (one deprecation line), then builds only
    the chosen command's arguments before parsing."""

    subparsers: argparse._SubParsersAction

    def parse_known_args(self, args=None, namespace=None):
        argv = list(sys.argv[1:] if args is None else args)
        at = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)  # top-level options take no value
        if at is not None:
            if argv[at] in RENAMED_COMMANDS:
                new = RENAMED_COMMANDS[argv[at]]
                print(f"gst-tts: '{argv[at]}' is deprecated; use '{new}'", file=sys.stderr)
                argv[at] = new
            if argv[at] in COMMANDS:
                load_command(self, argv[at])
        return super().parse_known_args(argv, namespace)


def build_parser() -> argparse.ArgumentParser:
    """The ``gst-tts`` parser. Cheap: a command's arguments are added (and its module imported) when a
    parse names it, or by :func:`load_command`."""
    parser = _TopParser(prog="gst-tts", description="GST-Tacotron text-to-speech with style transfer.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text)
    parser.subparsers = sub
    return parser


def load_command(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """Adds command ``name``'s arguments to ``parser`` (a :func:`build_parser` parser), once, and returns
    its subparser. Imports the command's module, and so torch: the environment is checked first
    (except for :data:`TORCH_FREE_COMMANDS`, which check it themselves if they come to need torch)."""
    from gst_tts.dependencies import require_dependencies

    sub = parser.subparsers.choices[name]
    if getattr(sub, "_loaded", False):
        return sub
    if name not in TORCH_FREE_COMMANDS:
        require_dependencies()
    mod = importlib.import_module(f"gst_tts.cli.{COMMANDS[name][0]}")
    sub.description = (mod.__doc__ or COMMANDS[name][1]).strip().splitlines()[0]
    mod.add_arguments(sub)
    if name not in TORCH_FREE_COMMANDS and not getattr(mod, "OWN_THREADS_OPTION", False):
        from gst_tts.cli.args import positive_int

        sub.add_argument(
            "--threads",
            type=positive_int,
            default=None,
            metavar="N",
            help="torch CPU threads (default: every core but one, or OMP_NUM_THREADS when set)",
        )
    sub.set_defaults(_run=mod.run)
    sub._loaded = True
    return sub


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    warnings.filterwarnings("ignore", message=".*weights_only.*")
    try:
        if args.command not in TORCH_FREE_COMMANDS:
            from gst_tts.compute import configure_threads

            configure_threads(args.threads)
        return int(args._run(args) or 0)
    except GstTtsError as exc:
        print(f"gst-tts {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"gst-tts {args.command}: interrupted", file=sys.stderr)
        return 130
