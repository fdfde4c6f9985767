"""Additive (concat) attention, content only: Bahdanau, Cho and Bengio 2015, "Neural Machine
Translation by Jointly Learning to Align and Translate"."""

from __future__ import annotations

import torch
from torch import nn

from gst_tts.model.attention.scored import ScoredAttention


class AdditiveAttention(ScoredAttention):
    """``e_i = v^T tanh(W s + U h_i) (+ l_i)``, ``a = softmax(e)``.

    With ``location``, the scalar location term ``l_i`` (:class:`~gst_tts.model.attention.scored.LocationTerm`)
    is added to the energy; location features inside the ``tanh`` are ``location_sensitive``.

    Arguments: :class:`~gst_tts.model.attention.scored.ScoredAttention`'s; ``attention_dim`` is the
    rows of ``W`` and ``U``.
    """

    def build_score(self, *, query_dim: int, memory_dim: int, attention_dim: int) -> None:
        self.query_layer = nn.Linear(query_dim, attention_dim, bias=False)
        self.memory_layer = nn.Linear(memory_dim, attention_dim, bias=False)
        self.energy = nn.Linear(attention_dim, 1, bias=False)

    def keys(self, memory: torch.Tensor) -> torch.Tensor:
        return self.memory_layer(memory)

    def score(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return self.energy(torch.tanh(self.query_layer(query).unsqueeze(1) + keys)).squeeze(-1)
