"""TensorBoard logging for training (acoustic model and vocoder): the one place that writes event files."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from gst_tts.analysis.alignment import AlignmentHealth
from gst_tts.analysis.plots import figure_to_array, plot_inspection, plot_mel_pair, plot_style_weights
from gst_tts.inference.decoding import DecodingConfig


class EventLogger:
    """Owns a SummaryWriter; what every training logger writes (the base of :class:`TrainingLogger`
    and :class:`VocoderLogger`).

    Args:
        log_dir: folder for the event files.
        sample_rate: rate of logged audio.
    """

    def __init__(self, log_dir: str | Path, sample_rate: int) -> None:
        self.writer = SummaryWriter(log_dir=str(log_dir))
        self.sample_rate = sample_rate

    def log_scalars(self, prefix: str, values: Mapping[str, float], step: int) -> None:
        """``prefix/name`` for each value."""
        for name, value in values.items():
            self.writer.add_scalar(f"{prefix}/{name}", value, step)

    def log_skipped_batch(self, step: int, reason: str, skipped_total: int) -> None:
        self.writer.add_scalar("train/skipped_batches", skipped_total, step)
        self.writer.add_text("train/skipped", f"step {step}: {reason}", step)

    def log_audio(self, tag: str, audio: np.ndarray | torch.Tensor, step: int) -> None:
        """A ``(samples,)`` waveform at the logger's rate."""
        self.writer.add_audio(tag, torch.as_tensor(audio).float().reshape(1, -1), step, self.sample_rate)

    def log_text(self, tag: str, text: str, step: int) -> None:
        self.writer.add_text(tag, text, step)

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class TrainingLogger(EventLogger):
    """The acoustic model's: scalars, alignment and mel images, token weights and audio.

    Args:
        log_dir: folder for the event files.
        sample_rate: rate of logged audio.
        hop_seconds: seconds per mel frame (for time axes).
        reduction_factor: mel frames per decoder step.
    """

    def __init__(self, log_dir: str | Path, sample_rate: int, hop_seconds: float, reduction_factor: int) -> None:
        super().__init__(log_dir, sample_rate)
        self.hop_seconds = hop_seconds
        self.reduction_factor = reduction_factor

    def log_training(self, step: int, terms: Mapping[str, float], learning_rate: float, grad_norm: float) -> None:
        self.log_scalars("train", {**terms, "learning_rate": learning_rate, "grad_norm": grad_norm}, step)

    def log_validation(
        self,
        step: int,
        terms: Mapping[str, float],
        health: Mapping[str, float],
        sample: Mapping | None = None,
        transfer: Mapping[str, float] | None = None,
    ) -> None:
        """Validation losses, mean alignment health, style transfer (``transfer``: r and slope per
        measure, :class:`gst_tts.training.transfer_validation.TransferValidation`) and one
        free-running sample.

        ``sample`` keys: ``alignment (steps, symbols)``, ``mel (frames, n_mels)``,
        ``target_mel (frames, n_mels)``, ``stop_probs (steps,)``, ``labels`` (input symbols),
        ``style_weights (n_heads, n_tokens)``, ``audio (n_samples,)``, ``health`` (AlignmentHealth).
        """
        for name, value in terms.items():
            self.writer.add_scalar(f"val/{name}", value, step)
        for name, value in health.items():
            if isinstance(value, (int, float)) and np.isfinite(value):
                self.writer.add_scalar(f"val_alignment/{name}", value, step)
        for name, value in (transfer or {}).items():
            if np.isfinite(value):
                self.writer.add_scalar(f"val_transfer/{name}", value, step)
        if sample is None:
            return
        h: AlignmentHealth | None = sample.get("health")
        fig = plot_inspection(
            sample["alignment"],
            sample["mel"],
            sample["stop_probs"],
            input_labels=sample.get("labels"),
            hop_seconds=self.hop_seconds * self.reduction_factor,
            frames_per_step=self.reduction_factor,
            title=f"step {step}",
            health=h,
            stop_threshold=DecodingConfig.stop_threshold,
        )
        self.writer.add_image("val/alignment", figure_to_array(fig), step, dataformats="HWC")
        fig = plot_mel_pair(
            sample["mel"], sample["target_mel"], title=f"step {step}: predicted (free-running) vs target"
        )
        self.writer.add_image("val/mel", figure_to_array(fig), step, dataformats="HWC")
        if sample.get("style_weights") is not None:
            weights = np.asarray(sample["style_weights"])[None]
            fig = plot_style_weights(weights, ["reference"], title=f"step {step}: GST token weights")
            self.writer.add_image("val/style_weights", figure_to_array(fig), step, dataformats="HWC")
            self.writer.add_histogram("val/style_weights", torch.as_tensor(weights), step)
        if sample.get("audio") is not None:
            self.log_audio("val/griffin_lim", sample["audio"], step)


class VocoderLogger(EventLogger):
    """The vocoder trainer's: both networks' loss terms, learning rate and gradient norms; per
    validation utterance the generated audio, its mel beside the input mel, and (once) the recording.

    Args:
        log_dir: folder for the event files.
        sample_rate: rate of logged audio.
    """

    def log_training(
        self, step: int, terms: Mapping[str, float], learning_rate: float, grad_norms: Mapping[str, float]
    ) -> None:
        """``terms``: e.g. ``generator/mel_l1``, ``discriminator/total``; ``grad_norms`` by network."""
        self.log_scalars("train", {**terms, "learning_rate": learning_rate}, step)
        self.log_scalars("train/grad_norm", grad_norms, step)

    def log_validation(self, step: int, terms: Mapping[str, float], samples: Sequence[Mapping]) -> None:
        """Validation losses and, for each of ``samples`` (``id``, ``audio (samples,)``, ``mel (frames,
        n_mels)`` of the generated audio, ``input_mel (frames, n_mels)``, optional ``target_audio``),
        ``val/audio_<i>``, ``val/mel_<i>`` and ``val/target_audio_<i>``."""
        self.log_scalars("val", terms, step)
        for i, sample in enumerate(samples):
            self.log_audio(f"val/audio_{i}", sample["audio"], step)
            fig = plot_mel_pair(
                sample["mel"],
                sample["input_mel"],
                title=f"step {step}: {sample['id']}: of the generated audio vs input",
            )
            self.writer.add_image(f"val/mel_{i}", figure_to_array(fig), step, dataformats="HWC")
            if sample.get("target_audio") is not None:
                self.log_audio(f"val/target_audio_{i}", sample["target_audio"], step)


def symbol_labels(symbols: Sequence[str], ids: Sequence[int]) -> list[str]:
    """Input-axis labels for an encoded text (eos shown as '~')."""
    return [symbols[int(i)] for i in ids]


class NullLogger:
    """Stands in for a logger on ranks other than 0: every call does nothing."""

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: None
