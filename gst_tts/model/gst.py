"""Global Style Tokens (Wang et al. 2018): a reference encoder and a bank of learned style tokens."""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence


class ReferenceEncoder(nn.Module):
    """Reference mel → a fixed-size embedding (the style query).

    Conv2d(3×3) + norm + ReLU blocks, each halving the mel channels and dividing time by its
    time stride, then a GRU whose final state is the embedding. Frames past each reference's length
    are zeroed after every block, so in eval mode a padded reference gives the same embedding as
    the reference alone. In training mode that holds only as far as the norm allows
    (``norm``): BatchNorm's statistics count the padding and the batch-mates.

    Every argument is required: the defaults (Tacotron 2 sizes) are
    :class:`~gst_tts.model.tacotron.GSTTacotron`'s, so each is set in one place.

    Args:
        n_mels: mel channels of the reference.
        channels: output channels of the convolution blocks.
        gru_dim: GRU units, the embedding size.
        time_strides: each block's stride in time, 1 or 2, one per block (the paper's: 2 in every
            block, so six blocks leave the GRU one step per 64 frames, three steps for a 2-second
            reference).
        norm: each block's normalisation, one of :data:`REFERENCE_NORMS`:

            - ``"batch"``: BatchNorm, as published. In training its statistics average the batch,
              zeroed padding included: what a reference encodes to depends on its batch-mates
              and on how much of the batch is padding (much, with ``data.reference_crop`` < 1).
            - ``"masked_batch"``: BatchNorm whose training statistics count the real frames only
              (:class:`MaskedBatchNorm2d`): padding no longer counts, batch-mates still do. Eval
              mode and the parameters are ``"batch"``'s, so a ``"batch"`` model loads into it.
            - ``"layer"``: LayerNorm over the channels at each time–frequency position
              (:class:`ChannelLayerNorm`): no batch statistics, the same in training and eval,
              so a reference encodes the same alone and in any padded batch.
    """

    def __init__(
        self, *, n_mels: int, channels: Sequence[int], gru_dim: int, time_strides: Sequence[int], norm: str
    ) -> None:
        super().__init__()
        if len(time_strides) != len(channels) or any(stride not in (1, 2) for stride in time_strides):
            raise ValueError(
                f"time_strides must give 1 or 2 for each of the {len(channels)} blocks, got {list(time_strides)}"
            )
        if norm not in REFERENCE_NORMS:
            raise ValueError(f"reference encoder norm {norm!r}: choose from {', '.join(REFERENCE_NORMS)}")
        self.norm = norm
        self.time_strides = tuple(int(stride) for stride in time_strides)
        blocks = []
        in_channels = 1
        freq = n_mels
        for out_channels, time_stride in zip(channels, self.time_strides):
            blocks.append(
                nn.Sequential(
                    nn.Conv2d(in_channels, out_channels, 3, stride=(time_stride, 2), padding=1, bias=False),
                    _NORMS[norm](out_channels),
                    nn.ReLU(),
                )
            )
            in_channels = out_channels
            freq = (freq - 1) // 2 + 1
        self.blocks = nn.ModuleList(blocks)
        self.gru = nn.GRU(in_channels * freq, gru_dim, batch_first=True)
        self.output_dim = gru_dim

    def forward(self, mel: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """``mel (batch, frames, n_mels)``, ``lengths (batch,)`` → ``(batch, gru_dim)``."""
        batch, frames, _ = mel.shape
        if lengths is None:
            lengths = torch.full((batch,), frames, dtype=torch.long, device=mel.device)
        x = mel.unsqueeze(1)  # (batch, 1, frames, n_mels)
        x = x * _time_mask(lengths, x.shape[2])
        for (conv, norm, activation), time_stride in zip(self.blocks, self.time_strides):
            x = conv(x)
            lengths = (lengths - 1) // time_stride + 1
            mask = _time_mask(lengths, x.shape[2])
            x = activation(norm(x, mask) if isinstance(norm, MaskedBatchNorm2d) else norm(x)) * mask
        x = x.permute(0, 2, 1, 3).flatten(2)  # (batch, frames', channels * freq')
        packed = pack_padded_sequence(x, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
        _, hidden = self.gru(packed)
        return hidden[-1]


class MaskedBatchNorm2d(nn.BatchNorm2d):
    """BatchNorm2d over ``(batch, channels, frames, freq)`` whose training statistics (the batch's
    and the running ones it updates) count only the frames a mask keeps; in eval mode it is
    :class:`torch.nn.BatchNorm2d`, with the same parameters and buffers."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """``x (batch, channels, frames, freq)``, ``mask (batch, 1, frames, 1)`` 1 on real frames."""
        if not self.training or mask is None:
            return super().forward(x)
        count = mask.sum() * x.shape[3]
        mean = (x * mask).sum((0, 2, 3)) / count
        centred = x - mean[:, None, None]
        var = (centred.square() * mask).sum((0, 2, 3)) / count
        if self.track_running_stats:
            with torch.no_grad():  # as BatchNorm: the unbiased variance goes into the running one
                self.num_batches_tracked += 1
                momentum = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
                self.running_mean.lerp_(mean, momentum)
                self.running_var.lerp_(var * count / (count - 1).clamp(min=1), momentum)
        out = centred * torch.rsqrt(var + self.eps)[:, None, None]
        return out * self.weight[:, None, None] + self.bias[:, None, None] if self.affine else out


class ChannelLayerNorm(nn.LayerNorm):
    """LayerNorm over the channels of ``(batch, channels, frames, freq)`` at each position: no
    batch statistics, so each reference (and each frame of it) is normalised on its own."""

    def __init__(self, channels: int) -> None:
        super().__init__(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


#: The reference encoder's norms (:class:`ReferenceEncoder`'s ``norm``).
REFERENCE_NORMS = ("batch", "masked_batch", "layer")
_NORMS = {"batch": nn.BatchNorm2d, "masked_batch": MaskedBatchNorm2d, "layer": ChannelLayerNorm}


def _time_mask(lengths: torch.Tensor, frames: int) -> torch.Tensor:
    """``(batch, 1, frames, 1)`` mask, 1 on real frames."""
    mask = torch.arange(frames, device=lengths.device)[None, :] < lengths[:, None]
    return mask[:, None, :, None].float()


class StyleTokenLayer(nn.Module):
    """Multi-head attention from a reference embedding over learned style tokens.

    The tokens (passed through tanh) are keys and values; each head's softmax weights over the
    tokens are returned so users can inspect and steer style.

    Every argument is required: the defaults (Tacotron 2 sizes) are
    :class:`~gst_tts.model.tacotron.GSTTacotron`'s, so each is set in one place.

    Args:
        query_dim: size of the reference embedding.
        n_tokens: number of style tokens.
        token_dim: size of a token and of the style embedding.
        n_heads: attention heads; must divide ``token_dim``.
    """

    def __init__(self, *, query_dim: int, n_tokens: int, token_dim: int, n_heads: int) -> None:
        super().__init__()
        if token_dim % n_heads:
            raise ValueError(f"token_dim ({token_dim}) must be divisible by n_heads ({n_heads})")
        self.n_tokens = n_tokens
        self.n_heads = n_heads
        self.head_dim = token_dim // n_heads
        self.style_tokens = nn.Parameter(torch.randn(n_tokens, token_dim) * 0.5)
        self.query_proj = nn.Linear(query_dim, token_dim, bias=False)
        self.key_proj = nn.Linear(token_dim, token_dim, bias=False)
        self.value_proj = nn.Linear(token_dim, token_dim, bias=False)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., token_dim)`` → ``(..., n_heads, head_dim)``."""
        return x.unflatten(-1, (self.n_heads, self.head_dim))

    def _values(self) -> torch.Tensor:
        """``(n_heads, n_tokens, head_dim)``."""
        return self._heads(self.value_proj(torch.tanh(self.style_tokens))).transpose(0, 1)

    def forward(self, reference_embedding: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(batch, query_dim)`` → ``style (batch, token_dim)``, ``weights (batch, n_heads, n_tokens)``."""
        query = self._heads(self.query_proj(reference_embedding))  # (batch, heads, head_dim)
        keys = self._heads(self.key_proj(torch.tanh(self.style_tokens))).transpose(0, 1)  # (heads, tokens, head_dim)
        scores = torch.einsum("bhd,htd->bht", query, keys) / self.head_dim**0.5
        weights = torch.softmax(scores, dim=-1)
        return self.style_from_weights(weights), weights

    def style_from_weights(self, weights: torch.Tensor) -> torch.Tensor:
        """Style embedding for given token weights, without a reference.

        Args:
            weights: ``(batch, n_heads, n_tokens)``, or ``(batch, n_tokens)`` for the same weights
                in every head. They need not be positive nor sum to one (style control).

        Returns:
            ``(batch, token_dim)``.
        """
        if weights.dim() == 2:
            weights = weights.unsqueeze(1).expand(-1, self.n_heads, -1)
        if weights.shape[1:] != (self.n_heads, self.n_tokens):
            raise ValueError(
                f"style weights must have shape (batch, {self.n_heads}, {self.n_tokens}) or (batch, {self.n_tokens}),"
                f" got {tuple(weights.shape)}"
            )
        return torch.einsum("bht,htd->bhd", weights.to(self.style_tokens.dtype), self._values()).flatten(1)


class GlobalStyleTokens(nn.Module):
    """Reference encoder + style token layer.

    Every argument is required: the defaults (Tacotron 2 sizes) are
    :class:`~gst_tts.model.tacotron.GSTTacotron`'s, so each is set in one place.

    Args:
        n_mels: mel channels of references.
        reference_channels: reference encoder convolution channels.
        reference_dim: reference encoder GRU units.
        reference_time_strides: the reference encoder blocks' strides in time (see
            :class:`ReferenceEncoder`).
        reference_norm: the reference encoder blocks' norm (see :class:`ReferenceEncoder`).
        n_tokens: style tokens.
        token_dim: token and style embedding size.
        n_heads: attention heads.
    """

    def __init__(
        self,
        *,
        n_mels: int,
        reference_channels: Sequence[int],
        reference_dim: int,
        reference_time_strides: Sequence[int],
        reference_norm: str,
        n_tokens: int,
        token_dim: int,
        n_heads: int,
    ) -> None:
        super().__init__()
        self.reference_encoder = ReferenceEncoder(
            n_mels=n_mels,
            channels=reference_channels,
            gru_dim=reference_dim,
            time_strides=reference_time_strides,
            norm=reference_norm,
        )
        self.token_layer = StyleTokenLayer(
            query_dim=reference_dim, n_tokens=n_tokens, token_dim=token_dim, n_heads=n_heads
        )
        self.token_dim = token_dim

    def forward(
        self, reference_mel: torch.Tensor, lengths: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(batch, frames, n_mels)`` → ``style (batch, token_dim)``, ``weights (batch, n_heads, n_tokens)``."""
        return self.token_layer(self.reference_encoder(reference_mel, lengths))

    def style_from_weights(self, weights: torch.Tensor) -> torch.Tensor:
        return self.token_layer.style_from_weights(weights)
