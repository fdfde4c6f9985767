"""The interface every decoder attention implements, and the masking they share."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

# Finite so that it stays representable in fp16 (max 65504) and bf16; far below any real energy,
# so masked symbols get exactly zero weight after softmax without producing inf - inf = NaN.
MASK_VALUE = -1e4

AttentionState = tuple[torch.Tensor, ...]


class DecoderAttention(nn.Module):
    """A decoder attention: prepared once per utterance batch, then stepped once per decoder step.

    The decoder calls only these three methods, so a new kind is a new module and no decoder
    change. Each kind owns its recurrent state (a tuple of tensors; the decoder just carries it).

    Contract for :meth:`step`'s weights ``(batch, symbols)``: exactly 0 at padding, summing to 1
    over the real symbols, finite in fp16/bf16 (mask with :data:`MASK_VALUE`, never ``-inf``).

    Class attribute ``takes_location``: whether the constructor has the ``location`` switch
    (the optional location term of the classic kinds and ``forward``).

    Constructor arguments, the same keywords for every kind so that ``build_attention`` builds
    any of them (a kind accepts and ignores those it has no use for, and its docstring says which
    and what ``attention_dim`` is to it). Every one is required: the defaults are
    :class:`~gst_tts.model.tacotron.GSTTacotron`'s, so each is set in one place.

    - ``query_dim``: size of the query ``s`` (the attention LSTM's output).
    - ``memory_dim``: size of each encoder state ``h_i``.
    - ``attention_dim``: size of the kind's energy space.
    - ``location`` (only where ``takes_location``): add the location term ``l_i``
      (:class:`~gst_tts.model.attention.scored.LocationTerm`) to the energies.
    - ``location_filters``, ``location_kernel_size``: the location convolution over the
      [previous, cumulative] weights: its filters and its (odd) kernel size.
    """

    takes_location: bool = False

    def prepare(self, memory: torch.Tensor, padding_mask: torch.Tensor | None) -> Any:
        """What does not change across decoder steps.

        Args:
            memory: ``(batch, symbols, memory_dim)``.
            padding_mask: ``(batch, symbols)``, True at padding, or None when nothing is padded.

        Every kind returns a ``NamedTuple`` with a ``padding_mask`` field, which its :meth:`step`
        honours: :meth:`with_mask` relies on it.
        """
        raise NotImplementedError

    def with_mask(self, prepared: Any, mask: torch.Tensor) -> Any:
        """``prepared`` with ``mask`` ``(batch, symbols)``, True where no weight may go, in place of
        its padding mask (``mask`` must cover the padding too). Free-running decoding narrows each
        step's attention to a window this way; the kinds need no code of their own for it."""
        return prepared._replace(padding_mask=mask)

    def initial_state(self, prepared: Any) -> AttentionState:
        """The state before the first decoder step."""
        raise NotImplementedError

    def step(
        self, query: torch.Tensor, state: AttentionState, prepared: Any
    ) -> tuple[torch.Tensor, torch.Tensor, AttentionState]:
        """One decoder step.

        Args:
            query: ``(batch, query_dim)``, the attention LSTM's output.
            state: from :meth:`initial_state` or the previous step.
            prepared: from :meth:`prepare`.

        Returns:
            ``context (batch, memory_dim)``, ``weights (batch, symbols)`` and the new state.
        """
        raise NotImplementedError


def masked_softmax(energies: torch.Tensor, padding_mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over symbols ``(batch, symbols)`` with exactly zero weight at padding."""
    if padding_mask is not None:
        energies = energies.masked_fill(padding_mask, MASK_VALUE)
    return torch.softmax(energies, dim=-1)


def attend(weights: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
    """Context ``(batch, memory_dim)`` from weights ``(batch, symbols)`` and memory ``(batch, symbols, memory_dim)``."""
    return torch.bmm(weights.unsqueeze(1).to(memory.dtype), memory).squeeze(1)
