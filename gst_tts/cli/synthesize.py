"""Speak text in the style of a reference recording, of given token weights, of a mix, or neutrally.

Examples::

    gst-tts synthesize --checkpoint last.pt --text "Hello there." --reference calm.wav --out hello.wav
    gst-tts synthesize --checkpoint last.pt --text-file lines.txt --style-weights "3=0.4,7=-0.2" --out out/ --plot
    gst-tts synthesize --checkpoint last.pt --text "Hi." --style-mix "a.wav=0.5,b.wav=0.5" --out hi.wav --seed 1

``--text`` writes the one ``--out X.wav``; ``--text-file`` (one utterance per line, blank lines
skipped) writes ``DIR/0001.wav``, ``DIR/0002.wav``, … numbered by line. Beside every wav go a
``.json`` sidecar and, on request, ``.alignment.npy`` / ``.alignment.png``.

Everything (texts, checkpoint, references, weights, output locations) is checked before the
first file is written, and every file is written to a temporary name and then renamed.

This module also holds the argument and output helpers the other synthesis commands share.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import logging
import os
from pathlib import Path
from typing import Any
import warnings

import numpy as np
import torch
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from gst_tts.audio.io import write_wav
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.errors import GstTtsError, TextError
from gst_tts.files import write_json, write_npy
from gst_tts.inference.results import SynthesisResult
from gst_tts.inference.synthesizer import DEFAULT_PAUSE_S, Synthesizer
from gst_tts.text.split import DEFAULT_MAX_CHARS
from gst_tts.text.symbols import DroppedCharacterWarning

log = logging.getLogger("gst_tts.synthesize")


# ---------------------------------------------------------------- shared arguments


def add_model_arguments(p: argparse.ArgumentParser, checkpoint_required: bool = True) -> None:
    p.add_argument("--checkpoint", type=Path, required=checkpoint_required, help="trained gst-tts checkpoint (.pt)")
    p.add_argument("--device", choices=("cpu", "cuda"), default=None, help="default: cuda when available, else cpu")
    p.add_argument("--int8", action="store_true",
                   help="CPU: int8 weights for the decoder's recurrent matrix products (faster, numerically close)")


def add_style_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--reference", type=Path, help="style transfer: speak in the style of this recording (any rate, stereo ok)")
    g.add_argument(
        "--style-weights", metavar="SPEC",
        help='style control by token weights, e.g. "3=0.4,7=-0.2" (every head) or "1:3=0.4" (head 1 only);'
        " unnamed tokens get 0",
    )
    g.add_argument("--style-mix", metavar="SPEC", help='weighted mix of references, e.g. "a.wav=0.5,b.wav=0.5"')


def add_decoding_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=None, help="make the output repeatable (prenet dropout is random at inference)")
    p.add_argument("--max-decoder-steps", type=int, default=1000, help="absolute decoder step bound per chunk (default 1000)")
    p.add_argument("--max-frames-per-symbol", type=float, default=20.0, help="length bound per input symbol (default 20)")
    p.add_argument("--max-chunk-chars", type=int, default=DEFAULT_MAX_CHARS,
                   help=f"longer texts are split at sentence, then clause boundaries (default {DEFAULT_MAX_CHARS})")
    p.add_argument("--batch-size", type=int, default=16, help="chunks decoded together (default 16)")


def decoding_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Synthesizer keyword arguments from :func:`add_decoding_arguments`, validated."""
    if args.max_decoder_steps < 1:
        raise GstTtsError(f"--max-decoder-steps must be at least 1, got {args.max_decoder_steps}")
    if not args.max_frames_per_symbol > 0:
        raise GstTtsError(f"--max-frames-per-symbol must be positive, got {args.max_frames_per_symbol}")
    if args.max_chunk_chars < 1:
        raise GstTtsError(f"--max-chunk-chars must be at least 1, got {args.max_chunk_chars}")
    if args.batch_size < 1:
        raise GstTtsError(f"--batch-size must be at least 1, got {args.batch_size}")
    return dict(
        batch_size=args.batch_size, max_decoder_steps=args.max_decoder_steps,
        max_frames_per_symbol=args.max_frames_per_symbol, max_chunk_chars=args.max_chunk_chars,
    )


def load_synthesizer(args: argparse.Namespace) -> Synthesizer:
    return Synthesizer.from_checkpoint(args.checkpoint, device=args.device, int8=args.int8)


def parse_style_weights(spec: str) -> dict[Any, float]:
    """``"3=0.4,7=-0.2"`` → ``{3: 0.4, 7: -0.2}``; ``"1:3=0.4"`` → ``{(1, 3): 0.4}`` (head 1).

    Token and head ranges are checked by :meth:`Synthesizer.style_weights_tensor`.
    """
    out: dict[Any, float] = {}
    items = [s.strip() for s in spec.split(",")]
    if not any(items):
        raise GstTtsError("--style-weights is empty; expected e.g. \"3=0.4,7=-0.2\"")
    for item in items:
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise GstTtsError(f"--style-weights: {item!r} is not TOKEN=WEIGHT (e.g. \"3=0.4\" or \"1:3=0.4\" for head 1)")
        head, colon, token = key.strip().rpartition(":")
        try:
            parsed_key: Any = (int(head), int(token)) if colon else int(token)
        except ValueError:
            raise GstTtsError(f"--style-weights: {key.strip()!r} is not a token index (or HEAD:TOKEN)") from None
        try:
            weight = float(value)
        except ValueError:
            raise GstTtsError(f"--style-weights: weight {value.strip()!r} of token {key.strip()} is not a number") from None
        if parsed_key in out:
            raise GstTtsError(f"--style-weights: token {key.strip()} is given twice")
        out[parsed_key] = weight
    return out


def parse_style_mix(spec: str) -> list[tuple[Path, float]]:
    """``"a.wav=0.5,b.wav=0.5"`` → ``[(Path("a.wav"), 0.5), (Path("b.wav"), 0.5)]``."""
    out = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        path, sep, value = item.rpartition("=")
        if not sep or not path.strip():
            raise GstTtsError(f"--style-mix: {item!r} is not FILE=WEIGHT")
        try:
            out.append((Path(path.strip()), float(value)))
        except ValueError:
            raise GstTtsError(f"--style-mix: weight {value.strip()!r} of {path.strip()} is not a number") from None
    if not out:
        raise GstTtsError("--style-mix is empty; expected e.g. \"a.wav=0.5,b.wav=0.5\"")
    return out


def resolve_cli_style(synth: Synthesizer, args: argparse.Namespace) -> tuple[torch.Tensor, dict[str, Any]]:
    """The ``(n_heads, n_tokens)`` weights of the chosen style option and a JSON description of it."""
    if getattr(args, "reference", None) is not None:
        return synth.resolve_style(reference=args.reference), {"source": "reference", "reference": str(args.reference)}
    if getattr(args, "style_weights", None) is not None:
        spec = parse_style_weights(args.style_weights)
        try:
            weights = synth.resolve_style(style_weights=spec)
        except GstTtsError as exc:
            raise GstTtsError(f"--style-weights: {exc}") from None
        return weights, {"source": "style_weights", "spec": args.style_weights}
    if getattr(args, "style_mix", None) is not None:
        mix = parse_style_mix(args.style_mix)
        return synth.resolve_style(style_mix=mix), {"source": "style_mix", "mix": {str(p): w for p, w in mix}}
    return synth.neutral_style_weights(), {"source": "neutral", "description": "uniform weights 1/n_tokens in every head"}


def check_writable_location(path: Path, what: str) -> None:
    """Fail early when ``path`` cannot be created: the nearest existing ancestor must be a writable folder."""
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise GstTtsError(f"{what} {path}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise GstTtsError(f"{what} {path}: {parent} is not writable")


def sidecar_paths(wav_path: Path) -> dict[str, Path]:
    stem = wav_path.with_suffix("")
    return {
        "json": stem.with_name(stem.name + ".json"),
        "alignment": stem.with_name(stem.name + ".alignment.npy"),
        "plot": stem.with_name(stem.name + ".alignment.png"),
    }


def write_outputs(
    result: SynthesisResult, wav_path: Path, *, save_alignment: bool, plot: bool, extra: dict[str, Any], title: str = ""
) -> list[Path]:
    """The wav and its sidecars; the wav is written last, so a wav always has its sidecars."""
    paths = sidecar_paths(wav_path)
    written = [write_json(paths["json"], {**result.to_dict(), **extra})]
    if save_alignment:
        written.append(write_npy(paths["alignment"], result.alignment.astype(np.float32)))
    if plot:
        from gst_tts.analysis.plots import save_figure

        written.append(save_figure(result.figure(title=title), paths["plot"]))
    write_wav(wav_path, result.audio, result.sample_rate)
    written.append(wav_path)
    return written


# ---------------------------------------------------------------- the command


@dataclass
class _Utterance:
    text: str
    name: str  # for messages: "line 3" or the output file name
    wav: Path
    line: int | None


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="the text to speak (--out is then a .wav file)")
    src.add_argument("--text-file", type=Path, help="one utterance per line (--out is then a folder)")
    add_style_arguments(p)
    p.add_argument("--out", type=Path, required=True, help="X.wav for --text; a folder for --text-file")
    p.add_argument("--plot", action="store_true", help="also write X.alignment.png (attention, stop token, mel)")
    p.add_argument("--save-alignment", action="store_true", help="also write X.alignment.npy (float32, decoder steps × input symbols)")
    add_decoding_arguments(p)
    p.add_argument("--griffin-lim-iters", type=int, default=32, help="Griffin-Lim iterations (default 32)")
    p.add_argument("--griffin-lim-momentum", type=float, default=0.99, help="Griffin-Lim momentum, 0 ≤ m < 1 (default 0.99)")
    p.add_argument("--pause", type=float, default=DEFAULT_PAUSE_S, help=f"seconds of silence between chunks of a long text (default {DEFAULT_PAUSE_S})")


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
    if not path.is_file():
        raise GstTtsError(f"{path}: text file not found")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise GstTtsError(f"{path}: not readable as UTF-8 text ({type(exc).__name__})") from None
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
    """Every text must give symbols; dropped characters are reported once, one line each."""
    for u in utterances:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DroppedCharacterWarning)
            try:
                synth.symbols.encode(u.text)
            except TextError as exc:
                raise TextError(f"{source}:{u.line}: {exc}" if u.line is not None else str(exc)) from None
        for w in caught:
            log.warning("%s: %s", u.name, w.message)


def _vocoder_settings(args: argparse.Namespace) -> None:
    if args.griffin_lim_iters < 1:
        raise GstTtsError(f"--griffin-lim-iters must be at least 1, got {args.griffin_lim_iters}")
    if not 0.0 <= args.griffin_lim_momentum < 1.0:
        raise GstTtsError(f"--griffin-lim-momentum must be in [0, 1), got {args.griffin_lim_momentum}")
    if not args.pause >= 0:
        raise GstTtsError(f"--pause must be >= 0, got {args.pause}")


def run(args: argparse.Namespace) -> int:
    # 1. Validate everything; nothing is written before all of it has passed.
    utterances = _read_utterances(args)
    kwargs = decoding_kwargs(args)
    _vocoder_settings(args)
    synth = load_synthesizer(args)
    _validate_texts(synth, utterances, str(args.text_file) if args.text_file is not None else "--text")
    weights, style_info = resolve_cli_style(synth, args)
    synth.vocoder = GriffinLimVocoder(synth.audio_config, n_iter=args.griffin_lim_iters, momentum=args.griffin_lim_momentum)

    # 2. Synthesize a batch of lines at a time and write its files, so memory stays bounded.
    group = kwargs["batch_size"]
    bounded, troubled, total_s = [], [], 0.0
    multi = len(utterances) > 1
    with logging_redirect_tqdm(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedCharacterWarning)  # already reported above
        bar = tqdm(total=len(utterances), desc="synthesize", unit="utt", disable=not multi, dynamic_ncols=True)
        for g, start in enumerate(range(0, len(utterances), group)):
            batch = utterances[start : start + group]
            results = synth.synthesize(
                [u.text for u in batch], style_weights=weights,
                seed=None if args.seed is None else args.seed + g,
                pause_s=args.pause, names=[u.name for u in batch], **kwargs,
            )
            for u, r in zip(batch, results):
                extra = {"style": style_info, "seed": args.seed, "checkpoint": str(args.checkpoint)}
                if u.line is not None:
                    extra["line"] = u.line
                write_outputs(r, u.wav, save_alignment=args.save_alignment, plot=args.plot, extra=extra,
                              title=f"{u.name}: {r.text[:80]}")
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
