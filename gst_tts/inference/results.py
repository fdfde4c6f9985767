"""What a synthesis returns: the waveform and mel with their alignment, stop and style reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Sequence

import numpy as np

from gst_tts.analysis.alignment import AlignmentHealth
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.retiming import retimed


class DecodedChunk(NamedTuple):
    """One decoded chunk of a text, on the CPU."""

    text: str  # cleaned
    ids: Sequence[int]  # (symbols,) eos included
    log_mel: np.ndarray  # (frames, n_mels) float32, not normalised
    alignment: np.ndarray  # (steps, symbols)
    stop_probs: np.ndarray  # (steps,)
    stopped_on_token: bool
    decoded_frames: int | None = None  # frames as decoded when log_mel was retimed (gst_tts.inference.tempo)
    tempo_gain: float = 1.0  # how much faster than decoded log_mel was made


@dataclass
class ChunkReport:
    """How one chunk of a (long) text was decoded."""

    text: str  # cleaned text of the chunk
    n_frames: int  # mel frames (after any retiming to a reference's tempo)
    stop_reason: str  # "stop_token" or "max_steps"
    health: AlignmentHealth
    decoded_frames: int | None = None  # mel frames as decoded; None: n_frames (not retimed)
    tempo_gain: float = 1.0  # how much faster than decoded the chunk was made (gst_tts.inference.tempo)

    def problems(self) -> list[str]:
        """Alignment problems, plus "hit the step bound" when it did not stop on its token."""
        return self.health.problems() + ([] if self.stop_reason == "stop_token" else ["hit the step bound"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "n_frames": self.n_frames,
            "decoded_frames": self.n_frames if self.decoded_frames is None else self.decoded_frames,
            "tempo_gain": round(self.tempo_gain, 4),
            "stop_reason": self.stop_reason,
            "health": _health_dict(self.health),
        }


@dataclass
class SynthesisResult:
    """One synthesized utterance.

    For a text split into several chunks, ``mel``, ``alignment`` and ``stop_probs`` are the
    chunks' outputs concatenated in time (the alignment is block-diagonal: chunk ``k``'s decoder
    steps attend to chunk ``k``'s symbols only); ``audio`` also holds the pauses between chunks.
    """

    text: str
    cleaned_text: str
    audio: np.ndarray  # (n_samples,) float32; empty when synthesized with vocode=False
    sample_rate: int
    mel: np.ndarray  # (frames, n_mels) log-mel (not normalised)
    alignment: np.ndarray  # (decoder_steps, input_symbols), eos of every chunk included
    stop_probs: np.ndarray  # (decoder_steps,)
    stop_reason: str  # "stop_token" or "max_steps" (any chunk on its bound)
    style_weights: np.ndarray | None  # (n_heads, n_tokens)
    health: AlignmentHealth  # of the whole alignment
    input_labels: list[str] = field(default_factory=list)  # (input_symbols,)
    chunks: list[ChunkReport] = field(default_factory=list)  # one per chunk, in reading order
    hop_length: int = 256  # samples per mel frame
    frames_per_step: int = 1  # mel frames per decoder step (reduction factor)
    decoding: DecodingConfig = field(default_factory=DecodingConfig)  # the stop threshold and bounds it ran with

    @property
    def n_frames(self) -> int:
        return int(self.mel.shape[0])

    @property
    def duration_s(self) -> float:
        """Audio length; from the mel length when the audio was not made."""
        if self.audio.size:
            return len(self.audio) / self.sample_rate
        return self.n_frames * self.hop_length / self.sample_rate

    @property
    def seconds_per_step(self) -> float:
        """Duration of one decoder step (one alignment row)."""
        return self.hop_length * self.frames_per_step / self.sample_rate

    @property
    def stopped_on_bound(self) -> bool:
        return self.stop_reason != "stop_token"

    def problems(self) -> list[str]:
        """Attention problems (skipped, repeated, did not reach the end, low focus, hit the step
        bound), per chunk ("chunk 2/5: ...") when the text was split; empty when healthy."""
        if len(self.chunks) > 1:
            n = len(self.chunks)
            return [f"chunk {k}/{n}: {', '.join(c.problems())}" for k, c in enumerate(self.chunks, 1) if c.problems()]
        return self.health.problems() + (["hit the step bound"] if self.stopped_on_bound else [])

    @property
    def ok(self) -> bool:
        return not self.problems()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no arrays besides the small style weights)."""
        return {
            "text": self.text,
            "cleaned_text": self.cleaned_text,
            "sample_rate": self.sample_rate,
            "n_frames": self.n_frames,
            "duration_s": round(self.duration_s, 4),
            "stop_reason": self.stop_reason,
            "style_weights": None
            if self.style_weights is None
            else np.round(self.style_weights.astype(float), 6).tolist(),
            "health": _health_dict(self.health),
            "problems": self.problems(),
            "chunks": [c.to_dict() for c in self.chunks],
            "decoder_steps": int(self.alignment.shape[0]),
            "seconds_per_step": self.seconds_per_step,
            "frames_per_step": self.frames_per_step,
            "decoding": self.decoding.to_dict(),
            # Every symbol is one character, so the labels fit in one string.
            "input_symbols": "".join(self.input_labels),
        }

    def figure(self, title: str = ""):
        """Attention map (symbols labelled, time in seconds), stop-token curve and mel; a mel
        retimed to a reference's tempo is drawn at the decoder's tempo, on the attention's time axis."""
        from gst_tts.analysis.plots import plot_inspection  # matplotlib only when plotting

        mel = self.mel
        if any(c.decoded_frames is not None and c.decoded_frames != c.n_frames for c in self.chunks):
            pieces, start = [], 0
            for c in self.chunks:
                decoded = c.n_frames if c.decoded_frames is None else c.decoded_frames
                pieces.append(retimed(self.mel[start : start + c.n_frames], c.n_frames / decoded))
                start += c.n_frames
            mel = np.concatenate(pieces)
            gains = sorted({round(c.tempo_gain, 2) for c in self.chunks})
            shown = "/".join(f"{g:g}" for g in gains)
            title = f"{title}{' ' if title else ''}(mel at the decoder's tempo; audio ×{shown} faster)"
        return plot_inspection(
            self.alignment,
            mel,
            self.stop_probs,
            input_labels=self.input_labels or None,
            hop_seconds=self.seconds_per_step,
            frames_per_step=self.frames_per_step,
            title=title,
            health=self.health,
            stop_threshold=self.decoding.stop_threshold,
        )


def _health_dict(health: AlignmentHealth) -> dict[str, Any]:
    return {
        **health.to_dict(),
        "focus": round(health.focus, 4),
        "coverage": round(health.coverage, 4),
        "verdict": health.verdict,
    }
