"""Synthesize held-out sentences in the styles of unseen references; report alignment and transfer.

Used by ``make demo`` after training. References are espeak-ng renders in voices and variants the
demo corpus never used, with pitch, intonation, rate and pauses spread over its ranges
(:func:`gst_tts.analysis.style_transfer.espeak_references`); each reads sentences the corpus does
not hold, and the model speaks other such sentences in each one's style. Writes the references,
wavs and alignment PNGs, ``summary.json`` and ``summary.txt``: alignment health, and how the
outputs' F0, F0 range and rate follow the references' (Pearson r and slope over the set).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gst_tts.cli.args import (
    add_decoding_arguments, add_model_arguments, add_progress_argument, add_seed_argument, check_transfer_counts,
    decoding_options, load_synthesizer, TEMPO_REFERENCE,
)
from gst_tts.cli.outputs import check_writable_location
from gst_tts.files import write_json, write_text

DEFAULT_REFERENCES = 12


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    p.add_argument("--corpus", type=Path, required=True, help="the training corpus (its sentences are excluded)")
    p.add_argument("--out", type=Path, required=True, help="output folder (samples/ inside the demo dir)")
    p.add_argument("--espeak", type=int, default=DEFAULT_REFERENCES, metavar="N",
                   help=f"unseen espeak-ng references, at least 2 (default {DEFAULT_REFERENCES})")
    p.add_argument("--sentences", type=int, default=4, help="held-out sentences per reference (default 4)")
    add_seed_argument(p, "the references and of synthesis")
    add_decoding_arguments(p)
    add_progress_argument(p)


def run(args: argparse.Namespace) -> int:
    from gst_tts.analysis.alignment import ALIGNED_CRITERIA, mean_health
    from gst_tts.analysis.plots import save_figure
    from gst_tts.analysis.style_transfer import MEASURES, espeak_references, held_out_sentences
    from gst_tts.audio.io import write_wav
    from gst_tts.data.corpus import read_corpus
    from gst_tts.inference.transfer import evaluate_style_transfer

    options = decoding_options(args)
    check_transfer_counts(args.espeak, args.sentences)
    check_writable_location(args.out / "summary.json", "--out")  # before minutes of decoding, not after
    synth = load_synthesizer(args)
    seen = [u.text for u in read_corpus(args.corpus)]
    texts = held_out_sentences(args.sentences, exclude=seen)
    references = espeak_references(args.espeak, args.seed, exclude=seen)
    out = args.out
    for ref in references:
        # At espeak's rate whatever the model's: the synthesizer resamples a reference on loading,
        # so labelling it with the model's rate would play (and be measured) at the wrong speed.
        write_wav(out / "references" / f"{ref.name}.wav", ref.audio, ref.sample_rate)

    def save(ref_index: int, text_index: int, result) -> None:
        name = references[ref_index].name
        wav = out / name / f"{text_index + 1:02d}.wav"
        write_wav(wav, result.audio, result.sample_rate)
        save_figure(result.figure(title=f"{name}: {result.text}"), wav.with_suffix(".alignment.png"))

    transfers = synth.transfers_f0_range  # the demo's spectral vocoder sets each reference's F0 range
    report = evaluate_style_transfer(synth, references, texts, seed=args.seed, on_output=save,
                                     progress=not args.no_progress, transfer_f0_range=transfers,
                                     transfer_tempo=True, **options)  # retimed to each reference's tempo
    summary = mean_health(report.healths)
    summary["stopped_on_token_rate"] = float(np.mean([reason == "stop_token" for reason in report.stop_reasons]))
    summary["aligned_criteria"] = ALIGNED_CRITERIA
    fits = next(iter(report.fits.values()))
    f0_range = "reference" if transfers else "decoded"
    write_json(out / "summary.json", {"checkpoint": str(args.checkpoint), "held_out_sentences": texts,
                                      "alignment": summary, "f0_range": f0_range, "tempo": TEMPO_REFERENCE,
                                      **report.to_dict()})
    lines = [
        f"Held-out alignment health over {len(report.healths)} syntheses ({len(texts)} new sentences x "
        f"{len(references)} unseen references):",
        f"  mean focus {summary['focus']:.3f}   mean coverage {summary['coverage']:.3f}   "
        f"monotonic {summary['monotonic_rate']:.0%}   reached end {summary['reached_end_rate']:.0%}   "
        f"stopped on token {summary['stopped_on_token_rate']:.0%}",
        f"  aligned {summary['ok_rate']:.0%} ({ALIGNED_CRITERIA})",
        "Per reference (coarse style; reference → output median over its sentences):",
    ]
    for row in report.rows:
        ref, o = row["reference"], row["output"]
        lines.append(f"  {row['name']:<22} {row['info'].get('label', ''):<10} F0 {_hz(ref['f0_hz'])} → {_hz(o['f0_hz'])}   "
                     f"range {_num(ref['f0_range_st'])} → {_num(o['f0_range_st'])} st   "
                     f"rate {_num(ref['rate_letters_per_s'])} → {_num(o['rate_letters_per_s'])} letters/s   "
                     f"aligned {row['aligned_share']:.0%}")
    lines.append(f"Style transfer from {len(references)} unseen references (output vs reference; F0 and rate in log; "
                 + ("F0 range set to the reference's by the vocoder" if f0_range == "reference" else "F0 range as decoded")
                 + "; each output retimed to its reference's estimated tempo):")
    for name, f in fits.items():
        lines.append(f"  {MEASURES[name][1]:<14} r {_num(f.r, 2)}   slope {_num(f.slope, 2)}   "
                     f"(Spearman {_num(f.spearman, 2)}, n {f.n})")
    write_text(out / "summary.txt", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _hz(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} Hz"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"
