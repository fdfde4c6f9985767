"""The spectral vocoder: a small network estimates the linear magnitude spectrogram from the log-mel,
and PGHI plus fast Griffin-Lim (:mod:`~gst_tts.audio.vocoders.phase`) give it a phase. Everything after
the network is numpy (:func:`~gst_tts.audio.vocoders.reconstruction.spectral_audio`), shared with the
torch-free runtime, which runs the estimator exported to ONNX (``gst-tts export --vocoder``).

Why this design for the CPU preset (``conf/vocoder/cpu_small.yaml``): a GAN vocoder learns phase
from its discriminators, which takes hundreds of thousands of steps; on 2 CPU cores a demo has
minutes. Griffin-Lim's weaknesses are two, and measured apart on held-out demo-corpus speech
(``benchmarks/bench_vocoder.py``): the magnitude it inverts is the mel filterbank's pseudo-inverse,
which smears harmonics above 1 kHz; its random starting phase leaves phasiness. A magnitude
estimator is a per-frame regression that trains in minutes, and PGHI removes most of the phasiness
with no training at all.

:class:`MagnitudeEstimator` predicts a correction to the pseudo-inverse (in log magnitude), so an
untrained network starts where Griffin-Lim's magnitude is. Its outputs are the conditional median
(L1 training) and so are smoother than real spectra between harmonics; :class:`SpectralVocoder`
sharpens them by a power (``magnitude_power``, the same trick as Griffin-Lim's ``power``) and keeps
the overall level.

Sharpening cannot restore harmonics a predicted mel has blurred away, and for low voices (closely
spaced harmonics) that left the phase nothing periodic to follow: pyin heard whispers. With
``pitch_head`` the estimator also reads each frame's F0 and voicing off the mel (trained on YIN's
track of the recording, :func:`pitch_loss`), and :class:`SpectralVocoder` moves each blurred
voiced frame's power back onto the harmonics of that F0 (:mod:`~gst_tts.audio.vocoders.harmonic`)
before PGHI.

Training (``generator_kind: spectral`` in ``conf/vocoder_train.yaml``, :mod:`gst_tts.training.vocoder_trainer`)
regresses the estimator's output on :func:`stft_log_magnitude` of each segment's samples with
:func:`magnitude_loss`; its checkpoints (``generator_kind`` ``"spectral"``,
:mod:`~gst_tts.audio.vocoders.checkpoint`) load with :func:`spectral_vocoder_from_checkpoint`.
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Sequence

import numpy as np
import torch
import torchaudio
from torch import nn

from gst_tts.audio.features import LOG_MEL_FLOOR, AudioConfig
from gst_tts.audio.stft import fft_threads
from gst_tts.audio.vocoders.checkpoint import SPECTRAL_KIND, rebuild_generator
from gst_tts.audio.vocoders.phase import warm_up_pghi
from gst_tts.audio.vocoders.reconstruction import SPECTRAL_DEFAULTS, spectral_audio
from gst_tts.compute import resolve_device

__all__ = [
    "MagnitudeEstimator",
    "SpectralVocoder",
    "SPECTRAL_KIND",
    "PITCH_CENTRE_HZ",
    "magnitude_loss",
    "pitch_loss",
    "stft_log_magnitude",
    "edge_frames",
    "spectral_vocoder_from_checkpoint",
]

#: An untrained pitch head predicts this F0 (Hz): its output is log F0 relative to it.
PITCH_CENTRE_HZ = 150.0


def _mel_pseudo_inverse(audio_config: AudioConfig) -> torch.Tensor:
    """``(n_freqs, n_mels)`` pseudo-inverse of the slaney filterbank the features use."""
    filterbank = torchaudio.functional.melscale_fbanks(
        n_freqs=audio_config.n_fft // 2 + 1,
        f_min=audio_config.fmin,
        f_max=audio_config.fmax,
        n_mels=audio_config.n_mels,
        sample_rate=audio_config.sample_rate,
        norm="slaney",
        mel_scale="slaney",
    )
    return torch.linalg.pinv(filterbank.T)


class MagnitudeEstimator(nn.Module):
    """Log-mel → log linear magnitude: the pseudo-inverse plus a learned correction.

    A 1-D convolution over time reads the normalised log-mel, residual blocks of dilated
    convolutions widen its context, and a 1x1 convolution writes one value per linear bin.

    Args:
        sample_rate, n_fft, n_mels, fmin, fmax: the feature settings (they fix the pseudo-inverse and
            the output size ``n_fft // 2 + 1``). Defaults 22050, 1024, 80, 0, 8000.
        channels: width of the convolutions. Default 192.
        kernel_size: time kernel of every convolution but the last. Default 5.
        dilations: one residual block per entry, with that dilation. Default (1, 2, 1, 2).
        pitch_head: also read each frame's F0 and voicing off the mel (a 1x1 convolution beside the
            magnitude's), for :class:`SpectralVocoder`'s harmonic restoration. Default False.

    The input is normalised by the buffers ``mel_mean`` / ``mel_std`` (per channel), which the
    trainer sets from the training corpus (:meth:`set_mel_stats`) and checkpoints carry.
    """

    def __init__(
        self,
        *,
        sample_rate: int = 22050,
        n_fft: int = 1024,
        n_mels: int = 80,
        fmin: float = 0.0,
        fmax: float = 8000.0,
        channels: int = 192,
        kernel_size: int = 5,
        dilations: Sequence[int] = (1, 2, 1, 2),
        pitch_head: bool = False,
    ) -> None:
        super().__init__()
        if kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {kernel_size}")
        config = AudioConfig(
            sample_rate=sample_rate, n_fft=n_fft, win_length=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax
        )
        self.register_buffer("mel_to_linear", _mel_pseudo_inverse(config))  # (n_freqs, n_mels)
        self.register_buffer("mel_mean", torch.zeros(n_mels))
        self.register_buffer("mel_std", torch.ones(n_mels))
        self.input_conv = nn.Conv1d(n_mels, channels, kernel_size, padding=kernel_size // 2)
        self.blocks = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel_size, padding=d * (kernel_size // 2), dilation=d) for d in dilations
        )
        self.output_conv = nn.Conv1d(channels, n_fft // 2 + 1, 1)
        nn.init.zeros_(self.output_conv.weight)  # untrained: exactly the pseudo-inverse
        nn.init.zeros_(self.output_conv.bias)
        self.pitch_head = bool(pitch_head)
        # (log F0 − log PITCH_CENTRE_HZ, voicing logit) per frame.
        self.pitch_output = nn.Conv1d(channels, 2, 1) if self.pitch_head else None
        if self.pitch_output is not None:  # untrained: PITCH_CENTRE_HZ, voicing even
            nn.init.zeros_(self.pitch_output.weight)
            nn.init.zeros_(self.pitch_output.bias)

    def set_mel_stats(self, mean: torch.Tensor | np.ndarray, std: torch.Tensor | np.ndarray) -> None:
        """Per-channel normalisation of the input log-mel (``std`` is floored at 1e-3)."""
        self.mel_mean.copy_(torch.as_tensor(mean, dtype=torch.float32))
        self.mel_std.copy_(torch.clamp(torch.as_tensor(std, dtype=torch.float32), min=1e-3))

    def forward(
        self, log_mel: torch.Tensor, with_pitch: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``(batch, frames, n_mels)`` log-mel → ``(batch, frames, n_fft // 2 + 1)`` log magnitude;
        with ``with_pitch`` (``pitch_head`` only) also ``(batch, frames, 2)``: log F0 (Hz) and the
        voicing logit of each frame."""
        base = torch.log(torch.clamp(torch.exp(log_mel) @ self.mel_to_linear.T, min=LOG_MEL_FLOOR))
        h = self.input_conv(((log_mel - self.mel_mean) / self.mel_std).transpose(1, 2))
        for block in self.blocks:
            h = h + block(nn.functional.leaky_relu(h, 0.1))
        h = nn.functional.leaky_relu(h, 0.1)
        log_mag = base + self.output_conv(h).transpose(1, 2)
        if not with_pitch:
            return log_mag
        if self.pitch_output is None:
            raise ValueError("this estimator has no pitch head (pitch_head=False)")
        pitch = self.pitch_output(h).transpose(1, 2)
        offset = torch.tensor([math.log(PITCH_CENTRE_HZ), 0.0], dtype=pitch.dtype, device=pitch.device)
        return log_mag, pitch + offset


def magnitude_loss(predicted: torch.Tensor, target: torch.Tensor) -> dict[str, torch.Tensor]:
    """L1 of log magnitudes plus spectral convergence (relative Frobenius error of magnitudes).

    The log term weighs every bin alike, quiet ones included; spectral convergence weighs the loud
    bins, which carry what is heard. ``predicted`` and ``target`` are log magnitudes of one shape.
    """
    log_l1 = (predicted - target).abs().mean()
    target_magnitude = torch.exp(target)
    # The clamp keeps exp() finite while an early prediction is wild (it is e^12 ≈ 1.6e5, far above speech).
    error = torch.exp(torch.clamp(predicted, max=12.0)) - target_magnitude
    convergence = torch.linalg.vector_norm(error) / torch.clamp(torch.linalg.vector_norm(target_magnitude), min=1e-8)
    return {"log_magnitude_l1": log_l1, "spectral_convergence": convergence, "total": log_l1 + convergence}


def pitch_loss(pitch: torch.Tensor, f0: torch.Tensor, voiced: torch.Tensor) -> dict[str, torch.Tensor]:
    """The pitch head's loss: L1 of log F0 on the frames the recording voices, plus the binary
    cross-entropy of the voicing logit. ``pitch`` ``(..., 2)`` (log F0, voicing logit); ``f0`` (Hz)
    and ``voiced`` (bool) shaped like ``pitch[..., 0]`` (:func:`~gst_tts.audio.pitch.yin_f0`)."""
    log_f0, logit = pitch[..., 0], pitch[..., 1]
    mask = voiced.to(log_f0.dtype)
    f0_l1 = ((log_f0 - torch.log(f0.clamp(min=1.0))).abs() * mask).sum() / mask.sum().clamp(min=1.0)
    voicing = nn.functional.binary_cross_entropy_with_logits(logit, mask)
    return {"log_f0_l1": f0_l1, "voicing_bce": voicing, "total": f0_l1 + voicing}


def stft_log_magnitude(audio: torch.Tensor, audio_config: AudioConfig) -> torch.Tensor:
    """``(..., samples)`` → ``(..., 1 + samples // hop, n_fft // 2 + 1)`` natural-log STFT magnitude
    (Hann window, ``center=True``, floored at the features' floor): what the estimator learns to predict."""
    c = audio_config
    window = torch.hann_window(c.win_length, dtype=audio.dtype, device=audio.device)
    spectrum = torch.stft(
        audio.reshape(-1, audio.shape[-1]),
        c.n_fft,
        c.hop_length,
        c.win_length,
        window,
        center=True,
        return_complex=True,
    )
    log_mag = torch.log(torch.clamp(spectrum.abs(), min=LOG_MEL_FLOOR)).transpose(1, 2)
    return log_mag.reshape(*audio.shape[:-1], *log_mag.shape[1:])


def edge_frames(audio_config: AudioConfig) -> int:
    """Frames at each end of a segment whose STFT window reaches past the segment's samples (into
    :func:`stft_log_magnitude`'s padding): training leaves them out of the loss."""
    return -(-audio_config.win_length // (2 * audio_config.hop_length))


def spectral_vocoder_from_checkpoint(
    ckpt: Mapping[str, Any],
    path: str | os.PathLike,
    *,
    audio_config: AudioConfig,
    device: str | torch.device | None = None,
) -> "SpectralVocoder":
    """The :class:`SpectralVocoder` of a checked gst-tts vocoder checkpoint of ``generator_kind``
    ``"spectral"``, for ``audio_config``'s mels.

    Raises:
        VocoderError: another kind, other feature settings (every differing field named, with
            both values), unusable estimator settings, or weights that do not fit them.
    """
    estimator = rebuild_generator(ckpt, path, MagnitudeEstimator, kind=SPECTRAL_KIND, audio_config=audio_config)
    return SpectralVocoder(estimator, audio_config=audio_config, device=resolve_device(device))


class SpectralVocoder:
    """:class:`MagnitudeEstimator` + PGHI + fast Griffin-Lim behind the ``Vocoder`` interface.

    An estimator with a pitch head also gives each frame's F0 and voicing: where the magnitude's
    harmonics are blurred, they are restored at that F0
    (:func:`~gst_tts.audio.vocoders.harmonic.restore_harmonics`) before PGHI and fast Griffin-Lim.
    Given an F0 spread (a reference's), that F0 is first stretched to it
    (:mod:`~gst_tts.audio.vocoders.intonation`): how style transfer carries a reference's
    intonation width, which the acoustic model does not.

    Args:
        estimator: the trained network (put in eval mode on ``device``, without gradients).
        audio_config: the feature settings of the mels it gets (the STFT's settings come from it).
        magnitude_power: the estimated magnitude is raised to this power, then rescaled to its
            original energy: values above 1 deepen the valleys between harmonics. Default 1.15.
        n_iter: fast Griffin-Lim iterations after PGHI. Default 16: in copy synthesis (16 held-out
            demo-corpus clips and 6 LJSpeech clips through the demo's pitch-head vocoder, 12 clips
            through its plain one) 16 iterations scored within 0.03 of 32's mean wide-band PESQ at
            half their cost, which makes the whole vocoder cheaper than Griffin-Lim's 32
            iterations (``docs/results/2026-11-28-pghi-numba.md``).
        momentum: their momentum. Default 0.99.
        device: where the network runs. Default CPU.
    """

    #: The name ``gst-tts serve`` offers it under.
    kind = SPECTRAL_KIND

    def __init__(
        self,
        estimator: MagnitudeEstimator,
        *,
        audio_config: AudioConfig,
        magnitude_power: float = SPECTRAL_DEFAULTS["magnitude_power"],
        n_iter: int = SPECTRAL_DEFAULTS["n_iter"],
        momentum: float = SPECTRAL_DEFAULTS["momentum"],
        device: str | torch.device = "cpu",
    ) -> None:
        self.device = torch.device(device)
        self.estimator = estimator.to(self.device).eval().requires_grad_(False)
        self.config = audio_config
        self.sample_rate = audio_config.sample_rate
        self.magnitude_power = float(magnitude_power)
        self.n_iter = int(n_iter)
        self.momentum = float(momentum)
        warm_up_pghi()  # compiling PGHI's kernel is part of loading, not of the first sentence

    @property
    def settings(self) -> dict[str, Any]:
        """The reconstruction's settings (:func:`~gst_tts.audio.vocoders.reconstruction.spectral_audio`'s keywords)."""
        return {"magnitude_power": self.magnitude_power, "n_iter": self.n_iter, "momentum": self.momentum}

    @torch.no_grad()
    def estimate(self, log_mel: torch.Tensor | np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """``(frames, n_mels)`` log-mel → the estimator's ``(frames, n_fft // 2 + 1)`` log magnitude and,
        with a pitch head, its raw ``(frames, 2)`` (log F0, voicing logit); float32 numpy."""
        mel = torch.as_tensor(np.asarray(log_mel, dtype=np.float32) if isinstance(log_mel, np.ndarray) else log_mel)
        mel = mel.float().to(self.device)[None]
        if not self.estimator.pitch_head:
            return self.estimator(mel)[0].cpu().numpy(), None
        log_mag, pitch = self.estimator(mel, with_pitch=True)
        return log_mag[0].cpu().numpy(), pitch[0].cpu().numpy()

    @property
    def sets_f0_range(self) -> bool:
        """Whether it can give its output another F0 spread (``f0_range_st``): it has a pitch head."""
        return bool(self.estimator.pitch_head)

    def __call__(
        self, log_mel: torch.Tensor | np.ndarray, *, f0_range_st: float | None = None, f0_range_strength: float = 1.0
    ) -> np.ndarray:
        """``(frames, n_mels)`` log-mel (not normalised) → ``(frames - 1) · hop`` float32 samples in [-1, 1];
        ``f0_range_st``, ``f0_range_strength``: an F0 spread to restore the harmonics at
        (:func:`~gst_tts.audio.vocoders.reconstruction.spectral_audio`; ignored without a pitch head)."""
        c = self.config
        log_mag, pitch = self.estimate(log_mel)
        with fft_threads(torch.get_num_threads()):  # the reconstruction's FFTs take torch's thread count
            return spectral_audio(
                log_mag,
                pitch,
                sample_rate=c.sample_rate,
                n_fft=c.n_fft,
                hop_length=c.hop_length,
                win_length=c.win_length,
                f0_range_st=f0_range_st,
                f0_range_strength=f0_range_strength,
                **self.settings,
            )
