"""Render the built-in many-style demo corpus (LJSpeech format) with espeak-ng."""

from __future__ import annotations

import argparse
from pathlib import Path
import time

from gst_tts.cli.args import add_progress_argument, add_seed_argument, deprecated_positional


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=None, metavar="FOLDER", help="folder to create, reused if it holds the same corpus (required)")
    deprecated_positional(p, new="--out", new_dest="out", metavar="OUT_DIR", type=Path)
    p.add_argument("--utterances", type=int, default=2400, help="number of sentences (default 2400)")
    add_seed_argument(p, "the sentences and of every utterance's style")
    add_progress_argument(p)


def run(args: argparse.Namespace) -> int:
    from gst_tts.demo.corpus import CORPUS_VARIANTS, F0_RANGE_HZ, RATE_RANGE_WPM, make_demo_corpus

    start = time.monotonic()
    out = make_demo_corpus(args.out, utterances=args.utterances, seed=args.seed, progress=not args.no_progress)
    print(f"demo corpus: {out} ({args.utterances} utterances, each its own style: F0 {F0_RANGE_HZ[0]:g}-{F0_RANGE_HZ[1]:g} Hz, "
          f"rate {RATE_RANGE_WPM[0]:g}-{RATE_RANGE_WPM[1]:g} wpm, {len(CORPUS_VARIANTS)} voice variants; "
          f"{time.monotonic() - start:.1f} s)")
    return 0
