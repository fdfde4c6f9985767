"""Streaming synthesis: audio chunks as the decoder's steps complete (``Synthesizer.stream``).

The decoder runs step by step (``Decoder.infer_steps``, the loop one-shot synthesis runs too). Its
frames go through the postnet and the vocoder on overlapping windows, whose arithmetic is the
torch-free :mod:`gst_tts.inference.stream_windows` (the ONNX runtime's ``OnnxSynthesizer.stream``
runs the same); this module gives it the model's postnet and the torch vocoders:

* the postnet (a stack of convolutions) gives a frame exactly what the whole mel gives it once
  :attr:`~gst_tts.model.GSTTacotron.postnet_context` frames stand on each side of it in the window
  (or the utterance starts or ends there), so
  :class:`~gst_tts.inference.stream_windows.PostnetWindows` hands on a frame only when that many
  frames after it are decoded: the streamed postnet mel *is* the one-shot mel;
* the vocoder runs on windows of that mel with :func:`vocoder_windows`' context on each side, and
  only the samples of the window's middle frames are kept
  (:class:`~gst_tts.inference.stream_windows.VocoderWindows`). HiFi-GAN's context is its whole reach
  (``HiFiGANGenerator.reach_frames``), so its kept samples are the whole mel's up to float rounding.
  Griffin-Lim and the spectral vocoder build one phase for the whole input (random start, PGHI's
  integration, iterations over all frames), so a window's phase is its own: adjacent windows are
  crossfaded, and the joined audio is not the one-shot audio sample for sample (same spectrum, other
  phase). Griffin-Lim scales every output to one peak; a stream cannot know the utterance's peak in
  advance, so it scales by the loudest window so far (a chunk may come out louder than the one-shot
  audio's level, never clipped).

Tolerances, measured (``tests/inference/test_streaming.py``; CPU float32): the joined postnet mel
equals the one-shot mel within 1e-5 (measured: 0, bit for bit); with a HiFi-GAN vocoder the joined
audio equals the one-shot audio within :data:`HIFIGAN_STREAM_TOLERANCE`, 1e-5 (measured: 6e-8 on
a random generator of peak 0.14, whose reach is 14 frames; on a random mel 7 frames of context give
2e-4, 2 give 0.03). On a GPU, convolutions of other lengths may pick other kernels (TF32 included),
so expect more there.

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
from gst_tts.inference.stream_windows import POSTNET_BLOCK_FRAMES, PostnetWindows, VocoderWindows, stream_overlap
from gst_tts.model import GSTTacotron

__all__ = ["HIFIGAN_STREAM_TOLERANCE", "RngLanes", "decode_steps", "postnet_windows", "vocoder_windows"]

#: Largest sample difference between HiFi-GAN's streamed and one-shot audio that the tests allow.
HIFIGAN_STREAM_TOLERANCE = 1e-5


def postnet_windows(model: GSTTacotron, mel_stats: MelStats, text: str) -> PostnetWindows:
    """:class:`PostnetWindows` of ``model``'s postnet (:meth:`~gst_tts.model.GSTTacotron.postnet_mel`,
    on the model's device; ``mel_stats`` undone on the way out) for the chunk ``text``."""

    def postnet(mel: torch.Tensor) -> np.ndarray:
        out = model.postnet_mel(mel[None], torch.tensor([mel.shape[0]], device=mel.device))[0]
        return mel_stats.denormalize(out.float().cpu()).numpy()

    return PostnetWindows(
        postnet,
        context=model.postnet_context,
        block=max(model.reduction_factor, POSTNET_BLOCK_FRAMES),
        text=text,
        concat=torch.cat,
    )


def vocoder_windows(vocoder: Vocoder, *, hop_length: int, chunk_frames: int) -> VocoderWindows:
    """:class:`VocoderWindows` of a torch-path vocoder: HiFi-GAN with its whole reach
    (``HiFiGANGenerator.reach_frames``), no crossfade; any other crossfaded
    (:func:`~gst_tts.inference.stream_windows.stream_overlap`); Griffin-Lim unscaled
    (:meth:`GriffinLimVocoder.invert`), scaled there by one gain per utterance that only falls."""
    reach = vocoder.generator.reach_frames if isinstance(vocoder, HiFiGANVocoder) else None
    context, crossfade = stream_overlap(reach)
    if isinstance(vocoder, GriffinLimVocoder):
        return VocoderWindows(
            vocoder.invert,
            hop_length=hop_length,
            chunk_frames=chunk_frames,
            context=context,
            crossfade=crossfade,
            output_peak=vocoder.output_peak,
        )
    return VocoderWindows(
        vocoder, hop_length=hop_length, chunk_frames=chunk_frames, context=context, crossfade=crossfade
    )


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


def decode_steps(
    model: GSTTacotron,
    ids: torch.Tensor,
    weights: torch.Tensor,
    bounds: dict[str, Any],
    lanes: RngLanes,
    device: torch.device,
) -> Iterator[tuple[torch.Tensor, bool]]:
    """One chunk's free-running decoding (``ids (symbols,)`` read in token weights ``weights
    (n_heads, n_tokens)``; ``bounds``: ``DecodingConfig.model_arguments``), one step at a time:
    ``(frames (r, n_mels), final)``, the decoder drawing on ``lanes``' ``"decoder"`` lane, so that
    between steps the caller's RNG is back."""
    settings = dict(bounds)
    lengths = {k: settings.pop(k) for k in ("max_frames_per_symbol", "max_frames")}
    with torch.no_grad(), lanes.lane("decoder"):
        style, _ = model.style(style_weights=weights[None].to(device))
        inputs = model.decoder_inputs(
            ids[None].to(device), torch.tensor([ids.shape[0]], device=device), style, **lengths
        )
    steps = model.decoder.infer_steps(*inputs, **settings)
    r, n_mels = model.reduction_factor, model.n_mels
    while True:
        with lanes.lane("decoder"):
            step = next(steps, None)
        if step is None:
            return
        yield step.frames.view(r, n_mels), bool(step.done[0])
