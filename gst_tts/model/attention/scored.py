"""What the classic score-function kinds share: prepared keys, the optional location term, state."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from gst_tts.model.attention.base import AttentionState, DecoderAttention, attend, masked_softmax


class ScoredMemory(NamedTuple):
    """Per-utterance inputs of a :class:`ScoredAttention`: constant over decoder steps."""

    memory: torch.Tensor  # (batch, symbols, memory_dim)
    keys: torch.Tensor  # (batch, symbols, key_dim), the kind's projection of memory
    location_weight: torch.Tensor | None  # (1, 2, kernel), merged location conv + dense; None without location
    padding_mask: torch.Tensor | None  # (batch, symbols), True at padding


class LocationTerm(nn.Module):
    """``l_i = w^T (F * [a_prev, a_cum])_i``: one scalar per symbol added to a classic kind's energy.

    The same features as location-sensitive attention (a convolution over the previous and the
    cumulative weights), projected to one energy term so that score functions which are not
    additive (dot, general, scaled dot) can take them too.
    """

    def __init__(self, *, filters: int, kernel_size: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(2, filters, kernel_size, padding=kernel_size // 2, bias=False)
        self.dense = nn.Linear(filters, 1, bias=False)

    def merged_weight(self) -> torch.Tensor:
        """Conv then dense are both linear: one ``(1, 2, kernel)`` convolution per step instead of two ops."""
        return torch.einsum("af,fck->ack", self.dense.weight, self.conv.weight)

    def energy(self, weight: torch.Tensor, previous: torch.Tensor, cumulative: torch.Tensor) -> torch.Tensor:
        """``(batch, symbols)`` from the merged weight and the ``(batch, symbols)`` weights."""
        stacked = torch.stack([previous, cumulative], dim=1)
        return F.conv1d(stacked, weight.to(stacked.dtype), padding=self.conv.padding[0]).squeeze(1)


class ScoredAttention(DecoderAttention):
    """A softmax over ``score(s, h_i)`` (+ the location term): subclasses give their layers, the
    keys and the score.

    State: the previous and the cumulative weights (kept even without the location term: two
    additions per step, and every kind's state then looks the same to tests and tools).

    Args: the keywords every kind takes (:class:`~gst_tts.model.attention.base.DecoderAttention`);
    ``location_filters`` and ``location_kernel_size`` are used only with ``location``.
    """

    takes_location = True

    def __init__(
        self,
        *,
        query_dim: int,
        memory_dim: int,
        attention_dim: int,
        location: bool,
        location_filters: int,
        location_kernel_size: int,
    ) -> None:
        super().__init__()
        self.location = LocationTerm(filters=location_filters, kernel_size=location_kernel_size) if location else None
        self.build_score(query_dim=query_dim, memory_dim=memory_dim, attention_dim=attention_dim)

    def build_score(self, *, query_dim: int, memory_dim: int, attention_dim: int) -> None:
        """Creates the kind's own layers (after the location term's, so parameters are drawn in one order)."""
        raise NotImplementedError

    def keys(self, memory: torch.Tensor) -> torch.Tensor:
        """``(batch, symbols, memory_dim)`` → ``(batch, symbols, key_dim)``, once per utterance."""
        raise NotImplementedError

    def score(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """``query (batch, query_dim)``, ``keys (batch, symbols, key_dim)`` → energies ``(batch, symbols)``."""
        raise NotImplementedError

    def prepare(self, memory: torch.Tensor, padding_mask: torch.Tensor | None) -> ScoredMemory:
        location_weight = self.location.merged_weight() if self.location is not None else None
        return ScoredMemory(memory, self.keys(memory), location_weight, padding_mask)

    def initial_state(self, prepared: ScoredMemory) -> AttentionState:
        batch, symbols = prepared.memory.shape[:2]
        zeros = prepared.memory.new_zeros(batch, symbols)
        return zeros, zeros

    def step(
        self, query: torch.Tensor, state: AttentionState, prepared: ScoredMemory
    ) -> tuple[torch.Tensor, torch.Tensor, AttentionState]:
        previous, cumulative = state
        energies = self.score(query, prepared.keys)
        if self.location is not None:
            energies = energies + self.location.energy(prepared.location_weight, previous, cumulative).to(
                energies.dtype
            )
        weights = masked_softmax(energies, prepared.padding_mask)
        return attend(weights, prepared.memory), weights, (weights, cumulative + weights)
