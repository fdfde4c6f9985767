"""A checkpoint → an export folder: the ONNX graphs of :mod:`gst_tts.export.graphs` and ``model.json``.

The folder is what :class:`gst_tts.runtime.OnnxSynthesizer` runs without torch. It is written
whole or not at all (:func:`gst_tts.files.atomic_directory`). The graphs are fp32 and compute the
float (not int8) decoder step; their batch, text length and reference length are free.
"""

from __future__ import annotations

from dataclasses import asdict
import os
from pathlib import Path
from typing import Any
import warnings

import numpy as np
import torch
import torchaudio

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders.checkpoint import SPECTRAL_KIND
from gst_tts.errors import ExportError, OutputError, first_line
from gst_tts.export.graphs import (
    EXPORTABLE_KINDS,
    STATE_NAMES,
    STEP_INPUTS,
    EncoderGraph,
    PostnetGraph,
    ReferenceGraph,
    StepGraph,
    StepLayout,
    StyleWeightsGraph,
    TokensGraph,
    step_layout,
)
from gst_tts.files import atomic_directory, write_json, write_npy
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.model import GSTTacotron
from gst_tts.model.attention import ATTENTION_KINDS
from gst_tts.runtime.manifest import FILES, FORMAT, MANIFEST, VERSION, VOCODER_FILE

__all__ = ["export_checkpoint", "export_synthesizer", "check_exportable", "OPSET"]

#: ONNX opset of the graphs (onnxruntime 1.16 and later run it).
OPSET = 17


def check_exportable(model: GSTTacotron) -> None:
    """Raise ``ExportError`` (one line naming the kinds that export) unless the model's decoder
    attention is one whose step exports."""
    attention = model.decoder.attention
    if type(attention) not in EXPORTABLE_KINDS:
        names = [name for name, cls in ATTENTION_KINDS.items() if cls in EXPORTABLE_KINDS]
        raise ExportError(
            f"attention {type(attention).__name__} does not export to ONNX; the kinds that do: {', '.join(names)}"
        )


def export_checkpoint(
    checkpoint: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    vocoder: str | os.PathLike | None = None,
    vocoder_config: str | os.PathLike | None = None,
) -> Path:
    """Export an acoustic checkpoint (and optionally a vocoder file: a HiFi-GAN generator, with its
    published ``config.json`` where it has one, or a spectral vocoder's checkpoint) to ``out_dir``.

    Raises:
        CheckpointError, VocoderError: as :meth:`Synthesizer.from_checkpoint`.
        ExportError: an attention kind that does not export, a vocoder that does not, or an
            ``out_dir`` that is a file or a folder other than an earlier export.
        OutputError: the folder cannot be written.
    """
    _check_out_dir(Path(out_dir))  # before the checkpoint is read: a wrong --out costs nothing
    synth = Synthesizer.from_checkpoint(checkpoint, device="cpu", vocoder=vocoder, vocoder_config=vocoder_config)
    return export_synthesizer(synth, out_dir, source=Path(checkpoint).name, vocoder=vocoder is not None)


def export_synthesizer(
    synth: Synthesizer, out_dir: str | os.PathLike, *, source: str = "model", vocoder: bool = False
) -> Path:
    """Export a loaded :class:`Synthesizer`'s model (and, with ``vocoder``, its vocoder) to ``out_dir``."""
    model = synth.model.eval()
    check_exportable(model)
    out_dir = Path(out_dir)
    _check_out_dir(out_dir)
    vocoder_module, vocoder_entry = _vocoder_module(synth) if vocoder else (None, None)
    memory_dim = model.decoder.attention_rnn.input_size - model.decoder.prenet.layers[-1].out_features
    layout = step_layout(model.decoder.attention, memory_dim)
    with atomic_directory(out_dir) as staging, torch.no_grad(), warnings.catch_warnings():
        # The tracer warns about every Python-level shape read; the parity tests are the check.
        warnings.simplefilter("ignore")
        step_inputs = _export_graphs(model, layout, staging, memory_dim)
        write_npy(staging / FILES["mel_filters"], mel_filters(synth.audio_config))
        files = dict(FILES, vocoder=None)
        if vocoder_module is not None:
            _export_vocoder(vocoder_module, vocoder_entry, synth.audio_config, staging / VOCODER_FILE)
            files["vocoder"] = VOCODER_FILE
        manifest = _manifest(synth, layout, step_inputs, memory_dim, files, source)
        if vocoder_entry is not None:
            manifest["vocoder"] = vocoder_entry
        write_json(staging / MANIFEST, manifest)
    return out_dir


def _check_out_dir(out_dir: Path) -> None:
    """``ExportError`` unless ``out_dir`` is new, an empty folder or an earlier export (which is replaced)."""
    if out_dir.exists() and not (out_dir.is_dir() and (not any(out_dir.iterdir()) or (out_dir / MANIFEST).is_file())):
        raise ExportError(f"{out_dir}: exists and is not an earlier export (nor an empty folder); choose another --out")


def mel_filters(config: AudioConfig) -> np.ndarray:
    """``(n_fft // 2 + 1, n_mels)`` float32: the slaney filterbank
    :class:`~gst_tts.audio.features.MelExtractor` applies."""
    return (
        torchaudio.functional.melscale_fbanks(
            n_freqs=config.n_fft // 2 + 1,
            f_min=config.fmin,
            f_max=config.fmax,
            n_mels=config.n_mels,
            sample_rate=config.sample_rate,
            norm="slaney",
            mel_scale="slaney",
        )
        .numpy()
        .astype(np.float32)
    )


def _export_graphs(model: GSTTacotron, layout: StepLayout, folder: Path, memory_dim: int) -> list[str]:
    """Writes every model graph into ``folder``; returns the step graph's inputs as exported
    (ONNX drops an input the step does not read, such as the previous weights of a kind that keeps
    its own copy in its state)."""
    batch, symbols, frames = 2, 7, 40
    n_mels, heads, tokens = model.n_mels, model.n_heads, model.n_tokens
    token_dim = model.gst.token_dim
    text = torch.randint(2, model.encoder.embedding.num_embeddings, (batch, symbols))
    text_lengths = torch.tensor([symbols, symbols - 2])
    style = torch.randn(batch, token_dim)
    state_names = [f"attention_state_{i}" for i in range(layout.state)]
    per_symbol = [*layout.prepared, *state_names]
    encoder_out = ["memory", *per_symbol]
    _export(
        EncoderGraph(model, layout),
        (text, text_lengths, style),
        folder / FILES["encoder"],
        ["text", "text_lengths", "style"],
        encoder_out,
        {
            "text": ("batch", "symbols"),
            "text_lengths": ("batch",),
            "style": ("batch",),
            **{name: ("batch", "symbols") for name in encoder_out},
        },
    )

    reference = torch.randn(batch, frames, n_mels)
    reference_lengths = torch.tensor([frames, frames - 9])
    _export(
        ReferenceGraph(model),
        (reference, reference_lengths),
        folder / FILES["style_reference"],
        ["reference_mel", "reference_lengths"],
        ["embedding", "token_weights", "style"],
        {
            "reference_mel": ("batch", "frames"),
            "reference_lengths": ("batch",),
            "embedding": ("batch",),
            "token_weights": ("batch",),
            "style": ("batch",),
        },
    )
    embedding = torch.randn(batch, model.gst.reference_encoder.output_dim)
    _export(
        TokensGraph(model),
        (embedding,),
        folder / FILES["style_tokens"],
        ["embedding"],
        ["token_weights", "style"],
        {"embedding": ("batch",), "token_weights": ("batch",), "style": ("batch",)},
    )
    weights = torch.softmax(torch.randn(batch, heads, tokens), -1)
    _export(
        StyleWeightsGraph(model),
        (weights,),
        folder / FILES["style_weights"],
        ["token_weights"],
        ["style"],
        {"token_weights": ("batch",), "style": ("batch",)},
    )

    decoder = model.decoder
    mel = torch.randn(batch, frames, n_mels)
    _export(
        PostnetGraph(model),
        (mel, torch.tensor([frames, frames - 6])),
        folder / FILES["postnet"],
        ["mel", "mel_lengths"],
        ["mel_postnet"],
        {"mel": ("batch", "frames"), "mel_lengths": ("batch",), "mel_postnet": ("batch", "frames")},
    )

    # Sample step inputs of the right shapes: what the attention prepares from any memory will do.
    memory = torch.randn(batch, symbols, memory_dim)
    padding = torch.arange(symbols)[None, :] >= text_lengths[:, None]
    prepared = decoder.attention.prepare(memory, padding)
    per_symbol_values = [
        *(getattr(prepared, name) for name in layout.prepared),
        *decoder.attention.initial_state(prepared),
    ]
    prenet_dim = decoder.prenet.layers[-1].out_features
    ones = torch.ones
    step_args = (
        torch.randn(batch, n_mels),
        ones(batch, prenet_dim),
        ones(batch, prenet_dim),
        ones(batch, decoder.attention_rnn_dim),
        ones(batch, decoder.decoder_rnn_dim),
        torch.zeros(batch, decoder.attention_rnn_dim),
        torch.zeros(batch, decoder.attention_rnn_dim),
        torch.zeros(batch, decoder.decoder_rnn_dim),
        torch.zeros(batch, decoder.decoder_rnn_dim),
        torch.zeros(batch, symbols),
        torch.zeros(batch, memory_dim),
        memory,
        padding,
        *per_symbol_values,
    )
    step_in = [*STEP_INPUTS, *per_symbol]
    step_out = ["frames", "stop_logit", *(f"next_{n}" for n in STATE_NAMES), *(f"next_{n}" for n in state_names)]
    symbol_axes = {"attention_weights", "memory", "padding_mask", *per_symbol}
    axes = {name: ("batch", "symbols") if name in symbol_axes else ("batch",) for name in step_in}
    axes.update(
        {name: ("batch", "symbols") if name[len("next_") :] in symbol_axes else ("batch",) for name in step_out}
    )
    path = folder / FILES["decoder_step"]
    _export(StepGraph(model, layout), step_args, path, step_in, step_out, axes)
    import onnx  # the exporter's own dependency: read back which inputs the graph kept

    kept = {value.name for value in onnx.load(str(path), load_external_data=False).graph.input}
    return [name for name in step_in if name in kept]


def _export(
    module: torch.nn.Module,
    args: tuple,
    path: Path,
    inputs: list[str],
    outputs: list[str],
    axes: dict[str, tuple[str | None, ...]],
) -> None:
    """``torch.onnx.export`` of ``module`` in eval mode, each named axis left free.

    The TorchScript-based exporter: it exports the recurrences (LSTM, GRU) as ONNX's own ops with
    free lengths, which the graphs here need.
    """
    try:
        torch.onnx.export(
            module.eval(),
            args,
            str(path),
            input_names=inputs,
            output_names=outputs,
            opset_version=OPSET,
            dynamic_axes={name: {i: n for i, n in enumerate(names) if n} for name, names in axes.items()},
            dynamo=False,
        )
    except OutputError:
        raise
    except (RuntimeError, ValueError, TypeError) as exc:
        raise ExportError(f"{path.name}: the graph did not export ({type(exc).__name__}: {first_line(exc)})") from None


def _vocoder_module(synth: Synthesizer) -> tuple[torch.nn.Module, dict[str, Any]]:
    """The synthesizer's vocoder as a module that ONNX can hold, and its ``model.json`` entry
    (``vocoder``: its kind, and for the spectral vocoder what the runtime's numpy half needs).

    A HiFi-GAN generator exports whole; the spectral vocoder exports its magnitude estimator, the
    rest (harmonic restoration, PGHI, fast Griffin-Lim) is numpy that the runtime shares with it
    (:func:`gst_tts.audio.vocoders.reconstruction.spectral_audio`).

    Raises:
        ExportError: another vocoder (Griffin-Lim needs no export: the runtime has its own).
    """
    kind = getattr(synth.vocoder, "kind", None)
    if kind == SPECTRAL_KIND and isinstance(getattr(synth.vocoder, "estimator", None), torch.nn.Module):
        estimator = synth.vocoder.estimator
        return _EstimatorGraph(estimator), {
            "kind": SPECTRAL_KIND,
            "pitch_head": estimator.pitch_head,
            **synth.vocoder.settings,
        }
    generator = getattr(synth.vocoder, "generator", None)
    if not isinstance(generator, torch.nn.Module) or kind != "hifigan":
        raise ExportError(
            f"--vocoder exports a HiFi-GAN generator or a spectral vocoder; this one is "
            f"{kind or type(synth.vocoder).__name__} (the runtime's Griffin-Lim needs no export)"
        )
    return generator, {"kind": "hifigan"}


class _EstimatorGraph(torch.nn.Module):
    """The spectral vocoder's estimator: ``log_mel (batch, frames, n_mels)`` not normalised →
    ``log_magnitude (batch, frames, n_fft // 2 + 1)`` (and, with a pitch head, ``pitch (batch,
    frames, 2)``: log F0 in Hz, voicing logit)."""

    def __init__(self, estimator: torch.nn.Module) -> None:
        super().__init__()
        self.estimator = estimator

    def forward(self, log_mel: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        return self.estimator(log_mel, with_pitch=self.estimator.pitch_head)


def _export_vocoder(module: torch.nn.Module, entry: dict[str, Any], config: AudioConfig, path: Path) -> None:
    """HiFi-GAN: ``log_mel (batch, n_mels, frames)`` not normalised → ``audio (batch, 1, samples)``;
    the spectral estimator: :class:`_EstimatorGraph`."""
    if entry["kind"] == SPECTRAL_KIND:
        outputs = ["log_magnitude", "pitch"] if entry["pitch_head"] else ["log_magnitude"]
        _export(
            module,
            (torch.randn(1, 24, config.n_mels) - 5.0,),
            path,
            ["log_mel"],
            outputs,
            {"log_mel": ("batch", "frames"), **{name: ("batch", "frames") for name in outputs}},
        )
        return
    mel = torch.randn(1, config.n_mels, 24) - 5.0
    _export(
        module,
        (mel,),
        path,
        ["log_mel"],
        ["audio"],
        {"log_mel": ("batch", None, "frames"), "audio": ("batch", None, "samples")},
    )


def _manifest(
    synth: Synthesizer, layout: StepLayout, step_inputs: list[str], memory_dim: int, files: dict[str, Any], source: str
) -> dict[str, Any]:
    model, decoder = synth.model, synth.model.decoder
    generator = getattr(synth.vocoder, "generator", None)
    vocoder_reach = generator.reach_frames if files.get("vocoder") and hasattr(generator, "reach_frames") else None
    kind = next(
        (name for name, cls in ATTENTION_KINDS.items() if type(decoder.attention) is cls),
        type(decoder.attention).__name__,
    )
    import gst_tts

    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_from": source,
        "gst_tts_version": gst_tts.__version__,
        "opset": OPSET,
        "audio": asdict(synth.audio_config),
        "symbols": synth.symbols.to_dict(),
        "reduction_factor": model.reduction_factor,
        "n_mels": model.n_mels,
        "n_tokens": model.n_tokens,
        "n_heads": model.n_heads,
        "token_dim": model.gst.token_dim,
        "prenet_dim": decoder.prenet.layers[-1].out_features,
        "prenet_dropout": decoder.prenet.dropout,
        "prenet_dropout_at_inference": decoder.prenet.dropout_at_inference,
        "attention_rnn_dim": decoder.attention_rnn_dim,
        "decoder_rnn_dim": decoder.decoder_rnn_dim,
        "memory_dim": memory_dim,
        "attention": kind,
        "decoding": DecodingConfig().to_dict(),
        "neutral_style": synth.styles.neutral().tolist(),
        "mel_stats": {"mean": synth.mel_stats.mean.tolist(), "std": synth.mel_stats.std.tolist()},
        "reference_frames": synth.styles.reference_window,
        # What streaming needs (absent in exports from before it): the postnet's reach, the vocoder's.
        "postnet_context": model.postnet_context,
        "vocoder_reach_frames": vocoder_reach,
        "step_graph": {"inputs": step_inputs, "prepared": list(layout.prepared), "attention_state": layout.state},
        "files": files,
    }
