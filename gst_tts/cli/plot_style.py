"""Plot per-head style token weights of reference recordings as a heatmap.

Example::

    gst-tts plot-style --checkpoint last.pt --references calm.wav angry.wav more_refs/ --out styles.png --csv styles.csv

Each reference gets one row per attention head and one column per token; rows that look alike
mean the model hears the references as the same style.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gst_tts.analysis.plots import plot_style_weights, save_figure
from gst_tts.cli.args import (
    add_model_arguments,
    add_progress_argument,
    deprecated_positional,
    load_synthesizer,
    reference_files,
)
from gst_tts.cli.outputs import check_writable_location, write_csv


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    p.add_argument(
        "--references",
        type=Path,
        nargs="+",
        action="extend",
        default=[],
        metavar="PATH",
        help="reference recordings (any rate, stereo ok), or folders of them (their .wav / .flac files) (required)",
    )
    deprecated_positional(p, new="--references", new_dest="references", metavar="REFERENCE", nargs="*", type=Path)
    p.add_argument("--out", type=Path, required=True, help="image file (.png, .pdf, .svg)")
    p.add_argument("--csv", type=Path, default=None, help="also write the weights as CSV (reference, head, token_0, …)")
    add_progress_argument(p)  # accepted like every long command's; reading references shows no bar


def _labels(paths: list[Path]) -> list[str]:
    """File stems, or the paths themselves where stems repeat."""
    stems = [p.stem for p in paths]
    return [s if stems.count(s) == 1 else str(p) for s, p in zip(stems, paths)]


def run(args: argparse.Namespace) -> int:
    check_writable_location(args.out, "--out")
    if args.csv is not None:
        check_writable_location(args.csv, "--csv")
    references = reference_files(args.references)
    synth = load_synthesizer(args)
    # Every reference is checked before anything is written.
    weights = np.stack([synth.styles.reference_weights(ref).numpy() for ref in references])  # (refs, heads, tokens)
    labels = _labels(references)
    rows = [
        [label, h, *np.round(weights[i, h].astype(float), 6).tolist()]
        for i, label in enumerate(labels)
        for h in range(weights.shape[1])
    ]
    header = ["reference", "head", *[f"token_{k}" for k in range(weights.shape[2])]]
    if args.csv is not None:
        write_csv(args.csv, header, rows)
    save_figure(plot_style_weights(weights, labels, title=f"style token weights · {args.checkpoint.name}"), args.out)

    width = max(len("reference"), *(len(label) for label in labels))
    print(f"{'reference':<{width}}  head  " + " ".join(f"{k:>6d}" for k in range(weights.shape[2])))
    for label, h, *ws in rows:
        print(f"{label:<{width}}  {h:>4d}  " + " ".join(f"{w:6.3f}" for w in ws))
    print(f"wrote {args.out}" + (f" and {args.csv}" if args.csv is not None else ""))
    return 0
