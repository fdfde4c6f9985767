"""Postnet: a residual convolution stack that sharpens the decoder's mel frames."""

from __future__ import annotations

import torch
from torch import nn


class Postnet(nn.Module):
    """Five Conv1d + BatchNorm layers, tanh after all but the last (Tacotron 2).

    Every argument is required: the defaults (Tacotron 2 sizes) are
    :class:`~gst_tts.model.tacotron.GSTTacotron`'s, so each is set in one place.

    Args:
        n_mels: mel channels in and out.
        postnet_dim: hidden channels.
        kernel_size: kernel size.
        n_convs: number of convolutions.
        dropout: dropout after each layer.
    """

    def __init__(self, *, n_mels: int, postnet_dim: int, kernel_size: int, n_convs: int, dropout: float) -> None:
        super().__init__()
        layers = []
        for i in range(n_convs):
            last = i == n_convs - 1
            layers.append(
                nn.Sequential(
                    nn.Conv1d(
                        n_mels if i == 0 else postnet_dim,
                        n_mels if last else postnet_dim,
                        kernel_size,
                        padding=kernel_size // 2,
                    ),
                    nn.BatchNorm1d(n_mels if last else postnet_dim),
                    nn.Identity() if last else nn.Tanh(),
                    nn.Dropout(dropout),
                )
            )
        self.layers = nn.Sequential(*layers)

    def forward(self, mel: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """``mel (batch, frames, n_mels)``, ``lengths (batch,)`` → the residual to add, same shape.

        With ``lengths`` the frames past each item's length are zero in the residual and are
        zeroed before every convolution: each layer's bias and tanh make a padded frame nonzero
        again, and the next layer would carry it into the item's last frames. So an item's
        residual is the same as for the item alone (in eval mode), whatever stands past its end
        (padding in training; in batched inference, the frames an item decodes after it stopped
        while its neighbours run on).
        """
        x = mel.transpose(1, 2)
        if lengths is None:
            return self.layers(x).transpose(1, 2)
        padding = (torch.arange(x.shape[2], device=x.device)[None, :] >= lengths[:, None]).unsqueeze(1)
        for layer in self.layers:
            x = layer(x.masked_fill(padding, 0.0))
        return x.masked_fill(padding, 0.0).transpose(1, 2)
