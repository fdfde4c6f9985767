"""Text (+ style) → speech from a trained checkpoint: batched decoding and vocoding.

Styles (references, token weights, mixes, neutral) are resolved by
:mod:`gst_tts.inference.style`; when decoding ends is set by
:class:`~gst_tts.inference.decoding.DecodingConfig`; what comes back is a
:class:`~gst_tts.inference.results.SynthesisResult` per text.

Every text may have its own style (``styles=[...]``); a style becomes ``(n_heads, n_tokens)``
token weights once, so texts of different styles still decode together in one batch.

Long texts are split (:func:`gst_tts.text.split.split_text`) at sentence, then clause
boundaries; all chunks of all texts are decoded together in length-sorted batches and each
text's chunks are joined with a short pause.

Every synthesis is bounded: a text holds at most :data:`MAX_TEXT_CHARS` characters as given and
:data:`MAX_CLEANED_CHARS` once numbers and abbreviations are spelled out (a ``TextError`` past
either), so cleaning, the number of chunks and, with
:class:`~gst_tts.inference.decoding.DecodingConfig`'s per-chunk length bounds, the frames decoded are
bounded too. A decoding that still ends in NaN or infinite values (a model pushed off its range)
is a ``GstTtsError``, never a silent NaN waveform.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
import logging
import os
from typing import Callable, Iterator, Sequence

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.audio.pitch import yin_f0
from gst_tts.audio.vocoders import Vocoder, load_vocoder
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.audio.vocoders.intonation import REFERENCE_MEDIAN_FRAMES, spread_st
from gst_tts.analysis.speech_rate import letter_rate_estimate
from gst_tts.compute import resolve_device
from gst_tts.errors import CheckpointError, GstTtsError, first_line
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.requests import (
    DEFAULT_PAUSE_S,
    MAX_CLEANED_CHARS,
    MAX_PAUSE_S,
    MAX_TEXT_CHARS,
    TextPreparer,
    assemble,
    check_options,
    resolve_styles,
    text_list,
    whole,
)
from gst_tts.inference.results import ChunkReport, DecodedChunk, SynthesisResult
from gst_tts.inference.stream_windows import DEFAULT_CHUNK_FRAMES, check_stream_request, stream_audio
from gst_tts.inference.streaming import RngLanes, decode_steps, postnet_windows, vocoder_windows
from gst_tts.inference.style import Reference, Style, StyleMix, StyleResolver, StyleWeights
from gst_tts.inference.style_spec import (
    F0Target,
    TempoTarget,
    once_per_reference,
    style_f0_range,
    style_tempo,
    warn_f0_range_unused,
)
from gst_tts.inference.tempo import resolve_tempo_targets, retime_text
from gst_tts.model import GSTTacotron
from gst_tts.model.int8_weight import has_quantized_engine
from gst_tts.text.split import DEFAULT_MAX_CHARS
from gst_tts.text.symbols import SymbolTable, quote_text
from gst_tts.checkpoints.acoustic import checkpoint_parts, load_checkpoint, model_from_checkpoint, stored_neutral_style

log = logging.getLogger(__name__)

__all__ = [
    "Synthesizer",
    "SynthesisResult",
    "ChunkReport",
    "Style",
    "DecodingConfig",
    "DEFAULT_PAUSE_S",
    "DEFAULT_MAX_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_CLEANED_CHARS",
    "MAX_PAUSE_S",
    "SEED_RANGE",
    "DEFAULT_CHUNK_FRAMES",
]

# DEFAULT_PAUSE_S, MAX_TEXT_CHARS, MAX_CLEANED_CHARS, MAX_PAUSE_S: gst_tts.inference.requests (torch-free, shared
# with the ONNX runtime), re-exported here.
#: Seeds torch accepts: a signed or unsigned 64-bit number.
SEED_RANGE = (-(2**63), 2**64 - 1)


@dataclass
class _Chunk:
    """One model input: a chunk of one text with the style weights it is read in."""

    text_index: int
    text: str  # cleaned
    ids: torch.Tensor  # (symbols,) eos included
    weights: torch.Tensor  # (n_heads, n_tokens)


@contextlib.contextmanager
def _seeded(seed: int | None, device: torch.device) -> Iterator[None]:
    """Seed torch's RNGs for the block (prenet dropout and Griffin-Lim's initial phase are random)
    and restore the caller's RNG state afterwards."""
    if seed is None:
        yield
        return
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(int(seed))
        yield


#: Decoder LSTM size from which int8 recurrent weights are the default on CPU. Measured at batch 1
#: on 2 cores (docs/results/2026-11-28-int8-default.md): int8 / fp32 time per decoder frame 1.05
#: at the tiny preset (256 units), 0.98 at Tacotron 2 sizes with 256 units, 0.60 with 512, 0.32 with 1024.
INT8_MIN_RNN_DIM = 512


def int8_by_default(model: GSTTacotron, device: torch.device) -> bool:
    """Whether :class:`Synthesizer` runs ``model`` with int8 recurrent weights when not told:
    on a CPU with a quantized engine, for decoder LSTMs of :data:`INT8_MIN_RNN_DIM` units or more."""
    decoder = model.decoder
    return (
        device.type == "cpu"
        and max(decoder.attention_rnn_dim, decoder.decoder_rnn_dim) >= INT8_MIN_RNN_DIM
        and has_quantized_engine()
    )


class Synthesizer:
    """Batched synthesis with a reference recording, token weights, a mix, or the neutral style.

    Args:
        model: a trained :class:`GSTTacotron` (put in eval mode here).
        symbols: the checkpoint's symbol table.
        audio_config: the feature settings the model was trained with.
        mel_stats: the training set's mel normalisation.
        device: torch device. Default CPU.
        vocoder: waveform generator; Griffin-Lim by default. May be replaced later
            (``synth.vocoder = GriffinLimVocoder(synth.audio_config, n_iter=64)``).
        int8: CPU only: run the decoder's recurrent matrix products with int8 weights, a faster
            decoder step at a small numeric cost (see ``benchmarks/README.md``). The activations
            are quantized with one scale per batch, so with int8 a text's output also depends
            slightly (about 1e-3 in log-mel) on the texts decoded in the same batch. Default
            ``None``: :func:`int8_by_default` (on for a CPU and decoder LSTMs of
            :data:`INT8_MIN_RNN_DIM` units or more, where it is the faster path).
        reference_window: references longer than this many frames are encoded in windows (see
            :meth:`~gst_tts.inference.style.StyleResolver.reference_weights`). Default ``None``
            (whole); :meth:`from_checkpoint` takes the checkpoint's ``reference_frames``.
        neutral_weights: the neutral style's ``(n_heads, n_tokens)`` token weights (used without a
            style, by dials and by a reference's strength). Default ``None``: uniform;
            :meth:`from_checkpoint` takes the checkpoint's ``neutral_style``, the mean token weights
            of its training references.

    Raises:
        GstTtsError: ``int8`` on a non-CPU device, or a PyTorch without a quantized CPU engine.
    """

    def __init__(
        self,
        model: GSTTacotron,
        symbols: SymbolTable,
        audio_config: AudioConfig,
        mel_stats: MelStats,
        *,
        device: str | torch.device = "cpu",
        vocoder: Vocoder | None = None,
        int8: bool | None = None,
        reference_window: int | None = None,
        neutral_weights: np.ndarray | None = None,
    ) -> None:
        self.device = resolve_device(device)
        self.model = model.to(self.device).eval()
        if int8 is None:
            int8 = int8_by_default(self.model, self.device)
        if int8:
            if self.device.type != "cpu":
                raise GstTtsError(f"int8 inference runs on the CPU only, not on {self.device}")
            try:
                self.model.decoder.set_int8_inference(True)
            except RuntimeError as exc:
                raise GstTtsError(str(exc)) from None
        else:
            self.model.decoder.set_int8_inference(False)
        self.symbols = symbols
        self.audio_config = audio_config
        self.mel_stats = mel_stats
        self.vocoder = vocoder or GriffinLimVocoder(audio_config)
        #: Style resolution for this model: ``synth.styles.reference_weights("calm.wav")``,
        #: ``synth.styles.resolve(Style(weights={3: 0.4}))``, ``synth.styles.neutral()``.
        self.styles = StyleResolver(
            self.model,
            audio_config,
            mel_stats,
            self.device,
            reference_window=reference_window,
            neutral_weights=neutral_weights,
        )
        self._text = TextPreparer(symbols, symbols.encode)

    @classmethod
    def from_checkpoint(
        cls,
        path: str | os.PathLike,
        *,
        device: str | torch.device | None = None,
        vocoder: Vocoder | str | os.PathLike | None = None,
        vocoder_config: str | os.PathLike | None = None,
        int8: bool | None = None,
    ) -> "Synthesizer":
        """Load a checkpoint (``weights_only``: a pickle carrying code is refused, never run).

        Args:
            device: ``None`` picks CUDA when available, else CPU.
            vocoder: as for the constructor, or a name for
                :func:`~gst_tts.audio.vocoders.load_vocoder`: ``"griffin-lim"`` or the path of a
                vocoder file (HiFi-GAN, or a gst-tts spectral vocoder checkpoint), checked against
                the checkpoint's feature settings and run on ``device``. Default: Griffin-Lim.
            vocoder_config: a HiFi-GAN ``vocoder``'s ``config.json``. Default: the one beside it.
            int8: as for the constructor.

        Raises:
            CheckpointError: not a checkpoint, refused, or its parts do not fit together.
            VocoderError: a named vocoder that does not load or does not match the checkpoint.
            GstTtsError: CUDA requested but not available.
        """
        dev = resolve_device(device)
        ckpt = load_checkpoint(path)
        try:
            model = model_from_checkpoint(ckpt, path)
            symbols, audio_config, stats = checkpoint_parts(ckpt, path)
        except CheckpointError:
            raise
        except GstTtsError as exc:  # e.g. a malformed symbol table
            raise CheckpointError(f"{path}: {exc}") from None
        except (TypeError, ValueError, KeyError, AttributeError, RuntimeError) as exc:
            raise CheckpointError(f"{path}: malformed checkpoint ({type(exc).__name__}: {first_line(exc)})") from None
        n_mels = model.n_mels
        if audio_config.n_mels != n_mels or tuple(stats.mean.shape) != (n_mels,) or tuple(stats.std.shape) != (n_mels,):
            raise CheckpointError(
                f"{path}: model has {n_mels} mel channels but the audio settings have {audio_config.n_mels}"
                f" and the mel statistics {tuple(stats.mean.shape)}"
            )
        window = ckpt.get("reference_frames")  # absent in older checkpoints: whole references
        if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window < 1):
            raise CheckpointError(f"{path}: reference_frames must be a positive whole number, got {window!r}")
        neutral = stored_neutral_style(ckpt, path, model.n_heads, model.n_tokens)
        if isinstance(vocoder, (str, os.PathLike)):
            vocoder = load_vocoder(vocoder, audio_config=audio_config, config_path=vocoder_config, device=dev)
        elif vocoder_config is not None:
            raise GstTtsError("vocoder_config needs a vocoder given by name or path")
        synth = cls(
            model,
            symbols,
            audio_config,
            stats,
            device=dev,
            vocoder=vocoder,
            int8=int8,
            reference_window=window,
            neutral_weights=neutral,
        )
        if neutral is None:  # an older checkpoint
            synth.styles.uniform_neutral_notice = (
                f"{path} stores no neutral style (trained before it was recorded): "
                "the neutral style is uniform token weights"
            )
        return synth

    @property
    def sample_rate(self) -> int:
        return self.audio_config.sample_rate

    @property
    def n_tokens(self) -> int:
        return self.model.n_tokens

    @property
    def n_heads(self) -> int:
        return self.model.n_heads

    # ------------------------------------------------------------------ synthesis

    @torch.no_grad()
    def synthesize(
        self,
        texts: str | Sequence[str],
        *,
        reference: Reference | None = None,
        style_weights: StyleWeights | None = None,
        style_dials: StyleWeights | None = None,
        style_mix: StyleMix | None = None,
        style_strength: float | None = None,
        styles: Sequence[Style | None] | None = None,
        seed: int | None = None,
        batch_size: int = 16,
        decoding: DecodingConfig = DecodingConfig(),
        max_chunk_chars: int | None = DEFAULT_MAX_CHARS,
        pause_s: float = DEFAULT_PAUSE_S,
        vocode: bool = True,
        transfer_f0_range: bool = False,
        f0_targets: Sequence[F0Target | None] | None = None,
        transfer_tempo: bool = False,
        tempo_targets: Sequence[TempoTarget | None] | None = None,
        names: Sequence[str] | None = None,
    ) -> SynthesisResult | list[SynthesisResult]:
        """Synthesize one text (returns one result) or a list (returns a list, batched internally).

        The style is either one for all texts, or one per text:

        * at most one of ``reference`` (style transfer), ``style_weights`` (style control),
          ``style_dials`` (style control relative to neutral, see
          :meth:`~gst_tts.inference.style.StyleResolver.dial_weights`), ``style_mix`` (weighted
          mix of references' token weights) for every text, ``style_strength`` scaling a
          ``reference`` or ``style_mix`` from neutral (0) through the reference (1, the default) to
          an exaggeration (up to ``MAX_STYLE_STRENGTH``, 3); with none, the neutral style: the
          checkpoint's mean token weights of its training references (uniform weights in
          checkpoints from before they were stored);
        * ``styles``: one :class:`~gst_tts.inference.style.Style` (or ``None``: neutral) per
          text, e.g. ``styles=[Style(reference="a.wav"), Style(weights={3: 0.4}), None]``. Texts
          of different styles are decoded together in the same batches; a text's output is the
          same as when synthesized alone with its style (with the prenet dropout off; with it
          on, the random masks depend on the batch).

        Args:
            texts: a text or a list of texts.
            seed: makes the output repeatable (prenet dropout stays on at inference); the
                caller's RNG state is left as it was; a 64-bit whole number (``SEED_RANGE``).
                Default None (not repeatable).
            batch_size: chunks decoded together. Default 16.
            decoding: stop threshold and length bounds (per chunk). Default ``DecodingConfig()``.
            max_chunk_chars: texts longer than this (cleaned characters) are split at sentence,
                then clause boundaries; ``None`` never splits (``synthesize --no-split``; give
                ``decoding=DecodingConfig(max_seconds=UNSPLIT_MAX_SECONDS)`` with it, as the
                command does, or a long text stops on the default absolute bound). Default
                ``DEFAULT_MAX_CHARS``.
            pause_s: silence between the chunks of a split text, 0 to ``MAX_PAUSE_S`` seconds. Default 0.25.
            vocode: run the vocoder; ``False`` leaves ``audio`` empty (mel, alignment only).
                Default True.
            transfer_f0_range: signal processing after the model, off by default. With a
                vocoder that can set an F0 spread (the spectral vocoder with a pitch head,
                :attr:`transfers_f0_range`) and a ``reference`` or ``style_mix``: the output's F0
                spread is set to the reference's (tracked by YIN; a mix: its references' mean),
                by the style strength (:mod:`gst_tts.audio.vocoders.intonation`), whatever the
                model decoded. A ``Style``'s ``f0_range`` sets it outright. ``False``: the spread
                as decoded, the model's own (a ``Style``'s ``f0_range`` still applies). Default False.
            f0_targets: one :class:`~gst_tts.inference.style_spec.F0Target` or ``None`` (the spread
                as decoded) per text, applied whatever ``transfer_f0_range`` says, in place of what
                the styles ask for (:meth:`f0_range_target`): for a caller that resolved its styles
                to token weights itself and read the references' spreads
                (:meth:`reference_f0_range`) when it did, as the server does. Default None.
            transfer_tempo: signal processing after the model, off by default. With a
                ``reference`` or ``style_mix``: each text's decoded mel is retimed so its letter
                rate follows the reference's (estimated from its syllable nuclei; a mix: its
                references' geometric mean), by the style strength, before any vocoder, never
                past a chunk's decoding bound (:mod:`gst_tts.inference.tempo`), whatever rate the
                model decoded. ``False``: the tempo as decoded, the model's own. Default False.
            tempo_targets: one :class:`~gst_tts.inference.style_spec.TempoTarget` or ``None`` (the
                tempo as decoded) per text, applied whatever ``transfer_tempo`` says, in place of
                what the styles ask for (:meth:`tempo_target`), for a caller that resolved its
                styles itself (:meth:`reference_tempo`). Default None.
            names: one name per text for warnings (default: the text itself).

        Every input is validated before anything is decoded.

        Raises:
            TextError: a text :meth:`check_text` refuses (empty, no usable symbol, punctuation
                only, too long), or ``texts`` neither a string nor a list.
            AudioError, GstTtsError: a bad style (see :mod:`gst_tts.inference.style`), ``styles``
                together with a single style option or not one per text, a bad option.
        """
        _check_options(batch_size, max_chunk_chars, pause_s, decoding, seed)
        single, texts = text_list(texts)
        if names is not None and len(names) != len(texts):
            raise GstTtsError(f"{len(names)} names for {len(texts)} texts")
        prepared = [self._text.prepare(t, max_chunk_chars) for t in texts]
        weights = resolve_styles(
            self.styles,
            len(texts),
            reference=reference,
            style_weights=style_weights,
            style_dials=style_dials,
            style_mix=style_mix,
            styles=styles,
            style_strength=style_strength,
        )
        f0_targets_used: list[F0Target | None] = [None] * len(texts)
        if f0_targets is not None and len(f0_targets) != len(texts):
            raise GstTtsError(
                f"f0_targets needs one target (or None) per text: {len(f0_targets)} for {len(texts)} texts"
            )
        if vocode and not self.transfers_f0_range:
            warn_f0_range_unused(styles or [], f"the vocoder ({type(self.vocoder).__name__})")
        elif vocode and f0_targets is not None:
            f0_targets_used = list(f0_targets)
        elif vocode and transfer_f0_range:
            if styles is None:
                one = Style(reference=reference, mix=style_mix, strength=style_strength)
                f0_targets_used = [self.f0_range_target(one)] * len(texts)  # one reading for every text
            else:
                read = once_per_reference(self.reference_f0_range)
                f0_targets_used = [self.f0_range_target(style, read) for style in styles]
        elif vocode and styles is not None:  # a spread given outright is the caller's setting, not a copy
            f0_targets_used = [style_f0_range(style, lambda reference: None) for style in styles]
        tempo_targets_used = resolve_tempo_targets(
            len(texts),
            transfer=transfer_tempo,
            given=tempo_targets,
            styles=styles,
            shared_style=Style(reference=reference, mix=style_mix, strength=style_strength),
            read=self.reference_tempo,
        )

        chunks = [_Chunk(i, piece, ids, weights[i]) for i, (_, pieces) in enumerate(prepared) for piece, ids in pieces]
        results = []
        with _seeded(seed, self.device):
            decoded = self._decode(chunks, batch_size, decoding)
            per_text: list[list[DecodedChunk]] = [[] for _ in texts]
            for c, d in zip(chunks, decoded):  # chunks are in reading order
                per_text[c.text_index].append(d)
            fps = self.audio_config.frames_per_second
            for i, text in enumerate(texts):
                bounds = [
                    decoding.chunk_frames(
                        len(d.ids), frames_per_second=fps, frames_per_step=self.model.reduction_factor
                    )
                    for d in per_text[i]
                ]
                parts = retime_text(per_text[i], tempo_targets_used[i], frame_seconds=1.0 / fps, max_frames=bounds)
                results.append(
                    self._assemble(
                        text, prepared[i][0], parts, weights[i], pause_s, vocode, decoding, f0_targets_used[i]
                    )
                )
        for i, r in enumerate(results):
            problems = r.problems()
            if problems:
                name = names[i] if names is not None else repr(r.text if len(r.text) <= 60 else r.text[:60] + "…")
                shown = problems[:3] + ([f"and {len(problems) - 3} more"] if len(problems) > 3 else [])
                log.warning("attention problem in %s: %s", name, "; ".join(shown))
        return results[0] if single else results

    def stream(
        self,
        text: str,
        *,
        style: Style | None = None,
        seed: int | None = None,
        decoding: DecodingConfig = DecodingConfig(),
        max_chunk_chars: int | None = DEFAULT_MAX_CHARS,
        pause_s: float = DEFAULT_PAUSE_S,
        chunk_frames: int = DEFAULT_CHUNK_FRAMES,
        vocode: bool = True,
    ) -> Iterator[np.ndarray]:
        """Synthesize one text as a stream of float32 audio chunks at :attr:`sample_rate`, each
        yielded as soon as the decoder steps it needs have run (:mod:`gst_tts.inference.streaming`).

        The arguments are :meth:`synthesize`'s for one text (``style``: one
        :class:`~gst_tts.inference.style.Style`, ``None`` neutral). A long text's chunks stream in
        reading order, decoded one after another, with ``pause_s`` of silence between them (a
        chunk of its own).

        Joined, the chunks are the one-shot audio of ``synthesize(text, ...)`` with the same
        arguments and neither copy asked for (``synthesize``'s defaults): its postnet mel exactly
        (within 1e-5; ``vocode=False``) and, with HiFi-GAN, its samples within
        :data:`~gst_tts.inference.streaming.HIFIGAN_STREAM_TOLERANCE`; with Griffin-Lim or the
        spectral vocoder the same spectrum with the phase built window by window (see the module). A
        split text with prenet dropout on differs from the one-shot one (which decodes its chunks as
        one batch, so draws other dropout masks). A stream keeps the model's F0 spread and tempo:
        ``synthesize``'s ``transfer_f0_range`` stretches the whole chunk's F0 track and
        ``transfer_tempo`` retimes it by its whole rate, neither known before the chunk ends (a
        style's ``f0_range`` is warned about).

        Args:
            chunk_frames: mel frames of audio per chunk, >= 1: the first of each text chunk has a
                third of them (at least 1), for a sooner start, and the last may have fewer.
                Default ``DEFAULT_CHUNK_FRAMES`` (24, about 0.28 s at 22050 Hz).
            vocode: ``False`` yields the postnet log-mel instead, ``(frames, n_mels)`` float32 blocks
                (not normalised) as soon as each is exact; joined, they are ``synthesize(text,
                ...).mel`` (a split text's chunks one after another, without pauses). Default True.

        Every input is checked here, before the first chunk (the same errors as
        :meth:`synthesize`); a NaN mel or waveform is a ``GstTtsError`` from the iteration.
        """
        chunks = self._stream_chunks(text, style, seed, decoding, max_chunk_chars, pause_s, chunk_frames)
        lanes = RngLanes(seed, self.device)

        def windows():
            return vocoder_windows(self.vocoder, hop_length=self.audio_config.hop_length, chunk_frames=chunk_frames)

        # The vocoder on its own lane, not across a yield: the caller's RNG is its own between chunks.
        return stream_audio(
            chunks,
            mel_blocks=lambda chunk: self._chunk_mel(chunk, lanes, decoding),
            windows=windows if vocode else None,
            pause=np.zeros(int(round(pause_s * self.sample_rate)), dtype=np.float32),
            vocoder_context=lambda: lanes.lane("vocoder"),
        )

    def _stream_chunks(
        self,
        text: str,
        style: Style | None,
        seed: int | None,
        decoding: DecodingConfig,
        max_chunk_chars: int | None,
        pause_s: float,
        chunk_frames: int,
    ) -> list[_Chunk]:
        """The chunks of one text with its resolved style, every check of :meth:`synthesize` passed."""
        _check_options(1, max_chunk_chars, pause_s, decoding, seed)
        check_stream_request(text, style, chunk_frames)
        _, pieces = self._text.prepare(text, max_chunk_chars)
        weights = self.styles.resolve(style or Style())
        warn_f0_range_unused([style], "a stream")
        return [_Chunk(0, piece, ids, weights) for piece, ids in pieces]

    @torch.no_grad()
    def _chunk_mel(
        self, chunk: _Chunk, lanes: RngLanes, decoding: DecodingConfig
    ) -> Iterator[tuple[np.ndarray | None, bool]]:
        """One text chunk's exact postnet log-mel blocks as the decoder's steps come:
        ``(log_mel (frames, n_mels) or None, final)``, the last with ``final`` True."""
        postnet = postnet_windows(self.model, self.mel_stats, chunk.text)
        steps = decode_steps(self.model, chunk.ids, chunk.weights, self._bounds(decoding), lanes, self.device)
        yield from postnet.blocks(steps)

    def frame_bounds(
        self,
        text: str,
        *,
        decoding: DecodingConfig = DecodingConfig(),
        max_chunk_chars: int | None = DEFAULT_MAX_CHARS,
    ) -> list[int]:
        """The most mel frames each chunk of ``text`` may decode to (reading order), as
        :meth:`synthesize` bounds them with ``decoding`` and ``max_chunk_chars``: the model's
        per-item step bound (``GSTTacotron.step_bounds``) of ``decoding``'s bounds at this
        checkpoint's frame rate, times r. Nothing is decoded; divide by
        ``audio_config.frames_per_second`` for seconds.

        Raises:
            TextError: a text :meth:`check_text` refuses.
        """
        _check_options(1, max_chunk_chars, 0.0, decoding, None)
        _, pieces = self._text.prepare(text, max_chunk_chars)
        bounds = self._bounds(decoding)
        lengths = torch.tensor([len(ids) for _, ids in pieces])
        steps = self.model.step_bounds(
            lengths, max_frames_per_symbol=bounds["max_frames_per_symbol"], max_frames=bounds["max_frames"]
        )
        return (steps * self.model.reduction_factor).tolist()

    def _bounds(self, decoding: DecodingConfig) -> dict:
        """``decoding`` as ``GSTTacotron.infer``'s keyword arguments for this checkpoint's mels."""
        return decoding.model_arguments(frames_per_second=self.audio_config.frames_per_second)

    def check_text(self, text: str) -> None:
        """Raise ``TextError`` for a text :meth:`synthesize` would refuse: not a string, longer than
        :data:`MAX_TEXT_CHARS` (checked before any cleaning, so a huge text costs nothing), empty or
        without a symbol of the table, punctuation only, or longer than :data:`MAX_CLEANED_CHARS`
        once cleaned. Characters not in the table are warned about (``DroppedCharacterWarning``)."""
        self._text.encode_whole(text)

    def _decode(self, chunks: list[_Chunk], batch_size: int, decoding: DecodingConfig) -> list[DecodedChunk]:
        """Decode all chunks in batches of similar length (a batch runs until its longest item
        stops, so mixing lengths wastes steps)."""
        out: list[DecodedChunk | None] = [None] * len(chunks)
        order = sorted(range(len(chunks)), key=lambda i: -len(chunks[i].ids))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            lengths = torch.tensor([len(chunks[i].ids) for i in idx])
            text = torch.full((len(idx), int(lengths.max())), self.symbols.pad_id, dtype=torch.long)
            for row, i in enumerate(idx):
                text[row, : len(chunks[i].ids)] = chunks[i].ids
            style = torch.stack([chunks[i].weights for i in idx]).to(self.device)
            result = self.model.infer(
                text.to(self.device), lengths.to(self.device), style_weights=style, **self._bounds(decoding)
            )
            # One transfer per tensor, then cheap per-row slicing on the CPU.
            mel = result.mel_postnet.float().cpu()
            _check_finite(mel, result.mel_lengths.cpu(), [chunks[i].text for i in idx])
            alignments = result.alignments.float().cpu().numpy()
            stop_probs = result.stop_probs.float().cpu().numpy()
            steps, frames = result.steps.cpu().tolist(), result.mel_lengths.cpu().tolist()
            stopped = result.stopped_on_token.cpu().tolist()
            for row, i in enumerate(idx):
                out[i] = DecodedChunk(
                    text=chunks[i].text,
                    ids=chunks[i].ids,
                    log_mel=self.mel_stats.denormalize(mel[row, : frames[row]]).numpy(),
                    alignment=np.ascontiguousarray(alignments[row, : steps[row], : int(lengths[row])]),
                    stop_probs=np.ascontiguousarray(stop_probs[row, : steps[row]]),
                    stopped_on_token=bool(stopped[row]),
                )
        return out  # type: ignore[return-value]

    @property
    def transfers_f0_range(self) -> bool:
        """Whether the vocoder can set a reference's F0 spread (the spectral vocoder with a pitch head)."""
        return bool(getattr(self.vocoder, "sets_f0_range", False))

    def f0_range_target(
        self, style: Style | None, read: Callable[[Reference], float | None] | None = None
    ) -> F0Target | None:
        """The :class:`~gst_tts.inference.style_spec.F0Target` the vocoder is asked for with ``style``
        (:func:`~gst_tts.inference.style_spec.style_f0_range`), or ``None``: the spread as
        decoded (a token style without ``f0_range``, neutral, or a vocoder that cannot set one)."""
        if not self.transfers_f0_range:
            return None
        return style_f0_range(style, read or self.reference_f0_range)

    def reference_f0_range(self, reference: Reference) -> float | None:
        """A reference's F0 spread (semitones, 10th to 90th percentile of voiced frames), tracked by
        YIN in its samples (:func:`~gst_tts.audio.pitch.yin_f0`) and median-filtered
        (:data:`~gst_tts.audio.vocoders.intonation.REFERENCE_MEDIAN_FRAMES`); ``None`` for too few
        voiced frames or feature settings YIN cannot track with (a window under two periods of 60 Hz)."""
        audio = torch.from_numpy(self.styles.reference_audio(reference))
        try:
            f0, voiced = yin_f0(audio, self.audio_config)
        except ValueError:  # a window too short for YIN's lowest F0 at this rate: the spread is not read
            return None
        return spread_st(np.log(f0[voiced].double().numpy()), median_frames=REFERENCE_MEDIAN_FRAMES)

    def tempo_target(
        self, style: Style | None, read: Callable[[Reference], float | None] | None = None
    ) -> TempoTarget | None:
        """The :class:`~gst_tts.inference.style_spec.TempoTarget` an output in ``style`` is retimed to
        (:func:`~gst_tts.inference.style_spec.style_tempo`), or ``None``: the tempo as decoded (a
        token style, neutral, or a reference whose tempo cannot be read)."""
        return style_tempo(style, read or self.reference_tempo)

    def reference_tempo(self, reference: Reference) -> float | None:
        """A reference's letters per second of articulation, estimated from its syllable nuclei
        (:func:`~gst_tts.analysis.speech_rate.letter_rate_estimate` of its log-mel); ``None`` for too few nuclei."""
        return letter_rate_estimate(
            self.styles.reference_log_mel(reference).numpy(),
            1.0 / self.audio_config.frames_per_second,
            fmin=self.audio_config.fmin,
            fmax=self.audio_config.fmax,
        )

    def _assemble(
        self,
        text: str,
        cleaned: str,
        parts: list[DecodedChunk],
        weights: torch.Tensor,
        pause_s: float,
        vocode: bool,
        decoding: DecodingConfig,
        f0_target: F0Target | None = None,
    ) -> SynthesisResult:
        """Join a text's decoded chunks into one result (:func:`gst_tts.inference.requests.assemble`);
        ``f0_target``: the F0 spread the vocoder is asked for, or ``None``."""
        if f0_target is None:

            def run_vocoder(log_mel: np.ndarray) -> np.ndarray:
                return self.vocoder(torch.from_numpy(log_mel))
        else:

            def run_vocoder(log_mel: np.ndarray) -> np.ndarray:
                return self.vocoder(
                    torch.from_numpy(log_mel), f0_range_st=f0_target.semitones, f0_range_strength=f0_target.strength
                )

        return assemble(
            text,
            cleaned,
            parts,
            weights=weights.float().cpu().numpy(),
            pause_s=pause_s,
            vocode=run_vocoder if vocode else None,
            symbols=self.symbols,
            sample_rate=self.sample_rate,
            hop_length=self.audio_config.hop_length,
            frames_per_step=self.model.reduction_factor,
            decoding=decoding,
        )


def _check_finite(mel: torch.Tensor, lengths: torch.Tensor, texts: list[str]) -> None:
    """Raise ``GstTtsError`` when a row's ``(batch, frames, n_mels)`` mel holds NaN or infinite values
    within its ``lengths``: a model driven far off its range (an extreme style) says so, rather than
    handing on NaN audio."""
    for row, text in enumerate(texts):
        if not bool(torch.isfinite(mel[row, : int(lengths[row])]).all()):
            raise GstTtsError(
                f"decoding gave NaN or infinite mel values for {quote_text(text)} "
                "(a style far outside the model's range, or a broken checkpoint)"
            )


def _check_options(
    batch_size: int, max_chunk_chars: int | None, pause_s: float, decoding: DecodingConfig, seed: int | None
) -> None:
    check_options(batch_size, max_chunk_chars, pause_s, decoding)
    if seed is not None and (not whole(seed) or not SEED_RANGE[0] <= seed <= SEED_RANGE[1]):
        raise GstTtsError(
            f"seed must be a whole number from {SEED_RANGE[0]} to {SEED_RANGE[1]} (or None), got {seed!r}"
        )
