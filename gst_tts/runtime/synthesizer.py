"""Text (+ style) → speech from an export folder, with numpy and onnxruntime only (no torch).

:class:`OnnxSynthesizer` is the onnxruntime backend of the synthesis pipeline
(:mod:`gst_tts.inference.pipeline`), as :class:`gst_tts.Synthesizer` is its PyTorch one: the same
``synthesize(texts, styles=…)`` and ``stream`` and the same
:class:`~gst_tts.inference.results.SynthesisResult`. It runs the exported graphs: the reference
and token graphs, the encoder, the free-running loop of :meth:`gst_tts.model.decoder.Decoder.infer`
step for step (stop token, frame bounds, attention window, end tolerance), the postnet, and a
vocoder: Griffin-Lim in numpy, the exported HiFi-GAN, or the exported spectral vocoder's
estimator with its numpy phase reconstruction.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import numpy as np
import soundfile as sf

from gst_tts.analysis.speech_rate import letter_rate_estimate
from gst_tts.audio.stft import fft_threads
from gst_tts.audio.vocoders.phase import warm_up_pghi
from gst_tts.audio.vocoders.reconstruction import spectral_audio
from gst_tts.errors import ExportError, GstTtsError, first_line
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.pipeline import Chunk, StreamParts, SynthesisPipeline
from gst_tts.inference.reference_audio import reference_samples, window_starts
from gst_tts.inference.requests import whole
from gst_tts.inference.results import DecodedChunk
from gst_tts.inference.stream_windows import POSTNET_BLOCK_FRAMES, PostnetWindows, VocoderWindows, stream_overlap
from gst_tts.inference.style_spec import Reference, ReferenceReading, StyleRules
from gst_tts.runtime import audio
from gst_tts.runtime.manifest import FILES, MANIFEST, VOCODER_KINDS, read_manifest
from gst_tts.text.symbols import SymbolTable, quote_text

__all__ = ["OnnxSynthesizer", "DecodedBatch", "DecodedStep", "PrenetMasks"]

#: ``(step, batch) → (mask_0, mask_1)``: the prenet's scaled keep-masks ``(batch, prenet_dim)`` for a step.
PrenetMasks = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


class DecodedBatch(NamedTuple):
    """Free-running outputs of a batch (as :class:`gst_tts.model.tacotron.SynthesisOutput`)."""

    mel_postnet: np.ndarray  # (batch, frames, n_mels) normalised; zero past mel_lengths
    mel_lengths: np.ndarray  # (batch,) steps * r
    stop_probs: np.ndarray  # (batch, steps)
    alignments: np.ndarray  # (batch, steps, symbols)
    steps: np.ndarray  # (batch,)
    stopped_on_token: np.ndarray  # (batch,) bool


class DecodedStep(NamedTuple):
    """One free-running decoder step of a batch (as :class:`gst_tts.model.decoder.DecodedStep`)."""

    frames: np.ndarray  # (batch, r * n_mels) normalised, before the postnet
    stop: np.ndarray  # (batch,) stop logits
    alignment: np.ndarray  # (batch, symbols) attention weights
    steps: np.ndarray  # (batch,) steps of the items that have ended, else 0
    stopped: np.ndarray  # (batch,) bool: ended on the stop token
    done: np.ndarray  # (batch,) bool: ended, on the token or at the step bound


class _Resolver(StyleRules):
    """Styles → ``(n_heads, n_tokens)`` float32 numpy token weights, references through the style graphs."""

    def __init__(self, synth: "OnnxSynthesizer", neutral: Any) -> None:
        self.synth = synth
        self.n_heads = synth.n_heads
        self.n_tokens = synth.n_tokens
        # The export's neutral style (the checkpoint's, uniform for one from before it was stored).
        try:
            self.neutral_weights = np.asarray(neutral, dtype=np.float64)
        except (TypeError, ValueError):
            self.neutral_weights = None
        if (
            self.neutral_weights is None
            or self.neutral_weights.shape != (self.n_heads, self.n_tokens)
            or not np.isfinite(self.neutral_weights).all()
        ):
            raise ExportError(
                f"{synth.folder / MANIFEST}: neutral_style must be {self.n_heads} rows of {self.n_tokens} "
                "finite token weights"
            )
        self.neutral_weights = self.neutral_weights.astype(np.float32)

    def as_weights(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, dtype=np.float32)

    def read_reference(self, reference: Reference, *, f0_range: bool = False, tempo: bool = False) -> ReferenceReading:
        """Token weights and, when asked, the letter rate (no F0 spread: nothing here sets one)."""
        synth = self.synth
        mel = synth.reference_mel(reference)
        rate = None
        if tempo:
            settings = synth.audio_settings
            rate = letter_rate_estimate(
                mel * synth.mel_std + synth.mel_mean,
                settings["hop_length"] / synth.sample_rate,
                fmin=settings["fmin"],
                fmax=settings["fmax"],
            )
        return ReferenceReading(synth.mel_weights(mel), None, rate)


class OnnxSynthesizer(SynthesisPipeline):
    """Batched synthesis from an export folder (``gst-tts export``), torch-free: the onnxruntime
    backend of :class:`~gst_tts.inference.pipeline.SynthesisPipeline` (its ``synthesize``,
    ``stream``, ``frame_bounds`` and ``check_text``). ``seed`` seeds numpy's generator, not torch's:
    the same seed gives other prenet masks than the PyTorch backend; no F0 spread is set.

    Args:
        folder: the export folder.
        vocoder: ``"auto"`` (the exported vocoder when the folder has one, else Griffin-Lim),
            ``"griffin-lim"``, ``"hifigan"`` or ``"spectral"`` (the last two: the exported one,
            which must be of that kind). Default ``"auto"``.
        threads: onnxruntime's intra-op threads, and the numpy vocoders' FFT threads (with scipy);
            None: onnxruntime's default, and every core for the FFTs.

    Raises:
        ExportError: not an export folder, or a graph onnxruntime cannot load.
        GstTtsError: onnxruntime not installed (``pip install 'gst-tts[onnx]'``).
    """

    def __init__(self, folder: str | os.PathLike, *, vocoder: str = "auto", threads: int | None = None) -> None:
        try:
            import onnxruntime
        except ImportError:
            raise GstTtsError("the ONNX runtime needs onnxruntime: pip install 'gst-tts[onnx]'") from None
        self.folder = Path(folder)
        self.manifest = read_manifest(self.folder)
        m = self.manifest
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initialisers are not the user's concern
        if threads is not None:
            options.intra_op_num_threads = int(threads)
        self.threads = int(threads) if threads is not None else os.cpu_count()  # the numpy vocoders' FFTs

        def session(name: str):
            try:
                return onnxruntime.InferenceSession(
                    str(self.folder / name), options, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:  # onnxruntime raises its own exception types for a bad graph
                raise ExportError(f"{self.folder / name}: onnxruntime cannot load it ({first_line(exc)})") from None

        self._sessions = {role: session(m["files"][role]) for role in FILES if role != "mel_filters"}
        if vocoder not in ("auto", "griffin-lim", *VOCODER_KINDS):
            raise GstTtsError(f"vocoder must be auto, griffin-lim, {' or '.join(VOCODER_KINDS)}, got {vocoder!r}")
        exported = m.get("vocoder") if m["files"].get("vocoder") is not None else None
        if vocoder in VOCODER_KINDS and (exported or {}).get("kind") != vocoder:
            found = f"with a {exported['kind']} vocoder" if exported else "without a vocoder"
            raise ExportError(f"{self.folder}: exported {found}, not {vocoder} (gst-tts export --vocoder)")
        #: The exported vocoder's ``model.json`` entry (``kind`` and settings), or None: Griffin-Lim.
        self.vocoder = exported if vocoder != "griffin-lim" else None
        self._vocoder = session(m["files"]["vocoder"]) if self.vocoder is not None else None
        if self.vocoder is not None and self.vocoder["kind"] == "spectral":
            warm_up_pghi()  # numba's PGHI kernel compiled (or loaded) now, not in the first sentence
        self.filters = np.load(self.folder / m["files"]["mel_filters"], allow_pickle=False).astype(np.float32)
        self.audio_settings = dict(m["audio"])
        self.symbols = SymbolTable.from_dict(m["symbols"])
        self.mel_mean = np.asarray(m["mel_stats"]["mean"], dtype=np.float32)
        self.mel_std = np.asarray(m["mel_stats"]["std"], dtype=np.float32)
        self.reduction_factor = int(m["reduction_factor"])
        self.n_mels = int(m["n_mels"])
        self.n_heads = int(m["n_heads"])
        self.n_tokens = int(m["n_tokens"])
        self.reference_window = m["reference_frames"]
        #: The export's decoding defaults (``DecodingConfig``'s when it was exported).
        self.decoding = DecodingConfig.from_dict(m["decoding"])
        self.styles = _Resolver(self, m["neutral_style"])
        self._step_inputs = {i.name for i in self._sessions["decoder_step"].get_inputs()}
        self.set_text(self.symbols.encode_ids)

    @classmethod
    def from_dir(
        cls, folder: str | os.PathLike, *, vocoder: str = "auto", threads: int | None = None
    ) -> "OnnxSynthesizer":
        """An :class:`OnnxSynthesizer` of the export folder ``folder`` (see the class)."""
        return cls(folder, vocoder=vocoder, threads=threads)

    @property
    def sample_rate(self) -> int:
        return int(self.audio_settings["sample_rate"])

    # ------------------------------------------------------------------ styles

    def reference_mel(self, reference: Reference) -> np.ndarray:
        """Normalised ``(frames, n_mels)`` mel of a reference (a path, or ``(samples, rate)``), as
        :meth:`gst_tts.inference.style.StyleResolver.reference_mel` makes it.

        Raises:
            AudioError: as the torch path's (missing, unreadable, silent, too short, past the limits).
        """
        settings = self.audio_settings
        samples = reference_samples(
            reference,
            rate=self.sample_rate,
            read_file=lambda path: sf.read(path, dtype="float32", always_2d=False),
            mono=lambda samples, rate: _mono(np.asarray(samples, dtype=np.float32)),
            resample=lambda samples, rate, name: audio.resample(samples, int(rate), self.sample_rate),
            trim=lambda samples: audio.trim_silence(samples, settings["trim_top_db"]),
        )
        mel = audio.log_mel(
            samples,
            filters=self.filters,
            n_fft=settings["n_fft"],
            hop_length=settings["hop_length"],
            win_length=settings["win_length"],
        )
        return (mel - self.mel_mean) / self.mel_std

    def mel_weights(self, mel: np.ndarray) -> np.ndarray:
        """``(n_heads, n_tokens)`` token weights of a reference's normalised mel; one longer than
        the export's ``reference_frames`` is encoded in half-overlapping windows whose embeddings
        are averaged (:meth:`gst_tts.inference.style.StyleResolver.read_reference`)."""
        windows = self.reference_windows(mel)
        lengths = np.full(windows.shape[0], windows.shape[1], dtype=np.int64)
        embedding, weights, _ = self._sessions["style_reference"].run(
            None, {"reference_mel": windows, "reference_lengths": lengths}
        )
        if windows.shape[0] == 1:
            return weights[0]
        weights, _ = self._sessions["style_tokens"].run(None, {"embedding": embedding.mean(0, keepdims=True)})
        return weights[0]

    def reference_windows(self, mel: np.ndarray) -> np.ndarray:
        """``(frames, n_mels)`` → ``(n_windows, window, n_mels)`` float32 (one window: the whole mel)."""
        window, frames = self.reference_window, mel.shape[0]
        if window is None or frames <= window:
            return mel[None].astype(np.float32)
        return np.stack([mel[s : s + window] for s in window_starts(frames, window)]).astype(np.float32)

    # ------------------------------------------------------------------ synthesis

    @property
    def hop_length(self) -> int:
        return int(self.audio_settings["hop_length"])

    @property
    def frames_per_step(self) -> int:
        return self.reduction_factor

    f0_range_keeper = "the torch-free runtime"

    def check_seed(self, seed: int | None) -> None:
        if seed is not None and (not whole(seed) or seed < 0):
            raise GstTtsError(f"seed must be a whole number >= 0 (numpy's generator), or None, got {seed!r}")

    @contextlib.contextmanager
    def seeded(self, seed: int | None) -> Iterator[np.random.Generator]:
        """numpy's generator from ``seed``, for the prenet dropout and Griffin-Lim's initial phase
        (not torch's: the same seed gives other masks than the PyTorch backend)."""
        yield np.random.default_rng(seed)

    def decode_batch(
        self, chunks: Sequence[Chunk], decoding: DecodingConfig, rng: np.random.Generator
    ) -> list[DecodedChunk]:
        lengths = np.array([len(c.ids) for c in chunks], dtype=np.int64)
        text = np.zeros((len(chunks), int(lengths.max())), dtype=np.int64)  # pad id 0
        for row, c in enumerate(chunks):
            text[row, : lengths[row]] = c.ids
        style = np.stack([c.weights for c in chunks]).astype(np.float32)
        result = self.decode(text, lengths, style, decoding=decoding, prenet_masks=self.prenet_masks(rng))
        out = []
        for row, c in enumerate(chunks):
            frames, steps = int(result.mel_lengths[row]), int(result.steps[row])
            mel = result.mel_postnet[row, :frames]
            if not np.isfinite(mel).all():
                raise GstTtsError(
                    f"decoding gave NaN or infinite mel values for {quote_text(c.text)} "
                    "(a style far outside the model's range, or a broken export)"
                )
            out.append(
                DecodedChunk(
                    c.text,
                    c.ids,
                    mel * self.mel_std + self.mel_mean,
                    result.alignments[row, :steps, : lengths[row]],
                    result.stop_probs[row, :steps],
                    bool(result.stopped_on_token[row]),
                )
            )
        return out

    def vocode_chunk(self, log_mel: np.ndarray, f0_target: None, rng: np.random.Generator) -> np.ndarray:
        return self.vocode(log_mel, rng)

    def prenet_masks(self, rng: np.random.Generator) -> PrenetMasks:
        """The prenet's dropout at inference (when the model keeps it on), drawn from ``rng``."""
        p = float(self.manifest["prenet_dropout"])
        dim = int(self.manifest["prenet_dim"])
        on = bool(self.manifest["prenet_dropout_at_inference"]) and p > 0

        def masks(step: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
            if not on:
                ones = np.ones((batch, dim), dtype=np.float32)
                return ones, ones
            keep = rng.random((2, batch, dim)) >= p
            scaled = (keep / (1 - p)).astype(np.float32)
            return scaled[0], scaled[1]

        return masks

    def style_embedding(self, weights: np.ndarray) -> np.ndarray:
        """``(batch, n_heads, n_tokens)`` token weights → ``(batch, token_dim)`` style embeddings."""
        return self._sessions["style_weights"].run(None, {"token_weights": np.asarray(weights, dtype=np.float32)})[0]

    def decode(
        self,
        text: np.ndarray,
        lengths: np.ndarray,
        weights: np.ndarray,
        *,
        decoding: DecodingConfig,
        prenet_masks: PrenetMasks,
    ) -> DecodedBatch:
        """Free-running decoding of a batch, :meth:`gst_tts.model.tacotron.GSTTacotron.infer` step for step.

        Args:
            text: ``(batch, symbols)`` int64 ids, padded with 0; lengths ``(batch,)``.
            weights: ``(batch, n_heads, n_tokens)`` token weights.
            decoding: stop threshold and bounds.
            prenet_masks: the prenet's keep-masks per step (the parity tests give the torch path's).
        """
        batch, r, n_mels = text.shape[0], self.reduction_factor, self.n_mels
        steps = list(self.decode_steps(text, lengths, weights, decoding=decoding, prenet_masks=prenet_masks))
        last = steps[-1]
        mel = np.stack([s.frames for s in steps], 1).reshape(batch, len(steps) * r, n_mels)
        mel_lengths = last.steps * r
        mel_postnet = self._sessions["postnet"].run(None, {"mel": mel, "mel_lengths": mel_lengths})[0]
        return DecodedBatch(
            mel_postnet,
            mel_lengths,
            _sigmoid(np.stack([s.stop for s in steps], 1)),
            np.stack([s.alignment for s in steps], 1),
            last.steps,
            last.stopped,
        )

    def decode_steps(
        self,
        text: np.ndarray,
        lengths: np.ndarray,
        weights: np.ndarray,
        *,
        decoding: DecodingConfig,
        prenet_masks: PrenetMasks,
    ) -> Iterator[DecodedStep]:
        """:meth:`decode`'s loop one step at a time (:meth:`gst_tts.model.decoder.Decoder.infer_steps`):
        a :class:`DecodedStep` as each step completes, until every item has ended on its stop
        token or at its step bound; :meth:`decode` stacks them, :meth:`stream` reads them as they come.
        The arguments are :meth:`decode`'s."""
        m = self.manifest
        r, n_mels = self.reduction_factor, self.n_mels
        batch, symbols = text.shape
        encoder_out = self._sessions["encoder"].run(
            None,
            {
                "text": text.astype(np.int64),
                "text_lengths": lengths.astype(np.int64),
                "style": self.style_embedding(weights),
            },
        )
        memory = encoder_out[0]
        n_prepared = len(m["step_graph"]["prepared"])
        per_utterance = dict(zip(m["step_graph"]["prepared"], encoder_out[1 : 1 + n_prepared]))
        attention_state = list(encoder_out[1 + n_prepared :])
        zeros = np.zeros
        state = {
            "attention_hidden": zeros((batch, m["attention_rnn_dim"]), np.float32),
            "attention_cell": zeros((batch, m["attention_rnn_dim"]), np.float32),
            "decoder_hidden": zeros((batch, m["decoder_rnn_dim"]), np.float32),
            "decoder_cell": zeros((batch, m["decoder_rnn_dim"]), np.float32),
            "attention_weights": zeros((batch, symbols), np.float32),
            "context": zeros((batch, m["memory_dim"]), np.float32),
        }
        padding = np.arange(symbols)[None, :] >= lengths[:, None]
        fps = self.sample_rate / self.audio_settings["hop_length"]
        bounds = decoding.model_arguments(frames_per_second=fps)
        max_steps = np.array(
            [decoding.chunk_frames(int(n), frames_per_second=fps, frames_per_step=r) // r for n in lengths],
            dtype=np.int64,
        )  # GSTTacotron.step_bounds
        window, tolerance = bounds["attention_window"], bounds["stop_end_tolerance"]
        step_ones = (
            np.ones((batch, m["attention_rnn_dim"]), np.float32),
            np.ones((batch, m["decoder_rnn_dim"]), np.float32),
        )
        positions = np.arange(symbols)[None, :]
        peak = np.zeros((batch, 1), dtype=np.int64)
        frame = zeros((batch, n_mels), np.float32)
        done = np.zeros(batch, dtype=bool)
        stopped = np.zeros(batch, dtype=bool)
        near_end = np.full(batch, tolerance is None)
        steps = np.zeros(batch, dtype=np.int64)
        session = self._sessions["decoder_step"]
        for s in range(int(max_steps.max())):
            mask = padding
            if window is not None:
                mask = (positions < peak - window[0]) | (positions > peak + window[1]) | padding
            prenet_0, prenet_1 = prenet_masks(s, batch)
            feeds = {
                "frame": frame,
                "prenet_mask_0": prenet_0,
                "prenet_mask_1": prenet_1,
                "attention_mask": step_ones[0],
                "decoder_mask": step_ones[1],
                "memory": memory,
                "padding_mask": mask,
                **state,
                **per_utterance,
                **{f"attention_state_{i}": a for i, a in enumerate(attention_state)},
            }
            out = session.run(None, {k: v for k, v in feeds.items() if k in self._step_inputs})
            frames, stop = out[0], out[1]
            state = dict(
                zip(
                    (
                        "attention_hidden",
                        "attention_cell",
                        "decoder_hidden",
                        "decoder_cell",
                        "attention_weights",
                        "context",
                    ),
                    out[2:8],
                )
            )
            attention_state = list(out[8:])
            peak = state["attention_weights"].argmax(-1)[:, None]
            if tolerance is not None:
                near_end |= peak[:, 0] >= lengths - 1 - tolerance
            frame = frames.reshape(batch, r, n_mels)[:, -1]
            on_token = ~done & near_end & (_sigmoid(stop) > bounds["stop_threshold"])
            at_bound = ~done & ~on_token & (max_steps <= s + 1)
            stopped |= on_token
            steps = np.where(on_token | at_bound, s + 1, steps)
            done |= on_token | at_bound
            yield DecodedStep(frames, stop, state["attention_weights"], steps.copy(), stopped.copy(), done.copy())
            if done.all():
                return

    # ------------------------------------------------------------------ streaming

    def stream_parts(self, seed: int | None, decoding: DecodingConfig, chunk_frames: int) -> StreamParts:
        """The exported graphs' half of a stream: the prenet masks drawn in one-shot synthesis's
        order from ``numpy.random.default_rng(seed)``; the postnet graph on windows with its whole
        reach; the vocoder as :meth:`_vocoder_windows` says.

        Raises:
            ExportError: an export from before streaming (no ``postnet_context`` in its manifest).
        """
        context = self.manifest.get("postnet_context")
        if not whole(context):
            raise ExportError(
                f"{self.folder}: exported before streaming (no postnet_context in its manifest): export it again"
            )
        masks = self.prenet_masks(np.random.default_rng(seed))  # the decoder's own generator, as synthesize's
        vocoder_rng = np.random.default_rng(seed)  # Griffin-Lim's phases: never between the masks

        def mel_blocks(chunk: Chunk) -> Iterator[tuple[np.ndarray | None, bool]]:
            steps = self.decode_steps(
                np.asarray([chunk.ids], dtype=np.int64),
                np.asarray([len(chunk.ids)], dtype=np.int64),
                np.asarray(chunk.weights)[None],
                decoding=decoding,
                prenet_masks=masks,
            )
            windows = PostnetWindows(
                self._postnet_window,
                context=context,
                text=chunk.text,
                block=max(self.reduction_factor, POSTNET_BLOCK_FRAMES),
            )
            r_frames = (self.reduction_factor, self.n_mels)
            yield from windows.blocks((step.frames.reshape(r_frames), bool(step.done[0])) for step in steps)

        return StreamParts(mel_blocks, lambda: self._vocoder_windows(chunk_frames, vocoder_rng))

    def _postnet_window(self, mel: np.ndarray) -> np.ndarray:
        """``(frames, n_mels)`` normalised decoder frames → their postnet log-mel, not normalised."""
        out = self._sessions["postnet"].run(
            None, {"mel": mel[None], "mel_lengths": np.asarray([mel.shape[0]], dtype=np.int64)}
        )[0]
        return out[0] * self.mel_std + self.mel_mean

    def _vocoder_windows(self, chunk_frames: int, rng: np.random.Generator) -> VocoderWindows:
        """The stream's vocoder windows: Griffin-Lim unscaled and crossfaded; an exported vocoder
        with the reach its manifest records (crossfaded where it records none)."""
        hop = int(self.audio_settings["hop_length"])
        if self._vocoder is None:
            s = self.audio_settings
            context, crossfade = stream_overlap(None)
            return VocoderWindows(
                lambda log_mel: audio.griffin_lim(
                    log_mel,
                    filters=self.filters,
                    n_fft=s["n_fft"],
                    hop_length=hop,
                    win_length=s["win_length"],
                    rng=rng,
                    peak=None,
                ),
                hop_length=hop,
                chunk_frames=chunk_frames,
                context=context,
                crossfade=crossfade,
                output_peak=audio.GRIFFIN_LIM_PEAK,
            )
        context, crossfade = stream_overlap(self.manifest.get("vocoder_reach_frames"))
        return VocoderWindows(
            lambda log_mel: self.vocode(log_mel, rng),
            hop_length=hop,
            chunk_frames=chunk_frames,
            context=context,
            crossfade=crossfade,
        )

    def vocode(self, log_mel: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """``(frames, n_mels)`` log-mel (not normalised) → float32 samples: the exported vocoder
        (HiFi-GAN, or the spectral vocoder's estimator and its numpy phase reconstruction), else
        Griffin-Lim in numpy."""
        with fft_threads(self.threads):
            return self._vocode(log_mel, rng)

    def _vocode(self, log_mel: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
        s = self.audio_settings
        if self.vocoder is not None and self.vocoder["kind"] == "spectral":
            # The PyTorch SpectralVocoder's own numpy half (torch-free), on the exported estimator's outputs.
            out = self._vocoder.run(None, {"log_mel": log_mel[None].astype(np.float32)})
            settings = {k: self.vocoder[k] for k in ("magnitude_power", "n_iter", "momentum")}
            return spectral_audio(
                out[0][0],
                out[1][0] if self.vocoder["pitch_head"] else None,
                sample_rate=s["sample_rate"],
                n_fft=s["n_fft"],
                hop_length=s["hop_length"],
                win_length=s["win_length"],
                **settings,
            )
        if self._vocoder is not None:
            return self._vocoder.run(None, {"log_mel": log_mel.T[None].astype(np.float32)})[0].reshape(-1)
        return audio.griffin_lim(
            log_mel,
            filters=self.filters,
            n_fft=s["n_fft"],
            hop_length=s["hop_length"],
            win_length=s["win_length"],
            rng=rng,
        )


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x.astype(np.float32)))


def _mono(samples: np.ndarray) -> np.ndarray:
    return samples.mean(axis=1) if samples.ndim == 2 else samples
