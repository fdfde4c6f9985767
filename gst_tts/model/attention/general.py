"""Bilinear ("general") attention: Luong, Pham and Manning 2015, "Effective Approaches to
Attention-based Neural Machine Translation" (the ``general`` score)."""

from __future__ import annotations

import torch
from torch import nn

from gst_tts.model.attention.scored import ScoredAttention


class GeneralAttention(ScoredAttention):
    """``e_i = s^T W h_i (+ l_i)``, ``a = softmax(e)``.

    ``W h_i`` does not depend on the step, so it is computed once per utterance (the keys).

    Arguments: :class:`~gst_tts.model.attention.scored.ScoredAttention`'s; ``attention_dim`` is
    unused (``W`` is ``query_dim x memory_dim``).
    """

    def build_score(self, *, query_dim: int, memory_dim: int, attention_dim: int) -> None:
        self.memory_layer = nn.Linear(memory_dim, query_dim, bias=False)

    def keys(self, memory: torch.Tensor) -> torch.Tensor:
        return self.memory_layer(memory)

    def score(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)
