"""Style resolution: references, token weights, dials and mixes → ``(n_heads, n_tokens)`` token weights.

A style is one of:

* a reference recording (style transfer): a path, or samples with their rate; any rate from
  1 kHz to 384 kHz, up to 8 channels, at most 10 minutes (:data:`MAX_REFERENCE_SECONDS`);
  integer samples are scaled by their type's full scale, as soundfile reads them;
* token weights (style control, as in Wang et al. 2018): ``{token: weight}`` for every head,
  ``{(head, token): weight}``, or an array ``(n_tokens,)`` / ``(n_heads, n_tokens)``; tokens not
  named get weight 0, and weights need not be positive nor sum to one, but must be finite and
  within ``±MAX_STYLE_WEIGHT`` (100: a reference's weights lie in [0, 1]; far past that the
  decoder's output leaves any range a vocoder can turn into finite samples);
* token dials: the neutral weights moved part of the way toward a token, in one head or in all
  (``{(head, token): amount}`` / ``{token: amount}``; see :meth:`StyleResolver.dial_weights`);
* a weighted mix of references: their token weights averaged with the given weights;
* nothing: the neutral style: the mean token weights of the training references, stored in the
  checkpoint (``neutral_style``, :mod:`gst_tts.training.neutral`), a style training has seen; in
  checkpoints from before it was stored, uniform weights ``1 / n_tokens`` over all tokens in
  every head (what the model itself uses without a reference).

A reference or mix may carry a ``strength`` (:class:`Style`): its token weights moved from neutral
toward the reference's, ``neutral + strength * (reference - neutral)``.

Every style is turned into token weights once, and those weights (not the reference mel) go to
the model, so a reference is encoded once however many texts use it.

The spec parsers (:func:`parse_style_weights`, :func:`parse_style_mix`) read the compact text
forms the command line and config files use (``"3=0.4,1:2=-0.2"``, ``"a.wav=0.5,b.wav=0.5"``).
"""

from __future__ import annotations


import numpy as np
import torch

from gst_tts.analysis.speech_rate import letter_rate_estimate
from gst_tts.audio.features import AudioConfig, MelExtractor, MelStats
from gst_tts.audio.pitch import yin_f0
from gst_tts.audio.vocoders.intonation import REFERENCE_MEDIAN_FRAMES, spread_st
from gst_tts.audio.io import load_audio, to_mono_resampled, trim_silence
from gst_tts.inference.reference_audio import (  # the torch-free checks, shared with gst_tts.runtime
    MAX_REFERENCE_SECONDS,
    MIN_REFERENCE_SECONDS,
    reference_samples,
    window_starts,
)
from gst_tts.inference.style_spec import (  # the torch-free rules, shared with gst_tts.runtime
    MAX_STYLE_STRENGTH,
    MAX_STYLE_WEIGHT,
    Reference,
    ReferenceReading,
    Style,
    StyleMix,
    StyleRules,
    StyleWeights,
)
from gst_tts.inference.style_text import parse_style_mix, parse_style_weights
from gst_tts.model import GSTTacotron

__all__ = [
    "Reference",
    "StyleWeights",
    "StyleMix",
    "Style",
    "StyleResolver",
    "MIN_REFERENCE_SECONDS",
    "MAX_REFERENCE_SECONDS",
    "MAX_STYLE_WEIGHT",
    "MAX_STYLE_STRENGTH",
    "parse_style_weights",
    "parse_style_mix",
]


class StyleResolver(StyleRules):
    """Turns styles into the ``(n_heads, n_tokens)`` token weights of one model.

    Args:
        model: the model whose reference encoder and token layer are used.
        audio_config: the feature settings the model was trained with.
        mel_stats: the training set's mel normalisation.
        device: where the model lives.
        reference_window: longest reference in frames that is encoded in one pass; ``None`` (the
            default) encodes every reference whole. A checkpoint trained with
            ``data.reference_seconds`` records its longest training reference for this
            (``reference_frames``).
        neutral_weights: the neutral style's ``(n_heads, n_tokens)`` token weights (a checkpoint's
            ``neutral_style``). Default ``None``: uniform.
    """

    def __init__(
        self,
        model: GSTTacotron,
        audio_config: AudioConfig,
        mel_stats: MelStats,
        device: torch.device,
        reference_window: int | None = None,
        neutral_weights: np.ndarray | None = None,
    ) -> None:
        self.model = model
        self.neutral_weights = None if neutral_weights is None else np.asarray(neutral_weights, dtype=np.float32)
        self.audio_config = audio_config
        self.mel_stats = mel_stats
        self.device = device
        #: Longest reference (frames) encoded in one pass; longer ones are encoded in windows of
        #: this length (see :meth:`reference_weights`). ``None``: every reference in one pass.
        self.reference_window = reference_window
        self._extractor = MelExtractor(audio_config)

    @property
    def n_heads(self) -> int:
        return self.model.n_heads

    @property
    def n_tokens(self) -> int:
        return self.model.n_tokens

    def as_weights(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(array)

    def reference_mel(self, reference: Reference) -> torch.Tensor:
        """Normalised ``(frames, n_mels)`` mel of a reference recording (any rate, stereo allowed):
        of :meth:`reference_audio`.

        Raises:
            AudioError: as :meth:`reference_audio`.
        """
        return self.mel_stats.normalize(self.reference_log_mel(reference))

    def reference_log_mel(self, reference: Reference) -> torch.Tensor:
        """``(frames, n_mels)`` natural-log mel of a reference recording, not normalised: of
        :meth:`reference_audio`.

        Raises:
            AudioError: as :meth:`reference_audio`.
        """
        return self._extractor(torch.from_numpy(self.reference_audio(reference)))

    def reference_audio(self, reference: Reference) -> np.ndarray:
        """A reference recording's float32 mono samples at the model's rate, silence trimmed.

        Raises:
            AudioError: missing, unreadable, not numbers, NaN or infinite samples, silent, shorter
                than 0.5 s after trimming silence, or past the rate, channel and length limits.
        """
        return reference_samples(
            reference,
            rate=self.audio_config.sample_rate,
            read_file=load_audio,
            mono=lambda samples, rate: to_mono_resampled(samples, rate, None),
            resample=lambda samples, rate, name: to_mono_resampled(
                samples, rate, self.audio_config.sample_rate, name=name
            ),
            trim=lambda samples: trim_silence(samples, self.audio_config.trim_top_db),
        )

    @torch.no_grad()
    def read_reference(self, reference: Reference, *, f0_range: bool = False, tempo: bool = False) -> ReferenceReading:
        """One reading of a reference recording (:meth:`reference_audio`, decoded once): its
        ``(n_heads, n_tokens)`` token weights and, when asked, its F0 spread and letter rate.

        Token weights: a reference longer than :attr:`reference_window` frames is cut into
        windows of that length (half overlapping, the last one ending with the reference), and the
        reference encoder's embeddings of the windows are averaged before the token attention: the
        encoder then only ever summarises stretches as long as those it was trained on.

        F0 spread: semitones from the 10th to the 90th percentile of the voiced frames YIN tracks
        (:func:`~gst_tts.audio.pitch.yin_f0`), median-filtered
        (:data:`~gst_tts.audio.vocoders.intonation.REFERENCE_MEDIAN_FRAMES`); ``None`` for too few
        voiced frames or feature settings YIN cannot track with (a window under two periods of 60 Hz).
        Letter rate: letters per second of articulation, from its syllable nuclei
        (:func:`~gst_tts.analysis.speech_rate.letter_rate_estimate`); ``None`` for too few nuclei.

        Raises:
            AudioError: as :meth:`reference_audio`.
        """
        audio = self.reference_audio(reference)
        log_mel = self._extractor(torch.from_numpy(audio))
        mel = self.mel_stats.normalize(log_mel).to(self.device)
        embedding = self.model.gst.reference_encoder(self.reference_windows(mel)).mean(0, keepdim=True)
        _, weights = self.model.gst.token_layer(embedding)
        spread = rate = None
        if f0_range:
            try:
                f0, voiced = yin_f0(torch.from_numpy(audio), self.audio_config)
                spread = spread_st(np.log(f0[voiced].double().numpy()), median_frames=REFERENCE_MEDIAN_FRAMES)
            except ValueError:  # a window too short for YIN's lowest F0 at this rate: the spread is not read
                pass
        if tempo:
            config = self.audio_config
            rate = letter_rate_estimate(
                log_mel.numpy(), 1.0 / config.frames_per_second, fmin=config.fmin, fmax=config.fmax
            )
        return ReferenceReading(weights[0].float().cpu(), spread, rate)

    def reference_windows(self, mel: torch.Tensor) -> torch.Tensor:
        """``(frames, n_mels)`` → ``(n_windows, window, n_mels)``; one window, the whole mel, when it is
        no longer than :attr:`reference_window`."""
        window, frames = self.reference_window, mel.shape[0]
        if window is None or frames <= window:
            return mel[None]
        return torch.stack([mel[s : s + window] for s in window_starts(frames, window)])
