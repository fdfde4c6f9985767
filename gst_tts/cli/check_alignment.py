"""Judge a checkpoint's alignments on corpus sentences: synthesize, grade, plot, summarise.

Example::

    gst-tts check-alignment --checkpoint demo_out/checkpoints/best.pt --corpus demo_out/corpus --out alignment/

(It was ``gst-tts evaluate``; that name still works, with a deprecation line.)

Each sentence is synthesized free-running with its own recording as the style reference; the
sentences of a split are decoded in batches (``--batch-size``), each text with its own style.
The alignment health (focus, coverage, monotonicity, end reached, stop token) is averaged per
split. No waveform is made for it: the grading needs only the alignment and the mel.

``--vocoder-quality N`` also measures the vocoder (``--vocoder``) on the first N held-out
utterances (the checkpoint's validation ids): copy synthesis of their recordings (the recording's
log-mel through the vocoder) against the recordings, as mean wide-band PESQ, MCD, F0 RMSE and
voicing decision error (:mod:`gst_tts.analysis.vocoder_quality`); and, with no recording to
compare with, the voiced share of the same sentences synthesized by the model and vocoded, beside
that of their recordings.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gst_tts.cli.args import (
    add_decoding_arguments,
    add_model_arguments,
    add_progress_argument,
    add_seed_argument,
    decoding_options,
    load_synthesizer_described,
)
from gst_tts.cli.outputs import check_writable_location
from gst_tts.errors import GstTtsError
from gst_tts.files import write_json
from gst_tts.progress import progress_bar


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    p.add_argument("--corpus", type=Path, required=True, help="LJSpeech-format corpus the model was trained on")
    p.add_argument(
        "--split",
        choices=("train", "val", "both"),
        default="both",
        help="training sentences, held-out validation sentences (ids stored in the checkpoint), or both",
    )
    p.add_argument("--limit", type=int, default=16, help="at most this many sentences per split (default 16)")
    p.add_argument("--out", type=Path, default=None, help="write alignment PNGs and summary.json here")
    add_seed_argument(p, "the first batch; batch k uses seed + k")
    p.add_argument(
        "--vocoder-quality",
        type=int,
        default=0,
        metavar="N",
        help="also measure --vocoder on N held-out recordings: copy synthesis against the recordings "
        "(mean PESQ, MCD, F0 RMSE, voicing error), and the voiced share of the same sentences "
        "synthesized (default 0: off)",
    )
    add_decoding_arguments(p, batch_what="sentences")
    add_progress_argument(p)


def run(args: argparse.Namespace) -> int:
    from gst_tts.analysis.alignment import ALIGNED_CRITERIA, mean_health
    from gst_tts.analysis.plots import save_figure
    from gst_tts.data.corpus import id_file, read_corpus
    from gst_tts.inference.style import Style
    from gst_tts.checkpoints.acoustic import load_checkpoint

    options = decoding_options(args)
    if args.limit < 1:
        raise GstTtsError(f"--limit must be at least 1, got {args.limit}")
    if args.vocoder_quality < 0:
        raise GstTtsError(f"--vocoder-quality must be at least 0, got {args.vocoder_quality}")
    if args.out:  # before minutes of decoding, not after
        check_writable_location(args.out / "summary.json", "--out")
    val_ids = set(load_checkpoint(args.checkpoint).get("val_ids", []))
    if args.split in ("val", "both") and not val_ids:
        raise GstTtsError(f"{args.checkpoint}: the checkpoint records no validation ids; use --split train")
    if args.vocoder_quality and not val_ids:
        raise GstTtsError(
            f"{args.checkpoint}: the checkpoint records no validation ids, which --vocoder-quality measures"
        )
    synth, vocoder_line = load_synthesizer_described(args)
    utterances = read_corpus(args.corpus)
    splits = {
        "train": [u for u in utterances if u.id not in val_ids][: args.limit],
        "val": [u for u in utterances if u.id in val_ids][: args.limit],
    }
    measured = [u for u in utterances if u.id in val_ids][: args.vocoder_quality]
    measured_ids = {u.id for u in measured}
    if args.split != "both":
        splits = {args.split: splits[args.split]}
    batch_size = options["batch_size"]
    report = {}
    predicted: dict[str, np.ndarray] = {}  # held-out mels kept for --vocoder-quality
    for split, utts in splits.items():
        rows, healths = [], []
        bar = progress_bar(total=len(utts), desc=f"check alignment {split}", unit="utt", enabled=not args.no_progress)
        for k, start in enumerate(range(0, len(utts), batch_size)):
            batch = utts[start : start + batch_size]
            results = synth.synthesize(
                [u.text for u in batch],
                styles=[Style(reference=u.audio_path) for u in batch],
                seed=args.seed + k,
                vocode=False,
                transfer_tempo=False,
                names=[u.id for u in batch],
                **options,
            )
            for utt, res in zip(batch, results):
                if split == "val" and utt.id in measured_ids:
                    predicted[utt.id] = res.mel
                healths.append(res.health)
                rows.append(
                    {
                        "id": utt.id,
                        "stop_reason": res.stop_reason,
                        "duration_s": round(res.duration_s, 2),
                        **res.health.to_dict(),
                    }
                )
                if args.out:
                    save_figure(
                        res.figure(title=f"{split} {utt.id}"), id_file(args.out / split, utt.id, ".alignment.png")
                    )
            bar.update(len(batch))
        bar.close()
        summary = mean_health(healths)
        summary["stopped_on_token_rate"] = float(np.mean([row["stop_reason"] == "stop_token" for row in rows]))
        summary["aligned_criteria"] = ALIGNED_CRITERIA
        report[split] = {"summary": summary, "utterances": rows}
        print(
            f"{split}: {len(rows)} sentences  focus {summary['focus']:.3f}  coverage {summary['coverage']:.3f}  "
            f"monotonic {summary['monotonic_rate']:.0%}  reached end {summary['reached_end_rate']:.0%}  "
            f"stopped on token {summary['stopped_on_token_rate']:.0%}  aligned {summary['ok_rate']:.0%}"
        )
    print(f"aligned: {ALIGNED_CRITERIA}")
    if measured:
        report["vocoder"] = _vocoder_quality(synth, measured, predicted, args, options, vocoder_line)
    if args.out:
        write_json(args.out / "summary.json", report)
        print(f"alignment plots and summary.json in {args.out}")
    return 0


def _vocoder_quality(
    synth,
    utterances: list,
    predicted: dict[str, np.ndarray],
    args: argparse.Namespace,
    options: dict,
    vocoder_line: str,
) -> dict:
    """Copy synthesis of ``utterances``' recordings through the synthesizer's vocoder, measured against
    them, and the voiced share of their sentences as the model says them (mels in ``predicted``, the
    missing ones synthesized here, each with its own recording as the reference), vocoded."""
    from gst_tts.analysis.vocoder_quality import (
        MEASURES,
        copy_synthesis,
        load_recording,
        summarize,
        vocoder_quality,
        voiced_share,
    )
    from gst_tts.audio.features import MelExtractor
    from gst_tts.inference.style import Style

    missing = [u for u in utterances if u.id not in predicted]
    if missing:
        results = synth.synthesize(
            [u.text for u in missing],
            styles=[Style(reference=u.audio_path) for u in missing],
            seed=args.seed,
            vocode=False,
            transfer_tempo=False,
            names=[u.id for u in missing],
            **options,
        )
        predicted.update({u.id: res.mel for u, res in zip(missing, results)})
    config, extractor = synth.audio_config, MelExtractor(synth.audio_config)
    clips, rows = [], []
    for utt in progress_bar(utterances, desc="vocoder quality", unit="utt", enabled=not args.no_progress):
        recording = load_recording(utt.audio_path, config)
        quality = vocoder_quality(
            recording,
            copy_synthesis(synth.vocoder, recording, config, extractor=extractor),
            config.sample_rate,
            config,
            name=utt.id,
            extractor=extractor,
        )
        synthesized = voiced_share(
            synth.vocoder(predicted[utt.id]), synth.vocoder.sample_rate, hop_length=config.hop_length
        )
        clips.append(quality)
        rows.append({"id": utt.id, **quality.to_dict(), "voiced_share_synthesized": synthesized})
    summary = summarize(clips).to_dict()
    summary["voiced_share_synthesized"] = float(np.nanmean([r["voiced_share_synthesized"] for r in rows]))
    means = "  ".join(
        f"{label} {summary[key]:.3f}" if key in ("pesq", "vde") else f"{label} {summary[key]:.1f}"
        for key, label in MEASURES.items()
    )
    unscored = summary["count"] - summary["scored"]["pesq"]
    print(
        f"vocoder {vocoder_line}, copy synthesis of {summary['count']} held-out recordings: {means}"
        + (f" (PESQ could not score {unscored})" if unscored else "")
    )
    print(
        f"voiced share: recordings {summary['voiced_share_reference']:.0%}  copy synthesis "
        f"{summary['voiced_share_vocoded']:.0%}  synthesized sentences {summary['voiced_share_synthesized']:.0%}"
    )
    return {"vocoder": vocoder_line, "summary": summary, "utterances": rows}
