"""Autoregressive attention decoder (Tacotron 2) with a reduction factor."""

from __future__ import annotations

from typing import Any, Callable, Iterator, NamedTuple
import warnings

import torch
from torch import nn
from torch.nn import functional as F

from gst_tts.model.attention import AttentionState, build_attention
from gst_tts.model.decoder_cells import MergedCells


class DecoderState(NamedTuple):
    """Recurrent state carried from one decoder step to the next."""

    attention_hidden: torch.Tensor  # (batch, attention_rnn_dim)
    attention_cell: torch.Tensor  # (batch, attention_rnn_dim)
    decoder_hidden: torch.Tensor  # (batch, decoder_rnn_dim)
    decoder_cell: torch.Tensor  # (batch, decoder_rnn_dim)
    attention_weights: torch.Tensor  # (batch, symbols), this step's alignment
    attention_state: AttentionState  # the attention kind's own recurrent state
    context: torch.Tensor  # (batch, memory_dim)


class DecoderOutput(NamedTuple):
    mel: torch.Tensor  # (batch, steps * r, n_mels)
    stop_logits: torch.Tensor  # (batch, steps)
    alignments: torch.Tensor  # (batch, steps, symbols)


class DecodedStep(NamedTuple):
    """One free-running step of the whole batch (:meth:`Decoder.infer_steps`)."""

    frames: torch.Tensor  # (batch, r * n_mels); for an item that has ended: decoded after its end
    stop_logit: torch.Tensor  # (batch,)
    attention_weights: torch.Tensor  # (batch, symbols)
    steps: torch.Tensor  # (batch,) steps each ended item ran; 0 while it runs
    stopped_on_token: torch.Tensor  # (batch,) bool: ended on its stop token (so far)
    done: torch.Tensor  # (batch,) bool: ended at this step or before


class _Prenet(nn.Module):
    """Two ReLU layers with dropout; the dropout may stay on at inference (Tacotron 2 relies on it)."""

    def __init__(self, *, in_dim: int, dim: int, dropout: float, dropout_at_inference: bool) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(in_dim, dim), nn.Linear(dim, dim)])
        self.dropout = dropout
        self.dropout_at_inference = dropout_at_inference

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        active = self.training or self.dropout_at_inference
        for layer in self.layers:
            x = F.dropout(F.relu(layer(x)), p=self.dropout, training=active)
        return x


class Decoder(nn.Module):
    """Prenet → attention LSTM → attention → decoder LSTM → r mel frames + stop logit.

    The attention is any :class:`~gst_tts.model.attention.DecoderAttention`, used only through
    ``prepare``/``initial_state``/``step``, so the decoder does not change per kind.

    Every argument is required: the defaults (Tacotron 2 sizes) are
    :class:`~gst_tts.model.tacotron.GSTTacotron`'s, so each is set in one place.

    Args:
        n_mels: mel channels.
        reduction_factor: mel frames predicted per decoder step (1–5).
        memory_dim: size of the encoder states attended over.
        prenet_dim: prenet layer size.
        prenet_dropout: prenet dropout.
        prenet_dropout_at_inference: keep prenet dropout on at inference.
        attention_rnn_dim: attention LSTM units.
        decoder_rnn_dim: decoder LSTM units.
        attention: attention kind, a key of :data:`gst_tts.model.attention.ATTENTION_KINDS`.
        attention_location: the optional location term of the kinds that have one.
        attention_dim: attention energy size.
        location_filters: location convolution filters.
        location_kernel_size: location convolution kernel.
        attention_dropout: dropout on the attention LSTM output.
        decoder_dropout: dropout on the decoder LSTM output.
        decoder_dropout_recurrent: ``decoder_dropout`` also drops the decoder LSTM's recurrent
            state in training, as a step-wise Tacotron 2 decoder does; teacher forcing then runs
            the decoder cell step by step instead of as one LSTM call over all steps.
    """

    def __init__(
        self,
        *,
        n_mels: int,
        reduction_factor: int,
        memory_dim: int,
        prenet_dim: int,
        prenet_dropout: float,
        prenet_dropout_at_inference: bool,
        attention_rnn_dim: int,
        decoder_rnn_dim: int,
        attention: str,
        attention_location: bool,
        attention_dim: int,
        location_filters: int,
        location_kernel_size: int,
        attention_dropout: float,
        decoder_dropout: float,
        decoder_dropout_recurrent: bool,
    ) -> None:
        super().__init__()
        if not 1 <= reduction_factor <= 5:
            raise ValueError(f"reduction_factor must be 1–5, got {reduction_factor}")
        self.n_mels = n_mels
        self.reduction_factor = reduction_factor
        self.attention_rnn_dim = attention_rnn_dim
        self.decoder_rnn_dim = decoder_rnn_dim
        self.attention_dropout = attention_dropout
        self.decoder_dropout = decoder_dropout
        self.decoder_dropout_recurrent = decoder_dropout_recurrent
        self.prenet = _Prenet(
            in_dim=n_mels, dim=prenet_dim, dropout=prenet_dropout, dropout_at_inference=prenet_dropout_at_inference
        )
        self.attention_rnn = nn.LSTMCell(prenet_dim + memory_dim, attention_rnn_dim)
        self.attention = build_attention(
            attention,
            query_dim=attention_rnn_dim,
            memory_dim=memory_dim,
            attention_dim=attention_dim,
            location=attention_location,
            location_filters=location_filters,
            location_kernel_size=location_kernel_size,
        )
        self.decoder_rnn = nn.LSTMCell(attention_rnn_dim + memory_dim, decoder_rnn_dim)
        self.mel_projection = nn.Linear(decoder_rnn_dim + memory_dim, n_mels * reduction_factor)
        self.stop_projection = nn.Linear(decoder_rnn_dim + memory_dim, 1)
        self._int8_cells: MergedCells | None = None

    def initial_state(self, memory: torch.Tensor, attention_memory: Any) -> DecoderState:
        """The state before the first step; ``attention_memory`` from ``self.attention.prepare(memory, ...)``."""
        batch, symbols, memory_dim = memory.shape
        zeros = memory.new_zeros
        return DecoderState(
            zeros(batch, self.attention_rnn_dim),
            zeros(batch, self.attention_rnn_dim),
            zeros(batch, self.decoder_rnn_dim),
            zeros(batch, self.decoder_rnn_dim),
            zeros(batch, symbols),
            self.attention.initial_state(attention_memory),
            zeros(batch, memory_dim),
        )

    def training_cells(self, *, decoder_cell: bool = True) -> MergedCells:
        """The two LSTM cells' current weights as the training backend of :meth:`step` (see
        :mod:`gst_tts.model.decoder_cells`), built once per pass; ``decoder_cell=False`` leaves the
        decoder cell out (teacher forcing runs that LSTM outside the step loop)."""
        return MergedCells.for_training(
            self.attention_rnn, self.decoder_rnn, prenet_dim=self._prenet_dim, decoder_cell=decoder_cell
        )

    def pass_cells(self, memory: torch.Tensor, *, decoder_cell: bool = True) -> MergedCells:
        """The cells backend for a pass over ``memory``: training's where autograd records, int8 for
        float32 CPU inputs after :meth:`set_int8_inference`, else the float inference backend."""
        if torch.is_grad_enabled():
            return self.training_cells(decoder_cell=decoder_cell)
        if self._int8_cells is not None and memory.device.type == "cpu" and memory.dtype == torch.float32:
            return self._int8_cells
        return MergedCells.for_inference(
            self.attention_rnn, self.decoder_rnn, prenet_dim=self._prenet_dim, decoder_cell=decoder_cell
        )

    def set_int8_inference(self, enabled: bool) -> None:
        """Runs :meth:`infer_steps` on CPU with the merged cell weights in int8 (~3x faster per step at paper sizes).

        Quantizes the current weights once: call it again after they change. Used by every pass
        on CPU float32 inputs with autograd off (:meth:`infer_steps`, and :meth:`forward` under
        ``torch.no_grad()``, which makes the numerics comparable under teacher forcing); passes
        that build a graph, and CUDA, keep the float weights.
        """
        self._int8_cells = (
            MergedCells.int8(self.attention_rnn, self.decoder_rnn, prenet_dim=self._prenet_dim) if enabled else None
        )

    @property
    def int8_inference(self) -> bool:
        """Whether CPU inference uses int8 cell weights (see :meth:`set_int8_inference`)."""
        return self._int8_cells is not None

    @property
    def _prenet_dim(self) -> int:
        return self.prenet.layers[-1].out_features

    def step(
        self,
        prenet_gates: torch.Tensor,
        state: DecoderState,
        attention_memory: Any,
        cells: MergedCells,
        dropout_masks: tuple[torch.Tensor, torch.Tensor] | None = None,
        *,
        attention_step: Callable[[torch.Tensor, AttentionState, Any], tuple[torch.Tensor, torch.Tensor, AttentionState]]
        | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """One decoder step: attention cell → attention → decoder cell → frames and stop logit.

        Args:
            prenet_gates: ``(batch, 4 * attention_rnn_dim)``, ``cells.prenet_gates`` of the previous
                frame through the prenet.
            state: the previous :class:`DecoderState`.
            attention_memory: from ``self.attention.prepare``.
            cells: the cells backend, from :meth:`pass_cells` (see :mod:`gst_tts.model.decoder_cells`).
            dropout_masks: scaled keep-masks for the attention and decoder LSTM outputs, or None.
            attention_step: another form of ``self.attention.step`` (the same function; the ONNX
                export traces dynamic convolution attention in a batch-free form), or None.

        Returns:
            ``frames (batch, r * n_mels)``, ``stop_logit (batch,)`` and the new state.
        """
        att_h, att_c = cells.attention_cell(prenet_gates, state.context, (state.attention_hidden, state.attention_cell))
        if dropout_masks is not None:
            att_h = att_h * dropout_masks[0]
        context, attention_weights, attention_state = (attention_step or self.attention.step)(
            att_h, state.attention_state, attention_memory
        )
        dec_h, dec_c = cells.decoder_cell(att_h, context, (state.decoder_hidden, state.decoder_cell))
        if dropout_masks is not None:
            dec_h = dec_h * dropout_masks[1]
        projection_in = torch.cat([dec_h, context], -1)
        new_state = DecoderState(att_h, att_c, dec_h, dec_c, attention_weights, attention_state, context)
        return self.mel_projection(projection_in), self.stop_projection(projection_in).squeeze(-1), new_state

    def forward(self, memory: torch.Tensor, padding_mask: torch.Tensor | None, mel: torch.Tensor) -> DecoderOutput:
        """Teacher-forced decoding.

        Args:
            memory: ``(batch, symbols, memory_dim)``.
            padding_mask: ``(batch, symbols)``, True at padding.
            mel: ``(batch, frames, n_mels)`` targets, frames a multiple of the reduction factor.

        Only the attention LSTM and the attention depend on the previous step, so only they run step
        by step. Tacotron 2's data flow allows it: the decoder LSTM reads the attention LSTM's output
        and the context, and its own output feeds nothing but the projections. So the decoder LSTM
        runs once over all steps (one cuDNN or oneDNN call), and the projections once over its
        output: the same function as :meth:`step`'s (and :func:`reference_teacher_forcing`'s), with
        a loop a third as long in operations. One difference in training: ``decoder_dropout`` drops
        the decoder LSTM's outputs on their way to the projections, not also its recurrent state;
        with ``decoder_dropout_recurrent`` it drops both, and the decoder cell runs in the step loop.
        """
        batch, frames, n_mels = mel.shape
        r = self.reduction_factor
        n_steps = frames // r
        # The input to step s is the last frame of step s-1 (zeros for the first step); the prenet
        # and its gate projection run over all steps at once rather than inside the recurrence.
        last_frames = mel.view(batch, n_steps, r, n_mels)[:, :, -1]
        inputs = torch.cat([mel.new_zeros(batch, 1, n_mels), last_frames[:, :-1]], dim=1)
        attention_memory = self.attention.prepare(memory, padding_mask)
        recurrent = self.decoder_dropout_recurrent and self.training and self.decoder_dropout > 0
        cells = self.pass_cells(memory, decoder_cell=recurrent)
        prenet_gates = cells.prenet_gates(self.prenet(inputs))
        att_masks = _dropout_masks(n_steps, batch, self.attention_rnn_dim, self.attention_dropout, self.training, mel)
        state = self.initial_state(memory, attention_memory)
        if recurrent:  # step() keeps the dropped decoder output as the next step's state
            dec_masks = _dropout_masks(n_steps, batch, self.decoder_rnn_dim, self.decoder_dropout, self.training, mel)
            step_masks = zip(
                att_masks.unbind(0) if att_masks is not None else [torch.ones_like(dec_masks[0])] * n_steps,
                dec_masks.unbind(0),
            )
            frames_out, stops, alignments = [], [], []
            for step_gates, masks in zip(prenet_gates.unbind(1), step_masks):
                out, stop, state = self.step(step_gates, state, attention_memory, cells, masks)
                frames_out.append(out)
                stops.append(stop)
                alignments.append(state.attention_weights)
            return DecoderOutput(
                torch.stack(frames_out, 1).reshape(batch, frames, n_mels),
                torch.stack(stops, 1),
                torch.stack(alignments, 1),
            )
        att_h, att_c, context, attention_state = (
            state.attention_hidden,
            state.attention_cell,
            state.context,
            state.attention_state,
        )
        queries, contexts, alignments = [], [], []
        # unbind, not prenet_gates[:, s]: the backward of per-step indexing would allocate and
        # fill a full-size zero gradient at every step (quadratic in length); unbind's is one stack.
        for s, step_gates in enumerate(prenet_gates.unbind(1)):
            att_h, att_c = cells.attention_cell(step_gates, context, (att_h, att_c))
            if att_masks is not None:
                att_h = att_h * att_masks[s]
            context, attention_weights, attention_state = self.attention.step(att_h, attention_state, attention_memory)
            queries.append(att_h)
            contexts.append(context)
            alignments.append(attention_weights)
        contexts_t = torch.stack(contexts)  # (steps, batch, memory_dim)
        decoded = self._decoder_lstm(torch.cat([torch.stack(queries), contexts_t], -1))
        masks = _dropout_masks(n_steps, batch, self.decoder_rnn_dim, self.decoder_dropout, self.training, mel)
        if masks is not None:
            decoded = decoded * masks
        projection_in = torch.cat([decoded, contexts_t], -1).transpose(0, 1)  # (batch, steps, ...)
        return DecoderOutput(
            self.mel_projection(projection_in).reshape(batch, frames, n_mels),
            self.stop_projection(projection_in).squeeze(-1),
            torch.stack(alignments, 1),
        )

    def _decoder_lstm(self, inputs: torch.Tensor) -> torch.Tensor:
        """The decoder LSTM cell's weights run as one LSTM layer over ``inputs (steps, batch,
        attention_rnn_dim + memory_dim)`` from a zero state: ``(steps, batch, decoder_rnn_dim)``."""
        cell = self.decoder_rnn
        if inputs.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
            # oneDNN has no bf16 LSTM on CPUs without bf16 instructions: the CPU runs it in float32.
            with torch.autocast("cpu", enabled=False):
                return self._decoder_lstm(inputs.float())
        zeros = inputs.new_zeros(1, inputs.shape[1], self.decoder_rnn_dim)
        with warnings.catch_warnings():
            # cuDNN copies separately stored weights into one buffer per call and says so; these
            # are a cell's weights, a few MB: the copy costs less than a warning's noise.
            warnings.filterwarnings("ignore", message="RNN module weights are not part of single contiguous chunk")
            # nn.LSTM's own kernel entry point, on the cell's parameters (private: pinned in
            # tests/test_pinned_internals.py, with the reason)
            output, _, _ = torch._VF.lstm(
                inputs,
                (zeros, zeros),
                [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh],
                True,
                1,
                0.0,
                self.training,
                False,
                False,
            )
        return output

    @torch.no_grad()
    def infer_steps(
        self,
        memory: torch.Tensor,
        padding_mask: torch.Tensor | None,
        max_steps: torch.Tensor,
        *,
        stop_threshold: float,
        attention_window: tuple[int, int] | None,
        stop_end_tolerance: int | None,
    ) -> Iterator[DecodedStep]:
        """Free-running decoding, one step at a time: a :class:`DecodedStep` as each step
        completes, until every item has ended on its stop token or at its ``max_steps`` bound.
        ``GSTTacotron.infer`` stacks the steps; streaming synthesis reads the frames as they come.

        Args:
            memory: ``(batch, symbols, memory_dim)``.
            padding_mask: ``(batch, symbols)``, True at padding.
            max_steps: ``(batch,)`` step bound per item (always finite).
            stop_threshold: stop probability above which an item ends.
            attention_window: ``(behind, ahead)``: each step attends only to the symbols from
                ``behind`` before to ``ahead`` after the previous step's most attended one (the
                first step: around the first symbol), so the alignment can neither jump ahead
                (skipped words) nor fall back (repeats); None attends to every symbol.
            stop_end_tolerance: the stop token ends an item only once some step's most attended
                symbol has come within this many symbols of its last one, so that a stop token
                firing early cannot cut the text short; None lets it end anywhere.

        None has a default here: the defaults live in ``gst_tts.inference.decoding.DecodingConfig``.
        """
        batch, symbols = memory.shape[:2]
        r, n_mels = self.reduction_factor, self.n_mels
        attention_memory = self.attention.prepare(memory, padding_mask)
        cells = self.pass_cells(memory)
        state = self.initial_state(memory, attention_memory)
        positions = torch.arange(symbols, device=memory.device)
        peak = torch.zeros(batch, 1, dtype=torch.long, device=memory.device)
        frame = memory.new_zeros(batch, n_mels)
        done = torch.zeros(batch, dtype=torch.bool, device=memory.device)
        stopped = torch.zeros_like(done)
        symbol_counts = (
            torch.full((batch,), symbols, device=memory.device) if padding_mask is None else (~padding_mask).sum(1)
        )
        # With no tolerance every item may stop from the first step on.
        near_end = torch.full_like(done, stop_end_tolerance is None)
        steps = torch.zeros(batch, dtype=torch.long, device=memory.device)
        max_steps = max_steps.to(memory.device)
        for s in range(int(max_steps.max())):
            step_memory = attention_memory
            if attention_window is not None:
                outside = (positions < peak - attention_window[0]) | (positions > peak + attention_window[1])
                step_memory = self.attention.with_mask(
                    attention_memory, outside if padding_mask is None else outside | padding_mask
                )
            out, stop, state = self.step(cells.prenet_gates(self.prenet(frame)), state, step_memory, cells)
            # The peak is always a real symbol: the weights are exactly 0 at padding and outside the window.
            peak = state.attention_weights.argmax(-1, keepdim=True)
            if stop_end_tolerance is not None:
                near_end |= peak[:, 0] >= symbol_counts - 1 - stop_end_tolerance
            frame = out.view(batch, r, n_mels)[:, -1]
            on_token = ~done & near_end & (torch.sigmoid(stop.float()) > stop_threshold)
            at_bound = ~done & ~on_token & (max_steps <= s + 1)
            stopped = stopped | on_token
            steps = torch.where(on_token | at_bound, torch.full_like(steps, s + 1), steps)
            done = done | on_token | at_bound
            yield DecodedStep(out, stop, state.attention_weights, steps, stopped, done)
            if bool(done.all()):
                return


def _dropout_masks(
    steps: int, batch: int, dim: int, p: float, training: bool, like: torch.Tensor
) -> torch.Tensor | None:
    """``(steps, batch, dim)`` scaled keep-masks drawn at once: one RNG call instead of one per step."""
    if not training or p <= 0:
        return None
    return torch.empty(steps, batch, dim, device=like.device, dtype=like.dtype).bernoulli_(1 - p) / (1 - p)
