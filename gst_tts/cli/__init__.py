"""The ``gst-tts`` command: one subcommand per command module in this package.

Every user-facing error (bad corpus, bad audio, bad checkpoint, bad arguments) ends as one
line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import warnings

from gst_tts.cli.args import positive_int
from gst_tts.errors import GstTtsError
from gst_tts.runtime import configure_threads

# Subcommand name → module in gst_tts.cli providing ``add_arguments(parser)`` and ``run(args)``.
COMMANDS = {
    "prepare": ("prepare", "compute and cache log-mel features of a corpus"),
    "demo": ("demo", "run the whole demo (make demo): corpus, training, vocoders, checkpoint selection, report"),
    "make-demo-corpus": ("demo_corpus", "render the built-in many-style espeak-ng demo corpus"),
    "demo-report": ("demo_report", "synthesize held-out sentences in unseen styles; summarise alignment and style transfer"),
    "evaluate": ("evaluate", "synthesize corpus sentences and grade the alignments of a checkpoint"),
    "synthesize": ("synthesize", "speak text with a reference style, token weights or the neutral style"),
    "plot-alignment": ("plot_alignment", "plot attention, stop token and mel for a text or a saved alignment"),
    "plot-style": ("plot_style", "plot per-head style token weights of reference recordings"),
    "probe-tokens": ("probe_tokens", "measure what each style token does to pitch, rate and energy"),
    "select-checkpoint": ("select_checkpoint", "choose the checkpoint of a run whose outputs follow unseen references best"),
    "style-transfer": ("style_transfer", "measure how outputs follow unseen references' pitch, pitch range and rate"),
    "serve": ("serve", "serve a checkpoint over HTTP: a synthesis API and a web page with style controls"),
    "vocode": ("vocode", "copy synthesis: a recording's log-mel through a vocoder (Griffin-Lim or HiFi-GAN)"),
    "dump-gta-mels": ("dump_gta_mels", "write a checkpoint's teacher-forced mels of a corpus, for vocoder fine-tuning"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gst-tts", description="GST-Tacotron text-to-speech with style transfer.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        mod = importlib.import_module(f"gst_tts.cli.{module}")
        p = sub.add_parser(name, help=help_text, description=(mod.__doc__ or help_text).strip().splitlines()[0])
        mod.add_arguments(p)
        if not getattr(mod, "OWN_THREADS_OPTION", False):
            p.add_argument("--threads", type=positive_int, default=None, metavar="N",
                           help="torch CPU threads (default: every core but one, or OMP_NUM_THREADS when set)")
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    warnings.filterwarnings("ignore", message=".*weights_only.*")
    try:
        configure_threads(args.threads)
        return int(args._run(args) or 0)
    except GstTtsError as exc:
        print(f"gst-tts {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"gst-tts {args.command}: interrupted", file=sys.stderr)
        return 130


