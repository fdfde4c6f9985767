"""Location-sensitive attention (Chorowski et al. 2015, as in Tacotron 2)."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from gst_tts.model.attention.base import MASK_VALUE, AttentionState, DecoderAttention

__all__ = ["MASK_VALUE", "AttentionMemory", "LocationSensitiveAttention"]


class LocationSensitiveAttention(DecoderAttention):
    """Additive attention whose energies also see where the attention has been (the default kind).

    ``e_i = v^T tanh(W s + U h_i + F (f * [a_prev, a_cum])_i)``, ``a = softmax(e)``: Chorowski et
    al. 2015, "Attention-Based Models for Speech Recognition", as used in Tacotron 2 (Shen et al.
    2018). State: the previous and the cumulative weights.

    Location features come from a convolution over the previous and the cumulative attention
    weights, so the alignment is pushed to move forward monotonically.

    Arguments: the keywords every kind takes (:class:`~gst_tts.model.attention.base.DecoderAttention`),
    but no ``location`` switch: the location features are always there.
    """

    def __init__(
        self,
        *,
        query_dim: int,
        memory_dim: int,
        attention_dim: int,
        location_filters: int,
        location_kernel_size: int,
    ) -> None:
        super().__init__()
        self.query_layer = nn.Linear(query_dim, attention_dim, bias=False)
        self.memory_layer = nn.Linear(memory_dim, attention_dim, bias=False)
        self.location_conv = nn.Conv1d(
            2, location_filters, location_kernel_size, padding=location_kernel_size // 2, bias=False
        )
        self.location_dense = nn.Linear(location_filters, attention_dim, bias=False)
        self.energy = nn.Linear(attention_dim, 1, bias=False)

    def prepare(self, memory: torch.Tensor, padding_mask: torch.Tensor | None) -> "AttentionMemory":
        """Everything that does not change across decoder steps, computed once per utterance batch.

        The location convolution and its dense projection are both linear, so they are merged
        into one convolution with ``attention_dim`` outputs: one op per step instead of two.
        """
        location_weight = torch.einsum("af,fck->ack", self.location_dense.weight, self.location_conv.weight)
        return AttentionMemory(memory, self.memory_layer(memory), location_weight, padding_mask)

    def forward(
        self,
        query: torch.Tensor,
        prepared: "AttentionMemory",
        previous_weights: torch.Tensor,
        cumulative_weights: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One decoder step.

        Args:
            query: ``(batch, query_dim)``.
            prepared: from :meth:`prepare`.
            previous_weights, cumulative_weights: ``(batch, symbols)``.

        Returns:
            ``context (batch, memory_dim)`` and ``weights (batch, symbols)``.
        """
        location = F.conv1d(
            torch.stack([previous_weights, cumulative_weights], dim=1),
            prepared.location_weight.to(previous_weights.dtype),
            padding=self.location_conv.padding[0],
        ).transpose(1, 2)
        energies = self.energy(
            torch.tanh(self.query_layer(query).unsqueeze(1) + location + prepared.processed_memory)
        ).squeeze(-1)
        if prepared.padding_mask is not None:
            energies = energies.masked_fill(prepared.padding_mask, MASK_VALUE)
        weights = torch.softmax(energies, dim=-1)
        context = torch.bmm(weights.unsqueeze(1).to(prepared.memory.dtype), prepared.memory).squeeze(1)
        return context, weights

    def initial_state(self, prepared: "AttentionMemory") -> AttentionState:
        batch, symbols = prepared.memory.shape[:2]
        zeros = prepared.memory.new_zeros(batch, symbols)
        return zeros, zeros

    def step(
        self, query: torch.Tensor, state: AttentionState, prepared: "AttentionMemory"
    ) -> tuple[torch.Tensor, torch.Tensor, AttentionState]:
        """One decoder step (see :class:`DecoderAttention`); state is ``(previous, cumulative)`` weights."""
        previous, cumulative = state
        context, weights = self(query, prepared, previous, cumulative)
        return context, weights, (weights, cumulative + weights)


class AttentionMemory(NamedTuple):
    """Per-utterance attention inputs: constant over decoder steps."""

    memory: torch.Tensor  # (batch, symbols, memory_dim)
    processed_memory: torch.Tensor  # (batch, symbols, attention_dim)
    location_weight: torch.Tensor  # (attention_dim, 2, kernel), merged location conv + dense
    padding_mask: torch.Tensor | None  # (batch, symbols), True at padding
