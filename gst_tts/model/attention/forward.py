"""Forward attention with a transition agent: Zhang, Ling and Dai 2018, "Forward Attention in
Sequence-to-Sequence Acoustic Modeling for Speech Synthesis" (ICASSP)."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from gst_tts.model.attention.base import AttentionState, DecoderAttention, attend, masked_softmax
from gst_tts.model.attention.scored import LocationTerm


class ForwardMemory(NamedTuple):
    """Per-utterance inputs of :class:`ForwardAttention`: constant over decoder steps."""

    memory: torch.Tensor  # (batch, symbols, memory_dim)
    keys: torch.Tensor  # (batch, symbols, attention_dim), U h
    location_weight: torch.Tensor | None  # (1, 2, kernel), merged location conv + dense; None without location
    padding_mask: torch.Tensor | None  # (batch, symbols), True at padding


class ForwardAttention(DecoderAttention):
    """Monotonic attention: each step may stay on a symbol or move one symbol on, never back.

    ``y_t = softmax(v^T tanh(W s_t + U h_i) (+ l_i))`` is the content attention (additive, with
    the optional location term ``l_i``); then

    ``a^_t(i) = ((1 - u_{t-1}) a_{t-1}(i) + u_{t-1} a_{t-1}(i-1)) y_t(i)``,  ``a_t = a^_t / sum_i a^_t(i)``,

    with ``a_0`` all on the first symbol and the transition agent
    ``u_t = sigmoid(w^T [c_t, s_t] + b)`` (the probability of moving on; ``u_0 = 0.5``). The paper's
    agent also sees the previous decoder output; here the query ``s_t`` (the attention LSTM's
    output, which has read it) stands in for it, so the interface stays the same for every kind.

    The recursion runs in float32 whatever the input dtype: its products shrink every step and
    would underflow in fp16/bf16. Should every ``a^_t`` underflow even so, the step falls back to
    ``y_t`` rather than divide by zero.

    State: ``(a_{t-1} (batch, symbols), u_{t-1} (batch, 1), cumulative weights (batch, symbols))``.

    Arguments: the keywords every kind takes (:class:`~gst_tts.model.attention.base.DecoderAttention`);
    ``attention_dim`` is the content energy space, the location term is added to the content
    energies, and its convolution is used only with ``location``.
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
        self.query_layer = nn.Linear(query_dim, attention_dim, bias=False)
        self.memory_layer = nn.Linear(memory_dim, attention_dim, bias=False)
        self.energy = nn.Linear(attention_dim, 1, bias=False)
        self.location = LocationTerm(filters=location_filters, kernel_size=location_kernel_size) if location else None
        self.transition_agent = nn.Linear(memory_dim + query_dim, 1)

    def prepare(self, memory: torch.Tensor, padding_mask: torch.Tensor | None) -> ForwardMemory:
        location_weight = self.location.merged_weight() if self.location is not None else None
        return ForwardMemory(memory, self.memory_layer(memory), location_weight, padding_mask)

    def initial_state(self, prepared: ForwardMemory) -> AttentionState:
        batch, symbols = prepared.memory.shape[:2]
        alpha = prepared.memory.new_zeros(batch, symbols, dtype=torch.float32)
        alpha[:, 0] = 1.0
        u = prepared.memory.new_full((batch, 1), 0.5, dtype=torch.float32)
        return alpha, u, prepared.memory.new_zeros(batch, symbols)

    def step(
        self, query: torch.Tensor, state: AttentionState, prepared: ForwardMemory
    ) -> tuple[torch.Tensor, torch.Tensor, AttentionState]:
        alpha, u, cumulative = state
        energies = self.energy(torch.tanh(self.query_layer(query).unsqueeze(1) + prepared.keys)).squeeze(-1)
        if self.location is not None:
            previous = alpha.to(cumulative.dtype)
            energies = energies + self.location.energy(prepared.location_weight, previous, cumulative).to(
                energies.dtype
            )
        content = masked_softmax(energies.float(), prepared.padding_mask)
        moved = torch.nn.functional.pad(alpha[:, :-1], (1, 0))
        forward = ((1 - u) * alpha + u * moved) * content
        total = forward.sum(-1, keepdim=True)
        alpha = torch.where(total > 0, forward / total.clamp_min(torch.finfo(torch.float32).tiny), content)
        weights = alpha.to(query.dtype)
        context = attend(weights, prepared.memory)
        u = torch.sigmoid(self.transition_agent(torch.cat([context, query], -1)).float())
        return context, weights, (alpha, u, cumulative + weights.to(cumulative.dtype))
