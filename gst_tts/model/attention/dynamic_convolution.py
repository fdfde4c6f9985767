"""Dynamic convolution attention (DCA): Battenberg et al. 2020, "Location-Relative Attention
Mechanisms for Robust Long-Form Speech Synthesis" (ICASSP)."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from gst_tts.model.attention.base import AttentionState, DecoderAttention, attend, masked_softmax

#: Floor of the prior filter's output before its log: behind the previous alignment the prior is
#: exactly 0, and log(1e-6) ≈ -13.8 is a strong but finite (fp16/bf16-safe) penalty there.
PRIOR_FLOOR = 1e-6


class DCAMemory(NamedTuple):
    """Per-utterance inputs of :class:`DynamicConvolutionAttention`: constant over decoder steps."""

    memory: torch.Tensor  # (batch, symbols, memory_dim)
    padding_mask: torch.Tensor | None  # (batch, symbols), True at padding


class DynamicConvolutionAttention(DecoderAttention):
    """Energy-based, location-relative attention: no content term, so nothing depends on length.

    From the previous weights ``a_{t-1}``:

    - static filters ``f = F * a_{t-1}`` (learned, shared by all steps);
    - dynamic filters ``g = G(s_t) * a_{t-1}``, ``G(s_t) = V tanh(W s_t + b)`` (predicted per step
      from the query);
    - a causal prior filter ``p = log(max(P * a_{t-1}, 1e-6))``, ``P`` a fixed beta-binomial
      (``alpha``, ``beta``) over ``prior_filter_len`` taps that only moves mass forward;

    ``e_i = v^T tanh(U f_i + T g_i + b) + p_i``, ``a_t = softmax(e)``, ``a_0`` all on the first symbol.

    The memory is only attended (the context), never scored. State: ``(a_{t-1}, cumulative weights)``.

    Arguments: the keywords every kind takes (:class:`~gst_tts.model.attention.base.DecoderAttention`),
    of which ``memory_dim`` (the energies do not read the memory), ``location_filters`` and
    ``location_kernel_size`` (DCA has its own filters below) are unused and ``attention_dim`` is
    the energy space and the dynamic filters' hidden layer; and its own:

    Args:
        static_filters: static filters. Default 8 (the paper's).
        static_kernel_size: their length, odd. Default 21.
        dynamic_filters: dynamic filters. Default 8.
        dynamic_kernel_size: their length, odd. Default 21.
        prior_filter_len: prior filter taps. Default 11.
        prior_alpha, prior_beta: the beta-binomial prior. Default 0.1, 0.9.
    """

    def __init__(
        self,
        *,
        query_dim: int,
        memory_dim: int,
        attention_dim: int,
        location_filters: int,
        location_kernel_size: int,
        static_filters: int = 8,
        static_kernel_size: int = 21,
        dynamic_filters: int = 8,
        dynamic_kernel_size: int = 21,
        prior_filter_len: int = 11,
        prior_alpha: float = 0.1,
        prior_beta: float = 0.9,
    ) -> None:
        super().__init__()
        if static_kernel_size % 2 == 0 or dynamic_kernel_size % 2 == 0:
            raise ValueError("DCA filter lengths must be odd")
        self.dynamic_filters = dynamic_filters
        self.dynamic_kernel_size = dynamic_kernel_size
        self.static_conv = nn.Conv1d(1, static_filters, static_kernel_size, padding=static_kernel_size // 2, bias=False)
        self.static_layer = nn.Linear(static_filters, attention_dim, bias=True)
        self.dynamic_query = nn.Linear(query_dim, attention_dim, bias=True)
        self.dynamic_generator = nn.Linear(attention_dim, dynamic_filters * dynamic_kernel_size, bias=False)
        self.dynamic_layer = nn.Linear(dynamic_filters, attention_dim, bias=False)
        self.energy = nn.Linear(attention_dim, 1, bias=False)
        # Flipped so that conv1d (a correlation) over the left-padded weights shifts mass forward.
        self.register_buffer(
            "prior", _beta_binomial(prior_filter_len - 1, prior_alpha, prior_beta).flip(0), persistent=False
        )

    def prepare(self, memory: torch.Tensor, padding_mask: torch.Tensor | None) -> DCAMemory:
        return DCAMemory(memory, padding_mask)

    def initial_state(self, prepared: DCAMemory) -> AttentionState:
        batch, symbols = prepared.memory.shape[:2]
        previous = prepared.memory.new_zeros(batch, symbols)
        previous[:, 0] = 1.0
        return previous, prepared.memory.new_zeros(batch, symbols)

    def step(
        self, query: torch.Tensor, state: AttentionState, prepared: DCAMemory
    ) -> tuple[torch.Tensor, torch.Tensor, AttentionState]:
        previous, cumulative = state
        batch, symbols = previous.shape
        # In float32: the prior's floor and its log are not representable with margin in fp16.
        prior = F.conv1d(
            F.pad(previous.float().unsqueeze(1), (self.prior.numel() - 1, 0)), self.prior.float().view(1, 1, -1)
        )
        prior = torch.log(prior.squeeze(1).clamp_min(PRIOR_FLOOR))
        filters = self.dynamic_generator(torch.tanh(self.dynamic_query(query)))  # (batch, filters * kernel)
        # One grouped convolution applies each item's own filters to its own weights.
        dynamic = (
            F.conv1d(
                previous.unsqueeze(0),
                filters.reshape(batch * self.dynamic_filters, 1, -1).to(previous.dtype),
                padding=self.dynamic_kernel_size // 2,
                groups=batch,
            )
            .view(batch, self.dynamic_filters, symbols)
            .transpose(1, 2)
        )
        static = self.static_conv(previous.unsqueeze(1)).transpose(1, 2)
        hidden = torch.tanh(self.static_layer(static) + self.dynamic_layer(dynamic.to(static.dtype)))
        energies = self.energy(hidden).squeeze(-1).float() + prior
        weights = masked_softmax(energies, prepared.padding_mask).to(query.dtype)
        return (
            attend(weights, prepared.memory),
            weights,
            (weights.to(previous.dtype), cumulative + weights.to(cumulative.dtype)),
        )


def _beta_binomial(n: int, alpha: float, beta: float) -> torch.Tensor:
    """Beta-binomial pmf over ``0..n``: ``C(n, k) B(k + alpha, n - k + beta) / B(alpha, beta)``."""

    def log_beta(a: float, b: float) -> float:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)

    return torch.tensor(
        [
            math.exp(
                math.lgamma(n + 1)
                - math.lgamma(k + 1)
                - math.lgamma(n - k + 1)
                + log_beta(k + alpha, n - k + beta)
                - log_beta(alpha, beta)
            )
            for k in range(n + 1)
        ]
    )
