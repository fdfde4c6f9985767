"""Judge a checkpoint's alignments on corpus sentences: synthesize, grade, plot, summarise.

Each sentence is synthesized free-running with its own recording as the style reference; the
alignment health (focus, coverage, monotonicity, end reached, stop token) is averaged per split.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gst_tts.errors import GstTtsError
from gst_tts.files import write_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--corpus", type=Path, required=True, help="LJSpeech-format corpus the model was trained on")
    p.add_argument("--split", choices=("train", "val", "both"), default="both",
                   help="training sentences, held-out validation sentences (ids stored in the checkpoint), or both")
    p.add_argument("--limit", type=int, default=16, help="at most this many sentences per split (default 16)")
    p.add_argument("--out", type=Path, default=None, help="write alignment PNGs and summary.json here")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default=None)
    p.add_argument("--int8", action="store_true", help="CPU: int8 recurrent weights, as synthesize --int8")


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from gst_tts.analysis.alignment import ALIGNED_CRITERIA, mean_health
    from gst_tts.analysis.plots import plot_inspection, save_figure
    from gst_tts.data.corpus import read_corpus
    from gst_tts.inference.synthesizer import Synthesizer
    from gst_tts.training.checkpoint import load_checkpoint

    val_ids = set(load_checkpoint(args.checkpoint).get("val_ids", []))
    if args.split in ("val", "both") and not val_ids:
        raise GstTtsError(f"{args.checkpoint}: the checkpoint records no validation ids; use --split train")
    synth = Synthesizer.from_checkpoint(args.checkpoint, device=args.device, int8=args.int8)
    utterances = read_corpus(args.corpus)
    splits = {"train": [u for u in utterances if u.id not in val_ids][: args.limit],
              "val": [u for u in utterances if u.id in val_ids][: args.limit]}
    if args.split != "both":
        splits = {args.split: splits[args.split]}
    r = synth.model.reduction_factor
    hop_step = synth.audio_config.hop_length / synth.sample_rate * r
    report = {}
    for split, utts in splits.items():
        rows, healths = [], []
        for utt in tqdm(utts, desc=f"evaluate {split}", unit="utt"):
            res = synth.synthesize(utt.text, reference=utt.audio_path, seed=args.seed)
            healths.append(res.health)
            rows.append({"id": utt.id, "stop_reason": res.stop_reason, "duration_s": round(res.duration_s, 2),
                         **res.health.to_dict()})
            if args.out:
                fig = plot_inspection(res.alignment, res.mel, res.stop_probs, input_labels=res.input_labels,
                                      hop_seconds=hop_step, frames_per_step=r, title=f"{split} {utt.id}", health=res.health)
                save_figure(fig, args.out / split / f"{utt.id}.alignment.png")
        summary = mean_health(healths)
        summary["stopped_on_token_rate"] = float(np.mean([row["stop_reason"] == "stop_token" for row in rows]))
        summary["aligned_criteria"] = ALIGNED_CRITERIA
        report[split] = {"summary": summary, "utterances": rows}
        print(f"{split}: {len(rows)} sentences  focus {summary['focus']:.3f}  coverage {summary['coverage']:.3f}  "
              f"monotonic {summary['monotonic_rate']:.0%}  reached end {summary['reached_end_rate']:.0%}  "
              f"stopped on token {summary['stopped_on_token_rate']:.0%}  aligned {summary['ok_rate']:.0%}")
    print(f"aligned: {ALIGNED_CRITERIA}")
    if args.out:
        write_json(args.out / "summary.json", report)
        print(f"alignment plots and summary.json in {args.out}")
    return 0
