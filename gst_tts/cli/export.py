"""Export a checkpoint to ONNX: the graphs and model.json that the torch-free runtime runs.

Examples::

    gst-tts export --checkpoint demo_out/checkpoints/best.pt --out exported/
    gst-tts export --checkpoint best.pt --vocoder hifigan/generator_v1 --out exported/

The folder holds the style, encoder, one-decoder-step and postnet graphs (fp32; batch, text and
reference lengths free), the mel filterbank and ``model.json`` (audio settings, symbol table, r,
decoding defaults, tokens and heads, neutral style, mel statistics, file names); with
``--vocoder``, the vocoder as ``vocoder.onnx``: a HiFi-GAN generator whole, or a spectral vocoder's
magnitude estimator (the runtime does its phase reconstruction in numpy, with the PyTorch vocoder's
own code). It is written whole or not at all; an
earlier export at ``--out`` is replaced. Run it with ``gst_tts.runtime.OnnxSynthesizer.from_dir``
(numpy, onnxruntime and soundfile: ``pip install 'gst-tts[onnx]'``); see docs/deployment.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gst_tts.errors import GstTtsError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", type=Path, required=True, help="trained gst-tts checkpoint (.pt)")
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="the export folder (new, empty, or an earlier export, which is replaced)",
    )
    p.add_argument(
        "--vocoder",
        type=Path,
        default=None,
        metavar="PATH",
        help="also export this vocoder: a gst-tts-train-vocoder checkpoint (HiFi-GAN, or the spectral "
        "vocoder's estimator, whose phase the runtime reconstructs in numpy) or a published "
        "HiFi-GAN file; default: none, the runtime uses its Griffin-Lim",
    )
    p.add_argument(
        "--vocoder-config",
        type=Path,
        default=None,
        metavar="PATH",
        help="a published HiFi-GAN file's config.json (default: config.json beside the --vocoder file)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        import onnx  # noqa: F401  (torch.onnx.export writes through it)
    except ImportError:
        raise GstTtsError("exporting needs the onnx package: pip install onnx onnxscript") from None
    from gst_tts.export import export_checkpoint

    if args.vocoder_config is not None and args.vocoder is None:
        raise GstTtsError("--vocoder-config needs --vocoder")
    out = export_checkpoint(args.checkpoint, args.out, vocoder=args.vocoder, vocoder_config=args.vocoder_config)
    print(f"exported {args.checkpoint} to {out}{' with its vocoder' if args.vocoder else ''}")
    return 0
