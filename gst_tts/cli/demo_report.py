"""Synthesize held-out sentences with style references and summarise alignment health.

Used by ``make demo`` after training: for sentences the model never saw, each spoken in the
style of references rendered in several corpus styles (from other held-out sentences), it writes
wavs, alignment PNGs and ``summary.json`` / ``summary.txt``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gst_tts.analysis.prosody import Pitch, median_f0
from gst_tts.cli.args import add_decoding_arguments, add_model_arguments, decoding_options, load_synthesizer
from gst_tts.cli.outputs import check_writable_location
from gst_tts.errors import GstTtsError
from gst_tts.files import write_json, write_text


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    p.add_argument("--corpus", type=Path, required=True, help="the training corpus (its sentences are excluded)")
    p.add_argument("--out", type=Path, required=True, help="output folder (samples/ inside the demo dir)")
    p.add_argument("--sentences", type=int, default=6, help="held-out sentences per style (default 6)")
    p.add_argument("--seed", type=int, default=1, help="synthesis seed (default 1)")
    add_decoding_arguments(p)


# The corpus styles sit between about 140 and 250 Hz; a 400 Hz ceiling keeps most of pyin's octave
# errors on Griffin-Lim audio of the high styles (read as ~490 Hz) out of the medians.
F0_RANGE_HZ = (70.0, 400.0)


def _pitch(audio: np.ndarray, rate: int) -> Pitch:
    return median_f0(audio, rate, f0_range_hz=F0_RANGE_HZ)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from gst_tts.analysis.alignment import ALIGNED_CRITERIA, mean_health
    from gst_tts.analysis.plots import save_figure
    from gst_tts.audio.io import write_wav
    from gst_tts.data.corpus import read_corpus
    from gst_tts.demo.corpus import SAMPLE_RATE as ESPEAK_RATE
    from gst_tts.demo.corpus import STYLES, render_sentence
    from gst_tts.demo.sentences import generate_sentences

    options = decoding_options(args)
    if args.sentences < 1:
        raise GstTtsError(f"--sentences must be at least 1, got {args.sentences}")
    check_writable_location(args.out / "summary.json", "--out")  # before minutes of decoding, not after
    synth = load_synthesizer(args)
    seen = {u.text for u in read_corpus(args.corpus)}
    # Seeds far from the corpus seed give new sentences; anything the corpus holds is dropped.
    candidates = [s for s in generate_sentences(args.sentences * 4 + len(STYLES) + 8, seed=9001) if s not in seen]
    if len(candidates) < args.sentences + 1:
        raise GstTtsError("could not find enough held-out sentences")
    texts, reference_text = candidates[: args.sentences], candidates[args.sentences]
    out = args.out
    rows, healths, references = [], [], {}
    for style in tqdm(STYLES, desc="demo styles", unit="style"):
        ref_path = out / "references" / f"{style.name}.wav"
        # The clip is at espeak's rate whatever the model's; the synthesizer resamples the file
        # on loading, so labelling it with the model's rate would play (and be measured) at the
        # wrong speed and pitch.
        reference_audio = render_sentence(reference_text, style)
        write_wav(ref_path, reference_audio, ESPEAK_RATE)
        references[style.name] = {"median_f0_hz": round(_pitch(reference_audio, ESPEAK_RATE).median_hz, 1), "sample_rate": ESPEAK_RATE,
                                  "duration_s": round(len(reference_audio) / ESPEAK_RATE, 3)}
        results = synth.synthesize(texts, reference=ref_path, seed=args.seed, **options)
        for i, r in enumerate(results, start=1):
            wav = out / style.name / f"{i:02d}.wav"
            write_wav(wav, r.audio, r.sample_rate)
            save_figure(r.figure(title=f"{style.name}: {r.text}"), wav.with_suffix(".alignment.png"))
            pitch = _pitch(r.audio, r.sample_rate)
            healths.append(r.health)
            rows.append({"style": style.name, "file": str(wav.relative_to(out)), "text": r.text,
                         "duration_s": round(r.duration_s, 3), "median_f0_hz": round(pitch.median_hz, 1),
                         "voiced_share": round(pitch.voiced_share, 3),
                         "stop_reason": r.stop_reason, **{k: (round(v, 4) if isinstance(v, float) else v)
                                                          for k, v in r.health.to_dict().items()}})
    summary = mean_health(healths)
    summary["stopped_on_token_rate"] = float(np.mean([row["stop_reason"] == "stop_token" for row in rows]))
    summary["aligned_criteria"] = ALIGNED_CRITERIA
    per_style = {}
    for style in STYLES:
        mine = [row for row in rows if row["style"] == style.name]
        per_style[style.name] = {
            "mean_duration_s": round(float(np.mean([r["duration_s"] for r in mine])), 3),
            "median_f0_hz": round(_nanmedian([r["median_f0_hz"] for r in mine]), 1),
            "voiced_share": round(float(np.mean([r["voiced_share"] for r in mine])), 3),
            "mean_focus": round(float(np.mean([r["focus"] for r in mine])), 3),
            "mean_coverage": round(float(np.mean([r["coverage"] for r in mine])), 3),
        }
    transfer = style_transfer_shares(references, per_style)
    report = {"checkpoint": str(args.checkpoint), "held_out_sentences": texts, "reference_text": reference_text,
              "alignment": summary, "per_style": per_style, "references": references,
              "style_transfer": transfer, "utterances": rows}
    write_json(out / "summary.json", report)
    lines = [
        f"Held-out alignment health over {len(rows)} syntheses ({len(texts)} new sentences x {len(STYLES)} reference styles):",
        f"  mean focus {summary['focus']:.3f}   mean coverage {summary['coverage']:.3f}   "
        f"monotonic {summary['monotonic_rate']:.0%}   reached end {summary['reached_end_rate']:.0%}   "
        f"stopped on token {summary['stopped_on_token_rate']:.0%}",
        f"  aligned {summary['ok_rate']:.0%} ({ALIGNED_CRITERIA})",
        "Per reference style (mean duration, median F0 of the output):",
    ] + [f"  {name:<10} {v['mean_duration_s']:.2f} s  {v['median_f0_hz']:.0f} Hz (voiced {v['voiced_share']:.0%})  "
         f"focus {v['mean_focus']:.2f}  "
         f"coverage {v['mean_coverage']:.2f}   (reference {references[name]['duration_s']:.2f} s, "
         f"{references[name]['median_f0_hz']:.0f} Hz)" for name, v in per_style.items()]
    lines.append(
        f"Style transfer (share of the reference gap carried into the output): pitch {transfer['pitch_share']:.2f}, "
        f"duration {transfer['duration_share']:.2f}"
    )
    write_text(out / "summary.txt", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def style_transfer_shares(references: dict, outputs: dict) -> dict[str, float]:
    """How much of the references' pitch and duration gaps the outputs carry (1 = all of it).

    Pitch: log(F0 of outputs for high-pitch references / low) over the same log ratio of the
    references, averaged over the two speaking rates; duration likewise for slow vs fast.
    """

    def share(a: list[str], b: list[str], out_key: str, ref_key: str) -> float:
        def mean_log(group: list[str], table: dict, key: str) -> float:
            return float(np.mean([np.log(table[name][key]) for name in group]))

        ref_gap = mean_log(a, references, ref_key) - mean_log(b, references, ref_key)
        out_gap = mean_log(a, outputs, out_key) - mean_log(b, outputs, out_key)
        return out_gap / ref_gap if ref_gap else float("nan")

    names = list(references)
    high, low = [n for n in names if n.startswith("high")], [n for n in names if n.startswith("low")]
    slow, fast = [n for n in names if n.endswith("slow")], [n for n in names if n.endswith("fast")]
    return {
        "pitch_share": round(share(high, low, "median_f0_hz", "median_f0_hz"), 3),
        "duration_share": round(share(slow, fast, "mean_duration_s", "duration_s"), 3),
    }


def _nanmedian(values: list[float]) -> float:
    finite = [v for v in values if np.isfinite(v)]
    return float(np.median(finite)) if finite else float("nan")
