"""HiFi-GAN generator (Kong et al. 2020): log-mel spectrogram → waveform, as a plain PyTorch module.

Pure PyTorch, no I/O: reading the public weights and their ``config.json`` is
:mod:`gst_tts.audio.vocoders.hifigan_io`. Layer names and shapes are those of the published
generator (github.com/jik876/hifi-gan), so its state dicts load here once their weight norm is
folded (:func:`fold_weight_norm`):

    conv_pre                       Conv1d(n_mels → C, kernel 7)
    ups.{i}                        ConvTranspose1d(C/2^i → C/2^(i+1), kernel k_i, stride u_i)
    resblocks.{i·K + j}.convs1.{n} ResBlock "1": per dilation, a dilated conv ...
    resblocks.{i·K + j}.convs2.{n}   ... then an undilated one (both kernel k_j)
    resblocks.{i·K + j}.convs.{n}  ResBlock "2": per dilation, one dilated conv
    conv_post                      Conv1d(C/2^U → 1, kernel 7)

with ``C = upsample_initial_channel``, ``U`` upsampling stages and ``K`` residual blocks per stage
(multi-receptive-field fusion: the mean of the ``K`` blocks' outputs).

An optional iSTFT head (iSTFTNet, Kaneko et al. 2022) replaces the last upsampling stages: with
``istft_n_fft`` set, ``conv_post`` gives ``istft_n_fft / 2 + 1`` log-magnitudes and as many phases
per step, and an inverse STFT with hop ``istft_hop_length`` makes the samples, so the
convolutions run at a lower rate (``hop = prod(upsample_rates) · istft_hop_length``). The
published generators have no such head; their files load as before.

Training uses weight norm on every convolution (:meth:`HiFiGANGenerator.apply_weight_norm`,
torch's parametrization, keys ``*.parametrizations.weight.original0/1``); inference folds it into
plain weights (:meth:`HiFiGANGenerator.remove_weight_norm`), which gives the same function.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import torch
from torch import nn
import torch.nn.functional as F
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm

__all__ = ["HiFiGANGenerator", "HIFIGAN_CONFIGS", "GENERATOR_CONFIG_KEYS", "FEATURE_CONFIG_KEYS", "fold_weight_norm"]

#: Slope of the leaky ReLUs inside the generator.
LRELU_SLOPE = 0.1
#: The iSTFT head's log-magnitudes are capped here before ``exp`` (no overflow early in training).
MAX_LOG_MAGNITUDE = 10.0

#: The ``config.json`` keys that shape the generator (the published configs' names).
GENERATOR_CONFIG_KEYS = (
    "resblock",
    "upsample_rates",
    "upsample_kernel_sizes",
    "upsample_initial_channel",
    "resblock_kernel_sizes",
    "resblock_dilation_sizes",
)
#: The ``config.json`` keys of the features the generator was trained on.
FEATURE_CONFIG_KEYS = ("sampling_rate", "n_fft", "hop_size", "win_size", "num_mels", "fmin", "fmax")

_LJSPEECH_FEATURES: dict[str, Any] = dict(
    sampling_rate=22050,
    n_fft=1024,
    hop_size=256,
    win_size=1024,
    num_mels=80,
    fmin=0,
    fmax=8000,
)

#: The published LJSpeech configurations (``config_v1.json`` … ``config_v3.json`` upstream): the
#: generator keys and the feature keys, named as in the ``config.json`` that ships with the weights.
HIFIGAN_CONFIGS: dict[str, dict[str, Any]] = {
    "v1": dict(
        resblock="1",
        upsample_rates=[8, 8, 2, 2],
        upsample_kernel_sizes=[16, 16, 4, 4],
        upsample_initial_channel=512,
        resblock_kernel_sizes=[3, 7, 11],
        resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5], [1, 3, 5]],
        **_LJSPEECH_FEATURES,
    ),
    "v2": dict(
        resblock="1",
        upsample_rates=[8, 8, 2, 2],
        upsample_kernel_sizes=[16, 16, 4, 4],
        upsample_initial_channel=128,
        resblock_kernel_sizes=[3, 7, 11],
        resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5], [1, 3, 5]],
        **_LJSPEECH_FEATURES,
    ),
    "v3": dict(
        resblock="2",
        upsample_rates=[8, 8, 4],
        upsample_kernel_sizes=[16, 16, 8],
        upsample_initial_channel=256,
        resblock_kernel_sizes=[3, 5, 7],
        resblock_dilation_sizes=[[1, 2], [2, 6], [3, 12]],
        **_LJSPEECH_FEATURES,
    ),
}


def _same_conv(channels: int, kernel_size: int, dilation: int) -> nn.Conv1d:
    """A length-preserving dilated convolution (odd kernel)."""
    return nn.Conv1d(channels, channels, kernel_size, dilation=dilation, padding=dilation * (kernel_size - 1) // 2)


class _ResBlock1(nn.Module):
    """Residual block type "1": per dilation ``d``, ``x += conv(lrelu(conv_d(lrelu(x))))``.

    Args:
        channels: input and output channels.
        kernel_size: odd kernel of every convolution.
        dilations: one dilated convolution (``convs1``) and one undilated (``convs2``) per entry.
    """

    def __init__(self, *, channels: int, kernel_size: int, dilations: Sequence[int]) -> None:
        super().__init__()
        self.convs1 = nn.ModuleList(_same_conv(channels, kernel_size, d) for d in dilations)
        self.convs2 = nn.ModuleList(_same_conv(channels, kernel_size, 1) for _ in dilations)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(batch, channels, time)`` → same shape."""
        for dilated, plain in zip(self.convs1, self.convs2):
            x = x + plain(F.leaky_relu(dilated(F.leaky_relu(x, LRELU_SLOPE)), LRELU_SLOPE))
        return x


class _ResBlock2(nn.Module):
    """Residual block type "2" (the small v3 generator): per dilation ``d``, ``x += conv_d(lrelu(x))``.

    Args:
        channels: input and output channels.
        kernel_size: odd kernel of every convolution.
        dilations: one dilated convolution (``convs``) per entry.
    """

    def __init__(self, *, channels: int, kernel_size: int, dilations: Sequence[int]) -> None:
        super().__init__()
        self.convs = nn.ModuleList(_same_conv(channels, kernel_size, d) for d in dilations)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(batch, channels, time)`` → same shape."""
        for conv in self.convs:
            x = x + conv(F.leaky_relu(x, LRELU_SLOPE))
        return x


_RESBLOCKS = {"1": _ResBlock1, "2": _ResBlock2}


class HiFiGANGenerator(nn.Module):
    """The HiFi-GAN generator: ``(batch, n_mels, frames)`` log-mel → ``(batch, 1, frames · hop)`` samples in [-1, 1].

    The arguments are the published ``config.json`` keys; the defaults are the v1 configuration
    (``HIFIGAN_CONFIGS["v1"]``). Built without weight norm (plain weights, for inference and for
    loading folded weights); call :meth:`apply_weight_norm` before training.

    Args:
        resblock: residual block type, ``"1"`` (v1, v2) or ``"2"`` (v3). Default "1".
        upsample_rates: stride of each transposed convolution; their product is the hop length.
            Default (8, 8, 2, 2).
        upsample_kernel_sizes: kernel of each transposed convolution, at least its stride and of
            the same parity. Default (16, 16, 4, 4).
        upsample_initial_channel: channels after ``conv_pre``, halved by each upsampling. Default 512.
        resblock_kernel_sizes: odd kernel of each of the residual blocks that follow every
            upsampling. Default (3, 7, 11).
        resblock_dilation_sizes: the dilations of each of those blocks. Default ((1, 3, 5),) * 3.
        n_mels: mel channels of the input (``num_mels`` in ``config.json``). Default 80.
        istft_n_fft: FFT size of an iSTFT head (even); ``None``: the published waveform head
            (``conv_post`` to one channel, ``tanh``). Default None.
        istft_hop_length: hop of the iSTFT head, at most ``istft_n_fft / 2``; only with
            ``istft_n_fft``. Default None (no head).

    Raises:
        ValueError: an unknown block type or inconsistent sizes.
    """

    def __init__(
        self,
        *,
        resblock: str = "1",
        upsample_rates: Sequence[int] = (8, 8, 2, 2),
        upsample_kernel_sizes: Sequence[int] = (16, 16, 4, 4),
        upsample_initial_channel: int = 512,
        resblock_kernel_sizes: Sequence[int] = (3, 7, 11),
        resblock_dilation_sizes: Sequence[Sequence[int]] = ((1, 3, 5), (1, 3, 5), (1, 3, 5)),
        n_mels: int = 80,
        istft_n_fft: int | None = None,
        istft_hop_length: int | None = None,
    ) -> None:
        super().__init__()
        block = _RESBLOCKS.get(str(resblock))
        if block is None:
            raise ValueError(f"resblock must be '1' or '2', got {resblock!r}")
        if not upsample_rates or len(upsample_rates) != len(upsample_kernel_sizes):
            raise ValueError(
                f"upsample_rates {list(upsample_rates)} and upsample_kernel_sizes "
                f"{list(upsample_kernel_sizes)} must be non-empty and of the same length"
            )
        for u, k in zip(upsample_rates, upsample_kernel_sizes):
            if u < 1 or k < u or (k - u) % 2:  # otherwise a stage does not give exactly u samples per input step
                raise ValueError(
                    f"upsample kernel {k} for rate {u}: the kernel must be at least the rate and differ from it "
                    "by an even number"
                )
        if not resblock_kernel_sizes or len(resblock_kernel_sizes) != len(resblock_dilation_sizes):
            raise ValueError(
                f"resblock_kernel_sizes {list(resblock_kernel_sizes)} and resblock_dilation_sizes "
                f"{[list(d) for d in resblock_dilation_sizes]} must be non-empty and of the same length"
            )
        if any(k % 2 == 0 for k in resblock_kernel_sizes):
            raise ValueError(f"resblock_kernel_sizes must be odd, got {list(resblock_kernel_sizes)}")
        if upsample_initial_channel >> len(upsample_rates) < 1:
            raise ValueError(
                f"upsample_initial_channel {upsample_initial_channel} is too small to halve {len(upsample_rates)} times"
            )
        if (istft_n_fft is None) != (istft_hop_length is None):
            raise ValueError("istft_n_fft and istft_hop_length go together: give both (an iSTFT head) or neither")
        # A hop above n_fft / 2 leaves samples that no (periodic Hann) window covers.
        if istft_n_fft is not None and (
            istft_n_fft < 2 or istft_n_fft % 2 or not 1 <= istft_hop_length <= istft_n_fft // 2
        ):
            raise ValueError(
                f"iSTFT head: istft_n_fft must be even and istft_hop_length in 1..istft_n_fft/2, "
                f"got {istft_n_fft} and {istft_hop_length}"
            )
        self.n_mels = int(n_mels)
        self.istft_n_fft = istft_n_fft
        self.istft_hop_length = istft_hop_length
        self.hop_length = math.prod(int(u) for u in upsample_rates) * (istft_hop_length or 1)
        self.n_kernels = len(resblock_kernel_sizes)

        channels = [upsample_initial_channel // 2**i for i in range(len(upsample_rates) + 1)]
        self.conv_pre = nn.Conv1d(n_mels, channels[0], 7, padding=3)
        self.ups = nn.ModuleList(
            nn.ConvTranspose1d(channels[i], channels[i + 1], k, stride=u, padding=(k - u) // 2)
            for i, (u, k) in enumerate(zip(upsample_rates, upsample_kernel_sizes))
        )
        self.resblocks = nn.ModuleList(
            block(channels=ch, kernel_size=k, dilations=d)
            for ch in channels[1:]
            for k, d in zip(resblock_kernel_sizes, resblock_dilation_sizes)
        )
        self.conv_post = nn.Conv1d(channels[-1], 1 if istft_n_fft is None else istft_n_fft + 2, 7, padding=3)
        if istft_n_fft is not None:
            self.register_buffer("istft_window", torch.hann_window(istft_n_fft), persistent=False)
        # As published: small initial weights everywhere but the input convolution.
        for module in [*self.ups, *self.resblocks.modules(), self.conv_post]:
            if isinstance(module, (nn.Conv1d, nn.ConvTranspose1d)):
                nn.init.normal_(module.weight, 0.0, 0.01)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        """``(batch, n_mels, frames)`` natural-log mel → ``(batch, 1, frames · hop_length)`` samples, in
        [-1, 1] (the iSTFT head's are not bounded; a trained one stays within)."""
        if mel.dim() != 3 or mel.shape[1] != self.n_mels:
            raise ValueError(f"expected a (batch, {self.n_mels}, frames) mel, got {tuple(mel.shape)}")
        x = self.conv_pre(mel)
        for i, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, LRELU_SLOPE))
            blocks = self.resblocks[i * self.n_kernels : (i + 1) * self.n_kernels]
            x = sum(block(x) for block in blocks) / self.n_kernels
        x = self.conv_post(F.leaky_relu(x))  # torch's default slope here (0.01), as the published generator
        if self.istft_n_fft is None:
            return torch.tanh(x)
        return self._istft(x)

    @property
    def reach_frames(self) -> int:
        """Mel frames each side of a frame that its samples depend on (an upper bound, whole frames):
        streaming synthesis vocodes windows with this much context, so each kept sample is the
        whole mel's. ``conv_pre``, each upsampling with the widest of its residual blocks, ``conv_post``
        and an iSTFT head's window, each reach taken at the rate its layer runs at."""
        reach, rate = 3.0, 1  # conv_pre: kernel 7 at the frame rate
        for i, up in enumerate(self.ups):
            reach += math.ceil(up.kernel_size[0] / up.stride[0]) / rate  # input steps a transposed output reads
            rate *= up.stride[0]
            blocks = self.resblocks[i * self.n_kernels : (i + 1) * self.n_kernels]
            reach += (
                max(
                    sum(
                        (c.kernel_size[0] - 1) // 2 * c.dilation[0] for c in block.modules() if isinstance(c, nn.Conv1d)
                    )
                    for block in blocks
                )
                / rate
            )
        reach += 3 / rate  # conv_post: kernel 7
        if self.istft_n_fft is not None:
            reach += self.istft_n_fft / 2 / self.hop_length
        return math.ceil(reach)

    def _istft(self, x: torch.Tensor) -> torch.Tensor:
        """``(batch, n_fft + 2, steps)`` log-magnitudes and phases → ``(batch, 1, steps · istft_hop_length)``."""
        bins = self.istft_n_fft // 2 + 1
        x = x.float()  # complex spectra and the inverse STFT in float32, also under autocast
        magnitude = torch.exp(x[:, :bins].clamp(max=MAX_LOG_MAGNITUDE))
        phase = math.pi * torch.sin(x[:, bins:])  # as iSTFTNet: a bounded phase
        spectrum = torch.polar(magnitude, phase)
        # Frame t centred on sample t · hop, as the features: every output sample lies under a window.
        audio = torch.istft(
            spectrum,
            self.istft_n_fft,
            hop_length=self.istft_hop_length,
            win_length=self.istft_n_fft,
            window=self.istft_window,
            center=True,
            length=x.shape[-1] * self.istft_hop_length,
        )
        return audio.unsqueeze(1)

    def _convs(self) -> list[nn.Module]:
        return [m for m in self.modules() if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d))]

    @property
    def weight_normed(self) -> bool:
        """Whether the convolutions carry weight norm (training) rather than plain weights."""
        return parametrize.is_parametrized(self.conv_pre, "weight")

    def apply_weight_norm(self) -> "HiFiGANGenerator":
        """Weight norm on every convolution (``dim=0``, as published), for training; the function
        the module computes is unchanged. Returns ``self``."""
        if not self.weight_normed:
            for conv in self._convs():
                weight_norm(conv, "weight", dim=0)
        return self

    def remove_weight_norm(self) -> "HiFiGANGenerator":
        """Fold weight norm into plain weights (for inference; the same function). Returns ``self``."""
        if self.weight_normed:
            for conv in self._convs():
                parametrize.remove_parametrizations(conv, "weight", leave_parametrized=True)
        return self


# The names weight norm gives a weight's two halves → which half.
_NORM_PARTS = {
    "weight_g": "g",
    "weight_v": "v",  # torch.nn.utils.weight_norm (the published checkpoints)
    "parametrizations.weight.original0": "g",
    "parametrizations.weight.original1": "v",  # torch's parametrization
}


def fold_weight_norm(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A state dict with every weight-normed ``weight = g · v / ‖v‖`` (norm over all but dim 0)
    folded into a plain ``weight``; other entries unchanged.

    Both forms are read: ``X.weight_g`` / ``X.weight_v`` (``torch.nn.utils.weight_norm``, as in the
    published checkpoints) and ``X.parametrizations.weight.original0`` / ``original1`` (torch's
    parametrization, as :meth:`HiFiGANGenerator.apply_weight_norm` makes them).

    Raises:
        ValueError: a ``g`` without its ``v`` or the other way round, or shapes that do not pair.
    """
    folded: dict[str, torch.Tensor] = {}
    pairs: dict[str, dict[str, torch.Tensor]] = {}
    for key, value in state.items():
        name = next((n for n in _NORM_PARTS if key == n or key.endswith("." + n)), None)
        if name is None:
            folded[key] = value
            continue
        pairs.setdefault(key[: len(key) - len(name)] + "weight", {})[_NORM_PARTS[name]] = value
    for key, pair in pairs.items():
        if set(pair) != {"g", "v"}:
            raise ValueError(f"{key}: weight norm needs both g and v, found only {''.join(pair)}")
        g, v = pair["g"], pair["v"]
        if v.dim() < 1 or g.numel() != v.shape[0]:
            raise ValueError(f"{key}: weight norm g {tuple(g.shape)} does not pair with v {tuple(v.shape)}")
        norm = v.reshape(v.shape[0], -1).norm(dim=1).reshape(-1, *[1] * (v.dim() - 1))
        folded[key] = v * (g.reshape(norm.shape) / norm)
    return folded
