"""Scaled dot-product attention: Vaswani et al. 2017, "Attention Is All You Need" (one head)."""

from __future__ import annotations

import math

import torch
from torch import nn

from gst_tts.model.attention.scored import ScoredAttention


class ScaledDotAttention(ScoredAttention):
    """``e_i = (W_q s)^T (W_k h_i) / sqrt(d) (+ l_i)``, ``a = softmax(e)``, ``d = attention_dim``.

    Query and keys are projected to ``attention_dim`` as in the paper's single head; the
    ``1/sqrt(d)`` keeps the energies' spread independent of ``d`` so the softmax does not saturate.

    Arguments: :class:`~gst_tts.model.attention.scored.ScoredAttention`'s; ``attention_dim`` is
    ``d``, the size of the projected query and keys.
    """

    def build_score(self, *, query_dim: int, memory_dim: int, attention_dim: int) -> None:
        self.query_layer = nn.Linear(query_dim, attention_dim, bias=False)
        self.memory_layer = nn.Linear(memory_dim, attention_dim, bias=False)
        self.scale = 1.0 / math.sqrt(attention_dim)

    def keys(self, memory: torch.Tensor) -> torch.Tensor:
        # The scale is folded into the keys: once per utterance instead of once per step.
        return self.memory_layer(memory) * self.scale

    def score(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return torch.bmm(keys, self.query_layer(query).unsqueeze(-1)).squeeze(-1)
