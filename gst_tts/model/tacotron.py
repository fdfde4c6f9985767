"""GST-Tacotron: encoder, global style tokens, attention decoder and postnet."""

from __future__ import annotations

from typing import NamedTuple, Sequence

import torch
from torch import nn

from gst_tts.model.decoder import Decoder
from gst_tts.model.encoder import Encoder
from gst_tts.model.graphed_decoder import GraphedDecoder
from gst_tts.model.gst import GlobalStyleTokens
from gst_tts.model.postnet import Postnet


class TacotronOutput(NamedTuple):
    """Teacher-forced outputs; the mel tensors are normalised log-mels."""

    mel: torch.Tensor  # (batch, frames, n_mels), before the postnet; zero past mel_lengths
    mel_postnet: torch.Tensor  # (batch, frames, n_mels); zero past mel_lengths
    stop_logits: torch.Tensor  # (batch, frames / r)
    alignments: torch.Tensor  # (batch, frames / r, symbols)
    style_weights: torch.Tensor | None  # (batch, n_heads, n_tokens), None when given weights
    style_prosody: torch.Tensor | None = None  # (batch, style_prosody_dim) read out of the style; None without the head


class SynthesisOutput(NamedTuple):
    """Free-running outputs for a batch; each item is valid up to its own length."""

    mel_postnet: torch.Tensor  # (batch, frames, n_mels), normalised log-mel; zero past mel_lengths
    mel_lengths: torch.Tensor  # (batch,) frames = steps * r, all trained (targets are whole steps: see Collate)
    stop_probs: torch.Tensor  # (batch, steps)
    alignments: torch.Tensor  # (batch, steps, symbols)
    steps: torch.Tensor  # (batch,) decoder steps
    stopped_on_token: torch.Tensor  # (batch,) bool
    style_weights: torch.Tensor | None  # (batch, n_heads, n_tokens) when a reference was used


class GSTTacotron(nn.Module):
    """Tacotron 2 with Global Style Tokens.

    The style embedding from a reference mel (or from given token weights) is added to every
    encoder state (projected to ``encoder_dim`` if sizes differ) or concatenated to it.
    In training the reference is the target mel itself, as in Wang et al. 2018.

    Args:
        n_symbols: size of the symbol table.
        n_mels: mel channels. Default 80.
        reduction_factor: frames per decoder step, 1–5. Default 1.
        pad_id: padding symbol index. Default 0.
        embedding_dim: character embedding size. Default 512.
        encoder_dim: encoder output size. Default 512.
        encoder_kernel_size: encoder convolution kernel. Default 5.
        encoder_n_convs: encoder convolutions. Default 3.
        encoder_dropout: encoder dropout. Default 0.5.
        attention: decoder attention kind, a key of :data:`gst_tts.model.attention.ATTENTION_KINDS`:
            ``location_sensitive``, ``additive``, ``dot``, ``general``, ``scaled_dot``, ``forward``,
            ``dynamic_convolution``. Default ``"location_sensitive"``.
        attention_location: add the location term (features of the previous and cumulative
            weights) to the classic kinds' energies (``additive``, ``dot``, ``general``,
            ``scaled_dot``) and to ``forward``'s content attention; ignored by ``location_sensitive``
            (always has it) and ``dynamic_convolution`` (location-relative by design). Default False.
        attention_dim: attention energy size. Default 128.
        attention_location_filters: location filters. Default 32.
        attention_location_kernel_size: location kernel. Default 31.
        attention_rnn_dim: attention LSTM units. Default 1024.
        decoder_rnn_dim: decoder LSTM units. Default 1024.
        prenet_dim: prenet size. Default 256.
        prenet_dropout: prenet dropout. Default 0.5.
        prenet_dropout_at_inference: keep prenet dropout on when synthesizing. Default True.
        attention_dropout: attention LSTM output dropout. Default 0.1.
        decoder_dropout: decoder LSTM output dropout. Default 0.1.
        decoder_dropout_recurrent: ``decoder_dropout`` also drops the decoder LSTM's recurrent
            state in training, as Tacotron 2's step-wise decoder does; teacher forcing then steps
            the decoder cell instead of running it as one LSTM call. Default False.
        postnet_dim: postnet channels. Default 512.
        postnet_kernel_size: postnet kernel. Default 5.
        postnet_n_convs: postnet convolutions. Default 5.
        postnet_dropout: postnet dropout. Default 0.5.
        gst_reference_channels: reference encoder conv channels. Default (32, 32, 64, 64, 128, 128).
        gst_reference_dim: reference encoder GRU units. Default 128.
        gst_reference_time_strides: each reference encoder block's stride in time, 1 or 2. Default
            None: 2 in every block, as published. Fewer halvings give the GRU more steps, to
            measure a short reference's tempo over all of it rather than in two or three steps.
        gst_reference_norm: the reference encoder blocks' norm: ``"batch"`` (BatchNorm, as
            published), ``"masked_batch"`` (its training statistics skip the padding) or
            ``"layer"`` (no batch statistics: a reference encodes the same in any batch, in
            training too); see :class:`~gst_tts.model.gst.ReferenceEncoder`. Default ``"batch"``.
        gst_n_tokens: style tokens. Default 10.
        gst_token_dim: style token / embedding size. Default 256.
        gst_n_heads: style attention heads. Default 4.
        style_combine: ``"add"`` or ``"concat"``. Default ``"add"``.
        style_prosody_dim: outputs of a linear read-out of the style embedding (``style_prosody``)
            that training fits to the reference's standardised prosody measures (median F0, rate, …;
            see :mod:`gst_tts.data.prosody`), so that the embedding carries them on one scale for any
            reference; 0: no read-out. The data decides it (one output per measure). Default 0.
    """

    def __init__(
        self,
        *,
        n_symbols: int,
        n_mels: int = 80,
        reduction_factor: int = 1,
        pad_id: int = 0,
        embedding_dim: int = 512,
        encoder_dim: int = 512,
        encoder_kernel_size: int = 5,
        encoder_n_convs: int = 3,
        encoder_dropout: float = 0.5,
        attention: str = "location_sensitive",
        attention_location: bool = False,
        attention_dim: int = 128,
        attention_location_filters: int = 32,
        attention_location_kernel_size: int = 31,
        attention_rnn_dim: int = 1024,
        decoder_rnn_dim: int = 1024,
        prenet_dim: int = 256,
        prenet_dropout: float = 0.5,
        prenet_dropout_at_inference: bool = True,
        attention_dropout: float = 0.1,
        decoder_dropout: float = 0.1,
        decoder_dropout_recurrent: bool = False,
        postnet_dim: int = 512,
        postnet_kernel_size: int = 5,
        postnet_n_convs: int = 5,
        postnet_dropout: float = 0.5,
        gst_reference_channels: Sequence[int] = (32, 32, 64, 64, 128, 128),
        gst_reference_dim: int = 128,
        gst_reference_time_strides: Sequence[int] | None = None,
        gst_reference_norm: str = "batch",
        gst_n_tokens: int = 10,
        gst_token_dim: int = 256,
        gst_n_heads: int = 4,
        style_combine: str = "add",
        style_prosody_dim: int = 0,
    ) -> None:
        super().__init__()
        if style_combine not in ("add", "concat"):
            raise ValueError(f"style_combine must be 'add' or 'concat', got {style_combine!r}")
        self.n_mels = n_mels
        self.reduction_factor = reduction_factor
        self.style_combine = style_combine
        self.encoder = Encoder(
            n_symbols=n_symbols,
            embedding_dim=embedding_dim,
            encoder_dim=encoder_dim,
            kernel_size=encoder_kernel_size,
            n_convs=encoder_n_convs,
            dropout=encoder_dropout,
            pad_id=pad_id,
        )
        self.gst = GlobalStyleTokens(
            n_mels=n_mels,
            reference_channels=tuple(gst_reference_channels),
            reference_dim=gst_reference_dim,
            reference_time_strides=(
                (2,) * len(gst_reference_channels)
                if gst_reference_time_strides is None
                else tuple(gst_reference_time_strides)
            ),
            reference_norm=gst_reference_norm,
            n_tokens=gst_n_tokens,
            token_dim=gst_token_dim,
            n_heads=gst_n_heads,
        )
        if style_combine == "add":
            self.style_projection = (
                nn.Identity() if gst_token_dim == encoder_dim else nn.Linear(gst_token_dim, encoder_dim)
            )
            memory_dim = encoder_dim
        else:
            self.style_projection = nn.Identity()
            memory_dim = encoder_dim + gst_token_dim
        self.decoder = Decoder(
            n_mels=n_mels,
            reduction_factor=reduction_factor,
            memory_dim=memory_dim,
            prenet_dim=prenet_dim,
            prenet_dropout=prenet_dropout,
            prenet_dropout_at_inference=prenet_dropout_at_inference,
            attention_rnn_dim=attention_rnn_dim,
            decoder_rnn_dim=decoder_rnn_dim,
            attention=attention,
            attention_location=attention_location,
            attention_dim=attention_dim,
            location_filters=attention_location_filters,
            location_kernel_size=attention_location_kernel_size,
            attention_dropout=attention_dropout,
            decoder_dropout=decoder_dropout,
            decoder_dropout_recurrent=decoder_dropout_recurrent,
        )
        self.postnet = Postnet(
            n_mels=n_mels,
            postnet_dim=postnet_dim,
            kernel_size=postnet_kernel_size,
            n_convs=postnet_n_convs,
            dropout=postnet_dropout,
        )
        if style_prosody_dim < 0:
            raise ValueError(f"style_prosody_dim must be >= 0, got {style_prosody_dim}")
        # Linear on purpose: the measures must be plain directions of the embedding the decoder reads.
        self.style_prosody = nn.Linear(gst_token_dim, style_prosody_dim) if style_prosody_dim else None

        self._graphed_decoder: GraphedDecoder | None = None

    def set_cuda_graphs(self, enabled: bool, *, symbol_bucket: int = 32, step_bucket: int = 64) -> None:
        """Runs the decoder's teacher-forced training pass through CUDA graphs on a GPU
        (:class:`~gst_tts.model.graphed_decoder.GraphedDecoder`; one graph per padded shape,
        symbols padded to a multiple of ``symbol_bucket``, decoder steps to one of ``step_bucket``).

        The numbers are the plain decoder's; only the launches change. Inference, validation and
        the CPU always run the plain decoder. Off by default; the trainer turns it on for CUDA.
        """
        self._graphed_decoder = (
            GraphedDecoder(self.decoder, symbol_bucket=symbol_bucket, step_bucket=step_bucket) if enabled else None
        )

    @property
    def cuda_graphs(self) -> bool:
        """Whether the training pass uses CUDA graphs on a GPU (see :meth:`set_cuda_graphs`)."""
        return self._graphed_decoder is not None

    @property
    def captured_cuda_graphs(self) -> int:
        """CUDA graphs captured so far (one per padded batch shape seen in training)."""
        return 0 if self._graphed_decoder is None else self._graphed_decoder.graphs

    @property
    def n_tokens(self) -> int:
        return self.gst.token_layer.n_tokens

    @property
    def n_heads(self) -> int:
        return self.gst.token_layer.n_heads

    def _memory(self, text: torch.Tensor, text_lengths: torch.Tensor, style: torch.Tensor) -> torch.Tensor:
        """Encoder states conditioned on the style: ``(batch, symbols, memory_dim)``."""
        encoded = self.encoder(text, text_lengths)
        style = self.style_projection(style).unsqueeze(1).expand(-1, encoded.shape[1], -1)
        if self.style_combine == "add":
            return encoded + style
        return torch.cat([encoded, style], dim=-1)

    def style(
        self,
        reference_mel: torch.Tensor | None = None,
        reference_lengths: torch.Tensor | None = None,
        style_weights: torch.Tensor | None = None,
        batch_size: int | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Style embedding ``(batch, token_dim)`` and the token weights it came from.

        From a reference mel ``(batch, frames, n_mels)`` (normalised); else from given weights
        ``(batch, n_heads, n_tokens)`` or ``(batch, n_tokens)``; else the neutral default:
        uniform weights over all tokens in every head (``batch_size`` items).
        """
        if reference_mel is not None:
            return self.gst(reference_mel, reference_lengths)
        if style_weights is None:
            if batch_size is None:
                raise ValueError("batch_size is needed for the neutral style")
            device = self.gst.token_layer.style_tokens.device
            style_weights = torch.full((batch_size, self.n_heads, self.n_tokens), 1.0 / self.n_tokens, device=device)
        if style_weights.dim() == 2:
            style_weights = style_weights.unsqueeze(1).expand(-1, self.n_heads, -1)
        return self.gst.style_from_weights(style_weights), style_weights

    def forward(
        self,
        text: torch.Tensor,
        text_lengths: torch.Tensor,
        mel: torch.Tensor,
        mel_lengths: torch.Tensor,
        reference_mel: torch.Tensor | None = None,
        reference_lengths: torch.Tensor | None = None,
    ) -> TacotronOutput:
        """Teacher-forced pass.

        Args:
            text: ``(batch, symbols)`` ids; text_lengths ``(batch,)``.
            mel: ``(batch, frames, n_mels)`` normalised targets, frames a multiple of r;
                mel_lengths ``(batch,)``, multiples of r (see :class:`gst_tts.data.batching.Collate`).
            reference_mel: style reference; defaults to ``mel`` itself.
        """
        if reference_mel is None:
            reference_mel, reference_lengths = mel, mel_lengths
        style, weights = self.gst(reference_mel, reference_lengths)
        memory = self._memory(text, text_lengths, style)
        padding_mask = _padding_mask(text_lengths, text.shape[1])
        decoded = (self._graphed_decoder or self.decoder)(memory, padding_mask, mel)
        decoded_mel, mel_postnet = self._postnet(decoded.mel, mel_lengths)
        prosody = self.style_prosody(style) if self.style_prosody is not None else None
        return TacotronOutput(decoded_mel, mel_postnet, decoded.stop_logits, decoded.alignments, weights, prosody)

    def _postnet(self, mel: torch.Tensor, mel_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Decoder mel and postnet mel ``(batch, frames, n_mels)``, both zero past ``mel_lengths``.

        Frames past an item's length are not speech (training: decoded over padding; batched
        inference: decoded after the item stopped), and the postnet's context would carry them
        into the item's last frames, so they are zeroed first.
        """
        valid = torch.arange(mel.shape[1], device=mel.device)[None, :, None] < mel_lengths[:, None, None]
        mel = mel.masked_fill(~valid, 0.0)
        return mel, mel + self.postnet(mel, mel_lengths)

    @torch.no_grad()
    def infer(
        self,
        text: torch.Tensor,
        text_lengths: torch.Tensor,
        reference_mel: torch.Tensor | None = None,
        reference_lengths: torch.Tensor | None = None,
        style_weights: torch.Tensor | None = None,
        *,
        stop_threshold: float,
        max_frames_per_symbol: float,
        max_frames: int,
        attention_window: tuple[int, int] | None,
        stop_end_tolerance: int | None,
    ) -> SynthesisOutput:
        """Free-running synthesis of a batch, always bounded.

        Each item may run for :meth:`step_bounds` decoder steps;
        :attr:`SynthesisOutput.stopped_on_token` tells whether it ended on its stop token or on
        that bound.

        Args:
            text: ``(batch, symbols)`` ids; text_lengths ``(batch,)``.
            reference_mel, reference_lengths, style_weights: see :meth:`style`.
            stop_threshold: stop probability above which an item ends.
            max_frames_per_symbol: length bound per input symbol, mel frames.
            max_frames: absolute length bound per item, mel frames (the caller turns seconds into
                frames: the model knows no audio settings).
            attention_window: ``(behind, ahead)`` symbols around the previous step's most
                attended one that each step may attend to, or None (see :meth:`Decoder.infer_steps`).
            stop_end_tolerance: the stop token counts only once the attention has come within
                this many symbols of the text's end, or None: anywhere (see :meth:`Decoder.infer_steps`).

        The five have no defaults here: they come from ``gst_tts.inference.decoding.DecodingConfig``,
        the one place that sets them (the model knows no config object).
        """
        style, weights = self.style(reference_mel, reference_lengths, style_weights, batch_size=text.shape[0])
        decoder_inputs = self.decoder_inputs(
            text, text_lengths, style, max_frames_per_symbol=max_frames_per_symbol, max_frames=max_frames
        )
        steps = list(
            self.decoder.infer_steps(
                *decoder_inputs,
                stop_threshold=stop_threshold,
                attention_window=attention_window,
                stop_end_tolerance=stop_end_tolerance,
            )
        )
        batch, last = text.shape[0], steps[-1]
        mel = torch.stack([s.frames for s in steps], 1).view(batch, len(steps) * self.reduction_factor, self.n_mels)
        mel_lengths = last.steps * self.reduction_factor
        _, mel_postnet = self._postnet(mel, mel_lengths)
        return SynthesisOutput(
            mel_postnet,
            mel_lengths,
            torch.sigmoid(torch.stack([s.stop_logit for s in steps], 1).float()),
            torch.stack([s.attention_weights for s in steps], 1),
            last.steps,
            last.stopped_on_token,
            weights if reference_mel is not None else None,
        )

    def decoder_inputs(
        self,
        text: torch.Tensor,
        text_lengths: torch.Tensor,
        style: torch.Tensor,
        *,
        max_frames_per_symbol: float,
        max_frames: int,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """The inputs of :meth:`Decoder.infer_steps` for ``text`` read in ``style (batch, token_dim)``
        (from :meth:`style`): memory, padding mask and step bounds (the bounds as :meth:`infer`'s).
        :meth:`infer` runs those steps to the end; streaming synthesis runs them one at a time and
        :meth:`postnet_mel` on windows of their frames."""
        memory = self._memory(text, text_lengths, style)
        padding_mask = _padding_mask(text_lengths, text.shape[1])
        max_steps = self.step_bounds(text_lengths, max_frames_per_symbol=max_frames_per_symbol, max_frames=max_frames)
        return memory, padding_mask, max_steps

    def postnet_mel(self, mel: torch.Tensor, mel_lengths: torch.Tensor) -> torch.Tensor:
        """The postnet's output mel ``(batch, frames, n_mels)`` for decoder frames ``mel`` of that
        shape, zero past ``mel_lengths`` (as :meth:`infer` gives it).

        A window of frames gives each frame at least :attr:`postnet_context` frames from the
        window's edge exactly what the whole mel gives it, and so does a window that starts at
        frame 0 or ends at the item's end (the convolutions pad with zeros there as well).
        """
        return self._postnet(mel, mel_lengths)[1]

    @property
    def postnet_context(self) -> int:
        """The postnet's reach, in frames each side: the sum of its convolutions' half kernels."""
        return sum(m.kernel_size[0] // 2 for m in self.postnet.modules() if isinstance(m, nn.Conv1d))

    def step_bounds(self, text_lengths: torch.Tensor, *, max_frames_per_symbol: float, max_frames: int) -> torch.Tensor:
        """Each item's bound in decoder steps, ``(batch,)`` long: ``ceil(min(max_frames,
        max_frames_per_symbol * symbols) / r)``, at least 1, for ``text_lengths`` ``(batch,)``
        symbols (eos included). Whole steps, so an item may end up to ``r - 1`` frames past a bound."""
        frames = torch.clamp(torch.ceil(text_lengths.double() * max_frames_per_symbol).long(), max=max_frames)
        return torch.clamp(
            torch.div(frames + self.reduction_factor - 1, self.reduction_factor, rounding_mode="floor"), min=1
        )


def _padding_mask(lengths: torch.Tensor, max_length: int) -> torch.Tensor | None:
    mask = torch.arange(max_length, device=lengths.device)[None, :] >= lengths[:, None]
    return mask if bool(mask.any()) else None


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


__all__ = ["GSTTacotron", "TacotronOutput", "SynthesisOutput", "count_parameters"]
