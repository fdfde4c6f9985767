"""Postnet: a residual convolution stack that sharpens the decoder's mel frames."""

from __future__ import annotations

import torch
from torch import nn


class Postnet(nn.Module):
    """Five Conv1d + BatchNorm layers, tanh after all but the last (Tacotron 2).

    Args:
        n_mels: mel channels in and out. Default 80.
        postnet_dim: hidden channels. Default 512.
        kernel_size: kernel size. Default 5.
        n_convs: number of convolutions. Default 5.
        dropout: dropout after each layer. Default 0.5.
    """

    def __init__(
        self, n_mels: int = 80, postnet_dim: int = 512, kernel_size: int = 5, n_convs: int = 5, dropout: float = 0.5
    ) -> None:
        super().__init__()
        layers = []
        for i in range(n_convs):
            last = i == n_convs - 1
            layers.append(
                nn.Sequential(
                    nn.Conv1d(n_mels if i == 0 else postnet_dim, n_mels if last else postnet_dim, kernel_size,
                              padding=kernel_size // 2),
                    nn.BatchNorm1d(n_mels if last else postnet_dim),
                    nn.Identity() if last else nn.Tanh(),
                    nn.Dropout(dropout),
                )
            )
        self.layers = nn.Sequential(*layers)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        """``(batch, frames, n_mels)`` → the residual to add, same shape."""
        return self.layers(mel.transpose(1, 2)).transpose(1, 2)
