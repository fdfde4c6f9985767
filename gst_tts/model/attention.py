"""Location-sensitive attention (Chorowski et al. 2015, as in Tacotron 2)."""

from __future__ import annotations

import torch
from torch import nn

# Finite so that it stays representable in fp16 (max 65504) and bf16; far below any real energy,
# so masked symbols get exactly zero weight after softmax without producing inf - inf = NaN.
MASK_VALUE = -1e4


class LocationSensitiveAttention(nn.Module):
    """Additive attention whose energies also see where the attention has been.

    Location features come from a convolution over the previous and the cumulative attention
    weights, so the alignment is pushed to move forward monotonically.

    Args:
        query_dim: size of the query (the attention LSTM's hidden state).
        memory_dim: size of each encoder state.
        attention_dim: size of the energy space. Default 128.
        location_filters: convolution filters over [previous, cumulative] weights. Default 32.
        location_kernel_size: their kernel size (odd). Default 31.
    """

    def __init__(
        self,
        query_dim: int,
        memory_dim: int,
        attention_dim: int = 128,
        location_filters: int = 32,
        location_kernel_size: int = 31,
    ) -> None:
        super().__init__()
        self.query_layer = nn.Linear(query_dim, attention_dim, bias=False)
        self.memory_layer = nn.Linear(memory_dim, attention_dim, bias=False)
        self.location_conv = nn.Conv1d(
            2, location_filters, location_kernel_size, padding=location_kernel_size // 2, bias=False
        )
        self.location_dense = nn.Linear(location_filters, attention_dim, bias=False)
        self.energy = nn.Linear(attention_dim, 1, bias=False)

    def project_memory(self, memory: torch.Tensor) -> torch.Tensor:
        """``(batch, symbols, memory_dim)`` → ``(batch, symbols, attention_dim)``; once per utterance."""
        return self.memory_layer(memory)

    def forward(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        processed_memory: torch.Tensor,
        previous_weights: torch.Tensor,
        cumulative_weights: torch.Tensor,
        padding_mask: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One decoder step.

        Args:
            query: ``(batch, query_dim)``.
            memory: ``(batch, symbols, memory_dim)``.
            processed_memory: ``(batch, symbols, attention_dim)`` from :meth:`project_memory`.
            previous_weights, cumulative_weights: ``(batch, symbols)``.
            padding_mask: ``(batch, symbols)``, True at padding; None when nothing is padded.

        Returns:
            ``context (batch, memory_dim)`` and ``weights (batch, symbols)``.
        """
        location = self.location_conv(torch.stack([previous_weights, cumulative_weights], dim=1))
        location = self.location_dense(location.transpose(1, 2))
        energies = self.energy(
            torch.tanh(self.query_layer(query).unsqueeze(1) + location + processed_memory)
        ).squeeze(-1)
        if padding_mask is not None:
            energies = energies.masked_fill(padding_mask, MASK_VALUE)
        weights = torch.softmax(energies, dim=-1)
        context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)
        return context, weights
