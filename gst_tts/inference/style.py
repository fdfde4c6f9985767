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

import os

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig, MelExtractor, MelStats
from gst_tts.audio.io import load_audio, to_mono_resampled, trim_silence
from gst_tts.errors import AudioError
from gst_tts.inference.reference_audio import (  # the torch-free checks, shared with gst_tts.runtime
    MAX_REFERENCE_SECONDS,
    MIN_REFERENCE_SECONDS,
    SILENCE_PEAK,
    reference_array,
    reference_header,
)
from gst_tts.inference.style_spec import (  # the torch-free rules, shared with gst_tts.runtime
    MAX_STYLE_STRENGTH,
    MAX_STYLE_WEIGHT,
    Reference,
    Style,
    StyleMix,
    StyleRules,
    StyleWeights,
    reference_name,
    short_repr,
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
        rate_wanted = self.audio_config.sample_rate
        name = reference_name(reference)
        if isinstance(reference, tuple) and len(reference) == 2:
            samples, rate = reference_array(*reference, name=name)
        elif isinstance(reference, (str, os.PathLike)):
            samples, rate = _reference_file(reference, name)
        else:
            raise AudioError(f"a reference is a file path or (samples, rate), got {short_repr(reference)}")
        samples = to_mono_resampled(samples, rate, None)  # checked before resampling, which would smear a NaN
        if samples.size and not np.isfinite(samples).all():
            raise AudioError(f"{name}: reference contains NaN or infinite samples")
        if samples.size == 0 or float(np.max(np.abs(samples))) < SILENCE_PEAK:
            raise AudioError(f"{name}: reference is silent")
        samples = to_mono_resampled(samples, rate, rate_wanted, name=name)
        samples = trim_silence(samples, self.audio_config.trim_top_db)
        if samples.size < MIN_REFERENCE_SECONDS * rate_wanted:
            raise AudioError(
                f"{name}: reference is {samples.size / rate_wanted:.2f} s of sound; at least "
                f"{MIN_REFERENCE_SECONDS} s is needed"
            )
        return np.ascontiguousarray(samples, dtype=np.float32)

    @torch.no_grad()
    def reference_weights(self, reference: Reference) -> torch.Tensor:
        """The ``(n_heads, n_tokens)`` token weights a reference recording gets.

        A reference longer than :attr:`reference_window` frames is cut into windows of that
        length (half overlapping, the last one ending with the reference), and the reference
        encoder's embeddings of the windows are averaged before the token attention: the encoder
        then only ever summarises stretches as long as those it was trained on.
        """
        mel = self.reference_mel(reference).to(self.device)
        embedding = self.model.gst.reference_encoder(self.reference_windows(mel)).mean(0, keepdim=True)
        _, weights = self.model.gst.token_layer(embedding)
        return weights[0].float().cpu()

    def reference_windows(self, mel: torch.Tensor) -> torch.Tensor:
        """``(frames, n_mels)`` → ``(n_windows, window, n_mels)``; one window, the whole mel, when it is
        no longer than :attr:`reference_window`."""
        window = self.reference_window
        frames = mel.shape[0]
        if window is None or frames <= window:
            return mel[None]
        starts = list(range(0, frames - window + 1, max(1, window // 2)))
        if starts[-1] + window < frames:
            starts.append(frames - window)
        return torch.stack([mel[s : s + window] for s in starts])


def _reference_file(path: str | os.PathLike, name: str) -> tuple[np.ndarray, int]:
    """Mono float32 samples of an audio file at its own rate; its header is checked against the
    limits before anything is decoded (decoding allocates what the header claims). ``name``: the
    path as messages show it."""
    reference_header(path, name)
    try:
        return load_audio(path)
    except AudioError:  # a header that reads but a body that does not; named as every other message names it
        raise AudioError(f"{name}: not readable as audio (its header reads, its samples do not)") from None
