"""Measure whether a model speaks words: an ASR transcribes its speech, scored against the texts.

Examples::

    gst-tts measure-intelligibility --checkpoint best.pt --corpus corpus/ --mode teacher-forced
    gst-tts measure-intelligibility --checkpoint best.pt --corpus corpus/ --mode free-running --split train
    gst-tts measure-intelligibility --checkpoint best.pt --text-file new.txt --references a.wav b.wav --out asr/

What is spoken:

* ``--corpus`` with ``--mode teacher-forced``: the corpus utterances' teacher-forced mels (their
  own recording is the decoder's input and the style reference, :mod:`gst_tts.inference.teacher_forcing`),
  vocoded. What the model learned of each sound, apart from its free-running mistakes.
* ``--corpus`` with ``--mode free-running``: the same sentences synthesized, each in the style of
  its own recording.
* ``--text-file``: one sentence a line, synthesized in the neutral style and, with
  ``--references``, in the style of each reference (a figure per style).

``--split`` picks the checkpoint's held-out validation utterances (default) or training ones;
``--limit`` caps their count. Each clip's transcript comes from Whisper (``--asr-model``, default the
asr extra's Whisper base; :mod:`gst_tts.analysis.intelligibility`); CER and WER are printed per
utterance and per set, after the normalisation printed with them. ``--out`` gets the wavs and
``intelligibility.json``. Recordings of the same corpus score about 0.03-0.07 CER with Whisper base.
"""

from __future__ import annotations

import argparse
from pathlib import Path

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
from gst_tts.progress import progress_bar

MODES = ("teacher-forced", "free-running")
DEFAULT_LIMIT = 24


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", type=Path, help="LJSpeech-format corpus the model was trained on")
    source.add_argument("--text-file", type=Path, help="sentences to synthesize, one a line (- for standard input)")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="free-running",
        help="with --corpus: teacher-forced mels of the recordings, or free-running synthesis (default)",
    )
    p.add_argument(
        "--split",
        choices=("val", "train"),
        default="val",
        help="with --corpus: held-out validation utterances (ids stored in the checkpoint) or training ones",
    )
    p.add_argument(
        "--references",
        type=Path,
        nargs="+",
        default=[],
        metavar="WAV",
        help="with --text-file: also speak every sentence in the style of each of these recordings",
    )
    p.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help=f"at most this many sentences (default {DEFAULT_LIMIT})"
    )
    p.add_argument(
        "--asr-model",
        type=Path,
        default=None,
        help="a faster-whisper (CTranslate2) Whisper model folder (default: $GST_TTS_ASR_MODEL, else the "
        "Whisper base weights of the asr extra)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="with --mode teacher-forced: the feature cache (default ~/.cache/gst-tts/<corpus>-<hash>)",
    )
    p.add_argument("--out", type=Path, default=None, help="write the wavs and intelligibility.json here")
    add_seed_argument(p, "synthesis (prenet dropout)")
    add_decoding_arguments(p, batch_what="sentences")
    add_progress_argument(p)


def run(args: argparse.Namespace) -> int:
    from gst_tts.analysis import intelligibility
    from gst_tts.analysis.intelligibility import NORMALISATION
    from gst_tts.inference.intelligibility import score_clips
    from gst_tts.audio.io import write_wav
    from gst_tts.files import write_json

    options = decoding_options(args)
    if args.limit < 1:
        raise GstTtsError(f"--limit must be at least 1, got {args.limit}")
    if args.references and args.text_file is None:
        raise GstTtsError("--references goes with --text-file (a corpus's sentences are spoken in their own styles)")
    if args.out:  # before minutes of decoding, not after
        check_writable_location(args.out / "intelligibility.json", "--out")
    transcriber = intelligibility.WhisperTranscriber(
        args.asr_model, threads=args.threads or 1
    )  # fails early without the extra
    synth, vocoder_line = load_synthesizer_described(args)
    sets = _clip_sets(args, synth, options)
    report = {"asr": transcriber.describe(), "normalisation": NORMALISATION, "vocoder": vocoder_line, "sets": {}}
    print(f"vocoder: {vocoder_line}\nASR: {transcriber.describe()}; scored after: {NORMALISATION}")
    for name, clips in sets.items():
        scores, summary = score_clips(
            transcriber, progress_bar(clips, desc=f"ASR {name}", unit="utt", enabled=not args.no_progress)
        )
        for clip, score in zip(clips, scores):
            print(
                f"  {name} {clip.id}: CER {score.cer:.3f} WER {score.wer:.3f} | {score.text} | heard: "
                f"{score.transcript}"
            )
            if args.out:
                write_wav(args.out / name / f"{clip.id}.wav", clip.samples, clip.sample_rate)
        report["sets"][name] = {"summary": summary.to_dict(), "utterances": [s.to_dict() for s in scores]}
        print(f"{name}: {summary.line()}")
    if args.out:
        write_json(args.out / "intelligibility.json", report)
        print(f"wavs and intelligibility.json in {args.out}")
    return 0


def _clip_sets(args: argparse.Namespace, synth, options: dict) -> dict[str, list]:
    """Set name → the clips to score (:class:`~gst_tts.inference.intelligibility.Clip`), as the arguments ask."""
    from gst_tts.cli.text_input import read_text_input
    from gst_tts.inference.intelligibility import spoken_texts, spoken_utterances, teacher_forced_clips
    from gst_tts.inference.style import Style

    if args.text_file is not None:
        texts = [line.strip() for line in read_text_input(args.text_file).splitlines() if line.strip()][: args.limit]
        if not texts:
            raise GstTtsError(f"--text-file {args.text_file}: no sentence in it")
        styles: dict[str, Style | None] = {"neutral": None}
        for path in args.references:
            if path.stem in styles:
                raise GstTtsError(f"--references: two references named {path.stem!r}")
            styles[path.stem] = Style(reference=path)
        return spoken_texts(synth, texts, styles, seed=args.seed, **options)

    from gst_tts.checkpoints.acoustic import load_checkpoint
    from gst_tts.data.cache import default_cache_dir
    from gst_tts.data.corpus import read_corpus

    val_ids = set(load_checkpoint(args.checkpoint).get("val_ids", []))
    if args.split == "val" and not val_ids:
        raise GstTtsError(f"{args.checkpoint}: the checkpoint records no validation ids; use --split train")
    utterances = [u for u in read_corpus(args.corpus) if (u.id in val_ids) == (args.split == "val")][: args.limit]
    if not utterances:
        raise GstTtsError(f"--corpus {args.corpus}: no {args.split} utterance of this checkpoint in it")
    name = f"{args.mode}-{args.split}"
    if args.mode == "teacher-forced":
        return {
            name: teacher_forced_clips(
                synth,
                utterances,
                args.cache_dir or default_cache_dir(args.corpus),
                batch_size=options["batch_size"],
                seed=args.seed,
            )
        }
    return {name: spoken_utterances(synth, utterances, seed=args.seed, **options)}
