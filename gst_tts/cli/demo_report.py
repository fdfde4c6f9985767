"""Synthesize held-out sentences in the styles of unseen references; report alignment and transfer.

Used by ``make demo`` after training. References are espeak-ng renders in voices and variants the
demo corpus never used, with pitch, intonation, rate and pauses spread over its ranges
(:func:`gst_tts.analysis.style_transfer.espeak_references`); each reads sentences the corpus does
not hold, and the model speaks other such sentences in each one's style. Writes the references,
wavs and alignment PNGs, ``summary.json`` and ``summary.txt``: alignment health, how the
outputs' F0, F0 range and rate follow the references' (Pearson r and slope over the set; the
model's own output, then, on lines of their own, the same with the reference's tempo and F0 range
copied onto it after the model: signal processing, not the model's style), and
intelligibility: the character and word error rates of an ASR's transcripts of the model's own
speech (:mod:`gst_tts.analysis.intelligibility`) for the held-out corpus utterances teacher-forced
and for sentences of words the corpus never uses (:data:`~gst_tts.demo.sentences.NEW_WORD_SENTENCES`),
neutral and in the first ``--asr-styles`` references' styles, beside two figures of speech that is not
the model's: the held-out recordings, and espeak-ng reading the new-word sentences in styles drawn
as the corpus's. Without the asr extra that part is left out, and ``summary.txt`` says so.
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
    check_transfer_counts,
    decoding_options,
    load_synthesizer,
    post_processing,
)
from gst_tts.cli.outputs import check_writable_location
from gst_tts.errors import GstTtsError
from gst_tts.files import write_json, write_text

DEFAULT_REFERENCES = 12
DEFAULT_ASR_STYLES = 3
#: The intelligibility sets that are not the model's speech: the ASR's floor on the corpus's voices.
NOT_THE_MODEL = ("recordings held-out", "corpus voices, new words")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    p.add_argument("--corpus", type=Path, required=True, help="the training corpus (its sentences are excluded)")
    p.add_argument("--out", type=Path, required=True, help="output folder (samples/ inside the demo dir)")
    p.add_argument(
        "--espeak",
        type=int,
        default=DEFAULT_REFERENCES,
        metavar="N",
        help=f"unseen espeak-ng references, at least 2 (default {DEFAULT_REFERENCES})",
    )
    p.add_argument("--sentences", type=int, default=4, help="held-out sentences per reference (default 4)")
    p.add_argument(
        "--asr-styles",
        type=int,
        default=DEFAULT_ASR_STYLES,
        metavar="N",
        help=f"intelligibility: new-word sentences spoken neutral and in the first N references' styles "
        f"(default {DEFAULT_ASR_STYLES}; at most --espeak)",
    )
    p.add_argument(
        "--asr-model",
        type=Path,
        default=None,
        help="the ASR's faster-whisper model folder (default: $GST_TTS_ASR_MODEL, else the asr extra's Whisper base)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="the corpus's feature cache, for the teacher-forced figure (default ~/.cache/gst-tts/<corpus>-<hash>)",
    )
    p.add_argument(
        "--no-post-processed",
        dest="post_processed",
        action="store_false",
        help="leave out the figures with the reference's tempo and F0 range copied onto the outputs after"
        " the model (the model's own figures come first either way)",
    )
    add_seed_argument(p, "the references and of synthesis")
    add_decoding_arguments(p)
    add_progress_argument(p)


def run(args: argparse.Namespace) -> int:
    from gst_tts.analysis.alignment import ALIGNED_CRITERIA, mean_health
    from gst_tts.analysis.plots import save_figure
    from gst_tts.analysis.style_transfer import espeak_references, held_out_sentences
    from gst_tts.audio.io import write_wav
    from gst_tts.data.corpus import read_corpus
    from gst_tts.inference.transfer import evaluate_style_transfer

    options = decoding_options(args)
    check_transfer_counts(args.espeak, args.sentences)
    if args.asr_styles < 0:
        raise GstTtsError(f"--asr-styles must be at least 0, got {args.asr_styles}")
    check_writable_location(args.out / "summary.json", "--out")  # before minutes of decoding, not after
    synth = load_synthesizer(args)
    utterances = read_corpus(args.corpus)
    seen = [u.text for u in utterances]
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

    report = evaluate_style_transfer(
        synth, references, texts, seed=args.seed, on_output=save, progress=not args.no_progress, **options
    )
    # What the copies after the model add, on lines of their own: the reference's tempo, and its F0
    # range where the vocoder can set one.
    copies, copied = post_processing(synth, tempo=True, f0_range=True)
    post = (
        evaluate_style_transfer(
            synth, references, texts, seed=args.seed, progress=not args.no_progress, **copies, **options
        )
        if args.post_processed
        else None
    )
    summary = mean_health(report.healths)
    summary["stopped_on_token_rate"] = float(np.mean([reason == "stop_token" for reason in report.stop_reasons]))
    summary["aligned_criteria"] = ALIGNED_CRITERIA
    fits = next(iter(report.fits.values()))
    intelligibility, intelligibility_lines = _intelligibility(args, synth, utterances, references, options)
    write_json(
        out / "summary.json",
        {
            "checkpoint": str(args.checkpoint),
            "held_out_sentences": texts,
            "alignment": summary,
            "f0_range": "decoded",
            "tempo": "decoded",
            "intelligibility": intelligibility,
            **report.to_dict(),
            **({"post_processed": {"copied": copied, **post.to_dict()}} if post else {}),
        },
    )
    lines = [
        *intelligibility_lines,
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
        lines.append(
            f"  {row['name']:<22} {row['info'].get('label', ''):<10} F0 {_hz(ref['f0_hz'])} → {_hz(o['f0_hz'])}   "
            f"range {_num(ref['f0_range_st'])} → {_num(o['f0_range_st'])} st   "
            f"rate {_num(ref['rate_letters_per_s'])} → {_num(o['rate_letters_per_s'])} letters/s   "
            f"aligned {row['aligned_share']:.0%}"
        )
    lines.append(
        f"Style transfer from {len(references)} unseen references, the model alone (output vs reference; "
        "F0 and rate in log; its own tempo and F0 range):"
    )
    lines += _fit_lines(fits)
    if post:
        lines.append(f"Post-processed, not the model: the reference's {copied} copied onto each output after decoding:")
        lines += _fit_lines(next(iter(post.fits.values())))
    write_text(out / "summary.txt", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _intelligibility(
    args: argparse.Namespace, synth, utterances: list, references: list, options: dict
) -> tuple[dict | None, list[str]]:
    """The intelligibility figures (None without the asr extra) and their lines for summary.txt; writes
    the clips it scored under ``OUT/intelligibility/``."""
    from gst_tts.analysis import intelligibility
    from gst_tts.audio.io import load_audio, write_wav
    from gst_tts.checkpoints.acoustic import load_checkpoint
    from gst_tts.data.cache import default_cache_dir
    from gst_tts.demo.corpus import SAMPLE_RATE, draw_settings, render_sentence
    from gst_tts.demo.sentences import NEW_WORD_SENTENCES
    from gst_tts.inference.intelligibility import Clip, score_clips, spoken_texts, teacher_forced_clips
    from gst_tts.inference.style import Style

    if not intelligibility.asr_available():
        return None, ["Intelligibility: not measured (no ASR: pip install 'gst-tts[asr]')"]
    transcriber = intelligibility.WhisperTranscriber(args.asr_model, threads=args.threads or 1)
    val_ids = set(load_checkpoint(args.checkpoint).get("val_ids", []))
    held_out = [u for u in utterances if u.id in val_ids]
    sets: dict[str, list] = {}
    if held_out:  # the recordings themselves: what the ASR hears of the corpus's own voices
        sets["recordings held-out"] = [Clip(u.id, u.text, *load_audio(u.audio_path)) for u in held_out]
        sets["teacher-forced held-out"] = teacher_forced_clips(
            synth,
            held_out,
            args.cache_dir or default_cache_dir(args.corpus),
            batch_size=options["batch_size"],
            seed=args.seed,
        )
    # The corpus's synthesizer reading the new-word sentences, each in a style drawn as the corpus's
    # are (another seed): what the ASR hears of a model that speaks them as well as its teacher.
    sets["corpus voices, new words"] = [
        Clip(f"NEW-{i + 1:02d}", text, render_sentence(text, settings), SAMPLE_RATE)
        for i, (text, settings) in enumerate(
            zip(NEW_WORD_SENTENCES, draw_settings(len(NEW_WORD_SENTENCES), args.seed + 1))
        )
    ]
    styles = {
        "neutral": None,
        **{r.name: Style(reference=(r.audio, r.sample_rate)) for r in references[: args.asr_styles]},
    }
    sets.update(spoken_texts(synth, NEW_WORD_SENTENCES, styles, seed=args.seed, **options))
    figures = {"asr": transcriber.describe(), "normalisation": intelligibility.NORMALISATION, "sets": {}}
    lines = [f"Intelligibility ({transcriber.describe()}; the model's own speech, nothing copied after decoding):"]
    for name, clips in sets.items():
        scores, total = score_clips(transcriber, clips)
        for clip in clips if name not in NOT_THE_MODEL else ():
            write_wav(
                args.out / "intelligibility" / name.replace(" ", "-") / f"{clip.id}.wav", clip.samples, clip.sample_rate
            )
        figures["sets"][name] = {"summary": total.to_dict(), "utterances": [s.to_dict() for s in scores]}
        what = {
            "recordings held-out": f"{total.count} held-out corpus recordings (not the model: the ASR's own figure)",
            "corpus voices, new words": (
                f"{total.count} sentences of new words read by espeak-ng in corpus styles (not the model)"
            ),
            "teacher-forced held-out": f"{total.count} held-out corpus utterances, teacher-forced",
        }.get(name, f"{total.count} sentences of new words, {'neutral' if name == 'neutral' else 'style of ' + name}")
        lines.append(f"  CER {total.cer:.3f}   WER {total.wer:.3f}   {what}")
    lines.append(f"  (CER/WER after: {intelligibility.NORMALISATION})")
    return figures, lines


def _fit_lines(fits: dict) -> list[str]:
    from gst_tts.analysis.style_transfer import MEASURES

    return [
        f"  {MEASURES[name][1]:<14} r {_num(f.r, 2)}   slope {_num(f.slope, 2)}   (Spearman "
        f"{_num(f.spearman, 2)}, n {f.n})"
        for name, f in fits.items()
    ]


def _hz(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} Hz"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"
