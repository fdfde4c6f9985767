"""Text encoder: character embedding, a convolution stack and a bidirectional LSTM."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class _ConvBlock(nn.Sequential):
    """Conv1d + BatchNorm + ReLU + dropout over ``(batch, channels, time)``."""

    def __init__(self, *, in_channels: int, out_channels: int, kernel_size: int, dropout: float) -> None:
        super().__init__(
            nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2),
            nn.BatchNorm1d(out_channels),
            nn.ReLU(),
            nn.Dropout(dropout),
        )


class Encoder(nn.Module):
    """Tacotron 2 encoder.

    Every argument is required: the defaults (Tacotron 2 sizes) are
    :class:`~gst_tts.model.tacotron.GSTTacotron`'s, so each is set in one place.

    Args:
        n_symbols: size of the symbol table.
        embedding_dim: character embedding size.
        encoder_dim: output size (the BiLSTM has ``encoder_dim // 2`` units per direction).
        kernel_size: convolution kernel size.
        n_convs: number of convolution blocks.
        dropout: dropout after each convolution block.
        pad_id: index of the padding symbol.
    """

    def __init__(
        self,
        *,
        n_symbols: int,
        embedding_dim: int,
        encoder_dim: int,
        kernel_size: int,
        n_convs: int,
        dropout: float,
        pad_id: int,
    ) -> None:
        super().__init__()
        if encoder_dim % 2:
            raise ValueError(f"encoder_dim must be even (two LSTM directions), got {encoder_dim}")
        self.embedding = nn.Embedding(n_symbols, embedding_dim, padding_idx=pad_id)
        self.convs = nn.Sequential(
            *[
                _ConvBlock(
                    in_channels=embedding_dim if i == 0 else encoder_dim,
                    out_channels=encoder_dim,
                    kernel_size=kernel_size,
                    dropout=dropout,
                )
                for i in range(n_convs)
            ]
        )
        self.lstm = nn.LSTM(encoder_dim, encoder_dim // 2, batch_first=True, bidirectional=True)

    def forward(self, text: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``text (batch, symbols)``, ``lengths (batch,)`` → ``(batch, symbols, encoder_dim)``.

        Padded positions of the output are zero.
        """
        mask = (torch.arange(text.shape[1], device=text.device)[None, :] < lengths[:, None]).unsqueeze(1)
        x = self.embedding(text).transpose(1, 2)
        for block in self.convs:
            x = block(x) * mask  # keep padding at zero so it cannot leak into real symbols
        packed = pack_padded_sequence(x.transpose(1, 2), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=text.shape[1])
        return out
