"""Style transfer, measured while training: does a free-running output follow its reference?

Validation synthesizes a few held-out utterances free-running, each with its own recording as the
style reference (:meth:`gst_tts.training.trainer.Trainer.validate`). :class:`TransferValidation`
measures output and reference alike (median F0, F0 range in semitones, articulation rate; see
:func:`gst_tts.analysis.style_transfer.measure_clip`) and fits outputs on references over the set:
Pearson r and slope of log F0, F0 range and log rate, the figures ``measure-transfer`` reports for
unseen references. It needs no reference set of its own, so it works on any corpus; its figures
are as wide as the corpus's own spread of styles (on a corpus of one even style they are noise).

Both sides are vocoded by the same Griffin-Lim from log-mels (the reference from its target mel,
measured once per utterance and kept), so the vocoder's bias in F0 cancels out of the fits.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from gst_tts.analysis.style_transfer import MEASURES, ClipMeasures, measure_clip, transfer_fits
from gst_tts.audio.features import AudioConfig

__all__ = ["TransferValidation", "FIGURE_NAMES"]

#: The scalar names it reports, per measure (TensorBoard's ``val_transfer/<name>``).
FIGURE_NAMES = {"f0_hz": "log_f0", "f0_range_st": "f0_range", "rate_letters_per_s": "log_rate"}


class TransferValidation:
    """Measures validation's outputs against their own references.

    Args:
        audio_config: the run's feature settings.
        vocoder: log-mel ``(frames, n_mels)`` → audio ``(n_samples,)`` at ``audio_config.sample_rate``.
    """

    def __init__(self, audio_config: AudioConfig, vocoder: Callable[[np.ndarray], np.ndarray]) -> None:
        self.audio_config = audio_config
        self.vocoder = vocoder
        self._references: dict[str, ClipMeasures] = {}

    def measure(self, log_mel: np.ndarray, text: str, audio: np.ndarray | None = None) -> ClipMeasures:
        """One clip from its (denormalised) log-mel and the text it speaks; ``audio``: the log-mel
        already vocoded by the same vocoder (default: vocoded here)."""
        audio = np.asarray(self.vocoder(log_mel) if audio is None else audio, dtype=np.float32)
        return measure_clip(audio, self.audio_config.sample_rate, text, self.audio_config, log_mel=log_mel)

    def reference(self, utterance_id: str, log_mel: np.ndarray, text: str) -> ClipMeasures:
        """The reference recording's measures (its target log-mel), computed once per utterance."""
        if utterance_id not in self._references:
            self._references[utterance_id] = self.measure(log_mel, text)
        return self._references[utterance_id]

    @staticmethod
    def figures(references: Sequence[ClipMeasures], outputs: Sequence[ClipMeasures]) -> dict[str, float]:
        """``{"log_f0_r", "log_f0_slope", "f0_range_r", ..., "log_rate_slope"}`` of outputs on
        references (NaN where fewer than two pairs are measured or a side has no spread)."""
        fits = transfer_fits(references, outputs)
        figures = {}
        for measure in MEASURES:
            figures[f"{FIGURE_NAMES[measure]}_r"] = fits[measure].r
            figures[f"{FIGURE_NAMES[measure]}_slope"] = fits[measure].slope
        return figures
