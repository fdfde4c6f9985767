"""Run the whole demo: corpus, features, acoustic model, vocoders, checkpoint selection and report.

Example (what ``make demo`` runs)::

    gst-tts demo --out demo_out --steps 3500

Every stage is budgeted in steps (or utterances, candidates, syntheses), never in minutes, so every
machine trains the same model and prints the same figures; a slower machine only takes longer.
The plan and its time estimate come first; then each stage runs as its own command, shown before
it starts. Running it again skips what is done and resumes what was interrupted; more ``--steps``
train the model on from where it stopped (``gst_tts.demo.pipeline`` has the rules).
"""

from __future__ import annotations

import argparse
from pathlib import Path
import shlex

from gst_tts.cli.args import add_progress_argument, positive_int
from gst_tts.demo.pipeline import DemoBudget, run_demo

_DEFAULTS = DemoBudget()
#: Its own --threads: a default of its own, and every stage runs with it (see gst_tts.cli).
OWN_THREADS_OPTION = True


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path("demo_out"), help="the demo's folder (default demo_out)")
    p.add_argument(
        "--steps",
        type=positive_int,
        default=_DEFAULTS.steps,
        help=f"acoustic model training steps (default {_DEFAULTS.steps})",
    )
    p.add_argument(
        "--vocoder-steps",
        type=positive_int,
        default=_DEFAULTS.vocoder_steps,
        help=f"steps of the vocoder of the recordings (default {_DEFAULTS.vocoder_steps})",
    )
    p.add_argument(
        "--vocoder-gta-steps",
        type=positive_int,
        default=_DEFAULTS.vocoder_gta_steps,
        help=f"steps of its fine-tuning on the model's GTA mels (default {_DEFAULTS.vocoder_gta_steps})",
    )
    p.add_argument(
        "--utterances",
        type=positive_int,
        default=_DEFAULTS.utterances,
        help=f"demo corpus size (default {_DEFAULTS.utterances})",
    )
    p.add_argument(
        "--threads",
        type=positive_int,
        default=_DEFAULTS.threads,
        metavar="N",
        help=f"torch CPU threads of every stage, part of what makes the weights (default {_DEFAULTS.threads}; "
        "the same count gives the same model on every machine)",
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="cap on the acoustic model's training time (default none); running the demo again trains on",
    )
    p.add_argument(
        "--train-args",
        default="",
        metavar="OVERRIDES",
        help="extra Hydra overrides for the acoustic model, e.g. 'loss.mel_loss=mse'",
    )
    add_progress_argument(p)  # passed on to every stage


def run(args: argparse.Namespace) -> int:
    budget = DemoBudget(
        steps=args.steps,
        vocoder_steps=args.vocoder_steps,
        vocoder_gta_steps=args.vocoder_gta_steps,
        utterances=args.utterances,
        threads=args.threads,
        minutes=args.minutes,
        train_args=tuple(shlex.split(args.train_args)),
    )
    return run_demo(args.out, budget, progress=not args.no_progress)
