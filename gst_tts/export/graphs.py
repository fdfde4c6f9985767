"""The model's inference computation cut into graphs with plain tensors in and out, for ONNX.

Each module here wraps parts of a :class:`~gst_tts.model.GSTTacotron` (in eval mode) and computes
what :meth:`GSTTacotron.infer` and :class:`~gst_tts.inference.style.StyleResolver` compute, with
the same weights, in a form that traces to a graph whose batch, text and reference lengths stay
free:

- packed sequences (the encoder's BiLSTM, the reference encoder's GRU) become recurrences over
  the padded batch with each item's own length applied by index, not a sort;
- the decoder step takes every piece of :class:`~gst_tts.model.decoder.DecoderState` as a tensor
  and gives the next one back, with the prenet's and the step's dropout masks as inputs (the
  runtime draws them, a parity test passes the same ones to both);
- dynamic convolution attention's per-item filters, a grouped convolution whose group count is
  the batch size, become a window-by-filter product that holds for any batch.

Nothing here changes the numbers: ``tests/export`` checks each graph against the model.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from gst_tts.model import GSTTacotron
from gst_tts.model.attention import ATTENTION_KINDS, DecoderAttention
from gst_tts.model.attention.dynamic_convolution import PRIOR_FLOOR, DynamicConvolutionAttention
from gst_tts.model.attention.base import attend, masked_softmax
from gst_tts.model.decoder import DecoderState
from gst_tts.model.decoder_cells import MergedCells

#: Attention kinds whose decoder step exports (every registered kind).
EXPORTABLE_KINDS: tuple[type[DecoderAttention], ...] = tuple(ATTENTION_KINDS.values())


class StepLayout(NamedTuple):
    """Which tensors a kind's decoder step carries, found once from a sample ``prepare``.

    ``prepared``: the fields of the kind's prepared memory that are per utterance (shaped
    ``(batch, symbols, ...)``, beside the memory itself): the encoder graph gives them, the step
    graph takes them. ``state``: how many tensors the kind's attention state holds.
    """

    prepared: tuple[str, ...]
    state: int


def step_layout(attention: DecoderAttention, memory_dim: int) -> StepLayout:
    """The :class:`StepLayout` of ``attention`` (prepared on a small sample of ``memory_dim`` states)."""
    batch, symbols = 3, 7  # unlike any parameter's leading sizes, so only per-utterance fields match
    with torch.no_grad():
        memory = torch.zeros(batch, symbols, memory_dim)
        prepared = attention.prepare(memory, torch.zeros(batch, symbols, dtype=torch.bool))
        fields = tuple(
            name
            for name, value in prepared._asdict().items()
            if name not in ("memory", "padding_mask")
            and isinstance(value, torch.Tensor)
            and tuple(value.shape[:2]) == (batch, symbols)
        )
        return StepLayout(fields, len(attention.initial_state(prepared)))


def _direction(rnn: nn.LSTM, *, reverse: bool) -> nn.LSTM:
    """One direction of layer 0 of a bidirectional ``rnn`` as a one-way LSTM sharing its weights."""
    suffix = "_reverse" if reverse else ""
    single = nn.LSTM(rnn.input_size, rnn.hidden_size, batch_first=True)
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        setattr(single, f"{name}_l0", getattr(rnn, f"{name}_l0{suffix}"))
    return single


def _run_direction(single: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor, *, reverse: bool) -> torch.Tensor:
    """``single`` over ``x (batch, time, features)``, each item over its own ``lengths`` only (as a
    packed sequence runs it): ``(batch, time, hidden)``, zero past each length.

    The reverse direction reads each item backwards from its last real step: the time index is
    flipped within each length by a gather, the recurrence runs forwards, the gather undoes the flip.
    """
    time = torch.arange(x.shape[1], device=x.device)[None, :]
    valid = time < lengths[:, None]
    if reverse:
        index = torch.where(valid, lengths[:, None] - 1 - time, time)
        x = x.gather(1, index[:, :, None].expand(-1, -1, x.shape[2]))
    out, _ = single(x)
    if reverse:
        out = out.gather(1, index[:, :, None].expand(-1, -1, out.shape[2]))
    return out * valid[:, :, None].to(out.dtype)


class EncoderGraph(nn.Module):
    """``text (batch, symbols)`` ids, ``text_lengths (batch,)``, ``style (batch, token_dim)`` →
    ``memory (batch, symbols, memory_dim)``, the attention's per-utterance prepared tensors and its
    initial state (as :meth:`GSTTacotron.infer` builds them before the first decoder step)."""

    def __init__(self, model: GSTTacotron, layout: StepLayout) -> None:
        super().__init__()
        self.model = model
        self.layout = layout
        self.forward_lstm = _direction(model.encoder.lstm, reverse=False)
        self.backward_lstm = _direction(model.encoder.lstm, reverse=True)

    def forward(self, text: torch.Tensor, text_lengths: torch.Tensor, style: torch.Tensor) -> tuple[torch.Tensor, ...]:
        encoder = self.model.encoder
        mask = (torch.arange(text.shape[1], device=text.device)[None, :] < text_lengths[:, None]).unsqueeze(1)
        x = encoder.embedding(text).transpose(1, 2)
        for block in encoder.convs:
            x = block(x) * mask
        x = x.transpose(1, 2)
        encoded = torch.cat(
            [
                _run_direction(self.forward_lstm, x, text_lengths, reverse=False),
                _run_direction(self.backward_lstm, x, text_lengths, reverse=True),
            ],
            dim=-1,
        )
        projected = self.model.style_projection(style).unsqueeze(1).expand(-1, encoded.shape[1], -1)
        memory = encoded + projected if self.model.style_combine == "add" else torch.cat([encoded, projected], -1)
        attention = self.model.decoder.attention
        prepared = attention.prepare(memory, ~mask[:, 0])
        state = attention.initial_state(prepared)
        return (memory, *(getattr(prepared, name) for name in self.layout.prepared), *state)


class ReferenceGraph(nn.Module):
    """``reference_mel (batch, frames, n_mels)`` normalised, ``reference_lengths (batch,)`` →
    ``embedding (batch, reference_dim)``, ``weights (batch, n_heads, n_tokens)``, ``style (batch,
    token_dim)``: the reference encoder and the token attention (:class:`~gst_tts.model.gst.GlobalStyleTokens`)."""

    def __init__(self, model: GSTTacotron) -> None:
        super().__init__()
        self.model = model

    def forward(self, mel: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        encoder = self.model.gst.reference_encoder
        x = mel.unsqueeze(1)
        x = x * _time_mask(lengths, x.shape[2])
        for block, stride in zip(encoder.blocks, encoder.time_strides):
            x = block(x)
            lengths = torch.div(lengths - 1, stride, rounding_mode="floor") + 1
            x = x * _time_mask(lengths, x.shape[2])
        x = x.permute(0, 2, 1, 3).flatten(2)
        out, _ = encoder.gru(x)
        # The packed GRU's final state is its output at each item's last real step.
        last = (lengths.clamp(min=1) - 1)[:, None, None].expand(-1, 1, out.shape[2])
        embedding = out.gather(1, last)[:, 0]
        style, weights = self.model.gst.token_layer(embedding)
        return embedding, weights, style


def _time_mask(lengths: torch.Tensor, frames: int) -> torch.Tensor:
    """``(batch, 1, frames, 1)``, 1 on each item's real frames."""
    return (torch.arange(frames, device=lengths.device)[None, :] < lengths[:, None])[:, None, :, None].float()


class TokensGraph(nn.Module):
    """``embedding (batch, reference_dim)`` → ``weights (batch, n_heads, n_tokens)``, ``style
    (batch, token_dim)``: the token attention alone, for a reference encoded in windows whose
    embeddings are averaged first (:meth:`~gst_tts.inference.style.StyleResolver.reference_weights`)."""

    def __init__(self, model: GSTTacotron) -> None:
        super().__init__()
        self.model = model

    def forward(self, embedding: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        style, weights = self.model.gst.token_layer(embedding)
        return weights, style


class StyleWeightsGraph(nn.Module):
    """``weights (batch, n_heads, n_tokens)`` → ``style (batch, token_dim)`` (style control)."""

    def __init__(self, model: GSTTacotron) -> None:
        super().__init__()
        self.model = model

    def forward(self, weights: torch.Tensor) -> torch.Tensor:
        return self.model.gst.style_from_weights(weights)


class PostnetGraph(nn.Module):
    """``mel (batch, frames, n_mels)`` decoder frames, ``mel_lengths (batch,)`` → the postnet mel,
    both zero past each length (:meth:`GSTTacotron._postnet`)."""

    def __init__(self, model: GSTTacotron) -> None:
        super().__init__()
        self.model = model

    def forward(self, mel: torch.Tensor, mel_lengths: torch.Tensor) -> torch.Tensor:
        return self.model._postnet(mel, mel_lengths)[1]


class StepGraph(nn.Module):
    """One free-running decoder step (:meth:`~gst_tts.model.decoder.Decoder.step` with the float
    cells of :meth:`~gst_tts.model.decoder.Decoder.training_cells`), its input frame through the prenet.

    Inputs, in order (:data:`STEP_INPUTS`, then the kind's prepared fields and attention state):
    ``frame (batch, n_mels)`` the previous step's last frame (zeros first); ``prenet_mask_0``,
    ``prenet_mask_1`` ``(batch, prenet_dim)`` scaled keep-masks of the two prenet layers (ones: no
    dropout); ``attention_mask (batch, attention_rnn_dim)``, ``decoder_mask (batch,
    decoder_rnn_dim)`` the step's dropout masks (ones at inference); the
    :class:`~gst_tts.model.decoder.DecoderState` fields; ``memory``; ``padding_mask (batch, symbols)``
    bool, True where no weight may go (padding, and outside an attention window).

    Outputs: ``frames (batch, r * n_mels)``, ``stop_logit (batch,)``, then the next state's tensors.
    """

    def __init__(self, model: GSTTacotron, layout: StepLayout) -> None:
        super().__init__()
        self.decoder = model.decoder
        self.layout = layout

    def forward(
        self,
        frame,
        prenet_mask_0,
        prenet_mask_1,
        attention_mask,
        decoder_mask,
        attention_hidden,
        attention_cell,
        decoder_hidden,
        decoder_cell,
        attention_weights,
        context,
        memory,
        padding_mask,
        *rest,
    ):  # prepared fields, then the attention state
        decoder = self.decoder
        x = frame
        for layer, mask in zip(decoder.prenet.layers, (prenet_mask_0, prenet_mask_1)):
            x = F.relu(layer(x)) * mask
        n = len(self.layout.prepared)
        prepared = decoder.attention.prepare(memory, padding_mask)._replace(**dict(zip(self.layout.prepared, rest[:n])))
        state = DecoderState(
            attention_hidden, attention_cell, decoder_hidden, decoder_cell, attention_weights, tuple(rest[n:]), context
        )
        cells = decoder.training_cells()
        frames, stop, new = _step(
            decoder, cells, cells.prenet_gates(x), state, prepared, (attention_mask, decoder_mask)
        )
        return (
            frames,
            stop,
            new.attention_hidden,
            new.attention_cell,
            new.decoder_hidden,
            new.decoder_cell,
            new.attention_weights,
            new.context,
            *new.attention_state,
        )


#: The step graph's fixed inputs; the kind's prepared fields and ``attention_state_<i>`` follow.
STEP_INPUTS = (
    "frame",
    "prenet_mask_0",
    "prenet_mask_1",
    "attention_mask",
    "decoder_mask",
    "attention_hidden",
    "attention_cell",
    "decoder_hidden",
    "decoder_cell",
    "attention_weights",
    "context",
    "memory",
    "padding_mask",
)
#: The state inputs the step gives back, as ``next_<name>``.
STATE_NAMES = ("attention_hidden", "attention_cell", "decoder_hidden", "decoder_cell", "attention_weights", "context")


def _step(
    decoder,
    cells: MergedCells,
    prenet_gates: torch.Tensor,
    state: DecoderState,
    prepared: Any,
    masks: tuple[torch.Tensor, torch.Tensor],
) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
    """:meth:`Decoder.step`, with dynamic convolution attention in its batch-free form."""
    attention = decoder.attention
    attention_step = partial(_dca_step, attention) if isinstance(attention, DynamicConvolutionAttention) else None
    return decoder.step(prenet_gates, state, prepared, cells, masks, attention_step=attention_step)


def _dca_step(
    attention: DynamicConvolutionAttention, query: torch.Tensor, state: tuple[torch.Tensor, ...], prepared: Any
) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """:meth:`DynamicConvolutionAttention.step` for fp32 inputs, its per-item filters applied as
    windows of the previous weights (a fixed identity convolution) times each item's filters, in
    place of a convolution with one group per item (its group count would be fixed to the batch
    size of the trace)."""
    previous, cumulative = state
    batch = previous.shape[0]
    kernel = attention.dynamic_kernel_size
    prior = F.conv1d(
        F.pad(previous.unsqueeze(1), (attention.prior.numel() - 1, 0)), attention.prior.float().view(1, 1, -1)
    )
    prior = torch.log(prior.squeeze(1).clamp_min(PRIOR_FLOOR))
    filters = attention.dynamic_generator(torch.tanh(attention.dynamic_query(query)))
    filters = filters.reshape(batch, attention.dynamic_filters, kernel)
    identity = torch.eye(kernel, dtype=previous.dtype, device=previous.device).unsqueeze(1)
    windows = F.conv1d(previous.unsqueeze(1), identity, padding=kernel // 2)  # (batch, kernel, symbols)
    dynamic = torch.einsum("bks,bfk->bsf", windows, filters)
    static = attention.static_conv(previous.unsqueeze(1)).transpose(1, 2)
    hidden = torch.tanh(attention.static_layer(static) + attention.dynamic_layer(dynamic))
    energies = attention.energy(hidden).squeeze(-1) + prior
    weights = masked_softmax(energies, prepared.padding_mask)
    return attend(weights, prepared.memory), weights, (weights, cumulative + weights)
