"""Choose, among a run's checkpoints, the one that transfers style best, and copy it to ``--out``.

Example::

    gst-tts select-checkpoint --checkpoints run/checkpoints/step_*.pt run/checkpoints/last.pt \\
        --vocoder run/vocoder/checkpoints/last.pt --corpus corpus/ --out run/checkpoints/best.pt

Why: on the demo, how faithfully the outputs follow a reference's speaking rate swings from one
checkpoint to the next late in training (one run: slope of output vs reference log
rate 0.75-0.80 at step 1,750, 0.55-0.61 at step 2,000, 0.62-0.67 at its last step 2,099, on three
sets of 24 unseen references), more than recipes differ. The training loss does not see it: it is
teacher-forced, the swings are in free-running synthesis.

Every candidate speaks ``--sentences`` held-out sentences in the styles of ``--espeak`` unseen
espeak-ng references of seed ``--seed`` (default 0; the demo gives
:data:`~gst_tts.analysis.style_transfer.SELECTION_SEED`, apart from the seeds its reports use, so
that the chosen checkpoint is judged afterwards on references that did not choose it). Its figures
(:func:`~gst_tts.analysis.style_transfer.selection_figures`): r of log F0 and of log rate, their
slopes as 1 - |1 - slope|, the share of outputs aligned and, with the asr extra installed, their
words: 1 - CER of an ASR's transcripts of the same outputs (:mod:`gst_tts.analysis.intelligibility`;
0 for a CER of 1 or more). The candidate whose weakest figure is highest wins; candidates with the
same step (``last.pt`` and the periodic checkpoint it repeats) are measured once.

Words come first: with an ASR, only the candidates whose CER is within ``--words-margin`` (default
:data:`DEFAULT_WORDS_MARGIN`) of the lowest compete on their weakest figure, so that a checkpoint that
speaks worse is never chosen for following the references better. On a 1 - CER scale, words move
less from one checkpoint to the next than the slopes do (the demo: 0.88 to 0.93 while a log F0
slope moved from 0.78 to 0.58), so as one figure among the others they were rarely the weakest
even where a candidate's speech was plainly worse. The margin is about the ASR's own noise over the
selection's outputs.

With ``--held-out N`` the candidates are judged on the corpus instead, as fits a corpus of one
speaker with little style to follow (an adapted real voice): each speaks N of the corpus's
validation utterances (the ids stored in the checkpoint), each in its own recording's style, and
its figures are the share aligned and its words. No espeak-ng reference is made.

Writes ``--out`` (a copy of the winner) and beside it ``<out>.json`` (every candidate's figures,
and its fits as ``measure-transfer`` reports them: r, Spearman and the slope itself).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
import shutil

from gst_tts.analysis.style_transfer import TEXT_SEED
from gst_tts.cli.args import (
    add_decoding_arguments,
    add_progress_argument,
    add_seed_argument,
    add_vocoder_arguments,
    check_transfer_counts,
    decoding_options,
    load_cli_vocoder,
    non_negative_float,
)
from gst_tts.cli.outputs import check_writable_location
from gst_tts.errors import GstTtsError
from gst_tts.files import atomic_write, write_json
from gst_tts.progress import progress_bar

DEFAULT_ESPEAK = 24
DEFAULT_SENTENCES = 2
#: CER within which candidates count as speaking equally well (Whisper base moves by about 0.01-0.02
#: from run to run over 48 clips).
DEFAULT_WORDS_MARGIN = 0.02


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--checkpoints",
        type=Path,
        nargs="+",
        required=True,
        metavar="PATH",
        help="the candidates: checkpoints of one run (e.g. checkpoints/step_*.pt checkpoints/last.pt)",
    )
    p.add_argument(
        "--out", type=Path, required=True, help="where the chosen checkpoint is copied (e.g. checkpoints/best.pt)"
    )
    p.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="the training corpus: its sentences are left out of the references' and the outputs' (default: none left "
        "out)",
    )
    p.add_argument(
        "--espeak",
        type=int,
        default=DEFAULT_ESPEAK,
        metavar="N",
        help=f"unseen espeak-ng references, at least 2 (default {DEFAULT_ESPEAK})",
    )
    p.add_argument(
        "--sentences",
        type=int,
        default=DEFAULT_SENTENCES,
        help=f"held-out sentences per reference (default {DEFAULT_SENTENCES})",
    )
    p.add_argument(
        "--held-out",
        type=int,
        default=0,
        metavar="N",
        help="judge the candidates on N validation utterances of --corpus, each in its recording's style (words and "
        "alignment), instead of on espeak-ng references (default 0: references)",
    )
    add_seed_argument(
        p,
        "the references, their sentences and synthesis (keep it apart from the seeds the candidates "
        "are judged by afterwards)",
    )
    p.add_argument(
        "--asr-model",
        type=Path,
        default=None,
        help="the ASR's faster-whisper model folder for the words figure (default: $GST_TTS_ASR_MODEL, else "
        "the asr extra's Whisper base)",
    )
    p.add_argument(
        "--words-margin",
        type=non_negative_float,
        default=DEFAULT_WORDS_MARGIN,
        metavar="CER",
        help="with an ASR, only candidates whose CER is at most this above the lowest compete on their other "
        f"figures (default {DEFAULT_WORDS_MARGIN})",
    )
    p.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available, else cpu)")
    add_progress_argument(p)
    add_vocoder_arguments(p)
    add_decoding_arguments(p)


def run(args: argparse.Namespace) -> int:
    from gst_tts.analysis.style_transfer import espeak_references, held_out_sentences
    import numpy as np

    from gst_tts.inference.intelligibility import score_clips, spoken_utterances
    from gst_tts.data.corpus import read_corpus
    from gst_tts.inference.synthesizer import Synthesizer
    from gst_tts.checkpoints.acoustic import load_checkpoint

    options = decoding_options(args)
    check_transfer_counts(args.espeak, args.sentences)
    if args.held_out < 0:
        raise GstTtsError(f"--held-out must be at least 0, got {args.held_out}")
    if args.held_out and args.corpus is None:
        raise GstTtsError("--held-out N judges on the corpus's validation utterances: give --corpus")
    if args.out.suffix == ".json":
        raise GstTtsError(f"--out {args.out}: the figures go to a .json beside it; give the checkpoint a .pt name")
    if args.out.resolve() in {path.resolve() for path in args.checkpoints}:
        raise GstTtsError(f"--out {args.out} is one of the candidates; give another path")
    check_writable_location(args.out, "--out")  # before minutes of decoding, not after

    by_step: dict[int, Path] = {}
    for path in args.checkpoints:
        by_step.setdefault(int(load_checkpoint(path)["step"]), path)  # the first path given wins a tie
    corpus = read_corpus(args.corpus) if args.corpus is not None else []
    if args.held_out:
        val_ids = set(load_checkpoint(next(iter(by_step.values()))).get("val_ids") or [])
        held_out = [u for u in corpus if u.id in val_ids][: args.held_out]
        if not held_out:
            raise GstTtsError(f"--corpus {args.corpus}: none of the candidates' validation utterances is in it")
        texts, references = [u.text for u in held_out], []
    else:
        seen = [u.text for u in corpus]
        texts = held_out_sentences(args.sentences, TEXT_SEED + args.seed, exclude=seen)
        references = espeak_references(args.espeak, args.seed, exclude=seen)

    from gst_tts.analysis import intelligibility

    transcriber = None
    if intelligibility.asr_available():
        transcriber = intelligibility.WhisperTranscriber(args.asr_model, threads=args.threads or 1)
    else:
        print(
            "words not judged: no ASR (pip install 'gst-tts[asr]'); candidates are chosen by style and alignment alone"
        )
    vocoder = None
    candidates = []
    for step, path in progress_bar(
        sorted(by_step.items()), desc="checkpoints", unit="ckpt", enabled=not args.no_progress
    ):
        synth = Synthesizer.from_checkpoint(path, device=args.device)
        if vocoder is None:  # one vocoder for every candidate: a run's checkpoints share their features
            vocoder = load_cli_vocoder(args, synth.audio_config, synth.device, checkpoint=path)
        synth.vocoder = vocoder
        if args.held_out:
            clips = spoken_utterances(synth, held_out, seed=args.seed, **options)
            figures = {"aligned": float(np.mean([clip.aligned for clip in clips]))}
            fits = None
        else:
            clips, figures, fits = _transfer_figures(
                synth, references, texts, args, options, keep_clips=transcriber is not None
            )
        cer = None
        if transcriber is not None:
            cer = score_clips(transcriber, clips)[1].cer
            figures["words (1-CER)"] = max(0.0, 1.0 - cer)
        weakest = min(figures, key=figures.get)
        candidates.append(
            {
                "checkpoint": str(path),
                "step": step,
                "figures": figures,
                "weakest": weakest,
                "score": figures[weakest],
                "cer": cer,
                "fits": fits,
            }
        )
    if transcriber is not None:
        lowest = min(c["cer"] for c in candidates)
        for c in candidates:
            c["speaks_best"] = c["cer"] <= lowest + args.words_margin
    contenders = [c for c in candidates if c.get("speaks_best", True)]
    best = max(contenders, key=lambda c: c["score"])  # sorted by step: an earlier one wins a tie

    def copy(f) -> None:
        with open(best["checkpoint"], "rb") as source:
            shutil.copyfileobj(source, f)

    atomic_write(args.out, copy)
    write_json(
        args.out.with_suffix(".json"),
        {
            "chosen": best["checkpoint"],
            "step": best["step"],
            "seed": args.seed,
            "references": len(references),
            "held_out": [u.id for u in held_out] if args.held_out else [],
            "sentences": texts,
            "candidates": [
                {
                    **c,
                    "figures": {k: _json_number(v) for k, v in c["figures"].items()},
                    "score": _json_number(c["score"]),
                }
                for c in candidates
            ],
        },
    )
    labels = list(candidates[0]["figures"])
    print(f"{'step':>7}  " + "  ".join(f"{label:>14}" for label in labels) + "  weakest")
    for c in candidates:
        mark = "  <- chosen" if c is best else ("" if c.get("speaks_best", True) else "  (words: CER above the margin)")
        print(
            f"{c['step']:>7}  "
            + "  ".join(f"{c['figures'][label]:>14.3f}" for label in labels)
            + f"  {c['weakest']} {c['score']:.3f}{mark}"
        )
    sentences = f"{len(texts)} sentence{'s' if len(texts) != 1 else ''}"
    if transcriber is not None:
        print(
            f"words: 1 - CER ({transcriber.describe()}) of the same outputs, 0 at CER 1 or more; only candidates "
            f"within {args.words_margin:g} of the lowest CER ({lowest:.3f}) compete on their weakest figure"
        )
    if args.held_out:
        print(f"{len(texts)} validation utterances of {args.corpus}, each in its recording's style")
    else:
        print(f"slopes shown as 1 - |1 - slope|; {len(references)} unseen references (seed {args.seed}) x {sentences}")
    print(f"chose step {best['step']} ({best['checkpoint']}): copied to {args.out}")
    return 0


def _transfer_figures(synth, references, texts, args, options, *, keep_clips: bool):
    """The candidate's outputs in the references' styles: (their clips when ``keep_clips``, its
    selection figures, the fits as ``measure-transfer`` reports them)."""
    from gst_tts.analysis.style_transfer import selection_figures
    from gst_tts.inference.intelligibility import Clip
    from gst_tts.inference.transfer import evaluate_style_transfer

    clips: list[Clip] = []

    def keep(ref_index: int, text_index: int, result) -> None:
        clips.append(Clip(f"{ref_index}-{text_index}", texts[text_index], result.audio, result.sample_rate))

    # The model's own F0 range and tempo are judged, not the reference's copied in after decoding.
    report = evaluate_style_transfer(
        synth,
        references,
        texts,
        seed=args.seed,
        progress=False,
        transfer_f0_range=False,
        transfer_tempo=False,
        on_output=keep if keep_clips else None,
        **options,
    )
    return clips, selection_figures(report), report.to_dict()["fits"]


def _json_number(value: float) -> float | None:
    return round(value, 4) if math.isfinite(value) else None
