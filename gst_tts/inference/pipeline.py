"""One synthesis pipeline, two backends: texts and styles → results, or one text → an audio stream.

:class:`SynthesisPipeline` does what every synthesis does, whatever runs the model, and imports no
torch. Its backends subclass it and run the model: :class:`gst_tts.Synthesizer` (PyTorch) and
:class:`gst_tts.runtime.OnnxSynthesizer` (onnxruntime and numpy). :meth:`~SynthesisPipeline.synthesize`:

1. the options are checked, each text cleaned and split into chunks
   (:class:`~gst_tts.inference.requests.TextPreparer`);
2. each style is resolved once (:meth:`~gst_tts.inference.style_spec.StyleRules.resolve_styles`):
   its token weights and, when asked, the F0 spread and tempo copied after the model, from one
   reading of each reference;
3. all chunks of all texts are decoded together in length-sorted batches (the backend's
   :meth:`~SynthesisPipeline.decode_batch`): a batch runs until its longest item stops, so mixing
   lengths wastes steps;
4. each text's chunks are retimed toward a tempo target (:mod:`~gst_tts.inference.tempo`), vocoded
   (the backend's :meth:`~SynthesisPipeline.vocode_chunk`) and joined into one
   :class:`~gst_tts.inference.results.SynthesisResult` (:func:`~gst_tts.inference.requests.assemble`).

:meth:`~SynthesisPipeline.stream` runs 1 and 2 for one text and hands each chunk to the backend's
step-wise decoder and vocoder windows (:func:`~gst_tts.inference.stream_windows.stream_audio`).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Callable, ContextManager, Iterator, NamedTuple, Sequence
import warnings

import numpy as np

from gst_tts.errors import GstTtsError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.requests import DEFAULT_PAUSE_S, TextPreparer, assemble, check_options, text_list
from gst_tts.inference.results import DecodedChunk, SynthesisResult
from gst_tts.inference.stream_windows import DEFAULT_CHUNK_FRAMES, VocoderWindows, check_stream_request, stream_audio
from gst_tts.inference.style_spec import (
    F0Target,
    Reference,
    ResolvedStyle,
    Style,
    StyleMix,
    StyleRules,
    StyleWeights,
    TempoTarget,
    warn_f0_range_unused,
)
from gst_tts.inference.tempo import check_tempo_target, retime_text
from gst_tts.text.split import DEFAULT_MAX_CHARS
from gst_tts.text.symbols import SymbolTable, quote_text

log = logging.getLogger(__name__)

__all__ = ["SynthesisPipeline", "StreamParts", "Chunk"]

#: Mel blocks of one chunk as its decoder steps come: ``(log_mel (frames, n_mels) or None, final)``.
MelBlocks = Iterator[tuple[np.ndarray | None, bool]]


class Chunk(NamedTuple):
    """One model input: a cleaned chunk of one text, its ids (eos included) and its token weights."""

    text_index: int
    text: str
    ids: Any  # (symbols,): a tensor for the PyTorch backend, a list for the runtime
    weights: Any  # (n_heads, n_tokens), the backend's array type


class StreamParts(NamedTuple):
    """A backend's half of a stream: each chunk's exact log-mel blocks, a fresh set of vocoder
    windows per chunk, and the context entered around each vocoder push (an RNG lane)."""

    mel_blocks: Callable[[Chunk], MelBlocks]
    windows: Callable[[], VocoderWindows]
    vocoder_context: Callable[[], ContextManager] = contextlib.nullcontext


class SynthesisPipeline:
    """Text (+ style) → speech, whatever runs the model (see the module).

    A backend sets ``symbols`` (its :class:`~gst_tts.text.symbols.SymbolTable`), ``styles`` (its
    :class:`~gst_tts.inference.style_spec.StyleRules`), ``decoding`` (its default
    :class:`~gst_tts.inference.decoding.DecodingConfig`) and the text preparer (:meth:`set_text`),
    and gives the methods and properties of the "backend" part below.
    """

    symbols: SymbolTable
    styles: StyleRules
    #: The decoding used when a call gives none.
    decoding: DecodingConfig

    # ------------------------------------------------------------------ backend

    @property
    def sample_rate(self) -> int:
        raise NotImplementedError

    @property
    def hop_length(self) -> int:
        """Samples per mel frame."""
        raise NotImplementedError

    @property
    def frames_per_step(self) -> int:
        """Mel frames per decoder step (the model's reduction factor r)."""
        raise NotImplementedError

    @property
    def transfers_f0_range(self) -> bool:
        """Whether the vocoder can set an F0 spread (the spectral vocoder with a pitch head)."""
        return False

    @property
    def f0_range_keeper(self) -> str:
        """What keeps the model's F0 spread when a style asks for one, as a warning names it."""
        raise NotImplementedError

    def check_seed(self, seed: int | None) -> None:
        """Raise ``GstTtsError`` for a seed this backend's generator does not take."""
        raise NotImplementedError

    def seeded(self, seed: int | None) -> ContextManager[Any]:
        """The block in which a call decodes and vocodes, seeded; it gives the random state
        :meth:`decode_batch` and :meth:`vocode_chunk` draw from."""
        raise NotImplementedError

    def decode_batch(self, chunks: Sequence[Chunk], decoding: DecodingConfig, rng: Any) -> list[DecodedChunk]:
        """Decode ``chunks`` together as one batch (log-mels not normalised); ``GstTtsError`` for
        NaN or infinite mel values."""
        raise NotImplementedError

    def vocode_chunk(self, log_mel: np.ndarray, f0_target: F0Target | None, rng: Any) -> np.ndarray:
        """``(frames, n_mels)`` log-mel → float32 samples, with the F0 spread ``f0_target`` asks for."""
        raise NotImplementedError

    def weights_array(self, weights: Any) -> np.ndarray:
        """Token weights of the backend's type as a float32 numpy array."""
        return np.asarray(weights, dtype=np.float32)

    def stream_parts(self, seed: int | None, decoding: DecodingConfig, chunk_frames: int) -> StreamParts:
        """The backend's half of one stream (see :class:`StreamParts`)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the pipeline

    def set_text(self, encode: Callable[[str], Any]) -> None:
        """The text preparer of ``self.symbols`` with ``encode`` (text → ids with eos)."""
        self._text = TextPreparer(self.symbols, encode)

    def check_text(self, text: str) -> None:
        """Raise ``TextError`` for a text :meth:`synthesize` would refuse: not a string, longer than
        :data:`~gst_tts.inference.requests.MAX_TEXT_CHARS` (checked before any cleaning, so a huge
        text costs nothing), empty or without a symbol of the table, punctuation only, or longer
        than :data:`~gst_tts.inference.requests.MAX_CLEANED_CHARS` once cleaned. Characters not in
        the table are warned about (``DroppedCharacterWarning``)."""
        self._text.encode_whole(text)

    def synthesize(
        self,
        texts: str | Sequence[str],
        *,
        reference: Reference | None = None,
        style_weights: StyleWeights | None = None,
        style_dials: StyleWeights | None = None,
        style_mix: StyleMix | None = None,
        style_strength: float | None = None,
        styles: Sequence[Style | ResolvedStyle | None] | None = None,
        seed: int | None = None,
        batch_size: int = 16,
        decoding: DecodingConfig | None = None,
        max_chunk_chars: int | None = DEFAULT_MAX_CHARS,
        pause_s: float = DEFAULT_PAUSE_S,
        vocode: bool = True,
        transfer_f0_range: bool = False,
        transfer_tempo: bool = False,
        names: Sequence[str] | None = None,
        f0_targets: Sequence[F0Target | None] | None = None,
        tempo_targets: Sequence[TempoTarget | None] | None = None,
    ) -> SynthesisResult | list[SynthesisResult]:
        """Synthesize one text (returns one result) or a list (returns a list, batched internally).

        The style is either one for all texts, or one per text:

        * at most one of ``reference`` (style transfer), ``style_weights`` (style control),
          ``style_dials`` (style control relative to neutral, see
          :meth:`~gst_tts.inference.style_spec.StyleRules.dial_weights`), ``style_mix`` (weighted
          mix of references' token weights) for every text, ``style_strength`` scaling a
          ``reference`` or ``style_mix`` from neutral (0) through the reference (1, the default) to
          an exaggeration (up to ``MAX_STYLE_STRENGTH``, 3); with none, the neutral style: the
          checkpoint's mean token weights of its training references (uniform weights in
          checkpoints from before they were stored);
        * ``styles``: one :class:`~gst_tts.inference.style_spec.Style` (or ``None``: neutral) per
          text, e.g. ``styles=[Style(reference="a.wav"), Style(weights={3: 0.4}), None]``, or a
          :class:`~gst_tts.inference.style_spec.ResolvedStyle` a caller resolved itself
          (``synth.styles.resolve_styles``), taken as it is. Texts of different styles are
          decoded together in the same batches; a text's output is the same as when synthesized
          alone with its style (with the prenet dropout off; with it on, the random masks depend
          on the batch).

        Args:
            texts: a text or a list of texts.
            seed: makes the output repeatable (prenet dropout stays on at inference, and
                Griffin-Lim starts from a random phase); the caller's random state is left as it
                was. Default None (not repeatable).
            batch_size: chunks decoded together. Default 16.
            decoding: stop threshold and length bounds (per chunk). Default :attr:`decoding`.
            max_chunk_chars: texts longer than this (cleaned characters) are split at sentence,
                then clause boundaries; ``None`` never splits (``synthesize --no-split``; give
                ``decoding=DecodingConfig(max_seconds=UNSPLIT_MAX_SECONDS)`` with it, as the
                command does, or a long text stops on the default absolute bound). Default
                ``DEFAULT_MAX_CHARS``.
            pause_s: silence between the chunks of a split text, 0 to ``MAX_PAUSE_S`` seconds. Default 0.25.
            vocode: run the vocoder; ``False`` leaves ``audio`` empty (mel, alignment only).
                Default True.
            transfer_f0_range: signal processing after the model, off by default. With a
                vocoder that can set an F0 spread (:attr:`transfers_f0_range`) and a reference or
                mix: the output's F0 spread is set to the reference's (tracked by YIN; a mix: its
                references' mean), by the style strength (:mod:`gst_tts.audio.vocoders.intonation`),
                whatever the model decoded. A ``Style``'s ``f0_range`` sets it outright either way.
            transfer_tempo: signal processing after the model, off by default. With a reference
                or mix: each text's decoded mel is retimed so its letter rate follows the
                reference's (estimated from its syllable nuclei; a mix: its references' geometric
                mean), by the style strength, before any vocoder, never past a chunk's decoding
                bound (:mod:`gst_tts.inference.tempo`), whatever rate the model decoded.
            names: one name per text for warnings (default: the text itself).
            f0_targets, tempo_targets: deprecated: one target (or ``None``) per text, in place
                of what the styles ask for; give ``ResolvedStyle`` s in ``styles`` instead.

        Every input is validated before anything is decoded.

        Raises:
            TextError: a text :meth:`check_text` refuses, or ``texts`` neither a string nor a list.
            AudioError, GstTtsError: a bad style (see :mod:`gst_tts.inference.style`), ``styles``
                together with a single style option or not one per text, a bad option.
        """
        decoding = self.decoding if decoding is None else decoding
        self.check_options(batch_size, max_chunk_chars, pause_s, decoding, seed)
        single, texts = text_list(texts)
        if names is not None and len(names) != len(texts):
            raise GstTtsError(f"{len(names)} names for {len(texts)} texts")
        prepared = [self._text.prepare(t, max_chunk_chars) for t in texts]
        one = None
        if styles is None:
            one = Style(
                reference=reference, weights=style_weights, dials=style_dials, mix=style_mix, strength=style_strength
            )
        elif any(x is not None for x in (reference, style_weights, style_dials, style_mix, style_strength)):
            raise GstTtsError(
                "give either styles (one per text) or one of reference, style_weights, style_dials, style_mix"
                " (with style_strength: a Style's strength)"
            )
        elif isinstance(styles, (Style, ResolvedStyle)) or len(styles) != len(texts):
            n = 1 if isinstance(styles, (Style, ResolvedStyle)) else len(styles)
            raise GstTtsError(f"styles needs one style per text: {n} for {len(texts)} texts")
        f0_range = vocode and self.transfers_f0_range
        if vocode and not self.transfers_f0_range:
            warn_f0_range_unused(styles or [], self.f0_range_keeper)
        resolved = self.styles.resolve_styles(
            [one] if one is not None else list(styles),
            f0_range=f0_range,
            reference_f0_range=f0_range and transfer_f0_range and f0_targets is None,
            reference_tempo=transfer_tempo and tempo_targets is None,
        )
        resolved = resolved * len(texts) if one is not None else resolved  # one reading for every text
        resolved = _given_targets(resolved, f0_targets, tempo_targets, f0_range=f0_range)

        chunks = [
            Chunk(i, piece, ids, resolved[i].weights) for i, (_, pieces) in enumerate(prepared) for piece, ids in pieces
        ]
        fps = self.sample_rate / self.hop_length
        results = []
        with self.seeded(seed) as rng:
            per_text: list[list[DecodedChunk]] = [[] for _ in texts]
            for chunk, decoded in zip(chunks, self._decode(chunks, batch_size, decoding, rng)):
                per_text[chunk.text_index].append(decoded)  # chunks are in reading order
            for i, (text, parts) in enumerate(zip(texts, per_text)):
                bounds = [self._chunk_frames(d.ids, decoding) for d in parts]
                parts = retime_text(parts, resolved[i].tempo_target, frame_seconds=1.0 / fps, max_frames=bounds)
                target = resolved[i].f0_target

                def vocoder(log_mel: np.ndarray, target: F0Target | None = target) -> np.ndarray:
                    return self.vocode_chunk(log_mel, target, rng)

                results.append(
                    assemble(
                        text,
                        prepared[i][0],
                        parts,
                        weights=self.weights_array(resolved[i].weights),
                        pause_s=pause_s,
                        vocode=vocoder if vocode else None,
                        symbols=self.symbols,
                        sample_rate=self.sample_rate,
                        hop_length=self.hop_length,
                        frames_per_step=self.frames_per_step,
                        decoding=decoding,
                    )
                )
        for i, r in enumerate(results):
            problems = r.problems()
            if problems:
                name = names[i] if names is not None else quote_text(r.text)
                shown = problems[:3] + ([f"and {len(problems) - 3} more"] if len(problems) > 3 else [])
                log.warning("attention problem in %s: %s", name, "; ".join(shown))
        return results[0] if single else results

    def stream(
        self,
        text: str,
        *,
        style: Style | ResolvedStyle | None = None,
        seed: int | None = None,
        decoding: DecodingConfig | None = None,
        max_chunk_chars: int | None = DEFAULT_MAX_CHARS,
        pause_s: float = DEFAULT_PAUSE_S,
        chunk_frames: int = DEFAULT_CHUNK_FRAMES,
        vocode: bool = True,
    ) -> Iterator[np.ndarray]:
        """Synthesize one text as a stream of float32 audio chunks at :attr:`sample_rate`, each
        yielded as soon as the decoder steps it needs have run.

        The arguments are :meth:`synthesize`'s for one text (``style``: one style, ``None``
        neutral). A long text's chunks stream in reading order, decoded one after another, with
        ``pause_s`` of silence between them (a chunk of its own).

        Joined, the chunks are the one-shot audio of ``synthesize(text, ...)`` with the same
        arguments and neither copy asked for: its postnet mel exactly (within float rounding;
        ``vocode=False``) and, with HiFi-GAN, its samples up to
        :data:`~gst_tts.inference.streaming.HIFIGAN_STREAM_TOLERANCE`; with Griffin-Lim or the
        spectral vocoder the same spectrum with the phase built window by window and crossfaded
        (:mod:`gst_tts.inference.streaming`). A split text with prenet dropout on differs from the
        one-shot one (which decodes its chunks as one batch, so draws other dropout masks). A
        stream keeps the model's F0 spread and tempo: the copies need the whole chunk (a style's
        ``f0_range`` is warned about).

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
        decoding = self.decoding if decoding is None else decoding
        self.check_options(1, max_chunk_chars, pause_s, decoding, seed)
        check_stream_request(text, style, chunk_frames)
        parts = self.stream_parts(seed, decoding, chunk_frames)
        _, pieces = self._text.prepare(text, max_chunk_chars)
        (resolved,) = self.styles.resolve_styles([style])
        warn_f0_range_unused([style], "a stream")
        return stream_audio(
            [Chunk(0, piece, ids, resolved.weights) for piece, ids in pieces],
            mel_blocks=parts.mel_blocks,
            windows=parts.windows if vocode else None,
            pause=np.zeros(int(round(pause_s * self.sample_rate)), dtype=np.float32),
            vocoder_context=parts.vocoder_context,
        )

    def frame_bounds(
        self,
        text: str,
        *,
        decoding: DecodingConfig | None = None,
        max_chunk_chars: int | None = DEFAULT_MAX_CHARS,
    ) -> list[int]:
        """The most mel frames each chunk of ``text`` may decode to (reading order), as
        :meth:`synthesize` bounds them with ``decoding`` and ``max_chunk_chars``
        (:meth:`~gst_tts.inference.decoding.DecodingConfig.chunk_frames`). Nothing is decoded;
        divide by the frames per second for seconds.

        Raises:
            TextError: a text :meth:`check_text` refuses.
        """
        decoding = self.decoding if decoding is None else decoding
        self.check_options(1, max_chunk_chars, 0.0, decoding, None)
        _, pieces = self._text.prepare(text, max_chunk_chars)
        return [self._chunk_frames(ids, decoding) for _, ids in pieces]

    def f0_range_target(self, style: Style | None) -> F0Target | None:
        """The F0 spread the vocoder is asked for with ``style`` and ``transfer_f0_range``, or
        ``None``: the spread as decoded (a token style without ``f0_range``, neutral, or a vocoder
        that cannot set one)."""
        if not self.transfers_f0_range:
            return None
        return self.styles.resolve_styles([style], f0_range=True, reference_f0_range=True)[0].f0_target

    def tempo_target(self, style: Style | None) -> TempoTarget | None:
        """The tempo an output in ``style`` is retimed to with ``transfer_tempo``, or ``None``: the
        tempo as decoded (a token style, neutral, or a reference whose tempo cannot be read)."""
        return self.styles.resolve_styles([style], reference_tempo=True)[0].tempo_target

    def reference_weights(self, reference: Reference) -> Any:
        """The ``(n_heads, n_tokens)`` token weights a reference recording gets."""
        return self.styles.reference_weights(reference)

    def reference_f0_range(self, reference: Reference) -> float | None:
        """A reference's F0 spread (semitones, 10th to 90th percentile of voiced frames); ``None``
        for too few voiced frames or feature settings its pitch tracker cannot track with."""
        return self.styles.read_reference(reference, f0_range=True).f0_range_st

    def reference_tempo(self, reference: Reference) -> float | None:
        """A reference's letters per second of articulation, estimated from its syllable nuclei
        (:func:`~gst_tts.analysis.speech_rate.letter_rate_estimate`); ``None`` for too few nuclei."""
        return self.styles.read_reference(reference, tempo=True).letters_per_s

    def check_options(
        self, batch_size: int, max_chunk_chars: int | None, pause_s: float, decoding: DecodingConfig, seed: int | None
    ) -> None:
        """Raise a one-line ``GstTtsError`` for a bad option (the seed: :meth:`check_seed`)."""
        check_options(batch_size, max_chunk_chars, pause_s, decoding)
        self.check_seed(seed)

    def _chunk_frames(self, ids: Any, decoding: DecodingConfig) -> int:
        return decoding.chunk_frames(
            len(ids), frames_per_second=self.sample_rate / self.hop_length, frames_per_step=self.frames_per_step
        )

    def _decode(
        self, chunks: Sequence[Chunk], batch_size: int, decoding: DecodingConfig, rng: Any
    ) -> list[DecodedChunk]:
        """Every chunk decoded, in batches of similar length (longest first), in reading order."""
        out: list[DecodedChunk | None] = [None] * len(chunks)
        order = sorted(range(len(chunks)), key=lambda i: -len(chunks[i].ids))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            for i, decoded in zip(idx, self.decode_batch([chunks[i] for i in idx], decoding, rng)):
                out[i] = decoded
        return out  # type: ignore[return-value]


def _given_targets(
    resolved: list[ResolvedStyle],
    f0_targets: Sequence[F0Target | None] | None,
    tempo_targets: Sequence[TempoTarget | None] | None,
    *,
    f0_range: bool,
) -> list[ResolvedStyle]:
    """``resolved`` with the deprecated per-text targets in place of the styles' own, the tempo
    targets checked, and no F0 target where nothing sets one (``f0_range`` False)."""
    for name, given, field in (
        ("f0_targets", f0_targets, "f0_target"),
        ("tempo_targets", tempo_targets, "tempo_target"),
    ):
        if given is None:
            continue
        warnings.warn(
            f"{name} is deprecated: give ResolvedStyle(weights, f0_target, tempo_target) in styles",
            DeprecationWarning,
            stacklevel=3,
        )
        if len(given) != len(resolved):
            raise GstTtsError(f"{name} needs one target (or None) per text: {len(given)} for {len(resolved)} texts")
        resolved = [r._replace(**{field: t}) for r, t in zip(resolved, given)]
    return [
        r._replace(tempo_target=check_tempo_target(r.tempo_target), f0_target=r.f0_target if f0_range else None)
        for r in resolved
    ]
