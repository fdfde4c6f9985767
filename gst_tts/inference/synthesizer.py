"""Text (+ style) → speech from a trained checkpoint: the PyTorch backend of the synthesis pipeline.

The pipeline (:mod:`gst_tts.inference.pipeline`) prepares texts, resolves styles
(:mod:`gst_tts.inference.style`), batches chunks and assembles results; :class:`Synthesizer` runs
the model and the vocoder for it. The limits on a text and a pause (:data:`MAX_TEXT_CHARS`,
:data:`MAX_CLEANED_CHARS`, :data:`MAX_PAUSE_S`) live in the torch-free
:mod:`gst_tts.inference.requests` and are re-exported here.

Every synthesis is bounded: a text holds at most :data:`MAX_TEXT_CHARS` characters as given and
:data:`MAX_CLEANED_CHARS` once numbers and abbreviations are spelled out (a ``TextError`` past
either), so cleaning, the number of chunks and, with
:class:`~gst_tts.inference.decoding.DecodingConfig`'s per-chunk length bounds, the frames decoded are
bounded too. A decoding that still ends in NaN or infinite values (a model pushed off its range)
is a ``GstTtsError``, never a silent NaN waveform.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator, Sequence

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.audio.vocoders import Vocoder, load_vocoder
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.checkpoints.acoustic import checkpoint_parts, load_checkpoint, model_from_checkpoint, stored_neutral_style
from gst_tts.compute import resolve_device
from gst_tts.errors import CheckpointError, GstTtsError, first_line
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.pipeline import Chunk, StreamParts, SynthesisPipeline
from gst_tts.inference.requests import DEFAULT_PAUSE_S, MAX_CLEANED_CHARS, MAX_PAUSE_S, MAX_TEXT_CHARS, whole
from gst_tts.inference.results import ChunkReport, DecodedChunk, SynthesisResult
from gst_tts.inference.stream_windows import DEFAULT_CHUNK_FRAMES
from gst_tts.inference.streaming import RngLanes, decode_steps, postnet_windows, vocoder_windows
from gst_tts.inference.style import Style, StyleResolver
from gst_tts.inference.style_spec import F0Target
from gst_tts.model import GSTTacotron
from gst_tts.model.int8_weight import has_quantized_engine
from gst_tts.text.split import DEFAULT_MAX_CHARS
from gst_tts.text.symbols import SymbolTable, quote_text

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

#: Seeds torch accepts: a signed or unsigned 64-bit number.
SEED_RANGE = (-(2**63), 2**64 - 1)


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


class Synthesizer(SynthesisPipeline):
    """Batched synthesis with a reference recording, token weights, a mix, or the neutral style:
    the PyTorch backend of :class:`~gst_tts.inference.pipeline.SynthesisPipeline` (its
    ``synthesize``, ``stream``, ``frame_bounds`` and ``check_text``).

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
        self.decoding = DecodingConfig()
        self.set_text(symbols.encode)

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

    # ------------------------------------------------------------------ the pipeline's backend

    @property
    def hop_length(self) -> int:
        return self.audio_config.hop_length

    @property
    def frames_per_step(self) -> int:
        return self.model.reduction_factor

    @property
    def transfers_f0_range(self) -> bool:
        """Whether the vocoder can set a reference's F0 spread (the spectral vocoder with a pitch head)."""
        return bool(getattr(self.vocoder, "sets_f0_range", False))

    @property
    def f0_range_keeper(self) -> str:
        return f"the vocoder ({type(self.vocoder).__name__})"

    def check_seed(self, seed: int | None) -> None:
        if seed is not None and (not whole(seed) or not SEED_RANGE[0] <= seed <= SEED_RANGE[1]):
            raise GstTtsError(
                f"seed must be a whole number from {SEED_RANGE[0]} to {SEED_RANGE[1]} (or None), got {seed!r}"
            )

    @contextlib.contextmanager
    def seeded(self, seed: int | None) -> Iterator[None]:
        """Torch's RNGs seeded for the block (prenet dropout and Griffin-Lim's initial phase are
        random), the caller's RNG state restored afterwards; no autograd."""
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.no_grad(), torch.random.fork_rng(devices=devices, enabled=seed is not None):
            if seed is not None:
                torch.manual_seed(int(seed))
            yield None

    def decode_batch(self, chunks: Sequence[Chunk], decoding: DecodingConfig, rng: None) -> list[DecodedChunk]:
        lengths = torch.tensor([len(c.ids) for c in chunks])
        text = torch.full((len(chunks), int(lengths.max())), self.symbols.pad_id, dtype=torch.long)
        for row, c in enumerate(chunks):
            text[row, : len(c.ids)] = c.ids
        style = torch.stack([c.weights for c in chunks]).to(self.device)
        result = self.model.infer(
            text.to(self.device), lengths.to(self.device), style_weights=style, **self._bounds(decoding)
        )
        # One transfer per tensor, then cheap per-row slicing on the CPU.
        mel = result.mel_postnet.float().cpu()
        frames = result.mel_lengths.cpu().tolist()
        for row, c in enumerate(chunks):
            if not bool(torch.isfinite(mel[row, : frames[row]]).all()):
                raise GstTtsError(
                    f"decoding gave NaN or infinite mel values for {quote_text(c.text)} "
                    "(a style far outside the model's range, or a broken checkpoint)"
                )
        alignments = result.alignments.float().cpu().numpy()
        stop_probs = result.stop_probs.float().cpu().numpy()
        steps, stopped = result.steps.cpu().tolist(), result.stopped_on_token.cpu().tolist()
        return [
            DecodedChunk(
                text=c.text,
                ids=c.ids,
                log_mel=self.mel_stats.denormalize(mel[row, : frames[row]]).numpy(),
                alignment=np.ascontiguousarray(alignments[row, : steps[row], : int(lengths[row])]),
                stop_probs=np.ascontiguousarray(stop_probs[row, : steps[row]]),
                stopped_on_token=bool(stopped[row]),
            )
            for row, c in enumerate(chunks)
        ]

    def vocode_chunk(self, log_mel: np.ndarray, f0_target: F0Target | None, rng: None) -> np.ndarray:
        if f0_target is None:
            return self.vocoder(torch.from_numpy(log_mel))
        return self.vocoder(
            torch.from_numpy(log_mel), f0_range_st=f0_target.semitones, f0_range_strength=f0_target.strength
        )

    def weights_array(self, weights: torch.Tensor) -> np.ndarray:
        return weights.float().cpu().numpy()

    def stream_parts(self, seed: int | None, decoding: DecodingConfig, chunk_frames: int) -> StreamParts:
        # The decoder and the vocoder each on their own lane, never across a yield: the caller's RNG
        # is its own between chunks.
        lanes = RngLanes(seed, self.device)

        @torch.no_grad()
        def mel_blocks(chunk: Chunk) -> Iterator[tuple[np.ndarray | None, bool]]:
            postnet = postnet_windows(self.model, self.mel_stats, chunk.text)
            steps = decode_steps(self.model, chunk.ids, chunk.weights, self._bounds(decoding), lanes, self.device)
            yield from postnet.blocks(steps)

        return StreamParts(
            mel_blocks,
            lambda: vocoder_windows(self.vocoder, hop_length=self.hop_length, chunk_frames=chunk_frames),
            lambda: lanes.lane("vocoder"),
        )

    def _bounds(self, decoding: DecodingConfig) -> dict:
        """``decoding`` as ``GSTTacotron.infer``'s keyword arguments for this checkpoint's mels."""
        return decoding.model_arguments(frames_per_second=self.audio_config.frames_per_second)
