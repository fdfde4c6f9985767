"""Speak text in the style of a reference recording, of given token weights, of a mix, or neutrally.

Examples::

    gst-tts synthesize --checkpoint last.pt --text "Hello there." --reference calm.wav --out hello.wav
    gst-tts synthesize --checkpoint last.pt --text-file lines.txt --style-weights "3=0.4,7=-0.2" --out out/ --plot
    gst-tts synthesize --checkpoint last.pt --text "Hi." --style-mix "a.wav=0.5,b.wav=0.5" --out hi.wav --seed 1
    echo "Read from a pipe." | gst-tts synthesize --checkpoint last.pt --text-file - --out piped/

``--vocoder auto`` (the default) speaks with the vocoder recorded beside the checkpoint (``make demo``
records its GTA-tuned one), else Griffin-Lim; the first log line says which and why.
``--text`` writes the one ``--out X.wav``; ``--text-file`` (one utterance per line, blank lines
skipped; ``-`` reads standard input) writes ``DIR/0001.wav``, ``DIR/0002.wav``, … numbered by line.
Beside every wav go a ``.json`` sidecar and, on request, ``.alignment.npy`` / ``.alignment.png``.

Everything (texts, checkpoint, references, weights, output locations) is checked before the
first file is written, and every file is written to a temporary name and then renamed.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import logging
from pathlib import Path
import warnings

from tqdm.contrib.logging import logging_redirect_tqdm

from gst_tts.cli.args import (
    STDIN,
    add_decoding_arguments,
    add_model_arguments,
    add_progress_argument,
    add_seed_argument,
    add_style_arguments,
    add_text_arguments,
    decoding_options,
    attach_vocoder,
    load_synthesizer,
    read_text_input,
    resolve_cli_style,
    add_f0_range_argument,
    add_tempo_argument,
)
from gst_tts.cli.outputs import check_writable_location, write_outputs
from gst_tts.errors import GstTtsError, TextError
from gst_tts.inference.synthesizer import DEFAULT_PAUSE_S, MAX_PAUSE_S, MAX_TEXT_CHARS, SEED_RANGE, Synthesizer
from gst_tts.progress import progress_bar
from gst_tts.text.symbols import DroppedCharacterWarning

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- the command


@dataclass
class _Utterance:
    text: str
    name: str  # for messages: "line 3" or the output file name
    wav: Path
    line: int | None


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    add_text_arguments(
        p,
        required=True,
        text_help=f"the text to speak, at most {MAX_TEXT_CHARS:,} characters (--out is then a .wav file)",
        file_help=f"one utterance per line, at most {MAX_TEXT_CHARS:,} characters each (--out is then a folder)",
    )
    add_style_arguments(p)
    add_f0_range_argument(p)
    add_tempo_argument(p)
    p.add_argument("--out", type=Path, required=True, help="X.wav for --text; a folder for --text-file")
    p.add_argument("--plot", action="store_true", help="also write X.alignment.png (attention, stop token, mel)")
    p.add_argument(
        "--save-alignment",
        action="store_true",
        help="also write X.alignment.npy (float32, decoder steps × input symbols)",
    )
    add_seed_argument(
        p,
        "the prenet dropout, random at inference: the same seed, the same output; each batch of lines "
        "takes the next seed",
    )
    add_decoding_arguments(p)
    add_progress_argument(p)
    p.add_argument(
        "--pause",
        type=float,
        default=DEFAULT_PAUSE_S,
        help=f"seconds of silence between chunks of a long text, at most {MAX_PAUSE_S:g} (default {DEFAULT_PAUSE_S})",
    )


def _read_utterances(args: argparse.Namespace) -> list[_Utterance]:
    out: Path = args.out
    if args.text is not None:
        if out.suffix.lower() != ".wav":
            raise GstTtsError(f"--out must be a .wav file with --text, got {out}")
        if out.is_dir():
            raise GstTtsError(f"--out {out} is a folder; give a .wav file name with --text")
        check_writable_location(out, "--out")
        return [_Utterance(args.text, out.name, out, None)]
    path: Path = args.text_file
    # "\n" alone ends a line (reading turns "\r\n" and "\r" into it): splitlines() would also break
    # at form feeds, U+2028 and other separators, and number the wavs apart from the editor's lines.
    lines = read_text_input(path).split("\n")
    if str(path) == STDIN:
        path = Path("<stdin>")
    if out.exists() and not out.is_dir():
        raise GstTtsError(f"--out {out} exists and is not a folder; --text-file writes one wav per line into a folder")
    check_writable_location(out / "x", "--out")
    width = max(4, len(str(len(lines))))
    utterances = [
        _Utterance(line, f"{path.name}:{n}", out / f"{n:0{width}d}.wav", n)
        for n, line in enumerate(lines, 1)
        if line.strip()
    ]
    if not utterances:
        raise TextError(f"{path}: no text (every line is blank)")
    return utterances


def _validate_texts(synth: Synthesizer, utterances: list[_Utterance], source: str) -> None:
    """Every text must be one the synthesizer reads (so that no group fails after others are
    written); dropped characters are reported once, one line each."""
    for u in utterances:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DroppedCharacterWarning)
            try:
                synth.check_text(u.text)
            except TextError as exc:
                raise TextError(f"{source}:{u.line}: {exc}" if u.line is not None else str(exc)) from None
        for w in caught:
            log.warning("%s: %s", u.name, w.message)


def run(args: argparse.Namespace) -> int:
    # 1. Validate everything; nothing is written before all of it has passed.
    utterances = _read_utterances(args)
    options = decoding_options(args)
    if not 0 <= args.pause <= MAX_PAUSE_S:  # NaN fails too
        raise GstTtsError(f"--pause must be from 0 to {MAX_PAUSE_S:g} seconds, got {args.pause}")
    # Each batch of lines takes the next seed: the last one must fit too.
    last_seed = args.seed + (len(utterances) - 1) // options["batch_size"]
    if not SEED_RANGE[0] <= args.seed <= last_seed <= SEED_RANGE[1]:
        raise GstTtsError(
            f"--seed must be from {SEED_RANGE[0]} to {SEED_RANGE[1] - last_seed + args.seed} "
            f"for {len(utterances)} lines, got {args.seed}"
        )
    synth = load_synthesizer(args, vocoder=False)  # its line is logged once the inputs have passed
    source = "--text" if args.text_file is None else "<stdin>" if str(args.text_file) == STDIN else str(args.text_file)
    _validate_texts(synth, utterances, source)
    attach_vocoder(synth, args)
    style, style_info = resolve_cli_style(synth, args, after_the_model=True)

    # 2. Synthesize a batch of lines at a time and write its files, so memory stays bounded.
    group = options["batch_size"]
    bounded, troubled, total_s = [], [], 0.0
    multi = len(utterances) > 1
    with logging_redirect_tqdm(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedCharacterWarning)  # already reported above
        bar = progress_bar(total=len(utterances), desc="synthesize", unit="utt", enabled=multi and not args.no_progress)
        for g, start in enumerate(range(0, len(utterances), group)):
            batch = utterances[start : start + group]
            results = synth.synthesize(
                [u.text for u in batch],
                styles=[style] * len(batch),
                seed=args.seed + g,
                pause_s=args.pause,
                names=[u.name for u in batch],
                **options,
            )
            for u, r in zip(batch, results):
                extra = {"style": style_info, "seed": args.seed, "checkpoint": str(args.checkpoint)}
                if u.line is not None:
                    extra["line"] = u.line
                write_outputs(
                    r,
                    u.wav,
                    save_alignment=args.save_alignment,
                    plot=args.plot,
                    extra=extra,
                    title=f"{u.name}: {r.text[:80]}",
                )
                total_s += r.duration_s
                if r.stopped_on_bound:
                    bounded.append(u)
                if not r.ok:
                    troubled.append(u)
            bar.update(len(batch))
        bar.close()

    where = utterances[0].wav if not multi else args.out
    summary = f"wrote {len(utterances)} utterance{'s' if multi else ''} ({total_s:.1f} s of audio) to {where}"
    summary += f"; {len(bounded)} stopped on the step bound" + _names(bounded)
    summary += f"; {len(troubled)} with attention problems" + _names(troubled)
    print(summary)
    return 0


def _names(utterances: list[_Utterance], most: int = 5) -> str:
    if not utterances:
        return ""
    shown = ", ".join(u.wav.name for u in utterances[:most])
    return f" ({shown}{', …' if len(utterances) > most else ''})"
