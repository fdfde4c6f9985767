"""``model.json``: what an export folder holds and how its graphs are called, read without torch.

Written by :mod:`gst_tts.export` beside the ONNX graphs; read by
:class:`~gst_tts.runtime.OnnxSynthesizer`. Everything the runtime needs besides the graphs is in
it: the audio settings, the symbol table (with its frontend, language and cleaner), r, the decoding
defaults, the token and head counts, the neutral style, the mel statistics and the file names.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from gst_tts.errors import ExportError, first_line

FORMAT = "gst-tts-onnx"
VERSION = 1
MANIFEST = "model.json"

#: Graph and array files of an export folder, by role.
FILES = {
    "encoder": "encoder.onnx",  # text ids, lengths, style → memory, prepared attention tensors, initial attention state
    "decoder_step": "decoder_step.onnx",  # one decoder step: frame, dropout masks, state → frames, stop logit, state
    "postnet": "postnet.onnx",  # decoder mel, lengths → postnet mel
    "style_reference": "style_reference.onnx",  # reference mel, lengths → embedding, token weights, style
    "style_tokens": "style_tokens.onnx",  # reference embedding → token weights, style
    "style_weights": "style_weights.onnx",  # token weights → style
    "mel_filters": "mel_filters.npy",  # (n_fft // 2 + 1, n_mels) slaney filterbank of the audio settings
}
#: The optional vocoder graph (``gst-tts export --vocoder``): a HiFi-GAN generator, log-mel
#: (batch, n_mels, frames) → audio; or the spectral vocoder's estimator, log-mel (batch, frames,
#: n_mels) → log magnitude (batch, frames, bins) and, with a pitch head, pitch (batch, frames, 2).
#: The manifest's ``vocoder`` entry says which (``{"kind": "hifigan"}``, or ``{"kind": "spectral",
#: "pitch_head", "magnitude_power", "n_iter", "momentum"}``); an export without it is HiFi-GAN's.
VOCODER_FILE = "vocoder.onnx"
VOCODER_KINDS = ("hifigan", "spectral")
#: The spectral entry's settings and their types (the keywords of ``spectral_audio``, and the head).
_SPECTRAL_ENTRY = {"pitch_head": bool, "magnitude_power": (int, float), "n_iter": int, "momentum": (int, float)}

# Keys a manifest of this version must hold.
_REQUIRED = (
    "format",
    "version",
    "audio",
    "symbols",
    "reduction_factor",
    "n_mels",
    "n_tokens",
    "n_heads",
    "prenet_dim",
    "prenet_dropout",
    "prenet_dropout_at_inference",
    "attention_rnn_dim",
    "decoder_rnn_dim",
    "memory_dim",
    "attention",
    "decoding",
    "neutral_style",
    "mel_stats",
    "reference_frames",
    "step_graph",
    "files",
)


def read_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    """The checked ``model.json`` of an export folder.

    Raises:
        ExportError: no such folder or manifest, not JSON, another format or a newer version, a key
            missing, or a file it names absent (one line naming the folder and the problem).
    """
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise ExportError(f"{folder}: not a gst-tts ONNX export (no {MANIFEST}; make one with gst-tts export)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ExportError(f"{path}: unreadable ({first_line(exc)})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ExportError(f"{path}: not a gst-tts ONNX manifest (format {FORMAT!r} expected)")
    version = manifest.get("version")
    if not isinstance(version, int) or not 1 <= version <= VERSION:
        raise ExportError(
            f"{path}: version {version!r} is not one this gst-tts reads (1 to {VERSION}): export it again"
        )
    missing = [k for k in _REQUIRED if k not in manifest]
    if missing:
        raise ExportError(f"{path}: missing {', '.join(missing)}")
    files = manifest["files"]
    if not isinstance(files, dict):
        raise ExportError(f"{path}: files must be a mapping of role to file name")
    for role, name in files.items():
        if name is None:
            continue
        if not isinstance(name, str) or Path(name).name != name or not (folder / name).is_file():
            raise ExportError(f"{path}: {role} file {name!r} is not in the folder")
    stats = manifest["mel_stats"]
    n_mels = manifest["n_mels"]
    if not (
        isinstance(stats, dict)
        and all(len(stats.get(k) or []) == n_mels for k in ("mean", "std"))
        and all(isinstance(v, (int, float)) and math.isfinite(v) for k in ("mean", "std") for v in stats[k])
    ):
        raise ExportError(f"{path}: mel_stats must hold {n_mels} finite means and deviations")
    if files.get("vocoder") is not None:
        entry = manifest.setdefault("vocoder", {"kind": "hifigan"})
        if not isinstance(entry, dict) or entry.get("kind") not in VOCODER_KINDS:
            raise ExportError(f"{path}: vocoder must name its kind, one of {', '.join(VOCODER_KINDS)}")
        if entry["kind"] == "spectral":
            bad = [
                k
                for k, kind in _SPECTRAL_ENTRY.items()
                if not isinstance(entry.get(k), kind) or (kind is not bool and isinstance(entry.get(k), bool))
            ]
            if bad or not 0 <= entry["n_iter"] <= 10_000:
                raise ExportError(
                    f"{path}: the spectral vocoder's {', '.join(bad) or 'n_iter'} is missing or not valid"
                )
    return manifest
