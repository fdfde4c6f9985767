"""HiFi-GAN's discriminators (Kong et al. 2020), for vocoder training: multi-period (MPD) and
multi-scale (MSD), as plain PyTorch modules.

Pure PyTorch, no I/O. Layer names follow the published ones (``mpd.discriminators.{i}.convs.{j}``,
``msd.discriminators.{i}.convs.{j}``, ``… .conv_post``); the defaults are the published sizes
(MPD periods 2, 3, 5, 7, 11; MSD on the waveform and two average-pooled copies). Every
convolution carries weight norm, except those of the first scale discriminator, which carry
spectral norm, as published.

    PeriodDiscriminator p   waveform (B, 1, T) → (B, 1, T/p, p) → 2-D convs (kernel (5, 1), stride (3, 1))
    ScaleDiscriminator      waveform → grouped 1-D convs (kernels 15, 41 …, strides 1, 2, 2, 4, 4, 1, 1)
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import torch
from torch import nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

__all__ = [
    "HiFiGANDiscriminator",
    "DiscriminatorOutput",
    "PeriodDiscriminator",
    "ScaleDiscriminator",
    "MultiPeriodDiscriminator",
    "MultiScaleDiscriminator",
]

#: Slope of the leaky ReLUs inside the discriminators.
LRELU_SLOPE = 0.1
# The scale discriminator's fixed layout (published): kernel and stride of each convolution.
_SCALE_KERNELS = (15, 41, 41, 41, 41, 41, 5)
_SCALE_STRIDES = (1, 2, 2, 4, 4, 1, 1)


class DiscriminatorOutput(NamedTuple):
    """What :class:`HiFiGANDiscriminator` says about a batch of real and generated waveforms: one entry
    per sub-discriminator (MPD's periods first, then MSD's scales)."""

    real_scores: list[torch.Tensor]  # (batch, positions): per-position realness logits of the real audio
    fake_scores: list[torch.Tensor]  # the same for the generated audio
    real_features: list[list[torch.Tensor]]  # every layer's activations on the real audio (feature matching)
    fake_features: list[list[torch.Tensor]]


class PeriodDiscriminator(nn.Module):
    """Looks at every ``period``-th sample: the waveform folded to ``(T / period, period)`` through 2-D
    convolutions that span time only.

    Args:
        period: the fold, in samples.
        channels: output channels of each ``(5, 1)`` convolution; all but the last have stride 3.
            Default (32, 128, 512, 1024, 1024), as published.
    """

    def __init__(self, *, period: int, channels: Sequence[int] = (32, 128, 512, 1024, 1024)) -> None:
        super().__init__()
        if period < 1 or not channels:
            raise ValueError(
                f"a period discriminator needs a period >= 1 and channels, got {period} and {list(channels)}"
            )
        self.period = int(period)
        ins = (1, *channels[:-1])
        strides = [3] * (len(channels) - 1) + [1]
        self.convs = nn.ModuleList(
            weight_norm(nn.Conv2d(i, o, (5, 1), (s, 1), padding=(2, 0))) for i, o, s in zip(ins, channels, strides)
        )
        self.conv_post = weight_norm(nn.Conv2d(channels[-1], 1, (3, 1), 1, padding=(1, 0)))

    def forward(self, audio: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """``(batch, 1, samples)`` → scores ``(batch, positions)`` and each layer's activations. The
        waveform is reflect-padded to a whole number of periods."""
        batch, channels, samples = audio.shape
        if samples % self.period:
            pad = self.period - samples % self.period
            audio = F.pad(audio, (0, pad), "reflect" if pad < samples else "constant")
            samples += pad
        return _run(self.convs, self.conv_post, audio.view(batch, channels, samples // self.period, self.period))


class ScaleDiscriminator(nn.Module):
    """Grouped strided 1-D convolutions over the waveform (MelGAN's discriminator, as HiFi-GAN uses it).

    Args:
        channels: output channels of the seven convolutions (kernels 15, 41, 41, 41, 41, 41, 5;
            strides 1, 2, 2, 4, 4, 1, 1). Default (128, 128, 256, 512, 1024, 1024, 1024), as published.
        groups: groups of each convolution; each must divide its input and output channels.
            Default (1, 4, 16, 16, 16, 16, 1).
        spectral: spectral norm rather than weight norm (the first, full-rate scale). Default False.
    """

    def __init__(
        self,
        *,
        channels: Sequence[int] = (128, 128, 256, 512, 1024, 1024, 1024),
        groups: Sequence[int] = (1, 4, 16, 16, 16, 16, 1),
        spectral: bool = False,
    ) -> None:
        super().__init__()
        n = len(_SCALE_KERNELS)
        if len(channels) != n or len(groups) != n:
            raise ValueError(
                f"a scale discriminator has {n} convolutions: give {n} channels and {n} groups, "
                f"got {list(channels)} and {list(groups)}"
            )
        ins = (1, *channels[:-1])
        for i, o, g in zip(ins, channels, groups):
            if g < 1 or i % g or o % g:
                raise ValueError(f"scale discriminator: groups {g} do not divide {i} → {o} channels")
        norm = spectral_norm if spectral else weight_norm
        self.convs = nn.ModuleList(
            norm(nn.Conv1d(i, o, k, s, groups=g, padding=k // 2))
            for i, o, k, s, g in zip(ins, channels, _SCALE_KERNELS, _SCALE_STRIDES, groups)
        )
        self.conv_post = norm(nn.Conv1d(channels[-1], 1, 3, 1, padding=1))

    def forward(self, audio: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """``(batch, 1, samples)`` → scores ``(batch, positions)`` and each layer's activations."""
        return _run(self.convs, self.conv_post, audio)


def _run(convs: nn.ModuleList, conv_post: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Convolutions with leaky ReLUs, then ``conv_post``: its output flattened to ``(batch, positions)``
    scores, and every layer's activations (``conv_post``'s included), for feature matching."""
    features = []
    for conv in convs:
        x = F.leaky_relu(conv(x), LRELU_SLOPE)
        features.append(x)
    x = conv_post(x)
    features.append(x)
    return x.flatten(1), features


class MultiPeriodDiscriminator(nn.Module):
    """One :class:`PeriodDiscriminator` per period.

    Args:
        periods: the periods (samples). Default (2, 3, 5, 7, 11).
        channels: each one's convolution channels. Default (32, 128, 512, 1024, 1024).
    """

    def __init__(
        self, *, periods: Sequence[int] = (2, 3, 5, 7, 11), channels: Sequence[int] = (32, 128, 512, 1024, 1024)
    ) -> None:
        super().__init__()
        self.discriminators = nn.ModuleList(PeriodDiscriminator(period=p, channels=channels) for p in periods)


class MultiScaleDiscriminator(nn.Module):
    """``n_scales`` :class:`ScaleDiscriminator` on the waveform and on copies average-pooled by 2, 4, …

    Args:
        n_scales: how many. Default 3.
        channels, groups: each one's (:class:`ScaleDiscriminator`). Defaults as published.
    """

    def __init__(
        self,
        *,
        n_scales: int = 3,
        channels: Sequence[int] = (128, 128, 256, 512, 1024, 1024, 1024),
        groups: Sequence[int] = (1, 4, 16, 16, 16, 16, 1),
    ) -> None:
        super().__init__()
        self.discriminators = nn.ModuleList(
            ScaleDiscriminator(channels=channels, groups=groups, spectral=i == 0) for i in range(n_scales)
        )
        self.meanpools = nn.ModuleList(nn.AvgPool1d(4, 2, padding=2) for _ in range(max(0, n_scales - 1)))


class HiFiGANDiscriminator(nn.Module):
    """HiFi-GAN's two discriminators as one module (one optimiser, one DDP wrapper).

    The real and generated waveforms go through in one pass (concatenated along the batch), so
    that under DDP the module runs once per backward pass.

    Args:
        periods: MPD periods; empty for no MPD. Default (2, 3, 5, 7, 11).
        period_channels: MPD convolution channels. Default (32, 128, 512, 1024, 1024).
        n_scales: MSD scales; 0 for no MSD. Default 3.
        scale_channels: MSD convolution channels (seven). Default (128, 128, 256, 512, 1024, 1024, 1024).
        scale_groups: MSD convolution groups (seven). Default (1, 4, 16, 16, 16, 16, 1).

    Raises:
        ValueError: no sub-discriminator at all, or inconsistent sizes.
    """

    def __init__(
        self,
        *,
        periods: Sequence[int] = (2, 3, 5, 7, 11),
        period_channels: Sequence[int] = (32, 128, 512, 1024, 1024),
        n_scales: int = 3,
        scale_channels: Sequence[int] = (128, 128, 256, 512, 1024, 1024, 1024),
        scale_groups: Sequence[int] = (1, 4, 16, 16, 16, 16, 1),
    ) -> None:
        super().__init__()
        if not periods and n_scales < 1:
            raise ValueError("the discriminator needs periods or n_scales >= 1")
        self.mpd = MultiPeriodDiscriminator(periods=periods, channels=period_channels)
        self.msd = MultiScaleDiscriminator(n_scales=n_scales, channels=scale_channels, groups=scale_groups)

    def forward(self, real: torch.Tensor, fake: torch.Tensor) -> DiscriminatorOutput:
        """``real`` and ``fake`` ``(batch, 1, samples)`` waveforms → a :class:`DiscriminatorOutput`."""
        if real.shape != fake.shape or real.dim() != 3 or real.shape[1] != 1:
            raise ValueError(
                f"expected real and generated (batch, 1, samples) waveforms of one shape, "
                f"got {tuple(real.shape)} and {tuple(fake.shape)}"
            )
        n = real.shape[0]
        both = torch.cat([real, fake.to(real.dtype)])
        out = DiscriminatorOutput([], [], [], [])

        def add(scores: torch.Tensor, features: list[torch.Tensor]) -> None:
            out.real_scores.append(scores[:n])
            out.fake_scores.append(scores[n:])
            out.real_features.append([f[:n] for f in features])
            out.fake_features.append([f[n:] for f in features])

        for d in self.mpd.discriminators:
            add(*d(both))
        x = both
        for i, d in enumerate(self.msd.discriminators):
            if i:
                x = self.msd.meanpools[i - 1](x)
            add(*d(x))
        return out
