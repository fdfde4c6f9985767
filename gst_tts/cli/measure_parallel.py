"""Measure parallel prosody transfer as Skerry-Ryan et al. (2018) report it (MCD13, FFE, GPE, VDE), and F0 RMSE.

Example::

    gst-tts measure-parallel --checkpoint best.pt --corpus demo_out/corpus --out parallel.json

Each held-out utterance (the checkpoint's validation split, ``val_ids``, in split order; or the
ids of ``--utterances-from``) is synthesized with its own text twice: with its own recording as the
reference (*same text*: parallel transfer) and with another held-out utterance's recording (*other
text*: a fixed derangement, utterance i takes utterance i+1's, the last the first's) — the baseline
the same-text figures must beat. Every output is vocoded and compared with the recording of its
own text, both silence-trimmed: MCD13 over a DTW path, and FFE / GPE / VDE (Chu & Alwan; pyin F0,
GPE over the frames voiced in both) and F0 RMSE (cents, the same frames) on the same frame pairs
(:mod:`gst_tts.analysis.parallel_prosody`).
Prints the per-condition means; ``--out`` writes them with the per-utterance figures as JSON.

The figures are the model's own output. ``--tempo reference`` and ``--f0-range reference`` copy the
reference's tempo and F0 spread onto the output after the model (signal processing, not the
model's style): with either, the outputs are synthesized a second time with the copies, and their
figures are printed (and written under ``"post_processed"``) on lines of their own.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from gst_tts.cli.args import (
    add_decoding_arguments,
    add_model_arguments,
    add_progress_argument,
    add_seed_argument,
    decoding_options,
    load_synthesizer,
    post_processing,
    read_text_input,
    F0_RANGE_REFERENCE,
    TEMPO_REFERENCE,
    add_f0_range_argument,
    add_tempo_argument,
)
from gst_tts.cli.outputs import check_writable_location
from gst_tts.errors import GstTtsError
from gst_tts.files import write_json

CONDITIONS = ("same_text", "other_text")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    p.add_argument(
        "--corpus", type=Path, required=True, help="the corpus the checkpoint was trained on (metadata.csv, wavs/)"
    )
    p.add_argument(
        "--utterances",
        type=int,
        default=None,
        metavar="N",
        help="only the first N held-out utterances, N ≥ 2 (default all)",
    )
    p.add_argument(
        "--utterances-from",
        type=Path,
        default=None,
        metavar="LIST",
        help="utterance ids to use, one per line (default: the checkpoint's validation split)",
    )
    p.add_argument("--out", type=Path, default=None, metavar="PATH", help="also write the figures as JSON")
    add_seed_argument(p, "synthesis")
    add_tempo_argument(p)
    add_f0_range_argument(p, numbers=False)
    add_progress_argument(p)
    add_decoding_arguments(p, batch_what="utterances")


def held_out_ids(args: argparse.Namespace) -> list[str]:
    """The utterance ids to measure: ``--utterances-from``'s, else the checkpoint's ``val_ids``."""
    if args.utterances_from is not None:
        ids = [line.strip() for line in read_text_input(args.utterances_from).split("\n") if line.strip()]
        if not ids:
            raise GstTtsError(f"--utterances-from {args.utterances_from}: no utterance id in the file")
        return ids
    from gst_tts.checkpoints.acoustic import load_checkpoint

    ids = load_checkpoint(args.checkpoint).get("val_ids")
    if not ids:
        raise GstTtsError(
            f"{args.checkpoint}: holds no validation split (val_ids); name the utterances with --utterances-from"
        )
    return list(ids)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from gst_tts.analysis.parallel_prosody import MEASURES, compare_parallel
    from gst_tts.analysis.vocoder_quality import load_recording
    from gst_tts.audio.features import MelExtractor
    from gst_tts.audio.io import trim_silence
    from gst_tts.data.corpus import read_corpus
    from gst_tts.inference.style_spec import Style

    if args.utterances is not None and args.utterances < 2:
        raise GstTtsError(f"--utterances must be at least 2, got {args.utterances}")
    options = decoding_options(args)
    if args.out is not None:
        check_writable_location(args.out, "--out")
    corpus = {u.id: u for u in read_corpus(args.corpus)}
    ids = held_out_ids(args)[: args.utterances]
    missing = [i for i in ids if i not in corpus]
    if missing:
        raise GstTtsError(
            f"{args.corpus}: {len(missing)} of the held-out utterances are not in its metadata.csv (first: "
            f"{missing[0]!r})"
        )
    if len(set(ids)) < 2:
        raise GstTtsError(f"need at least 2 distinct utterances, got {len(set(ids))}")
    utts = [corpus[i] for i in ids]
    synth = load_synthesizer(args)
    config = synth.audio_config
    recordings = [load_recording(u.audio_path, config) for u in utts]
    others = [(k + 1) % len(utts) for k in range(len(utts))]  # a derangement: nobody keeps their own
    texts = [u.text for u in utts] * 2
    styles = [Style(reference=(r, config.sample_rate)) for r in recordings]
    styles += [styles[j] for j in others]
    extractor = MelExtractor(config)

    def measured(**copies: bool) -> tuple[dict, dict]:
        results = synth.synthesize(texts, styles=styles, seed=args.seed, **copies, **options)
        per: dict[str, list[dict]] = {c: [] for c in CONDITIONS}
        for n, result in enumerate(results):
            k, condition = n % len(utts), CONDITIONS[n // len(utts)]
            output = trim_silence(np.asarray(result.audio, dtype=np.float32), config.trim_top_db)
            figures = compare_parallel(recordings[k], output, config, extractor=extractor)
            reference = utts[k] if condition == "same_text" else utts[others[k]]
            per[condition].append(
                {
                    "id": utts[k].id,
                    "reference": reference.id,
                    **{m: v if math.isfinite(v) else None for m, v in figures.items()},
                }
            )
        summary = {
            c: {m: _mean([row[m] for row in rows]) for m in MEASURES} | {"n": len(rows)} for c, rows in per.items()
        }
        return summary, per

    summary, per = measured()
    copies, copied = post_processing(
        synth, tempo=args.tempo == TEMPO_REFERENCE, f0_range=args.f0_range == F0_RANGE_REFERENCE
    )
    post = measured(**copies) if copied else None
    if args.out is not None:
        write_json(
            args.out,
            {
                "checkpoint": str(args.checkpoint),
                "corpus": str(args.corpus),
                "seed": args.seed,
                "pitch_tracker": "librosa.pyin",
                "gpe_denominator": "frames voiced in both",
                "alignment": "DTW on 13 mel-cepstra",
                "tempo": "decoded",
                "f0_range": "decoded",
                "summary": summary,
                "utterances": per,
                **({"post_processed": {"copied": copied, "summary": post[0], "utterances": post[1]}} if post else {}),
            },
        )
    print("The model alone:")
    _print_table(summary)
    if post:
        print(
            f"Post-processed (the reference's {copied} copied onto the output after the model, not the model's style):"
        )
        _print_table(post[0])
    return 0


def _print_table(summary: dict) -> None:
    print(f"{'condition':<12} {'MCD13 dB':>9} {'FFE':>6} {'GPE':>6} {'VDE':>6} {'F0 RMSE ct':>10}   n")
    for c, s in summary.items():
        print(
            f"{c:<12} {_fmt(s['mcd_db'], 2):>9} {_fmt(s['ffe'], 3):>6} {_fmt(s['gpe'], 3):>6} "
            f"{_fmt(s['vde'], 3):>6} {_fmt(s['f0_rmse_cents'], 0):>10}   {s['n']}"
        )


def _mean(values: list[float | None]) -> float | None:
    """Mean of the values that are not None (None when none is: JSON has no NaN)."""
    finite = [v for v in values if v is not None]
    return sum(finite) / len(finite) if finite else None


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
