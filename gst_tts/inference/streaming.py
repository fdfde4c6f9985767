"""Streaming synthesis: audio chunks as the decoder's steps complete (``Synthesizer.stream``).

The decoder runs step by step (``Decoder.infer_steps``, the loop one-shot synthesis runs too). Its frames go through the postnet and the vocoder on overlapping windows:

* the postnet (a stack of convolutions) gives a frame exactly what the whole mel gives it once
  :attr:`~gst_tts.model.GSTTacotron.postnet_context` frames stand on each side of it in the window
  (or the utterance starts or ends there), so :class:`PostnetWindows` hands on a frame only when
  that many frames after it are decoded: the streamed postnet mel *is* the one-shot mel;
* the vocoder runs on windows of that mel with :func:`vocoder_overlap`'s context on each side, and
  only the samples of the window's middle frames are kept (:class:`VocoderWindows`). HiFi-GAN's
  context is its whole reach (``HiFiGANGenerator.reach_frames``), so its kept samples are the whole
  mel's up to float rounding. Griffin-Lim and the spectral vocoder build one phase for the whole
  input (random start, PGHI's integration, iterations over all frames), so a window's phase is
  its own: adjacent windows are crossfaded, and the joined audio is not the one-shot audio sample
  for sample (same spectrum, other phase). Griffin-Lim scales every output to one peak; a stream
  cannot know the utterance's peak in advance, so it scales by the loudest window so far (a
  chunk may come out louder than the one-shot audio's level, never clipped).

Tolerances, measured (``tests/inference/test_streaming.py``; CPU float32): the joined postnet mel
equals the one-shot mel within 1e-5 (measured: 0, bit for bit); with a HiFi-GAN vocoder the joined
audio equals the one-shot audio within :data:`HIFIGAN_STREAM_TOLERANCE`, 1e-5 (measured: 6e-8 on
a random generator of peak 0.14, whose reach is 14 frames; on a random mel 7 frames of context give 2e-4, 2 give 0.03). On a GPU,
convolutions of other lengths may pick other kernels (TF32 included), so expect more there.

Prenet dropout stays on at inference and draws from torch's RNG, as does Griffin-Lim's first
phase; with a ``seed`` the decoder draws from its own RNG stream started from the seed exactly as
one-shot synthesis's decoding is, and the vocoder from another, each swapped in only while its
part runs (:class:`RngLanes`): the caller's RNG is left as it was, even between chunks.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np
import torch

from gst_tts.audio.features import MelStats
from gst_tts.audio.vocoders import Vocoder
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder
from gst_tts.errors import GstTtsError
from gst_tts.model import GSTTacotron

__all__ = ["DEFAULT_CHUNK_FRAMES", "HIFIGAN_STREAM_TOLERANCE", "PostnetWindows", "VocoderWindows", "RngLanes",
           "vocoder_overlap"]

#: Mel frames of audio per streamed chunk (about 0.28 s at 22050 Hz and a hop of 256).
DEFAULT_CHUNK_FRAMES = 24
#: Largest sample difference between HiFi-GAN's streamed and one-shot audio that the tests allow.
HIFIGAN_STREAM_TOLERANCE = 1e-5
#: Context (frames each side) and crossfade (frames) for the vocoders that build one phase for
#: their whole input: enough context that a window's middle has settled, a crossfade short
#: enough (23 ms) not to smear onsets.
_PHASE_CONTEXT_FRAMES = 8
_PHASE_CROSSFADE_FRAMES = 2
#: The postnet runs once this many frames (at least r) are ready, not after every step: each
#: window costs twice the postnet's context in extra frames.
_POSTNET_BLOCK_FRAMES = 8


def vocoder_overlap(vocoder: Vocoder) -> tuple[int, int]:
    """``(context, crossfade)`` in mel frames for streaming ``vocoder``: the frames each window adds
    on each side of the frames it keeps, and the frames over which adjacent windows crossfade.
    HiFi-GAN: its reach, no crossfade (the kept samples are already the whole mel's); any other
    vocoder: 8 and 2."""
    if isinstance(vocoder, HiFiGANVocoder):
        return vocoder.generator.reach_frames, 0
    return _PHASE_CONTEXT_FRAMES, _PHASE_CROSSFADE_FRAMES


class RngLanes:
    """Separate torch RNG streams (CPU, and ``device``'s when it is CUDA), each swapped in only for
    the code under :meth:`lane`; every lane starts from ``seed``. ``seed=None``: no lanes, the
    global RNG draws as usual (not repeatable, as in one-shot synthesis)."""

    def __init__(self, seed: int | None, device: torch.device) -> None:
        self.seed = seed
        self.cuda_index = (device.index or 0) if device.type == "cuda" else None
        self._states: dict[str, tuple[torch.Tensor, torch.Tensor | None]] = {}

    def _get(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        return torch.get_rng_state(), None if self.cuda_index is None else torch.cuda.get_rng_state(self.cuda_index)

    def _set(self, state: tuple[torch.Tensor, torch.Tensor | None]) -> None:
        torch.set_rng_state(state[0])
        if state[1] is not None:
            torch.cuda.set_rng_state(state[1], self.cuda_index)

    @contextlib.contextmanager
    def lane(self, name: str) -> Iterator[None]:
        """Run the block on lane ``name``'s RNG state; the caller's state is restored after it."""
        if self.seed is None:
            yield
            return
        saved = self._get()
        if name in self._states:
            self._set(self._states[name])
        else:
            torch.manual_seed(int(self.seed))
        try:
            yield
        finally:
            self._states[name] = self._get()
            self._set(saved)


class _FrameBuffer:
    """The frames of one utterance that a later window may still read: frames are appended, a
    window ``[start, end)`` is read by absolute frame index, and frames before an index nothing
    will read again are dropped, so a long utterance is not concatenated whole at every window."""

    def __init__(self) -> None:
        self._parts: list[torch.Tensor] = []
        self._offset = 0  # absolute index of the first frame held
        self.frames = 0  # frames appended so far

    def append(self, frames: torch.Tensor) -> None:
        self._parts.append(frames)
        self.frames += frames.shape[0]

    def window(self, start: int, end: int) -> torch.Tensor:
        held = torch.cat(self._parts) if len(self._parts) > 1 else self._parts[0]
        self._parts = [held]
        return held[start - self._offset : end - self._offset]

    def drop_before(self, index: int) -> None:
        if index > self._offset and self._parts:
            held = torch.cat(self._parts)
            self._parts = [held[index - self._offset :]]
            self._offset = index


class PostnetWindows:
    """Decoder frames in (normalised, before the postnet), exact postnet log-mel frames out.

    Args:
        model: the model whose postnet runs (:meth:`~gst_tts.model.GSTTacotron.postnet_mel`).
        mel_stats: the normalisation undone on the way out.
        text: the chunk's text, for the error message of a non-finite mel.
    """

    def __init__(self, model: GSTTacotron, mel_stats: MelStats, text: str) -> None:
        self.model = model
        self.mel_stats = mel_stats
        self.text = text
        self.context = model.postnet_context
        self.block = max(model.reduction_factor, _POSTNET_BLOCK_FRAMES)
        self._mel = _FrameBuffer()  # (frames, n_mels) decoder frames, on the model's device
        self._emitted = 0

    def push(self, frames: torch.Tensor, *, final: bool) -> torch.Tensor | None:
        """Add one step's ``(r, n_mels)`` frames (``final``: the utterance ended with them); the
        ``(frames, n_mels)`` log-mel (CPU float32, not normalised) that is now exact and not yet
        given, or None while too little is.

        Raises:
            GstTtsError: the mel holds NaN or infinite values (as one-shot synthesis says).
        """
        self._mel.append(frames)
        ready = self._mel.frames if final else self._mel.frames - self.context
        if ready <= self._emitted or (not final and ready - self._emitted < self.block):
            return None
        start = max(0, self._emitted - self.context)
        end = self._mel.frames if final else min(self._mel.frames, ready + self.context)
        mel = self._mel.window(start, end)[None]
        out = self.model.postnet_mel(mel, torch.tensor([end - start], device=mel.device))[0]
        out = out[self._emitted - start : ready - start].float().cpu()
        if not bool(torch.isfinite(out).all()):
            raise GstTtsError(f"decoding gave NaN or infinite mel values for {_quote(self.text)} "
                              "(a style far outside the model's range, or a broken checkpoint)")
        self._emitted = ready
        self._mel.drop_before(max(0, ready - self.context))  # the next window starts there
        return self.mel_stats.denormalize(out)


class VocoderWindows:
    """Exact log-mel frames in, audio chunks out: the vocoder on overlapping windows.

    Frame ``t`` stands for samples ``[t·hop, (t+1)·hop)`` (HiFi-GAN's frame; the centred STFT's
    frame ``t`` is centred on sample ``t·hop``: the same origin), so a window of frames
    ``[s, e)`` gives samples from ``s·hop`` on, and the ones kept are cut at frame boundaries.

    Args:
        vocoder: any ``Vocoder``; Griffin-Lim runs unscaled (:meth:`GriffinLimVocoder.invert`) and
            is scaled here by one gain per utterance that only falls.
        hop_length: samples per frame.
        chunk_frames: frames of audio per chunk (the last may have fewer); the first has a third
            of them (at least 1), so that audio starts sooner: it waits for fewer decoder steps.
        context, crossfade: frames; see :func:`vocoder_overlap` (the crossfade at most ``context - 1``).
    """

    def __init__(self, vocoder: Vocoder, *, hop_length: int, chunk_frames: int, context: int, crossfade: int) -> None:
        if crossfade > max(context - 1, 0):
            raise ValueError(f"a crossfade of {crossfade} frames needs a context of {crossfade + 1}, got {context}")
        self.vocoder = vocoder
        self.hop = hop_length
        self.chunk = chunk_frames
        self.context = context
        self.fade = crossfade * hop_length
        self._mel = _FrameBuffer()
        self._emitted = 0
        self._tail: np.ndarray | None = None  # the last window's samples past its cut, to fade into the next
        self._peak = 0.0  # Griffin-Lim: the loudest unscaled sample so far

    def push(self, log_mel: torch.Tensor | None, *, final: bool) -> list[np.ndarray]:
        """Add ``(frames, n_mels)`` exact log-mel frames (``final``: the last of the utterance, or
        None: no more frames); the chunks of float32 samples that are now ready, in order (none
        while too few frames are)."""
        if log_mel is not None and log_mel.shape[0]:
            self._mel.append(log_mel)
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
        audio = self._vocode(self._mel.window(start, end))
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

    def _vocode(self, log_mel: torch.Tensor) -> np.ndarray:
        if isinstance(self.vocoder, GriffinLimVocoder):
            audio = self.vocoder.invert(log_mel)
            if audio.size:
                self._peak = max(self._peak, float(np.max(np.abs(audio))))
            return audio
        return np.asarray(self.vocoder(log_mel), dtype=np.float32)

    def _scaled(self, piece: np.ndarray) -> np.ndarray:
        if isinstance(self.vocoder, GriffinLimVocoder) and self._peak > 0:
            piece = piece * np.float32(self.vocoder.output_peak / self._peak)
        if not np.isfinite(piece).all():
            raise GstTtsError("the vocoder gave NaN or infinite samples")
        return piece


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def decode_steps(model: GSTTacotron, ids: torch.Tensor, weights: torch.Tensor, bounds: dict[str, Any],
                 lanes: RngLanes, device: torch.device) -> Iterator[tuple[torch.Tensor, bool]]:
    """One chunk's free-running decoding (``ids (symbols,)`` read in token weights ``weights
    (n_heads, n_tokens)``; ``bounds``: ``DecodingConfig.model_arguments``), one step at a time:
    ``(frames (r, n_mels), final)``, the decoder drawing on ``lanes``' ``"decoder"`` lane, so that
    between steps the caller's RNG is back."""
    settings = dict(bounds)
    lengths = {k: settings.pop(k) for k in ("max_frames_per_symbol", "max_frames")}
    with torch.no_grad(), lanes.lane("decoder"):
        style, _ = model.style(style_weights=weights[None].to(device))
        inputs = model.decoder_inputs(ids[None].to(device), torch.tensor([ids.shape[0]], device=device), style, **lengths)
    steps = model.decoder.infer_steps(*inputs, **settings)
    r, n_mels = model.reduction_factor, model.n_mels
    while True:
        with lanes.lane("decoder"):
            step = next(steps, None)
        if step is None:
            return
        yield step.frames.view(r, n_mels), bool(step.done[0])
