"""Print what a checkpoint holds: model kind and sizes, attention, r, audio settings, symbols, step, tokens and heads, which vocoders fit.

Examples::

    gst-tts info demo_out/checkpoints/best.pt
    gst-tts info demo_out/vocoder_gta/checkpoints/generator.pt
    gst-tts info --checkpoint last.pt --json

Reads an acoustic checkpoint (``gst-tts-train``: ``last.pt``, ``step_*.pt``, ``best.pt``) or a
vocoder checkpoint (``gst-tts-train-vocoder``: ``generator.pt``, ``last.pt``), checked as loading
checks it (format, version, digest), without running the model. Parameters are counted on the
meta device (nothing allocated). For an acoustic checkpoint, the vocoders that fit its features
are Griffin-Lim, the vocoder recorded beside it (``vocoder.json``) and any ``generator.pt`` of a
sibling run folder (``../*/checkpoints/generator.pt``) made for the same features.
"""  # noqa: E501 (line 1 is the command's --help description, gst_tts/cli/__init__.py: one line)

from __future__ import annotations

import argparse
from dataclasses import asdict
import json
from pathlib import Path
from typing import Any, Callable, Mapping

import torch
from torch import nn

from gst_tts.errors import CheckpointError, GstTtsError, first_line

# Sibling run folders searched for vocoders, relative to the checkpoint's folder; at most this many looked at.
_SIBLING_VOCODERS = "../*/checkpoints/generator.pt"
_MOST_SIBLINGS = 20
_SHOWN_SYMBOLS = 60
# Parts of a checkpoint that only resuming a run reads.
_RUN_PARTS = ("optimizer", "scheduler", "scaler", "train_state", "rng")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "checkpoint",
        nargs="?",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="an acoustic checkpoint (.pt) or a vocoder checkpoint (generator.pt, last.pt)",
    )
    p.add_argument(
        "--checkpoint", dest="checkpoint_option", type=Path, default=None, metavar="PATH", help="the same, as an option"
    )
    p.add_argument("--json", action="store_true", help="print the same as one JSON object")


def run(args: argparse.Namespace) -> int:
    path = _checkpoint_path(args)
    info = describe_checkpoint(path)
    if args.json:
        print(json.dumps(info, indent=2, ensure_ascii=False))
    else:
        rows = _rows(info)
        width = max(len(key) for key, _ in rows) + 1
        for key, value in rows:
            print(f"{key + ':' if key else '':<{width}} {value}")
    return 0


def _checkpoint_path(args: argparse.Namespace) -> Path:
    given = [p for p in (args.checkpoint, args.checkpoint_option) if p is not None]
    if not given:
        raise GstTtsError("give a checkpoint: gst-tts info CHECKPOINT (or --checkpoint PATH)")
    if len(given) == 2 and given[0] != given[1]:
        raise GstTtsError(f"two checkpoints given ({given[0]} and --checkpoint {given[1]}); give one")
    if given[0].is_dir():
        raise GstTtsError(f"{given[0]} is a folder; give a checkpoint file (.pt)")
    return given[0]


def describe_checkpoint(path: Path) -> dict[str, Any]:
    """What ``path`` holds, as a JSON-ready dict (``"kind"``: ``"acoustic"`` or ``"vocoder"``).

    Raises:
        CheckpointError: a missing file, or one that is neither a gst-tts checkpoint nor a gst-tts
            vocoder checkpoint (or is one that loading refuses: corrupted, newer, incomplete).
    """
    from gst_tts.audio.vocoders.checkpoint import is_vocoder_checkpoint
    from gst_tts.checkpoints.weights import load_weights_only

    stored = load_weights_only(path, error=CheckpointError, what="gst-tts checkpoint or vocoder checkpoint")
    if is_vocoder_checkpoint(stored):
        return _vocoder_info(stored, path)
    return _acoustic_info(stored, path)


# ---------------------------------------------------------------- acoustic checkpoints


def _acoustic_info(stored: Any, path: Path) -> dict[str, Any]:
    from gst_tts.model import GSTTacotron
    from gst_tts.checkpoints.acoustic import check_checkpoint, checkpoint_parts

    ckpt = check_checkpoint(stored, path)
    symbols, audio_config, stats = checkpoint_parts(ckpt, path)
    config = _effective_config(GSTTacotron, ckpt["model_config"], path, "model_config")
    parameters = _parameter_count(lambda: GSTTacotron(**config), path, "model_config")
    tokens, heads = config["gst_n_tokens"], config["gst_n_heads"]
    val_ids = ckpt.get("val_ids")
    return {
        "file": str(path),
        "kind": "acoustic",
        "format": f"{ckpt['format']} version {ckpt['version']}",
        "model": "GST-Tacotron",
        "parameters": parameters,
        "sizes": {
            key: config[key]
            for key in (
                "embedding_dim",
                "encoder_dim",
                "encoder_n_convs",
                "encoder_kernel_size",
                "attention_rnn_dim",
                "decoder_rnn_dim",
                "prenet_dim",
                "postnet_dim",
                "postnet_n_convs",
                "postnet_kernel_size",
                "gst_reference_channels",
                "gst_reference_dim",
                "gst_reference_time_strides",
                "gst_reference_norm",
                "gst_token_dim",
                "style_combine",
                "style_prosody_dim",
            )
        },
        "attention": {
            "kind": config["attention"],
            **{
                key: config[key]
                for key in (
                    "attention_dim",
                    "attention_location",
                    "attention_location_filters",
                    "attention_location_kernel_size",
                    "attention_dropout",
                )
            },
        },
        "reduction_factor": config["reduction_factor"],
        "audio": _audio(asdict(audio_config)),
        "symbols": {
            "count": len(symbols),
            "cleaner": symbols.cleaner,
            "pad": symbols.symbols[0],
            "end": symbols.symbols[1],
            "characters": "".join(symbols.symbols[2:]),
            **_frontend(symbols),
        },
        "step": ckpt.get("step"),
        "style": {
            "tokens": tokens,
            "heads": heads,
            "count_from": 0,
            "token_ids": f"0-{tokens - 1}",
            "head_ids": f"0-{heads - 1}",
        },
        "mel_normalisation": {"present": True, "channels": int(stats.mean.numel())},
        "reference_frames": ckpt.get("reference_frames"),
        "validation_ids": len(val_ids) if isinstance(val_ids, (list, tuple)) else None,
        "resumable": all(part in ckpt for part in _RUN_PARTS),
        "digest": _digest(ckpt),
        "vocoders": _fitting_vocoders(path, audio_config),
    }


def _frontend(symbols: Any) -> dict[str, Any]:
    """What the model reads: ``frontend``, ``language`` and ``espeak_version`` (``recorded``, the one its
    phonemes were made with, and ``installed``, the one synthesis would phonemize with); the last
    two None for characters."""
    from gst_tts.text.frontends import PhonemeFrontend
    from gst_tts.text.phonemes import espeak_version

    if not isinstance(symbols.frontend, PhonemeFrontend):
        return {"frontend": symbols.frontend.name, "language": None, "espeak_version": None}
    try:
        installed = espeak_version()
    except GstTtsError as exc:  # no usable espeak-ng here: still worth reading the rest
        installed = f"unavailable ({exc})"
    return {
        "frontend": symbols.frontend.name,
        "language": symbols.language,
        "espeak_version": {"recorded": symbols.frontend.espeak_version, "installed": installed},
    }


def _fitting_vocoders(path: Path, audio_config: Any) -> list[dict[str, Any]]:
    """Griffin-Lim, the recorded vocoder and the sibling runs' generators, each with whether it fits."""
    from gst_tts.audio.vocoders import GRIFFIN_LIM
    from gst_tts.inference.vocoder_choice import RECORD_NAME, recorded_vocoder, tidy_path, vocoder_fit

    found: list[dict[str, Any]] = [{"vocoder": GRIFFIN_LIM, "kind": GRIFFIN_LIM, "source": "always", "fits": True}]
    candidates: list[tuple[Path, str]] = []
    try:
        recorded = recorded_vocoder(path)
    except GstTtsError as exc:  # a malformed record is reported, not fatal: the rest is still worth reading
        found.append(
            {
                "vocoder": str(path.parent / RECORD_NAME),
                "source": f"recorded ({RECORD_NAME})",
                "fits": False,
                "problem": str(exc),
            }
        )
    else:
        if recorded is not None:
            candidates.append((recorded, f"recorded beside the checkpoint ({RECORD_NAME}): auto picks it"))
    siblings = sorted(path.parent.glob(_SIBLING_VOCODERS))[:_MOST_SIBLINGS]
    candidates += [(tidy_path(s), "sibling run folder") for s in siblings]
    seen: list[Path] = []
    for candidate, source in candidates:
        if any(candidate.resolve() == s for s in seen):
            continue
        seen.append(candidate.resolve())
        kind, problem = vocoder_fit(candidate, audio_config)
        entry = {"vocoder": str(candidate), "kind": kind, "source": source, "fits": problem is None}
        if problem is not None:
            entry["problem"] = problem.removeprefix(f"{candidate}: ")
        found.append(entry)
    return found


# ---------------------------------------------------------------- vocoder checkpoints


def _vocoder_info(stored: Any, path: Path) -> dict[str, Any]:
    from gst_tts.audio.vocoders.checkpoint import HIFIGAN_KIND, check_vocoder_checkpoint, generator_kind

    try:
        ckpt = check_vocoder_checkpoint(stored, path)
    except GstTtsError as exc:
        raise CheckpointError(str(exc)) from None
    kind = generator_kind(ckpt)
    if kind == HIFIGAN_KIND:
        from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator as cls
    else:
        from gst_tts.audio.vocoders.spectral import MagnitudeEstimator as cls
    config = _effective_config(cls, ckpt["generator_config"], path, "generator_config")
    audio = ckpt["audio_config"]
    val_ids = ckpt.get("val_ids")
    return {
        "file": str(path),
        "kind": "vocoder",
        "format": f"{ckpt['format']} version {ckpt['version']}",
        "vocoder": kind,
        "parameters": _parameter_count(lambda: cls(**config), path, "generator_config"),
        "sizes": config,
        "audio": _audio(audio) if isinstance(audio, Mapping) else None,
        "step": ckpt.get("step"),
        "contents": "generator only (for inference)"
        if "discriminator" not in ckpt and "optimizer" not in ckpt
        else "training checkpoint (generator"
        + (", discriminator" if "discriminator" in ckpt else "")
        + (", optimiser state" if "optimizer" in ckpt else "")
        + ")",
        "validation_ids": len(val_ids) if isinstance(val_ids, (list, tuple)) else None,
        "digest": _digest(ckpt),
    }


# ---------------------------------------------------------------- shared


def _effective_config(cls: type, stored: Any, path: Path, what: str) -> dict[str, Any]:
    """``stored`` (constructor keyword arguments) with the constructor's defaults for what it leaves out."""
    import inspect

    if not isinstance(stored, dict) or not all(isinstance(k, str) for k in stored):
        raise CheckpointError(f"{path}: {what} is not a dict of named settings")
    if any(isinstance(v, torch.Tensor) for v in stored.values()):
        raise CheckpointError(f"{path}: {what} holds a tensor, not plain settings")
    defaults = {
        name: p.default
        for name, p in inspect.signature(cls).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    unknown = [k for k in stored if k not in inspect.signature(cls).parameters]
    if unknown:
        raise CheckpointError(f"{path}: {what} has settings {cls.__name__} does not take: {', '.join(unknown[:5])}")
    merged = {**defaults, **stored}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in merged.items()}


def _parameter_count(build: Callable[[], nn.Module], path: Path, what: str) -> int:
    """Parameters of the module ``build`` makes, built on the meta device (nothing allocated; a
    constructor that computes on data is built on the CPU)."""
    try:
        try:
            with torch.device("meta"):
                module = build()
        except NotImplementedError:  # the spectral estimator computes its mel filters at construction
            module = build()
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise CheckpointError(f"{path}: unusable {what} ({first_line(exc)})") from None
    return sum(p.numel() for p in module.parameters())


def _audio(audio: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("sample_rate", "n_mels", "hop_length", "win_length", "n_fft", "fmin", "fmax")
    return {k: audio.get(k) for k in keys}


def _digest(ckpt: Mapping[str, Any]) -> str:
    digest = ckpt.get("digest")
    return f"checked ({digest})" if digest else "absent (written before digests: contents not verified)"


def _rows(info: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``info`` as (key, value) lines for a person."""
    audio = info["audio"]
    audio_line = (
        "unreadable"
        if audio is None
        else (
            f"{audio['sample_rate']} Hz, {audio['n_mels']} mels, hop {audio['hop_length']}, window "
            f"{audio['win_length']}, "
            f"n_fft {audio['n_fft']}, {audio['fmin']:g}-{audio['fmax']:g} Hz"
        )
    )
    if info["kind"] == "vocoder":
        return [
            ("file", info["file"]),
            ("format", info["format"]),
            ("vocoder", info["vocoder"]),
            ("parameters", f"{info['parameters']:,}"),
            ("sizes", ", ".join(f"{k} {_plain(v)}" for k, v in info["sizes"].items())),
            ("audio", audio_line),
            ("step", str(info["step"])),
            ("contents", info["contents"]),
            ("validation ids", "none" if info["validation_ids"] is None else str(info["validation_ids"])),
            ("digest", info["digest"]),
        ]
    sizes, attention, symbols, style = info["sizes"], info["attention"], info["symbols"], info["style"]
    shown = symbols["characters"][:_SHOWN_SYMBOLS]
    more = len(symbols["characters"]) - len(shown)
    rows = [
        ("file", info["file"]),
        ("format", info["format"]),
        ("model", f"{info['model']}, {info['parameters']:,} parameters"),
        ("embedding", str(sizes["embedding_dim"])),
        (
            "encoder",
            f"{sizes['encoder_dim']} ({sizes['encoder_n_convs']} convolutions of width "
            f"{sizes['encoder_kernel_size']}, BiLSTM)",
        ),
        ("decoder", f"attention LSTM {sizes['attention_rnn_dim']}, decoder LSTM {sizes['decoder_rnn_dim']}"),
        ("prenet", str(sizes["prenet_dim"])),
        (
            "postnet",
            f"{sizes['postnet_dim']} ({sizes['postnet_n_convs']} convolutions of width {sizes['postnet_kernel_size']})",
        ),
        (
            "attention",
            f"{attention['kind']} ("
            + ", ".join(f"{k.removeprefix('attention_')} {_plain(v)}" for k, v in attention.items() if k != "kind")
            + ")",
        ),
        ("r (frames per step)", str(info["reduction_factor"])),
        ("audio", audio_line),
        ("text frontend", _frontend_line(symbols)),
        (
            "symbols",
            f"{symbols['count']} ({symbols['cleaner']} cleaner): pad {symbols['pad']!r}, end {symbols['end']!r}, "
            f"characters {shown!r}" + (f" and {more} more" if more > 0 else ""),
        ),
        ("step", str(info["step"])),
        (
            "style tokens",
            f"{style['tokens']} per head, ids {style['token_ids']} (counted from 0); token dim "
            f"{sizes['gst_token_dim']}",
        ),
        (
            "style heads",
            f"{style['heads']}, ids {style['head_ids']} (counted from 0); combined by {sizes['style_combine']}",
        ),
        (
            "reference encoder",
            f"channels {_plain(sizes['gst_reference_channels'])}, dim {sizes['gst_reference_dim']}"
            f", time strides {_plain(sizes['gst_reference_time_strides'])}, norm {sizes['gst_reference_norm']}",
        ),
        ("mel normalisation", f"present ({info['mel_normalisation']['channels']} channels)"),
        ("validation ids", "none" if info["validation_ids"] is None else str(info["validation_ids"])),
        ("resumable", "yes (optimiser, schedule and random states)" if info["resumable"] else "no (model only)"),
        ("digest", info["digest"]),
    ]
    for i, vocoder in enumerate(info["vocoders"]):
        key = "vocoders that fit" if i == 0 else ""
        if vocoder["vocoder"] == vocoder["kind"]:  # Griffin-Lim: no file
            rows.append((key, f"{vocoder['vocoder']} ({vocoder['source']})"))
        elif vocoder["fits"]:
            rows.append((key, f"{vocoder['vocoder']} ({vocoder['kind']}; {vocoder['source']})"))
        else:
            rows.append((key, f"{vocoder['vocoder']} does not fit ({vocoder['source']}): {vocoder['problem']}"))
    return rows


def _frontend_line(symbols: Mapping[str, Any]) -> str:
    if symbols["language"] is None:
        return symbols["frontend"]
    version = symbols["espeak_version"]
    installed = "the same" if version["installed"] == version["recorded"] else version["installed"]
    return (
        f"{symbols['frontend']} ({symbols['language']}), made with espeak-ng {version['recorded']}; installed: "
        f"{installed}"
    )


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_plain(v) for v in value)
    if value is None:
        return "none"
    return str(value)
