"""Dot-product attention: Luong, Pham and Manning 2015, "Effective Approaches to Attention-based
Neural Machine Translation" (the ``dot`` score)."""

from __future__ import annotations

import torch
from torch import nn

from gst_tts.model.attention.scored import ScoredAttention


class DotAttention(ScoredAttention):
    """``e_i = s^T h_i (+ l_i)``, ``a = softmax(e)``.

    Luong's ``dot`` needs ``s`` and ``h_i`` of one size; when the attention LSTM and the memory
    differ, ``s`` goes through a linear map to ``memory_dim`` first (then it is ``general`` with a
    factor on the query side). No scaling: that is ``scaled_dot``.

    Arguments: :class:`~gst_tts.model.attention.scored.ScoredAttention`'s; ``attention_dim`` is
    unused (the score lives in memory space).
    """

    def build_score(self, *, query_dim: int, memory_dim: int, attention_dim: int) -> None:
        self.query_layer = nn.Identity() if query_dim == memory_dim else nn.Linear(query_dim, memory_dim, bias=False)

    def keys(self, memory: torch.Tensor) -> torch.Tensor:
        return memory

    def score(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return torch.bmm(keys, self.query_layer(query).unsqueeze(-1)).squeeze(-1)
