"""Render the built-in many-style demo corpus (LJSpeech format) with espeak-ng."""

from __future__ import annotations

import argparse
from pathlib import Path
import time

from gst_tts.cli.args import add_progress_argument, add_seed_argument, deprecated_positional
from gst_tts.errors import GstTtsError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="folder to create, reused if it holds the same corpus (required)",
    )
    deprecated_positional(p, new="--out", new_dest="out", metavar="OUT_DIR", type=Path)
    p.add_argument("--utterances", type=int, default=2400, help="number of sentences (default 2400)")
    p.add_argument(
        "--variants",
        default=None,
        metavar="NAME,...",
        help="espeak-ng voice variants (timbres) drawn per utterance (default: the demo's one, m3; "
        "'vetted': the 34 that render the same in every process)",
    )
    p.add_argument(
        "--formant-scale",
        default=None,
        metavar="LOW,HIGH",
        help="range of the random factor on every formant frequency (default 1,1: as bundled; "
        "0.92,1.08: a continuum of timbres around each variant)",
    )
    p.add_argument(
        "--text-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="read the first UTTERANCES lines of this UTF-8 file (one sentence a line, numbers in words) "
        "instead of the template generator's sentences",
    )
    p.add_argument(
        "--read-share",
        type=float,
        default=None,
        metavar="F",
        help="share of the generated sentences taken from the bundled LJ Speech transcripts (public domain) "
        "rather than the templates, 0-1 (default 0.5: the demo's; 0: templates only); not with --text-file",
    )
    add_seed_argument(p, "the sentences and of every utterance's style")
    add_progress_argument(p)


def _formant_range(text: str) -> tuple[float, float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 2:
        raise GstTtsError(f"--formant-scale: expected LOW,HIGH (e.g. 0.92,1.08 or 1,1), got {text!r}")
    return values[0], values[1]


def run(args: argparse.Namespace) -> int:
    from gst_tts.demo.corpus import (
        CORPUS_FORMANT_SCALE_RANGE,
        CORPUS_VARIANTS,
        F0_RANGE_HZ,
        RATE_RANGE_WPM,
        VETTED_VARIANTS,
        make_demo_corpus,
    )

    from gst_tts.demo.sentences import READ_SHARE

    if args.read_share is not None and args.text_file is not None:
        raise GstTtsError("--read-share: the sentences of a --text-file are read as they are; give one or the other")
    start = time.monotonic()
    if args.variants is None:
        variants = list(CORPUS_VARIANTS)
    elif args.variants.strip() == "vetted":
        variants = list(VETTED_VARIANTS)
    else:
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    formants = CORPUS_FORMANT_SCALE_RANGE if args.formant_scale is None else _formant_range(args.formant_scale)
    out = make_demo_corpus(
        args.out,
        utterances=args.utterances,
        seed=args.seed,
        progress=not args.no_progress,
        variants=variants,
        formant_scale_range=formants,
        texts=args.text_file,
        read_share=READ_SHARE if args.read_share is None else args.read_share,
    )
    print(
        f"demo corpus: {out} ({args.utterances} utterances, each its own style: F0 "
        f"{F0_RANGE_HZ[0]:g}-{F0_RANGE_HZ[1]:g} Hz, "
        f"rate {RATE_RANGE_WPM[0]:g}-{RATE_RANGE_WPM[1]:g} wpm, {len(variants)} voice "
        f"variant{'s' if len(variants) != 1 else ''}; "
        f"{time.monotonic() - start:.1f} s)"
    )
    return 0
