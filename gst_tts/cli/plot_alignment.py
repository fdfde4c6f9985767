"""Plot attention, stop token and mel for a text (from a checkpoint) or a saved alignment.

Examples::

    gst-tts plot-alignment --checkpoint last.pt --text "Hello there." --out hello.png
    gst-tts plot-alignment --checkpoint last.pt --text "Hello." --reference calm.wav --seed 1 --out hello.png
    gst-tts plot-alignment --alignment out/0003.alignment.npy --out 0003.png

From a checkpoint the figure has three panels on one time axis (seconds): the attention map with
the input symbols labelled, the stop-token probability and the mel spectrogram. From a saved
``.alignment.npy`` only the attention map can be drawn; the ``.json`` sidecar written beside it
by ``gst-tts synthesize`` supplies the symbol labels and the time axis when present.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from gst_tts.analysis.alignment import alignment_health
from gst_tts.analysis.plots import plot_alignment, save_figure
from gst_tts.cli.args import (
    add_decoding_arguments,
    add_model_arguments,
    add_seed_argument,
    add_style_arguments,
    add_text_arguments,
    decoding_options,
    load_synthesizer,
    one_text,
    resolve_cli_style,
)
from gst_tts.cli.outputs import check_writable_location
from gst_tts.errors import GstTtsError


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, checkpoint_required=False)
    add_text_arguments(
        p,
        text_help="text to synthesize and plot (with --checkpoint)",
        file_help="the text to synthesize and plot, its lines joined (with --checkpoint)",
    )
    add_style_arguments(p)
    p.add_argument("--alignment", type=Path, help="a saved X.alignment.npy (instead of --checkpoint/--text)")
    p.add_argument("--out", type=Path, required=True, help="image file (.png, .pdf, .svg)")
    add_seed_argument(p, "the prenet dropout, random at inference: the same seed, the same figure")
    add_decoding_arguments(p)


def _load_alignment(path: Path) -> np.ndarray:
    if not path.is_file():
        raise GstTtsError(f"{path}: alignment file not found")
    try:
        a = np.load(path, allow_pickle=False)  # never unpickle objects from a file
    except Exception as exc:  # ValueError/OSError/EOFError for non-npy content
        raise GstTtsError(f"{path}: not a saved alignment (.npy) ({type(exc).__name__})") from None
    if not isinstance(a, np.ndarray) or a.ndim != 2 or 0 in a.shape or not np.issubdtype(a.dtype, np.number):
        raise GstTtsError(
            f"{path}: expected a non-empty 2-D numeric array (decoder steps × input symbols), got shape "
            f"{getattr(a, 'shape', None)}"
        )
    return a.astype(np.float32)


def _sidecar(path: Path) -> dict:
    """The synthesize sidecar of ``X.alignment.npy`` (``X.json``), or {} when absent or unreadable."""
    name = path.name
    stem = name[: -len(".alignment.npy")] if name.endswith(".alignment.npy") else path.stem
    side = path.with_name(stem + ".json")
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run(args: argparse.Namespace) -> int:
    text = one_text(args)
    from_model = args.checkpoint is not None or text is not None
    if from_model == (args.alignment is not None):
        raise GstTtsError("give either --checkpoint with --text, or --alignment")
    check_writable_location(args.out, "--out")
    if args.alignment is not None:
        if any(getattr(args, k) is not None for k in ("reference", "style_weights", "style_dials", "style_mix")):
            raise GstTtsError("style options need --checkpoint and --text, not --alignment")
        a = _load_alignment(args.alignment)
        side = _sidecar(args.alignment)
        symbols = side.get("input_symbols")
        labels = list(symbols) if isinstance(symbols, str) and len(symbols) == a.shape[1] else None
        hop = side.get("seconds_per_step")
        hop = float(hop) if isinstance(hop, (int, float)) and hop > 0 else None
        health = alignment_health(a)
        title = str(side.get("text", args.alignment.name))[:100]
        save_figure(plot_alignment(a, input_labels=labels, hop_seconds=hop, title=title, health=health), args.out)
    else:
        if args.checkpoint is None or text is None:
            raise GstTtsError("--checkpoint and --text go together")
        options = decoding_options(args)
        synth = load_synthesizer(args)
        weights = resolve_cli_style(synth, args)[0].weights
        # Mel and alignment are all the figure needs: skip the vocoder.
        result = synth.synthesize(
            text, style_weights=weights, seed=args.seed, vocode=False, names=["--text"], **options
        )
        health = result.health
        save_figure(result.figure(title=result.text[:100]), args.out)
    print(f"wrote {args.out}: {health.summary()}")
    return 0
