"""Measure style transfer from references the model never heard: pitch level, pitch range and rate.

Example::

    gst-tts measure-transfer --checkpoint last.pt --out transfer/                  # 24 unseen espeak references
    gst-tts measure-transfer --checkpoint last.pt --out transfer/ --references my-clips/
    gst-tts measure-transfer --checkpoint last.pt --out transfer/ --references LJSpeech-1.1 \\
        --max-per-folder 6 --augment-real

(It was ``gst-tts style-transfer``, and ``--text-file`` was ``--texts``; the old spellings still
work, with a deprecation line.)

For every reference, a fixed set of held-out sentences is synthesized in its style and vocoded;
reference and outputs are measured (median F0, F0 range in semitones, articulation rate in letters
per second of speech with pauses excluded; :mod:`gst_tts.analysis.style_transfer`). Per set of
references: Pearson r, Spearman and slope of output vs reference (F0 and rate in log). Real
recordings vary in more than prosody; judge them by Spearman.

Reference sets:

* ``--espeak N`` (default 24 without ``--references``): espeak-ng renders in voices and variants
  the demo corpus never used, with pitch, intonation, rate and pauses spread over its ranges,
  drawn from ``--seed``, each reading ``--reference-sentences`` held-out sentences (default 2);
  written to ``OUT/references/``.
* ``--references FOLDER …``: recordings (``.wav`` / ``.flac``, any rate; ``FOLDER/wavs`` for an
  LJSpeech corpus). Their rate is measured where a transcript is found (``metadata.csv`` in the
  folder or its parent, or ``<name>.txt``); ``--augment-real`` adds pitch-shifted (±4 semitones)
  and time-stretched (×0.8, ×1.25) copies of each, as a set of their own.

``--style-strength S`` moves every reference's style from neutral toward it by S before
synthesis (0 neutral, 1 the reference, the default; above 1 exaggerates): run it at a few values
to see how the output's prosody follows the knob (the fits' slopes scale with S where it works).

The figures measure the model's own output. ``--tempo reference`` and ``--f0-range reference``
copy the reference's tempo and F0 spread onto the output after the model (signal processing, not
the model's style; a rate figure then reads back the rate the retiming wrote): with either, every
output is synthesized a second time with the copies, and those figures come after the model's,
labelled, and under ``"post_processed"`` in the JSON.

Writes ``OUT/outputs/<reference>/NN.wav`` (the model alone), ``OUT/transfer.csv`` (one row per
reference), ``OUT/transfer.json`` (everything, per sentence too) and ``OUT/summary.txt`` (the
printed table).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gst_tts.analysis.style_transfer import REFERENCE_SENTENCES
from gst_tts.cli.args import (
    add_decoding_arguments,
    add_model_arguments,
    add_progress_argument,
    add_seed_argument,
    check_transfer_counts,
    decoding_options,
    deprecated_flag,
    load_synthesizer,
    post_processing,
    read_text_input,
    style_strength,
    F0_RANGE_REFERENCE,
    F0_RANGE_DECODED,
    TEMPO_DECODED,
    TEMPO_REFERENCE,
    add_f0_range_argument,
    add_tempo_argument,
)
from gst_tts.cli.outputs import check_writable_location, write_csv
from gst_tts.errors import GstTtsError
from gst_tts.files import write_json, write_text
from gst_tts.inference.style_spec import MAX_STYLE_STRENGTH

DEFAULT_ESPEAK = 24
DEFAULT_SENTENCES = 5


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument(
        "--references",
        type=Path,
        nargs="+",
        action="extend",
        default=[],
        metavar="FOLDER",
        help="folders of reference recordings (any rate)",
    )
    p.add_argument(
        "--espeak",
        type=int,
        default=None,
        metavar="N",
        help=f"N unseen espeak-ng references, N ≥ 2 (default {DEFAULT_ESPEAK} without --references, else none)",
    )
    add_seed_argument(p, "the espeak references and of synthesis")
    p.add_argument(
        "--reference-sentences",
        type=int,
        default=REFERENCE_SENTENCES,
        metavar="N",
        help=f"held-out sentences each espeak reference reads (default {REFERENCE_SENTENCES})",
    )
    p.add_argument(
        "--text-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="sentences to synthesize, one per line; - reads standard input (default: generated)",
    )
    deprecated_flag(p, "--texts", "--text-file", dest="text_file", type=Path)
    p.add_argument(
        "--sentences",
        type=int,
        default=DEFAULT_SENTENCES,
        help=f"generated held-out sentences without --text-file (default {DEFAULT_SENTENCES})",
    )
    p.add_argument(
        "--max-per-folder",
        type=int,
        default=None,
        metavar="N",
        help="only the first N recordings (by name) of each --references folder (default all)",
    )
    p.add_argument(
        "--augment-real",
        action="store_true",
        help="also pitch-shifted and time-stretched copies of the --references recordings (librosa)",
    )
    p.add_argument("--plots", action="store_true", help="also an alignment PNG beside every output")
    p.add_argument(
        "--style-strength",
        type=style_strength,
        default=None,
        metavar="S",
        help="every reference's style moved from neutral toward it by S (0 neutral, 1 the reference"
        f" (default), above 1 exaggerates; 0 to {MAX_STYLE_STRENGTH:g})",
    )
    add_f0_range_argument(p, numbers=False)
    add_tempo_argument(p)
    add_progress_argument(p)
    add_decoding_arguments(p, batch_what="sentences")


def _read_texts(path: Path) -> list[str]:
    lines = read_text_input(path).split("\n")
    texts = [" ".join(line.split()) for line in lines if line.strip()]
    if not texts:
        raise GstTtsError(f"--text-file {path}: no sentence in the file")
    return texts


def run(args: argparse.Namespace) -> int:
    from gst_tts.analysis.style_transfer import (
        augmented_references,
        espeak_references,
        folder_references,
        held_out_sentences,
    )
    from gst_tts.inference.transfer import evaluate_style_transfer
    from gst_tts.audio.io import write_wav

    n_espeak = args.espeak if args.espeak is not None else (0 if args.references else DEFAULT_ESPEAK)
    check_transfer_counts(args.espeak, args.sentences)
    if args.reference_sentences < 1:
        raise GstTtsError(f"--reference-sentences must be at least 1, got {args.reference_sentences}")
    if args.augment_real and not args.references:
        raise GstTtsError("--augment-real needs --references")
    if args.max_per_folder is not None and args.max_per_folder < 1:
        raise GstTtsError(f"--max-per-folder must be at least 1, got {args.max_per_folder}")
    options = decoding_options(args)
    check_writable_location(args.out / "transfer.json", "--out")  # before minutes of decoding, not after
    texts = _read_texts(args.text_file) if args.text_file is not None else held_out_sentences(args.sentences)
    real = [clip for folder in args.references for clip in folder_references(folder)[: args.max_per_folder]]
    synth = load_synthesizer(args)

    references = espeak_references(n_espeak, args.seed, sentences=args.reference_sentences) if n_espeak else []
    references = _unique_names(references + (augmented_references(real) if args.augment_real else real))
    for clip in references:
        if clip.path is None:  # made here: espeak renders, augmented copies
            write_wav(args.out / "references" / f"{clip.name}.wav", clip.audio, clip.sample_rate)

    def save(ref_index: int, text_index: int, result) -> None:
        wav = args.out / "outputs" / references[ref_index].name / f"{text_index + 1:02d}.wav"
        write_wav(wav, result.audio, result.sample_rate)
        if args.plots:
            from gst_tts.analysis.plots import save_figure

            save_figure(
                result.figure(title=f"{references[ref_index].name}: {result.text}"), wav.with_suffix(".alignment.png")
            )

    common = dict(seed=args.seed, progress=not args.no_progress, style_strength=args.style_strength, **options)
    report = evaluate_style_transfer(synth, references, texts, on_output=save, **common)
    copies, copied = post_processing(
        synth, tempo=args.tempo == TEMPO_REFERENCE, f0_range=args.f0_range == F0_RANGE_REFERENCE
    )
    post = evaluate_style_transfer(synth, references, texts, **copies, **common) if copied else None
    write_csv(args.out / "transfer.csv", report.csv_header(), report.csv_rows())
    strength = 1.0 if args.style_strength is None else args.style_strength
    write_json(
        args.out / "transfer.json",
        {
            "checkpoint": str(args.checkpoint),
            "seed": args.seed,
            "style_strength": strength,
            "f0_range": F0_RANGE_DECODED,
            "tempo": TEMPO_DECODED,
            **report.to_dict(),
            **({"post_processed": {"copied": copied, **post.to_dict()}} if post else {}),
        },
    )
    shown = "" if args.style_strength is None else f"; style strength {strength:g}"
    lines = ["The model alone (its own tempo and F0 range):", *report.table_lines()]
    if post:
        lines += [
            f"Post-processed: the reference's {copied} copied onto the output after the model (signal processing,"
            " not the model's style):",
            *post.table_lines(),
        ]
    lines.append(f"{len(references)} references × {len(texts)} sentences{shown}; files in {args.out}")
    write_text(args.out / "summary.txt", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _unique_names(references: list) -> list:
    """References with names made unique (``name``, ``name-2``, …), in order."""
    from dataclasses import replace

    seen: dict[str, int] = {}
    out = []
    for clip in references:
        count = seen.get(clip.name, 0) + 1
        seen[clip.name] = count
        out.append(clip if count == 1 else replace(clip, name=f"{clip.name}-{count}"))
    return out
