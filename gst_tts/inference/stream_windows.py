"""The window arithmetic of streaming synthesis, torch-free: shared by ``Synthesizer.stream`` (through
:mod:`gst_tts.inference.streaming`) and the ONNX runtime's ``OnnxSynthesizer.stream``; each gives
its own postnet and vocoder as callables.

* :class:`PostnetWindows`: decoder frames in, exact postnet log-mel frames out. A frame is handed on
  only once ``context`` (the postnet's reach) frames after it are decoded, or the utterance ended,
  so the streamed postnet mel is the one-shot mel.
* :class:`VocoderWindows`: exact log-mel frames in, audio chunks out, the vocoder on windows with
  ``context`` frames each side of the frames kept (:func:`stream_overlap`: a vocoder's whole reach,
  or a crossfade for the vocoders that build one phase for their whole input).
* :func:`stream_audio`: a text's chunks through both, with the pause between chunks.

See :mod:`gst_tts.inference.streaming` for what is exact and the measured tolerances.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, ContextManager, Iterable, Iterator, Sequence

import numpy as np

from gst_tts.errors import GstTtsError, TextError
from gst_tts.inference.requests import whole
from gst_tts.inference.style_spec import ResolvedStyle, Style
from gst_tts.text.symbols import quote_text

__all__ = [
    "DEFAULT_CHUNK_FRAMES",
    "POSTNET_BLOCK_FRAMES",
    "FrameBuffer",
    "PostnetWindows",
    "VocoderWindows",
    "check_stream_request",
    "stream_audio",
    "stream_overlap",
]

#: Mel frames of audio per streamed chunk (about 0.28 s at 22050 Hz and a hop of 256).
DEFAULT_CHUNK_FRAMES = 24
#: Context (frames each side) and crossfade (frames) for the vocoders that build one phase for
#: their whole input: enough context that a window's middle has settled, a crossfade short
#: enough (23 ms) not to smear onsets.
_PHASE_CONTEXT_FRAMES = 8
_PHASE_CROSSFADE_FRAMES = 2
#: The postnet runs once this many frames (at least r) are ready, not after every step: each
#: window costs twice the postnet's context in extra frames.
POSTNET_BLOCK_FRAMES = 8

#: Frames as the decoder gives them: a numpy array, or (the torch path) a tensor on the model's device.
Frames = Any


def stream_overlap(reach: int | None) -> tuple[int, int]:
    """``(context, crossfade)`` in mel frames for streaming a vocoder whose samples depend on
    ``reach`` frames each side of their own (HiFi-GAN's ``reach_frames``): that context and no
    crossfade, the kept samples being the whole mel's; ``None``, a vocoder that builds one phase
    for its whole input (Griffin-Lim, the spectral vocoder): 8 frames of context, 2 of crossfade."""
    if reach is not None:
        return int(reach), 0
    return _PHASE_CONTEXT_FRAMES, _PHASE_CROSSFADE_FRAMES


def check_stream_request(text: object, style: object, chunk_frames: object) -> None:
    """The checks a stream adds to ``synthesize``'s option checks, one-line errors: one text (a
    string), a ``Style``, a ``ResolvedStyle`` or None, ``chunk_frames`` a whole number >= 1."""
    if not isinstance(text, str):
        raise TextError(f"stream takes one text (a string), got {type(text).__name__}")
    if style is not None and not isinstance(style, (Style, ResolvedStyle)):
        raise GstTtsError(f"style must be a Style or None, got {type(style).__name__}")
    if not whole(chunk_frames) or chunk_frames < 1:
        raise GstTtsError(f"chunk_frames must be a whole number >= 1, got {chunk_frames!r}")


class FrameBuffer:
    """The frames of one utterance that a later window may still read: frames are appended, a
    window ``[start, end)`` is read by absolute frame index, and frames before an index nothing
    will read again are dropped, so a long utterance is not concatenated whole at every window.

    Args:
        concat: joins a list of frame blocks along their first axis (``np.concatenate``, or
            ``torch.cat`` for tensors kept on their device).
    """

    def __init__(self, concat: Callable[[list], Frames] = np.concatenate) -> None:
        self._concat = concat
        self._parts: list = []
        self._offset = 0  # absolute index of the first frame held
        self.frames = 0  # frames appended so far

    def append(self, frames: Frames) -> None:
        self._parts.append(frames)
        self.frames += frames.shape[0]

    def window(self, start: int, end: int) -> Frames:
        held = self._concat(self._parts) if len(self._parts) > 1 else self._parts[0]
        self._parts = [held]
        return held[start - self._offset : end - self._offset]

    def drop_before(self, index: int) -> None:
        if index > self._offset and self._parts:
            held = self._concat(self._parts)
            self._parts = [held[index - self._offset :]]
            self._offset = index


class PostnetWindows:
    """Decoder frames in (normalised, before the postnet), exact postnet log-mel frames out.

    Args:
        postnet: a window of decoder frames ``(frames, n_mels)`` (as pushed, joined by ``concat``)
            → its postnet log-mel ``(frames, n_mels)`` float32 numpy, not normalised; the window
            is the whole input (its ends are the postnet's zero padding).
        context: the postnet's reach, frames each side (the sum of its convolutions' half kernels).
        block: frames ready before the postnet runs (at least r).
        text: the chunk's text, for the error message of a non-finite mel.
        concat: see :class:`FrameBuffer`.
    """

    def __init__(
        self,
        postnet: Callable[[Frames], np.ndarray],
        *,
        context: int,
        block: int,
        text: str,
        concat: Callable[[list], Frames] = np.concatenate,
    ) -> None:
        self.postnet = postnet
        self.context = int(context)
        self.block = int(block)
        self.text = text
        self._mel = FrameBuffer(concat)
        self._emitted = 0

    def push(self, frames: Frames, *, final: bool) -> np.ndarray | None:
        """Add one step's ``(r, n_mels)`` frames (``final``: the utterance ended with them); the
        ``(frames, n_mels)`` float32 log-mel that is now exact and not yet given, or None while
        too little is.

        Raises:
            GstTtsError: the mel holds NaN or infinite values (as one-shot synthesis says).
        """
        self._mel.append(frames)
        ready = self._mel.frames if final else self._mel.frames - self.context
        if ready <= self._emitted or (not final and ready - self._emitted < self.block):
            return None
        start = max(0, self._emitted - self.context)
        end = self._mel.frames if final else min(self._mel.frames, ready + self.context)
        out = np.asarray(self.postnet(self._mel.window(start, end)), dtype=np.float32)
        out = out[self._emitted - start : ready - start]
        if not np.isfinite(out).all():
            raise GstTtsError(
                f"decoding gave NaN or infinite mel values for {quote_text(self.text)} "
                "(a style far outside the model's range, or a broken checkpoint)"
            )
        self._emitted = ready
        self._mel.drop_before(max(0, ready - self.context))  # the next window starts there
        return out

    def blocks(self, steps: Iterable[tuple[Frames, bool]]) -> Iterator[tuple[np.ndarray | None, bool]]:
        """Decoder steps ``(frames (r, n_mels), final)`` in, as they come → ``(log_mel or None,
        final)`` for each step that made frames exact, and for the last step (``final`` True)."""
        for frames, final in steps:
            log_mel = self.push(frames, final=final)
            if log_mel is not None or final:
                yield log_mel, final


class VocoderWindows:
    """Exact log-mel frames in, audio chunks out: the vocoder on overlapping windows.

    Frame ``t`` stands for samples ``[t·hop, (t+1)·hop)`` (HiFi-GAN's frame; the centred STFT's
    frame ``t`` is centred on sample ``t·hop``: the same origin), so a window of frames
    ``[s, e)`` gives samples from ``s·hop`` on, and the ones kept are cut at frame boundaries.

    Args:
        vocode: ``(frames, n_mels)`` float32 log-mel (not normalised) → float32 samples from the
            window's first frame on.
        hop_length: samples per frame.
        chunk_frames: frames of audio per chunk (the last may have fewer); the first has a third
            of them (at least 1), so that audio starts sooner: it waits for fewer decoder steps.
        context, crossfade: frames; see :func:`stream_overlap` (the crossfade at most ``context - 1``).
        output_peak: for a ``vocode`` that does not scale its output (Griffin-Lim, which one-shot
            scales to one peak per utterance): every chunk is scaled by ``output_peak`` over the
            loudest window so far, one gain per utterance that only falls. None: as ``vocode`` gives it.
    """

    def __init__(
        self,
        vocode: Callable[[np.ndarray], np.ndarray],
        *,
        hop_length: int,
        chunk_frames: int,
        context: int,
        crossfade: int,
        output_peak: float | None = None,
    ) -> None:
        if crossfade > max(context - 1, 0):
            raise ValueError(f"a crossfade of {crossfade} frames needs a context of {crossfade + 1}, got {context}")
        self.vocode = vocode
        self.hop = hop_length
        self.chunk = chunk_frames
        self.context = context
        self.fade = crossfade * hop_length
        self.output_peak = output_peak
        self._mel = FrameBuffer()
        self._emitted = 0
        self._tail: np.ndarray | None = None  # the last window's samples past its cut, to fade into the next
        self._peak = 0.0  # with output_peak: the loudest unscaled sample so far

    def push(self, log_mel: np.ndarray | None, *, final: bool) -> list[np.ndarray]:
        """Add ``(frames, n_mels)`` exact log-mel frames (``final``: the last of the utterance, or
        None: no more frames); the chunks of float32 samples that are now ready, in order (none
        while too few frames are)."""
        if log_mel is not None and log_mel.shape[0]:
            self._mel.append(np.asarray(log_mel, dtype=np.float32))
        chunks = []
        chunk = self._next(final)
        while chunk is not None:
            chunks.append(chunk)
            chunk = None if final else self._next(final)
        return chunks

    def _next(self, final: bool) -> np.ndarray | None:
        """The next chunk, or None while too little is ready."""
        ready = self._mel.frames if final else self._mel.frames - self.context
        chunk = self.chunk if self._emitted else max(1, self.chunk // 3)
        if not final and ready - self._emitted < chunk:
            return None
        if final and ready <= self._emitted and self._tail is None:
            return None
        cut = ready if final else self._emitted + chunk
        start = max(0, self._emitted - self.context)
        end = self._mel.frames if final else cut + self.context
        audio = np.asarray(self.vocode(self._mel.window(start, end)), dtype=np.float32)
        if self.output_peak is not None and audio.size:
            self._peak = max(self._peak, float(np.max(np.abs(audio))))
        first = (self._emitted - start) * self.hop
        piece = audio[first:] if final else audio[first : (cut - start) * self.hop + self.fade]
        piece = np.array(piece, dtype=np.float32)  # a copy: the crossfade writes into it
        if self._tail is not None and min(len(self._tail), len(piece)):
            n = min(len(self._tail), len(piece))
            ramp = (np.arange(n, dtype=np.float32) + 0.5) / n
            piece[:n] = self._tail[:n] * (1 - ramp) + piece[:n] * ramp
        if final:
            self._tail = None
        else:
            piece, self._tail = piece[: len(piece) - self.fade], piece[len(piece) - self.fade :] if self.fade else None
        self._emitted = cut
        self._mel.drop_before(max(0, cut - self.context))  # the next window starts there
        return self._scaled(piece)

    def _scaled(self, piece: np.ndarray) -> np.ndarray:
        if self.output_peak is not None and self._peak > 0:
            piece = piece * np.float32(self.output_peak / self._peak)
        if not np.isfinite(piece).all():
            raise GstTtsError("the vocoder gave NaN or infinite samples")
        return piece


def stream_audio(
    chunks: Sequence[Any],
    *,
    mel_blocks: Callable[[Any], Iterator[tuple[np.ndarray | None, bool]]],
    windows: Callable[[], VocoderWindows] | None,
    pause: np.ndarray,
    vocoder_context: Callable[[], ContextManager] = contextlib.nullcontext,
) -> Iterator[np.ndarray]:
    """A text's stream: each of its ``chunks`` (reading order) through ``mel_blocks`` (the chunk's
    exact log-mel blocks as its decoder steps come, :meth:`PostnetWindows.blocks`) and a fresh
    ``windows()``; ``pause`` (float32 zeros) between chunks. ``windows`` None: the log-mel blocks
    themselves, no pauses. ``vocoder_context``: entered around each vocoder push, never across a
    yield (the torch path's RNG lane)."""
    for k, chunk in enumerate(chunks):
        if windows is None:
            yield from (log_mel for log_mel, _ in mel_blocks(chunk) if log_mel is not None)
            continue
        if k and pause.size:
            yield pause.copy()
        vocoder = windows()
        for log_mel, final in mel_blocks(chunk):
            with vocoder_context():
                pieces = vocoder.push(log_mel, final=final)
            yield from (p for p in pieces if p.size)
